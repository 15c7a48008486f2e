// SPDX-License-Identifier: Apache-2.0

// The carousel's picture (what the screen shows at a time) and the actions of one call as they
// stand at its end; the state and the events are in Carousel.swift.
extension Carousel {
    /// What the screen shows at `now` (call after ``tick(at:)`` for the same time).
    public func scene(at now: Duration) -> Scene {
        guard let current = currentSlot, !order.isEmpty else { return Scene(base: .noImages) }
        // Items back from their retry after every one had failed: the empty screen until one is ready.
        if emptyUntilReady, transition == nil, !slots[current].isReady { return Scene(base: .noImages) }
        var scene: Scene
        switch transition {
        case .held(let hold)?:
            return slidingScene(hold.picture, offset: hold.dragOffset ?? hold.origin, at: now)
        case .settle(let settle)?:
            return slidingScene(settle.picture, offset: settleOffset(settle, at: now), at: now)
        case .move(let from, _, let direction, let start)? where moveStyle == .slide:
            return slidingScene(Picture(base: from, overlay: nil, weight: 0),
                                offset: slideOffset(direction, since: start, now: now), at: now)
        case .move(let from, let to, let direction, let start)?:
            let w = weight(since: start, now: now)
            scene = Scene(base: layer(from, at: now), overlay: layer(to, at: now), weight: w)
            if config.showDots, retiring == nil {
                let target = returning ? cursor : wrap(cursor + direction.step)
                scene.dots = Scene.PageDots(count: order.count, current: w >= 128 ? target : cursor)
            }
            return scene
        case .fadeIn(let slot, let start)?:
            scene = Scene(base: .placeholder, overlay: layer(slot, at: now), weight: weight(since: start, now: now))
        case nil:
            scene = Scene(base: layer(current, at: now))
        }
        if config.showDots, order.count > 1, retiring == nil {
            scene.dots = Scene.PageDots(count: order.count, current: cursor)
        }
        return scene
    }

    /// The layer of physical slot `slot` at `now`: its frame, or with ``CarouselConfig/kenBurns``
    /// its moving view (its item's seed, ``KenBurns/seed(source:)``, and how far its motion has
    /// come), or the placeholder while it is not ready.
    func layer(_ slot: Int, at now: Duration) -> Scene.Layer {
        guard slots[slot].isReady else { return .placeholder }
        guard config.kenBurns, let item = slots[slot].item, item < items.count else { return .slot(slot) }
        return .kenBurns(slot: slot, seed: KenBurns.seed(source: items[item].source),
                         progress: motionProgress(slot, at: now))
    }

    /// How far the Ken Burns motion of `slot`'s picture has come at `now`, 0...1: linear in
    /// time over its item's interval and one fade (from the start of the move that brings it
    /// in to the end of the one that takes it away); 0 before it began.
    func motionProgress(_ slot: Int, at now: Duration) -> Double {
        guard let start = slots[slot].motionStart, let item = slots[slot].item, item < items.count else { return 0 }
        let span = (items[item].duration ?? config.interval) + fade
        guard span > .zero else { return 1 }
        let p = Double((now - start).wholeNanoseconds) / Double(span.wholeNanoseconds)
        return min(1, max(0, p))
    }

    /// Whether the picture on screen is still in its Ken Burns motion (frames are then drawn
    /// at the display's rate, ``wake``).
    var kenBurnsMoving: Bool {
        guard config.kenBurns, let c = currentSlot, slots[c].isReady else { return false }
        return slots[c].motionStart != nil && motionProgress(c, at: lastTick) < 1
    }

    /// The offset of a slide move in `direction` at `now`: eased in and out from 0 to a whole
    /// width, to the left going forward (the next picture comes in from the right).
    func slideOffset(_ direction: Direction, since start: Duration, now: Duration) -> Double {
        let f = Easing.easeInOutFraction(elapsed: (now - start).wholeNanoseconds, total: fade.wholeNanoseconds)
        return Double(direction == .forward ? -config.screenWidth : config.screenWidth) * f
    }

    func weight(since start: Duration, now: Duration) -> Int {
        Easing.easeInOutWeight(elapsed: (now - start).wholeNanoseconds, total: fade.wholeNanoseconds)
    }

    func settleOffset(_ s: Settle, at now: Duration) -> Double {
        let f = Easing.easeOutFraction(elapsed: (now - s.start).wholeNanoseconds, total: config.settle.wholeNanoseconds)
        return s.from + (s.to - s.from) * f
    }

    /// The scene of a picture moved sideways by `offset`, with the neighbour on that side.
    func slidingScene(_ picture: Picture, offset: Double, at now: Duration) -> Scene {
        let o = Int(offset.rounded())
        var scene = Scene(base: picture.base.map { layer($0, at: now) } ?? .placeholder,
                          overlay: picture.overlay.map { layer($0, at: now) }, weight: picture.weight, offset: o)
        if o != 0 {
            let role = o < 0 ? Self.nextRole : Self.previousRole
            scene.neighbour = roles[role].map { layer($0, at: now) } ?? .placeholder
        }
        if config.showDots, order.count > 1, retiring == nil {
            let beyondHalf = 2 * abs(o) > config.screenWidth
            scene.dots = Scene.PageDots(count: order.count,
                                        current: beyondHalf ? wrap(cursor + (o < 0 ? 1 : -1)) : cursor)
        }
        return scene
    }

    /// The actions of one call as they stand at its end, for the frame loop that reads them
    /// only then: one call may make several steps (a fade ends, a waiting playlist replaces the
    /// old one, a retiring image leaves ``items``), and an action of an earlier step can name an
    /// item by an index that a later step renumbered or removed. A `prepare` is kept only while
    /// its slot still waits for its ticket, naming the slot's item now; a `shown` or `dropped`
    /// names its source's index now (dropped when the list no longer has it).
    func settled(_ actions: [CarouselAction]) -> [CarouselAction] {
        func index(_ item: Int, _ source: String) -> Int? {
            item < items.count && items[item].source == source ? item : items.firstIndex { $0.source == source }
        }
        return actions.compactMap { action in
            switch action {
            case .prepare(let slot, _, let ticket):
                guard slots[slot].status == .pending(ticket: ticket), let item = slots[slot].item else { return nil }
                return .prepare(slot: slot, item: item, ticket: ticket)
            case .shown(let item, let source, let at):
                // Never the retiring image (a later step retired it): it is past the list's end.
                guard let i = index(item, source), i != retiring else { return nil }
                return .shown(item: i, source: source, at: at)
            case .dropped(let item, let source):
                return index(item, source).map { .dropped(item: $0, source: source) }
            }
        }
    }
}
