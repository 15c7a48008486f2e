// SPDX-License-Identifier: Apache-2.0
/// A move through the playlist: to the next item or the previous one (wrapping both ways).
public enum Direction: Sendable, Equatable {
    case forward, backward
    var step: Int { self == .forward ? 1 : -1 }
}

/// What the frame loop must do after the carousel took an event.
public enum CarouselAction: Equatable, Sendable {
    /// Prepare a screen-sized frame of playlist item `item` for physical slot `slot`, off the
    /// frame loop, then report back with ``Carousel/imageReady(ticket:at:)`` or
    /// ``Carousel/imageFailed(ticket:at:)`` quoting `ticket`. A later prepare for the same slot
    /// supersedes an earlier one (its ticket is then stale and ignored).
    case prepare(slot: Int, item: Int, ticket: Int)
    /// Item `item` (its index in the playlist as given) with `source` is now fully on screen;
    /// `at` is the show time it became so. Emitted as the `shown` event.
    case shown(item: Int, source: String, at: Duration)
    /// Item `item` could not be prepared and has left the show.
    case dropped(item: Int, source: String)
}

/// The carousel as a value: playlist position, three slots, auto-advance timing and fades
/// (docs/carousel.md). It takes events with their show time and returns
/// ``CarouselAction``s; it holds no clock, no thread and no pixels, so tests drive it with any
/// times they like.
///
/// Slots: three physical slots (0, 1, 2) play the roles previous, current and next. After a
/// move the roles rotate and only the slot that came into the far position is prepared again;
/// however long the playlist, at most three items are prepared at once.
///
/// Timing: the image that became fully shown at time T stays until `T + interval - fade`, then
/// cross-fades to its neighbour, which is fully shown at `T + interval`. So `shown` events
/// come exactly one interval apart. Ready first (docs/carousel.md "Ready first"): an image not
/// ready when its turn comes is waited for ``CarouselConfig/readyWait`` with the image on screen
/// staying, then passed over while another can come; only with nothing ready does the placeholder
/// show, the image fading in when it arrives; its interval counts from then.
public struct Carousel: Sendable {
    /// How a slot stands.
    public enum SlotStatus: Equatable, Sendable {
        case empty
        /// Being prepared under `ticket`.
        case pending(ticket: Int)
        /// Prepared; ready since the show time given.
        case ready(since: Duration)
    }

    struct Slot: Equatable, Sendable {
        var item: Int?
        var status: SlotStatus = .empty
        /// The frame shows an older picture of its item (its file changed while it was on
        /// screen): it stays until it leaves the screen, and no role takes it again.
        var stale = false
        /// When its picture's Ken Burns motion began (``CarouselConfig/kenBurns``): the start of
        /// the move or fade-in that brought it on screen, or when it was shown at once; nil
        /// while it is off screen.
        var motionStart: Duration?
        /// When the frame was asked for (the first tick after the `prepare`): an item whose turn
        /// came waits ``CarouselConfig/readyWait`` from then before the show passes over it.
        var askedAt: Duration?
        var isReady: Bool { if case .ready = status { return true } else { return false } }
    }

    /// What a finger holds and moves: the current slot, or a cross-fade caught mid-way.
    struct Picture: Equatable, Sendable {
        /// Slot underneath; nil for the placeholder (a fade-in caught mid-way).
        var base: Int?
        /// Slot blended over ``base`` with ``weight`` (0...256), or nil.
        var overlay: Int?
        var weight: Int
    }

    /// A fade a finger interrupted, and how far it had run, to be picked up again.
    struct CaughtFade: Equatable, Sendable {
        var fade: Transition
        var elapsed: Duration
    }

    /// A finger is down (docs/touch.md).
    struct Hold: Equatable, Sendable {
        var picture: Picture
        /// Where the picture sat when the finger landed (non-zero when it caught a settle).
        var origin: Double
        /// The picture's offset while dragging; nil until the touch became a drag.
        var dragOffset: Double?
        var caughtFade: CaughtFade?
        /// The target of a settle the finger caught.
        var caughtSettleTarget: Double?
    }

    /// The picture gliding after a release: from `from` to `to` (0 = back in place, -width =
    /// the next image in, +width = the previous one in), eased out from `start`.
    struct Settle: Equatable, Sendable {
        var picture: Picture
        var from: Double
        var to: Double
        var start: Duration
        /// A fade to pick up again once the picture is back in place.
        var caughtFade: CaughtFade?
    }

    indirect enum Transition: Equatable, Sendable {
        /// Cross-fade from the current slot to the neighbour in `direction`.
        case move(from: Int, to: Int, direction: Direction, start: Duration)
        /// The current slot's late image fades in over the placeholder.
        case fadeIn(slot: Int, start: Duration)
        /// A finger is down: the show holds still or follows the finger.
        case held(Hold)
        /// After a release: the picture glides to its place.
        case settle(Settle)

        /// The same fade started at another time.
        func restarted(at start: Duration) -> Transition {
            switch self {
            case .move(let f, let t, let d, _): return .move(from: f, to: t, direction: d, start: start)
            case .fadeIn(let s, _): return .fadeIn(slot: s, start: start)
            default: return self
            }
        }
    }

    /// The playlist as given; indices into it are what events report.
    public private(set) var items: [PlaylistItem]
    public var config: CarouselConfig

    /// Indices of the items still in the show (failed ones leave).
    private(set) var order: [Int]
    /// Position in `order` of the current item.
    private(set) var cursor = 0
    private(set) var slots = [Slot(), Slot(), Slot()]
    /// Physical slot of each role: [previous, current, next]; nil when the role is unused.
    private(set) var roles: [Int?] = [nil, nil, nil]
    private(set) var transition: Transition?
    /// When the current item became current (for deciding whether a late image fades in).
    private var currentSince: Duration = .zero
    /// When the next auto-advance fade starts; nil while nothing is scheduled.
    private(set) var advanceAt: Duration?
    /// True once the current item's `shown` has been emitted.
    private var announced = false
    /// True once any item has been shown.
    private var everAnnounced = false
    /// The show had no image left (every one failed) and items came back (their retry): the
    /// empty screen stays until one of them is ready, which then comes without a fade (no
    /// placeholder frame between the two).
    private(set) var emptyUntilReady = false
    /// The last image left the show by failing (not an empty playlist): see ``emptyUntilReady``.
    private var everyImageFailed = false
    private var nextTicket = 1
    /// The latest time ticked (what ``wake`` reads the Ken Burns motion at).
    private(set) var lastTick: Duration = .zero
    private var started = false
    /// The image of a replaced playlist that is still on screen although the new playlist does
    /// not list it: its index in ``items`` (appended after the new items). The next move goes to
    /// the new list's first item (forward) or last (backward) and drops it. See ``replaceItems(_:at:)``.
    private(set) var retiring: Int?
    /// A new playlist waiting for the transition under way to end.
    private var pendingItems: (items: [PlaylistItem], rotation: [Int])?
    /// The cross-fade under way is being taken back: a new playlist came during a move whose
    /// incoming image it no longer lists, so that image fades back out into the one it was
    /// replacing, which stays current (the cursor does not move). See ``replaceItems(_:showing:at:)``.
    private(set) var returning = false
    /// Paused: no auto-advance until ``resume(at:)`` (moves asked for still happen).
    public private(set) var isPaused = false
    /// The position in `order` a ``goto(item:at:)`` goes to: it plays the next role until the
    /// move there is made.
    private var jump: Int?
    /// Moves asked for while a ``goto(item:at:)`` waits for its frame: made, in order, once the
    /// show is at its target (docs/control-socket.md "Moves during a fade").
    private var queuedMoves: [Direction] = []
    /// True while auto-advance's due move was set by a manual move onto a neighbour that is not
    /// ready yet (``move(_:at:)``): further moves asked for meanwhile wait in ``movesAfterWait``.
    private var manualMoveDue = false
    /// Moves asked for while a manual move waits for its neighbour's frame: made, in order, one
    /// as each move before it lands, so three `next`s go three images on
    /// (docs/control-socket.md "Moves during a fade").
    private var movesAfterWait: [Direction] = []
    /// Items passed over since the last move landed: their turn came and they were not ready
    /// within ``CarouselConfig/readyWait`` while another item could be shown (docs/carousel.md
    /// "Ready first"). The next role skips them; they come back at their next turn.
    private(set) var passedOver: Set<Int> = []

    static let previousRole = 0, currentRole = 1, nextRole = 2

    public init(items: [PlaylistItem], config: CarouselConfig = CarouselConfig()) {
        self.items = items
        self.config = config
        order = Array(items.indices)
    }

    // MARK: Reading the state

    /// The playlist index of the current item, or nil when the show is empty.
    /// Nil too while the image on screen is one the current playlist no longer lists.
    public var currentItem: Int? { retiring != nil ? nil : currentIndex }
    /// The index in ``items`` of what is on screen, retiring or not.
    private var currentIndex: Int? { retiring ?? (order.isEmpty ? nil : order[cursor]) }
    /// Whether there is anywhere to move to (in a show of one image, to its new picture when its
    /// file changed).
    var canMove: Bool { order.count > 1 || (retiring != nil && !order.isEmpty) || refreshesInPlace }
    /// A show of one image whose picture on screen is stale: the next "move" cross-fades to the
    /// new picture of the same item, prepared in the next slot.
    private var refreshesInPlace: Bool {
        guard order.count == 1, retiring == nil, let c = roles[Self.currentRole] else { return false }
        return slots[c].stale
    }
    /// Number of items still in the show.
    public var activeCount: Int { order.count }
    /// Whether playlist item `item` is in the show (false for one that failed and left it, or
    /// an index out of range).
    public func isInShow(item: Int) -> Bool { order.contains(item) }
    /// The physical slot playing the previous / current / next role.
    public var previousSlot: Int? { roles[Self.previousRole] }
    public var currentSlot: Int? { roles[Self.currentRole] }
    public var nextSlot: Int? { roles[Self.nextRole] }
    /// The item a physical slot holds (or is being prepared with).
    public func item(inSlot slot: Int) -> Int? { slots[slot].item }

    /// The ready slots that hold `item`'s picture (after a failed new picture of a changed
    /// file, the old one kept on screen: the frame loop watches its file again through them).
    public func readySlots(ofItem item: Int) -> [Int] {
        slots.indices.filter { slots[$0].item == item && slots[$0].isReady }
    }
    /// How a physical slot stands.
    public func status(ofSlot slot: Int) -> SlotStatus { slots[slot].status }
    /// True while a cross-fade, fade-in or settle runs: the frame loop then draws paced frames.
    public var isAnimating: Bool { !isHeld && transition != nil }
    /// True while a finger is on the screen (from ``touchBegan(at:)`` to ``touchEnded(velocity:at:)``).
    public var isHeld: Bool { if case .held = transition { return true } else { return false } }

    var fade: Duration { config.effectiveFade }
    /// The style of the move under way (or the last one): the style of the item it brings on
    /// screen, else the show's (docs/carousel.md "Transitions").
    private(set) var moveStyle: TransitionStyle = .fade
    /// How long a move of `style` takes: the fade time, or none for a cut.
    func duration(of style: TransitionStyle) -> Duration { style == .cut ? .zero : fade }
    /// The style of a move to playlist item `item`.
    func style(into item: Int?) -> TransitionStyle {
        item.flatMap { $0 < items.count ? items[$0].transition : nil } ?? config.transition
    }
    /// The item a move in `direction` brings on screen (as ``desiredItems()`` places it).
    private func target(_ direction: Direction) -> Int? {
        let d = desiredItems()
        return direction == .forward ? d[Self.nextRole] : d[Self.previousRole]
    }
    /// How long before the next picture is fully shown auto-advance starts its move: the
    /// move's duration (the next `shown` then comes one interval after this one).
    private var advanceLead: Duration { duration(of: style(into: target(config.direction))) }
    private func interval(of item: Int) -> Duration { items[item].duration ?? config.interval }

    // MARK: Events

    /// Starts the show at `now`: prepares the current, next and previous items (in that order).
    public mutating func start(at now: Duration) -> [CarouselAction] {
        guard !started else { return [] }
        started = true
        currentSince = now
        return reconcile()
    }

    /// Advances the show to `now`: completes and starts fades as their times come. Call it on
    /// every turn of the frame loop before asking for the ``scene(at:)``.
    public mutating func tick(at now: Duration) -> [CarouselAction] {
        lastTick = max(lastTick, now)
        noteAsked(at: now)
        let actions = passes(at: now)  // first: `settled` must read the state after the passes
        return settled(actions)
    }

    private mutating func passes(at now: Duration) -> [CarouselAction] {
        var actions: [CarouselAction] = []
        // Each pass completes or starts at most one transition; a late tick catches up in order.
        passes: for _ in 0..<8 {
            if transition == nil, let replacement = pendingItems {
                actions += applyItems(replacement.items, replacement.rotation, at: now)
            }
            if let t = transition {
                // A finger hold has no end; the others complete at their natural end.
                guard let end = naturalEnd(of: t), now >= end else { break passes }
                actions += complete(t, at: end)
            } else if let at = advanceAt, now >= at, canMove, !isPaused, !refreshWaiting {
                guard let step = advanceToReady(config.direction, due: at, at: now) else { break passes }
                actions += step
            } else if let late = currentLateAt, now >= late, !isPaused {
                guard let step = leaveLateCurrent(at: now) else { break passes }
                actions += step
            } else {
                break
            }
            noteAsked(at: now)
        }
        return actions
    }

    /// Moves one item in `direction` now (SIGUSR1 / SIGUSR2, the control socket), cross-fading.
    /// A transition under way is cut short: it lands now (its `shown` is stamped now), and the
    /// new cross-fade starts from there; a settle that hands back a fade it caught lands that
    /// fade too. While a ``goto(item:at:)`` waits for its frame the move is queued: made once
    /// the show is at the goto's target. Ignored with fewer than two items (``canMove``), and
    /// while a finger is down (the person at the screen wins).
    public mutating func move(_ direction: Direction, at now: Duration) -> [CarouselAction] {
        guard canMove, !isHeld else { return [] }
        if jump != nil, transition == nil {
            queuedMoves.append(direction)
            return []
        }
        if manualMoveDue, transition == nil, advanceAt != nil {
            movesAfterWait.append(direction)
            return []
        }
        let actions = makeMove(direction, at: now)
        return settled(actions)   // not settled(makeMove(...)): the receiver would be read first
    }

    /// The body of ``move(_:at:)`` once the move is to be made now: lands the transition under
    /// way, then starts the move (or, onto a neighbour not ready, makes it auto-advance's move due now).
    private mutating func makeMove(_ direction: Direction, at now: Duration) -> [CarouselAction] {
        let actions = finishTransition(at: now)
        if direction == config.direction, !isPaused, transition == nil, jump == nil, retiring == nil, announced,
           !refreshWaiting, let to = roles[Self.role(direction)], !slots[to].isReady, !refreshesInPlace,
           let item = slots[to].item, hasAlternative(to: item) {
            // Onto a neighbour that is not ready, with another picture that could come: made as
            // auto-advance's move due now (docs/carousel.md "Ready first"): the picture on
            // screen stays until the neighbour is ready, or, once its wait is over, the move
            // passes over it to a ready one; never a fade to the placeholder.
            advanceAt = now
            manualMoveDue = true
            return actions
        }
        return actions + beginMove(direction, at: now)
    }

    /// Whether there is anywhere to move to: false with fewer than two items in the show (a
    /// ``move(_:at:)`` then does nothing; the control socket says so).
    public var canMoveNow: Bool { canMove }

    // MARK: Ready first (docs/carousel.md "Ready first")

    /// Stamps the slots asked for since the last look with `now` (``Slot/askedAt``).
    private mutating func noteAsked(at now: Duration) {
        for s in slots.indices where slots[s].askedAt == nil {
            if case .pending = slots[s].status { slots[s].askedAt = now }
        }
    }

    /// The role a move in `direction` goes to.
    private static func role(_ direction: Direction) -> Int { direction == .forward ? nextRole : previousRole }

    /// Auto-advance's move, due at `due`: to the neighbour in `direction` once its frame is
    /// ready. A neighbour not ready ``CarouselConfig/readyWait`` after it was asked for is passed
    /// over while another item could be shown: the role goes to the item after it (prepared
    /// now) and the image on screen stays meanwhile. A goto's target, or the new list's first
    /// item after a retiring image, is waited for. Nil while the move waits (``wake``).
    private mutating func advanceToReady(_ direction: Direction, due: Duration, at now: Duration) -> [CarouselAction]? {
        guard let to = roles[Self.role(direction)] else { return nil }
        if slots[to].isReady || refreshesInPlace { return beginMove(direction, at: now - due <= fade ? due : now) }
        guard jump == nil, retiring == nil, passOver(slot: to, at: now) else { return nil }
        return reconcile()
    }

    /// When the current item, not ready, has waited ``CarouselConfig/readyWait`` since it
    /// became current: then the show goes on past it to a ready neighbour. Nil while it is
    /// ready or shown, during a transition, a goto or a retiring image, with one item.
    private var currentLateAt: Duration? {
        guard started, transition == nil, !announced, retiring == nil, jump == nil, order.count > 1,
              let c = currentSlot, !slots[c].isReady else { return nil }
        return currentSince + config.readyWait
    }

    /// The current item is late (``currentLateAt``): a ready neighbour takes its turn (the next,
    /// else the previous), at once when nothing was shown yet (no fade from the placeholder);
    /// with neither ready, the next role passes over a late item as ``advanceToReady``'s does.
    /// The late item keeps its slot and comes back at its next turn.
    private mutating func leaveLateCurrent(at now: Duration) -> [CarouselAction]? {
        // Nothing on screen yet: the move starts one move's length ago, so it lands now.
        let instant = !everAnnounced || emptyUntilReady
        func start(_ slot: Int) -> Duration { instant ? now - duration(of: style(into: slots[slot].item)) : now }
        if let n = nextSlot, slots[n].isReady { return beginMove(.forward, at: start(n)) }
        if let p = previousSlot, slots[p].isReady { return beginMove(.backward, at: start(p)) }
        guard let n = nextSlot, passOver(slot: n, at: now) else { return nil }
        return reconcile()
    }

    /// Passes over the item in `slot` when it has waited its ``CarouselConfig/readyWait`` and
    /// another item could take its turn; returns whether it did.
    private mutating func passOver(slot: Int, at now: Duration) -> Bool {
        guard let item = slots[slot].item, now >= (slots[slot].askedAt ?? now) + config.readyWait,
              hasAlternative(to: item) else { return false }
        passedOver.insert(item)
        return true
    }

    /// Whether an item other than `item` and the current one, not passed over, is in the show.
    private func hasAlternative(to item: Int) -> Bool {
        let current = currentIndex
        return order.contains { $0 != item && $0 != current && !passedOver.contains($0) }
    }

    /// When a move due at `due` towards `role` can be made: at `due` with its frame ready; at
    /// the end of the neighbour's wait when it may be passed over; `.idle` when only its frame
    /// can end the wait (the decode's answer wakes the loop).
    private func readyWake(due: Duration, role: Int) -> Wake {
        guard let to = roles[role], !slots[to].isReady, !refreshesInPlace else { return .at(due) }
        guard jump == nil, retiring == nil, let item = slots[to].item, hasAlternative(to: item) else { return .idle }
        guard let asked = slots[to].askedAt else { return .at(due) }
        return .at(max(due, asked + config.readyWait))
    }

    /// A move landed on `item`, which is not the plain neighbour (items were passed over): the
    /// cursor goes to it.
    private mutating func alignCursor(on item: Int?) {
        guard retiring == nil, let item, !order.isEmpty, order[cursor] != item,
              let position = order.firstIndex(of: item) else { return }
        cursor = position
    }

    /// The neighbour `step` (+1, -1) away that is not passed over (the plain neighbour when all are).
    private func neighbour(_ step: Int) -> Int {
        let plain = order[wrap(cursor + step)]
        guard !passedOver.isEmpty else { return plain }
        for k in 1..<max(order.count, 1) where !passedOver.contains(order[wrap(cursor + k * step)]) {
            return order[wrap(cursor + k * step)]
        }
        return plain
    }

    /// When transition `t` ends by itself; nil for a finger hold.
    private func naturalEnd(of t: Transition) -> Duration? {
        switch t {
        case .held: return nil
        case .settle(let s): return s.start + config.settle
        case .move(_, _, _, let start): return start + duration(of: moveStyle)
        case .fadeIn(_, let start): return start + fade
        }
    }

    /// Ends transition `t` at `end`: a cross-fade lands on its target (the cursor moves), a
    /// fade-in or a settle on its picture. Not for a finger hold.
    private mutating func complete(_ t: Transition, at end: Duration) -> [CarouselAction] {
        transition = nil
        switch t {
        case .held:
            transition = t
            return []
        case .settle(let settle):
            return finishSettle(settle, at: end)
        case .move(let from, _, _, _) where returning:
            // A move taken back (``returning``): the image it went towards has left the playlist
            // and is off screen now; the one it started from is current as before, its interval
            // over (the move was due), so the show goes on from it as soon as it can.
            returning = false
            slots[from] = Slot()
            advanceAt = end
            if let replacement = pendingItems { return applyItems(replacement.items, replacement.rotation, at: end) }
            return reconcile()
        case .move(let from, let to, let direction, _):
            if slots[from].stale { slots[from] = Slot() }   // off screen now: prepared again if wanted
            slots[from].motionStart = nil
            let landedJump = jump != nil && direction == .forward
            let target = slots[to].item
            stepCursor(direction)
            alignCursor(on: target)
            currentSince = end
            announced = false
            passedOver = []
            var actions = reconcile() + announceIfReady(at: end)
            if landedJump, !queuedMoves.isEmpty {
                // Moves asked for while the goto waited for its frame, from its target now.
                let queued = queuedMoves
                queuedMoves = []
                for d in queued { actions += finishTransition(at: end) + beginMove(d, at: end) }
            } else if !movesAfterWait.isEmpty, !manualMoveDue, canMove {
                // A move asked for while a manual move waited for its neighbour: made from here,
                // waiting in turn when its own neighbour is not ready.
                actions += makeMove(movesAfterWait.removeFirst(), at: end)
            }
            return actions
        case .fadeIn:
            return announceIfReady(at: end)
        }
    }

    /// Cuts short the transition under way (a move asked for during a fade): it lands at `now`,
    /// or at its natural end if that came first and was not ticked yet.
    private mutating func finishTransition(at now: Duration) -> [CarouselAction] {
        var actions: [CarouselAction] = []
        // A settle back in place hands back the fade it caught, which lands too: a move asked
        // for then goes on from that fade's target instead of replacing it.
        for _ in 0..<4 {
            guard let t = transition, let end = naturalEnd(of: t) else { break }
            actions += complete(t, at: min(now, end))
        }
        return actions
    }

    // MARK: Control (pause, resume, goto)

    /// Stops auto-advance (a fade under way finishes). Moves asked for still happen.
    public mutating func pause(at now: Duration) {
        isPaused = true
    }

    /// Auto-advance again, the current image getting a full interval from `now`.
    public mutating func resume(at now: Duration) {
        guard isPaused else { return }
        isPaused = false
        if announced, let item = currentIndex { advanceAt = now + max(.zero, interval(of: item) - advanceLead) }
    }

    /// Goes to playlist item `item` (its index in ``items``) with a cross-fade: a neighbour
    /// directly, any other once its frame is prepared (it takes the next slot). Ignored for an
    /// item not in the show (failed, or out of range), for the current one, while a finger is down.
    public mutating func goto(item: Int, at now: Duration) -> [CarouselAction] {
        guard var position = order.firstIndex(of: item), !isHeld else { return [] }
        if retiring == nil && position == cursor { return [] }
        let wanted = items[item].source
        var actions = finishTransition(at: now)
        // A fade taken back lands by applying the playlist that waited: the item is found in it
        // again by its source (gone from it: nothing more to do).
        guard let again = order.firstIndex(where: { items[$0].source == wanted }) else { return settled(actions) }
        position = again
        queuedMoves = []
        forgetWaitingMoves()
        // The fade under way went there: it landed now.
        if retiring == nil && position == cursor { return settled(actions) }
        let forward = retiring != nil ? 0 : wrap(cursor + 1)
        let backward = retiring != nil ? order.count - 1 : wrap(cursor - 1)
        if position == forward || position == backward {
            actions += beginMove(position == forward ? .forward : .backward, at: now)
            return settled(actions)
        }
        jump = position
        actions += reconcile()
        if let next = nextSlot, slots[next].isReady, transition == nil { actions += beginMove(.forward, at: now) }
        return settled(actions)
    }

    // MARK: A new playlist (docs/content.md)

    /// Replaces the playlist at `now` (a new manifest, a changed directory) without a black
    /// frame. The image on screen stays. If the new list has it (same source), the show goes on
    /// from it there; if not, it stays until the next move, which goes to the new list's first
    /// item (or last, moving backwards). Slots whose item is in the new list keep their frames
    /// (prepared or being prepared); only the others are prepared again. Indices in later
    /// events are into the new list. While a fade, a touch or a settle is under way the new
    /// list waits for it to end, so the picture never jumps; a cross-fade towards an image the
    /// new list does not have turns back instead (``takeBackMove(towardsNoneOf:at:)``). An
    /// empty list gives the "no images" screen.
    /// `showing` (indices into `newItems`) limits the rotation (docs/schedules.md); nil: all.
    public mutating func replaceItems(_ newItems: [PlaylistItem], showing: [Int]? = nil, at now: Duration) -> [CarouselAction] {
        let rotation = showing?.filter { newItems.indices.contains($0) } ?? Array(newItems.indices)
        guard started else {
            items = newItems
            order = rotation
            cursor = 0
            return []
        }
        if transition != nil {
            pendingItems = (newItems, rotation)
            takeBackMove(towardsNoneOf: newItems, at: now)
            return []
        }
        return applyItems(newItems, rotation, at: now)
    }

    /// A cross-fade under way towards an image that `newItems` does not list (its file deleted,
    /// its SOURCE now a folder): the fade turns back from where it is, so that image never goes on
    /// fading in after the new list came, and the picture never jumps (the blend is symmetric:
    /// the weight it had is where the way back starts). The new list is applied once it is back.
    /// A fade-in of such an image over the placeholder is simply dropped (it was never shown).
    private mutating func takeBackMove(towardsNoneOf newItems: [PlaylistItem], at now: Duration) {
        let sources = Set(newItems.map(\.source))
        func gone(_ slot: Int) -> Bool { slots[slot].item.map { !sources.contains(items[$0].source) } ?? false }
        switch transition {
        case .move(let from, let to, let direction, let start)?
            where !returning && moveStyle == .fade && fade > .zero && gone(to) && now < start + fade:
            let elapsed = max(.zero, now - start)
            transition = .move(from: to, to: from, direction: direction == .forward ? .backward : .forward,
                               start: now - (fade - elapsed))
            returning = true
        case .fadeIn(let slot, _)? where gone(slot):
            transition = nil
        default:
            break
        }
    }

    private mutating func applyItems(_ newItems: [PlaylistItem], _ rotation: [Int], at now: Duration) -> [CarouselAction] {
        pendingItems = nil
        jump = nil
        queuedMoves = []
        forgetWaitingMoves()
        passedOver = []
        let oldItems = items
        let onScreen = currentIndex
        // An item keeps its prepared slot when it is drawn the same: same source, fit and
        // caption. One whose fit or caption changed is a new picture (prepared again; on
        // screen, it stays until the next move, like a removed item).
        func look(_ item: PlaylistItem) -> String {
            item.source + "\u{0}" + (item.fit.map { "\($0)" } ?? "") + "\u{0}" + (item.caption ?? "")
        }
        var indexByLook: [String: Int] = [:]
        for (i, item) in newItems.enumerated() where indexByLook[look(item)] == nil { indexByLook[look(item)] = i }
        func remap(_ old: Int) -> Int? { old < oldItems.count ? indexByLook[look(oldItems[old])] : nil }

        let wasEmpty = order.isEmpty && retiring == nil && everyImageFailed
        everyImageFailed = false
        items = newItems
        order = rotation
        retiring = nil
        let currentSlotBefore = currentSlot
        var restart = false
        if let c = onScreen, let kept = remap(c), let position = rotation.firstIndex(of: kept) {
            cursor = position
        } else if let c = onScreen, announced, !rotation.isEmpty {
            items.append(oldItems[c])   // stays on screen until the next move
            retiring = items.count - 1
            cursor = 0
        } else {
            cursor = 0
            restart = true
        }
        for s in slots.indices {
            guard let old = slots[s].item else { continue }
            if s == currentSlotBefore, let r = retiring {
                slots[s].item = r
            } else if let n = remap(old) {
                slots[s].item = n
            } else {
                slots[s] = Slot()
            }
        }
        if restart {
            currentSince = now
            announced = false
            advanceAt = nil
            emptyUntilReady = wasEmpty && !rotation.isEmpty
        }
        var actions = reconcile()
        if restart { actions += announceIfReady(at: now) }
        return actions
    }

    /// Moves the cursor one step; from a retiring image, to the new list's first or last item.
    private mutating func stepCursor(_ direction: Direction) {
        if let target = jump {
            jump = nil
            if direction == .forward {
                if retiring != nil { retiring = nil; items.removeLast() }
                cursor = target
                return
            }
        }
        if retiring != nil {
            retiring = nil
            items.removeLast()
            cursor = direction == .forward ? 0 : max(0, order.count - 1)
        } else {
            cursor = wrap(cursor + direction.step)
        }
    }

    // MARK: Touch (docs/touch.md)

    /// A finger landed at `now`. The show holds where it is: auto-advance pauses, a cross-fade or
    /// fade-in stops at its current blend, a settling picture stops where it is. Nothing jumps.
    public mutating func touchBegan(at now: Duration) -> [CarouselAction] {
        guard started, let current = currentSlot else { return [] }
        var actions = tick(at: now)
        var hold = Hold(picture: Picture(base: current, overlay: nil, weight: 0), origin: 0)
        switch transition {
        case .held?:
            return actions
        case .move(let from, _, let direction, let start)? where moveStyle == .slide:
            // A slide is a settle the show made: the finger holds it where it is, and a release
            // without a drag lets it glide on to its picture.
            hold.origin = slideOffset(direction, since: start, now: now)
            hold.caughtSettleTarget = Double(direction == .forward ? -config.screenWidth : config.screenWidth)
            hold.picture = Picture(base: from, overlay: nil, weight: 0)
        case .move(let from, let to, _, let start)?:
            hold.picture = Picture(base: from, overlay: to, weight: weight(since: start, now: now))
            hold.caughtFade = CaughtFade(fade: transition!, elapsed: now - start)
        case .fadeIn(let slot, let start)?:
            hold.picture = Picture(base: nil, overlay: slot, weight: weight(since: start, now: now))
            hold.caughtFade = CaughtFade(fade: transition!, elapsed: now - start)
        case .settle(let s)?:
            hold.picture = s.picture
            hold.origin = settleOffset(s, at: now)
            hold.caughtFade = s.caughtFade
            hold.caughtSettleTarget = s.to
        case nil:
            break
        }
        advanceAt = nil
        forgetWaitingMoves()
        transition = .held(hold)
        actions += []
        return actions
    }

    /// The finger dragged sideways: the picture sits `offset` logical pixels (negative = to the
    /// left) from where it was when the finger landed; the neighbour on the far side slides in.
    /// Ignored with fewer than two items, or when no finger is down.
    public mutating func touchDragged(offset: Double, at now: Duration) {
        guard case .held(var hold) = transition, canMove, offset.isFinite else { return }
        let w = Double(config.screenWidth)
        hold.dragOffset = min(w, max(-w, hold.origin + offset))
        transition = .held(hold)
    }

    /// The finger left at `now`. After a drag (`velocity` in logical pixels per second, negative
    /// = to the left), the move completes if the picture went past a third of the width or the
    /// release was a flick the same way, otherwise it springs back; either way it glides there
    /// over ``CarouselConfig/settle``. Without a drag (a tap, a long press) the show carries on:
    /// a caught fade picks up where it stopped, a caught settle glides on, otherwise the image
    /// gets a full interval from now. A completed swipe also sets ``CarouselConfig/direction``:
    /// auto-advance goes on the way the person last swiped. `cancelled` (the touchscreen went
    /// away, a finger held still too long): a drag springs back whatever its offset.
    public mutating func touchEnded(velocity: Double?, at now: Duration, cancelled: Bool = false) -> [CarouselAction] {
        guard case .held(let hold) = transition else {
            if transition == nil, advanceAt == nil, announced, let item = currentIndex {
                advanceAt = now + max(.zero, interval(of: item) - advanceLead)
            }
            return []
        }
        let w = Double(config.screenWidth)
        if let offset = hold.dragOffset {
            var to = 0.0
            let v = velocity ?? 0
            if cancelled {
                to = 0
            } else if v.isFinite, abs(v) >= config.effectiveFlickVelocity {
                if v < 0, offset <= 0 { to = -w } else if v > 0, offset >= 0 { to = w }
            } else if abs(offset) > w / 3 {
                to = offset < 0 ? -w : w
            }
            transition = .settle(Settle(picture: hold.picture, from: offset, to: to, start: now,
                                        caughtFade: to == 0 ? hold.caughtFade : nil))
            return tick(at: now)
        }
        if let target = hold.caughtSettleTarget {
            transition = .settle(Settle(picture: hold.picture, from: hold.origin, to: target, start: now,
                                        caughtFade: hold.caughtFade))
            return tick(at: now)
        }
        transition = nil
        return resume(after: hold, at: now)
    }

    /// The frame for `ticket` is prepared and waiting in its slot.
    public mutating func imageReady(ticket: Int, at now: Duration) -> [CarouselAction] {
        guard let slot = slots.firstIndex(where: { $0.status == .pending(ticket: ticket) }) else { return [] }
        slots[slot].status = .ready(since: now)
        if jump != nil, slot == nextSlot, transition == nil {
            return beginMove(.forward, at: now)   // a goto's target is ready: go there
        }
        guard slot == currentSlot, transition == nil, !announced else { return [] }
        let onTimeAtStart = !everAnnounced && now - currentSince <= config.startGrace
        if now > currentSince && !onTimeAtStart && !emptyUntilReady {
            transition = .fadeIn(slot: slot, start: now)
            slots[slot].motionStart = now
            return []
        }
        return announceIfReady(at: now)
    }

    /// The file of playlist item `item` has new content (renamed over, rewritten, copied over):
    /// every frame of it is prepared again, but never one on screen, which would cut mid-show.
    /// A frame on screen becomes stale and stays until the next move takes it off screen (its
    /// slot is then prepared again), or, in a show of one image, its new picture is prepared in
    /// another slot and cross-fades in at the next interval (the next multiple of the item's
    /// interval from when it was shown); until that frame is ready the old picture stays.
    public mutating func imageChanged(item: Int, at now: Duration) -> [CarouselAction] {
        guard started, item < items.count else { return [] }
        var onScreen = Set<Int>()
        if let c = currentSlot { onScreen.insert(c) }
        if let t = transition { for s in slots.indices where involves(t, slot: s) { onScreen.insert(s) } }
        var found = false
        for s in slots.indices where slots[s].item == item {
            found = true
            if onScreen.contains(s) && slots[s].isReady { slots[s].stale = true } else { slots[s] = Slot() }
        }
        guard found else { return [] }
        if refreshesInPlace, announced, let at = advanceAt, at < now {
            let step = interval(of: item)
            if step > .zero {
                let periods = ((now - at) / step).rounded(.up)
                advanceAt = at + step * Int(periods)
            }
        }
        return reconcile()
    }

    /// The screen changed size (another display came back, docs/deployment.md "Check"): every prepared
    /// frame is of the old size. A transition under way lands now (a finger's hold is let go),
    /// every slot is emptied and prepared again at the new size, the current item first, and the
    /// show stays at its image: until that is ready the scene shows the placeholder, then the
    /// image comes (fading in when it was not ready at once) and is announced again (`shown`),
    /// its interval counting from then.
    public mutating func resized(at now: Duration) -> [CarouselAction] {
        guard started else { return [] }
        var actions: [CarouselAction] = []
        // A move lands (its item is the current one), announced only once shown at the new size.
        if case .held = transition { transition = nil } else { actions += finishTransition(at: now).filter { if case .shown = $0 { false } else { true } } }
        transition = nil
        for s in slots.indices { slots[s] = Slot() }
        roles = [nil, nil, nil]
        currentSince = now
        announced = false
        advanceAt = nil
        passedOver = []
        actions += reconcile()
        return settled(actions)   // read after reconcile (a call's receiver is copied before its arguments run)
    }

    /// The next slot's fresh picture of a one-image show is not ready yet: no move until it is.
    private var refreshWaiting: Bool {
        guard refreshesInPlace, let next = roles[Self.nextRole] else { return refreshesInPlace }
        return !slots[next].isReady
    }

    /// The frame for `ticket` could not be prepared (a corrupt file, say): its item leaves the
    /// show and the slots are filled again from its neighbours, unless an older picture of
    /// the item is on screen (its file changed): that one then stays, and the item with it.
    public mutating func imageFailed(ticket: Int, at now: Duration) -> [CarouselAction] {
        guard let slot = slots.firstIndex(where: { $0.status == .pending(ticket: ticket) }),
              let item = slots[slot].item else { return [] }
        // A new picture of an item whose old one is still on screen (its file changed, and the
        // new file does not decode: truncated, still being written): the old picture stays as
        // if nothing had changed, until the file changes again (``imageChanged(item:at:)``).
        let kept = slots.indices.filter { $0 != slot && slots[$0].item == item && slots[$0].stale && slots[$0].isReady }
        if !kept.isEmpty {
            slots[slot] = Slot()
            for s in kept { slots[s].stale = false }
            return reconcile()
        }
        var actions: [CarouselAction] = [.dropped(item: item, source: items[item].source)]
        let wasCurrent = item == currentIndex
        if item == retiring {
            // The retiring image's frame is gone and it cannot be read again (its file deleted):
            // it is not prepared again; the show goes to the new list's first item.
            actions = []
            for s in slots.indices where slots[s].item == item { slots[s] = Slot() }
            retiring = nil
            items.removeLast()
            cursor = 0
            currentSince = now
            announced = false
            advanceAt = nil
            actions += reconcile()
            return actions + announceIfReady(at: now)
        }
        // Every slot holding that item is emptied (with two items, one item can sit in two slots).
        for s in slots.indices where slots[s].item == item { slots[s] = Slot() }
        if let t = transition, involves(t, slot: slot) { transition = nil }
        if let position = order.firstIndex(of: item) {
            order.remove(at: position)
            if position < cursor { cursor -= 1 }
            if cursor >= order.count { cursor = 0 }
            // A goto's target is a position in `order` too: it follows its item, or is
            // forgotten when its item is the one that failed.
            if let target = jump { jump = target == position ? nil : target > position ? target - 1 : target }
            if jump == nil { queuedMoves = [] }
            if order.isEmpty { everyImageFailed = true }
        }
        if wasCurrent {
            currentSince = now
            announced = false
            advanceAt = nil
        }
        actions += reconcile()
        if wasCurrent { actions += announceIfReady(at: now) }
        return actions
    }

    // MARK: What to draw and when

    /// When the carousel next needs the frame loop: `.animating` while a fade runs (draw paced
    /// frames), `.at(time)` for the next scheduled fade, `.idle` when nothing is scheduled (one
    /// image, an empty show, or waiting for an image).
    public enum Wake: Equatable, Sendable {
        case animating
        case at(Duration)
        case idle
    }

    /// See ``Wake``. While a finger is down it is `.idle`: the touch drives the frames.
    public var wake: Wake {
        if isHeld { return kenBurnsMoving ? .animating : .idle }
        if transition != nil { return .animating }
        if let at = advanceAt, canMove, !isPaused, !refreshWaiting {
            return kenBurnsMoving ? .animating : readyWake(due: at, role: Self.role(config.direction))
        }
        if let late = currentLateAt, !isPaused {
            if kenBurnsMoving { return .animating }
            if let p = previousSlot, slots[p].isReady { return .at(late) }
            return readyWake(due: late, role: Self.nextRole)
        }
        return kenBurnsMoving ? .animating : .idle
    }

    // MARK: Internals

    func wrap(_ position: Int) -> Int {
        let n = order.count
        return n == 0 ? 0 : ((position % n) + n) % n
    }

    private func involves(_ t: Transition, slot: Int) -> Bool {
        switch t {
        case .move(let from, let to, _, _): return from == slot || to == slot
        case .fadeIn(let s, _): return s == slot
        case .held(let h): return h.picture.base == slot || h.picture.overlay == slot
        case .settle(let s): return s.picture.base == slot || s.picture.overlay == slot
        }
    }

    /// The picture came to rest at `end`: in place (the show carries on as after a tap) or at
    /// a side (the neighbour is the current image now).
    private mutating func finishSettle(_ s: Settle, at end: Duration) -> [CarouselAction] {
        // Only the picture that stays keeps its motion; the one that left starts again next time.
        let staying = s.to == 0 ? s.picture.base : roles[s.to < 0 ? Self.nextRole : Self.previousRole]
        for slot in slots.indices where slot != staying && slot != s.picture.overlay { slots[slot].motionStart = nil }
        if s.to == 0 {
            return resume(after: Hold(picture: s.picture, origin: 0, caughtFade: s.caughtFade), at: end)
        }
        let direction: Direction = s.to < 0 ? .forward : .backward
        config.direction = direction  // auto-advance follows the last swipe (docs/carousel.md)
        if let base = s.picture.base, slots[base].stale { slots[base] = Slot() }
        let target = roles[Self.role(direction)].flatMap { slots[$0].item }
        stepCursor(direction)
        alignCursor(on: target)
        currentSince = end
        announced = false
        passedOver = []
        var actions = reconcile()
        actions += announceIfReady(at: end)
        return actions
    }

    /// The show carries on after a touch that left the picture in place.
    private mutating func resume(after hold: Hold, at now: Duration) -> [CarouselAction] {
        if let caught = hold.caughtFade {
            transition = caught.fade.restarted(at: now - caught.elapsed)
            return tick(at: now)
        }
        guard let slot = currentSlot, let item = currentIndex else { return [] }
        if !announced {
            // The image arrived while the finger held its placeholder: fade it in now.
            if slots[slot].isReady { transition = .fadeIn(slot: slot, start: now); slots[slot].motionStart = now }
            return []
        }
        advanceAt = now + max(.zero, interval(of: item) - advanceLead)
        return []
    }

    /// Drops a manual move waiting for its neighbour and the moves asked for after it (a finger
    /// down, a goto, a new playlist: the show is somewhere else now).
    private mutating func forgetWaitingMoves() {
        manualMoveDue = false
        movesAfterWait = []
    }

    private mutating func beginMove(_ direction: Direction, at start: Duration) -> [CarouselAction] {
        guard let from = currentSlot,
              let to = roles[direction == .forward ? Self.nextRole : Self.previousRole] else { return [] }
        advanceAt = nil
        manualMoveDue = false
        transition = .move(from: from, to: to, direction: direction, start: start)
        moveStyle = style(into: slots[to].item)
        slots[to].motionStart = start
        if duration(of: moveStyle) == .zero { return tick(at: start) }
        return []
    }

    private mutating func announceIfReady(at now: Duration) -> [CarouselAction] {
        guard !announced, let slot = currentSlot, slots[slot].isReady, let item = currentIndex else { return [] }
        announced = true
        everAnnounced = true
        emptyUntilReady = false
        if slots[slot].motionStart == nil { slots[slot].motionStart = now }
        advanceAt = now + max(.zero, interval(of: item) - advanceLead)
        // An image the playlist no longer lists (retiring: drawn again after a resize, say) is
        // on screen but never announced: a `shown` names an item of the playlist.
        var actions: [CarouselAction] = retiring != nil ? [] : [.shown(item: item, source: items[item].source, at: now)]
        if !passedOver.isEmpty {
            // The late current image came after all: its neighbours are the plain ones again.
            passedOver = []
            actions += reconcile()
        }
        return actions
    }

    /// The items each role should hold: [previous, current, next].
    private func desiredItems() -> [Int?] {
        let target = jump.map { order[$0] }
        if let r = retiring, let first = order.first, let last = order.last { return [last, r, target ?? first] }
        switch order.count {
        case 0: return [nil, nil, nil]
        case 1: return [nil, order[cursor], refreshesInPlace ? order[cursor] : nil]
        default: return [neighbour(-1), order[cursor], target ?? neighbour(1)]
        }
    }

    /// Gives every role a slot holding its item, reusing prepared slots and preparing only the
    /// ones that are missing (current first, then next, then previous).
    private mutating func reconcile() -> [CarouselAction] {
        let desired = desiredItems()
        var assigned: [Int?] = [nil, nil, nil]
        var taken = Set<Int>()
        let priority = [Self.currentRole, Self.nextRole, Self.previousRole]
        // A stale frame serves only the current role: the one on screen keeps it (the picture
        // never cuts to the new one: that cross-fades in, even when a new list comes meanwhile),
        // another only while no fresh ready frame of its item exists.
        func usable(_ s: Int, role r: Int) -> Bool {
            guard slots[s].stale else { return true }
            guard r == Self.currentRole, let item = slots[s].item else { return false }
            if roles[Self.currentRole] == s { return true }
            return !slots.indices.contains { $0 != s && slots[$0].item == item && !slots[$0].stale && slots[$0].isReady }
        }
        // 0. A transition under way keeps the slots it draws in their roles: a frame on screen is
        // never emptied nor prepared again mid-fade (the placeholder would fade in, then the
        // picture cut back); the roles are set right when it lands.
        if let t = transition {
            for r in priority {
                if let s = roles[r], slots[s].item != nil, involves(t, slot: s), !taken.contains(s) {
                    assigned[r] = s; taken.insert(s)
                }
            }
        }
        // 1. Roles whose slot already holds the right item keep it.
        for r in priority where assigned[r] == nil {
            if let want = desired[r], let s = roles[r], slots[s].item == want, !taken.contains(s), usable(s, role: r) {
                assigned[r] = s; taken.insert(s)
            }
        }
        // 2. Roles whose item sits in another slot take that slot.
        for r in priority where assigned[r] == nil {
            if let want = desired[r],
               let s = slots.indices.first(where: { !taken.contains($0) && slots[$0].item == want && usable($0, role: r) }) {
                assigned[r] = s; taken.insert(s)
            }
        }
        // 3. The rest get a free slot, prepared anew.
        var actions: [CarouselAction] = []
        for r in priority where assigned[r] == nil {
            guard let want = desired[r], let s = slots.indices.first(where: { !taken.contains($0) }) else { continue }
            assigned[r] = s; taken.insert(s)
            slots[s] = Slot(item: want, status: .pending(ticket: nextTicket))
            actions.append(.prepare(slot: s, item: want, ticket: nextTicket))
            nextTicket += 1
        }
        // Slots no role uses are emptied, so no more than the needed frames are held.
        for s in slots.indices where !taken.contains(s) { slots[s] = Slot() }
        roles = assigned
        // A stale frame that became current (it landed while its file changed again): its new
        // picture is prepared in the next slot now that the one-image show refreshes in place.
        if refreshesInPlace, desired[Self.nextRole] == nil, roles[Self.nextRole] == nil {
            return actions + reconcile()
        }
        return actions
    }
}
