// SPDX-License-Identifier: Apache-2.0
/// Where the show's policy reads wall time for item schedules (docs/schedules.md): one reading
/// of the device's clock and the time zone in force, given from outside so that the core reads
/// neither. The frame loop's driver is one: the real clock and libc's zone, or a wall clock that
/// runs with virtual time.
public protocol WallTimeSource: AnyObject {
    /// The wall clock (time since the Unix epoch) and the zone's rules now. The real source reads
    /// the zone again each time (`TZ` or /etc/localtime may have changed).
    func readWallTime() -> (sinceEpoch: Duration, zone: any TimeZoneRules)
    /// The farthest ahead a schedule's next boundary is waited for before looking again: a real
    /// clock can be set (NTP, `date -s`) and is taken up within it (60 s); nil for a clock that
    /// only runs with show time.
    var scheduleRecheck: Duration? { get }
}

/// The show's policy over the carousel (docs/schedules.md, docs/events-and-logs.md): which playlist
/// items are in the rotation by their schedules, fallback items standing in for a rotation none
/// of whose images can be shown, items that failed tried again after ``retryInterval``, the
/// failed sources logged once, and the round of the playlist (`playlist round done`).
///
/// A value, as ``Carousel`` is: it takes events with their show time, gives the carousel the
/// playlist again where the rotation changes (``Carousel/replaceItems(_:showing:at:)``) and
/// returns the carousel's actions; what should be logged comes back as ``Note``s
/// (``takeNotes()``). It reads no clock: its deadlines (``nextScheduleLook``, ``nextRetry``) are
/// show times for the loop to wake at, and wall time comes from the ``WallTimeSource`` handed to
/// the calls that look at schedules. Tests drive it with any times they like.
public struct ShowPolicy: Sendable {
    /// Something to log, or the empty screen's words to change.
    public enum Note: Equatable, Sendable {
        /// The rotation is `showing` items of the playlist's `of` by their schedules;
        /// `fallbackOnly`: they are the fallback items (nothing else is scheduled now).
        case rotationChanged(showing: Int, of: Int, fallbackOnly: Bool)
        /// No item of `of` is in its schedule now and none is a fallback: the empty screen shows.
        case nothingScheduled(of: Int)
        /// None of the `scheduled` items could be shown: `standby` fallback items stand in (said
        /// once one of them is ready: a fallback that failed too stands in for nothing).
        case fallbackStandingIn(scheduled: Int, standby: Int)
        /// None of the `scheduled` items could be shown, and none of the `standby` fallback items
        /// either: the empty screen shows until one loads (their retries go on).
        case fallbackFailedToo(scheduled: Int, standby: Int)
        /// A scheduled item loaded: the fallback items stand down.
        case fallbackStoodDown
        /// Every item of the round was shown (`shown`) or could not be loaded (`failed`), of
        /// `items` (in the rotation, when `inRotation`).
        case roundDone(shown: Int, items: Int, inRotation: Bool, failed: Int)
        /// `source` left the show (`reason`); said once until it works again. `unavailable`: its
        /// download is not there (tried again every ``ShowPolicy/retryInterval``).
        case imageSkipped(source: String, reason: String, unavailable: Bool)
        /// `source`, which had failed, is in the show again.
        case imageBack(source: String)
        /// The empty screen's words from now on.
        case emptyScreen(EmptyScreen)
    }

    /// What the screen says when there is no image to show.
    public enum EmptyScreen: Equatable, Sendable {
        /// There are items, but none could be shown (``SceneRenderer/noneShownText``).
        case noneShown
        /// No item is in its schedule now (``SceneRenderer/nothingScheduledText``).
        case nothingScheduled
        /// The playlist is empty: the caller says why (a missing source, a manifest never had).
        case emptyPlaylist
    }

    /// The playlist as last given (items that failed are in it, to be tried again).
    public private(set) var playlist: [PlaylistItem]
    /// The playlist indices in the rotation by their schedules; nil: all (no schedules).
    public private(set) var rotation: [Int]?
    /// Items that failed (a download, a decode) are tried again this long after the failure:
    /// the carousel gets the playlist again (60 s).
    public var retryInterval: Duration
    /// When the schedules are looked at next (a boundary, or ``WallTimeSource/scheduleRecheck``);
    /// nil without schedules.
    public private(set) var nextScheduleLook: Duration?
    /// When the items that failed are tried again; nil when none failed since the last try.
    public private(set) var nextRetry: Duration?
    /// The order the carousel plays the rotation in (playlist indices, ``PlaylistOrder``); nil:
    /// as listed. Only the items it names play: items of the rotation it leaves out are not
    /// shown (`on-this-day` names only the day's photos), items it names that are out of the
    /// rotation are skipped. When it names none of the rotation, the rotation plays as listed.
    public private(set) var sequence: [Int]?

    /// A schedule took the image on screen out of the rotation: it gives way once the carousel is still.
    private var leaveRetired = false
    private var standIn = FallbackStandIn()
    private var round = PlaylistRound()
    private var failedSources: Set<String> = []
    private var notes: [Note] = []

    public init(playlist: [PlaylistItem], retryInterval: Duration = .seconds(60)) {
        self.playlist = playlist
        self.retryInterval = retryInterval
    }

    /// The notes since the last call, in order.
    public mutating func takeNotes() -> [Note] {
        defer { notes = [] }
        return notes
    }

    /// The show starts (`items` nil), or a new playlist came (a manifest, a directory change):
    /// the round starts again, the rotation is worked out and the carousel gets the playlist.
    /// `sequence` is the play order of the playlist's indices (``sequence``); a new playlist
    /// without one is played as listed.
    public mutating func begin(_ items: [PlaylistItem]? = nil, sequence: [Int]? = nil, at now: Duration,
                               wall: any WallTimeSource, carousel: inout Carousel) -> [CarouselAction] {
        if let items {
            playlist = items
            round = PlaylistRound()
            self.sequence = nil
        }
        if let sequence { self.sequence = sequence }
        return applyRotation(at: now, replace: true, wall: wall, carousel: &carousel)
    }

    /// At ``nextScheduleLook``: the rotation again; the carousel gets the playlist when it changed.
    public mutating func lookAtSchedules(at now: Duration, wall: any WallTimeSource,
                                         carousel: inout Carousel) -> [CarouselAction] {
        applyRotation(at: now, replace: false, wall: wall, carousel: &carousel)
    }

    /// Items that left the show (a failed download or decode) come back into it: at
    /// ``nextRetry``, or at once (SIGHUP). The carousel gets the playlist again; one that fails
    /// again sets the next retry.
    public mutating func retryFailed(at now: Duration, carousel: inout Carousel) -> [CarouselAction] {
        nextRetry = nil
        guard carousel.activeCount < rotation?.count ?? playlist.count else { return [] }
        return carousel.replaceItems(playlist, showing: played(rotation, carousel), at: now)
    }

    /// The carousel plays the rotation in `sequence` from now on (``sequence``): the image on
    /// screen stays, and the next move goes to the item after it in `sequence`.
    public mutating func reorder(_ sequence: [Int]?, at now: Duration, carousel: inout Carousel) -> [CarouselAction] {
        guard sequence != self.sequence else { return [] }
        self.sequence = sequence
        return carousel.replaceItems(playlist, showing: played(rotation, carousel), at: now)
    }

    /// The rotation (nil: the whole playlist) in the play order of ``sequence``: the items of
    /// the rotation it names, each once, in its order (the rotation itself when it names none).
    private func ordered(_ rotation: [Int]?) -> [Int]? {
        guard let sequence else { return rotation }
        let inRotation = rotation.map { Set($0) }
        var seen = Set<Int>()
        let played = sequence.filter {
            playlist.indices.contains($0) && inRotation?.contains($0) ?? true && seen.insert($0).inserted
        }
        return played.isEmpty ? rotation : played
    }

    /// The sequence the carousel gets for `rotation`: ``ordered(_:)``, paired when
    /// ``pairLayout`` is set (``PhotoPairs``; ``partners`` is set). The pair on screen in
    /// `carousel` stays a pair while both its pictures are in the sequence.
    /// `dropFailed`: the pictures that failed are left out (they come back at the retry).
    private mutating func played(_ rotation: [Int]?, _ carousel: Carousel, dropFailed: Bool = false) -> [Int]? {
        let plain = ordered(rotation)
        guard let layout = pairLayout, !shapes.isEmpty else {
            partners = [:]
            partnerSources = [:]
            return plain
        }
        let base = plain ?? Array(playlist.indices)
        // The pair on screen, by source: the carousel's indices (and those of ``partners``) may
        // be of the playlist before this one; they are found again in this one.
        var keep: (first: Int, second: Int)?
        if let c = carousel.currentItem, c < carousel.items.count,
           let second = partnerSources[carousel.items[c].source],
           let f = base.first(where: { playlist[$0].source == carousel.items[c].source }),
           let s = base.first(where: { playlist[$0].source == second }) {
            keep = (f, s)
        }
        // A picture that failed (out of the show until its retry) is never a first nor a partner:
        // the picture it would take is shown as any other, paired with another in reach.
        // In shuffle rounds, two pictures pair only when both have a place still to come this
        // round or neither has: a partner from past the round's end would be shown twice in it.
        let together: ((Int, Int) -> Bool)? = roundToCome.map { toCome in
            { [playlist] a, b in toCome.contains(playlist[a].source) == toCome.contains(playlist[b].source) }
        }
        let paired = PhotoPairs.pair(base, layout: layout, shape: { [playlist, shapes, failedSources] in
            let source = playlist[$0].source
            return failedSources.contains(source) ? nil : shapes[source]
        }, keep: keep, together: together)
        partners = paired.partners
        partnerSources = Dictionary(partners.map { (playlist[$0.key].source, playlist[$0.value].source) },
                                    uniquingKeysWith: { a, _ in a })
        var sequence = partners.isEmpty ? plain : paired.sequence
        if dropFailed, !failedSources.isEmpty {
            sequence = (sequence ?? base).filter { !failedSources.contains(playlist[$0].source) }
        }
        return sequence
    }

    /// The sources with a place still to come in the shuffle round (``ShuffleBag/upcoming``), as
    /// the caller last set them before a step; nil: the order has no rounds. Read only when
    /// pictures pair.
    public var roundToCome: Set<String>?
    /// The sources of ``partners`` (first's source to partner's), kept across playlists.
    private var partnerSources: [String: String] = [:]
    /// A first of a pair failed: the sequence is paired again at the next ``review(at:carousel:)``.
    private var pairsStale = false

    /// `--pair-portraits`: how two pictures share the screen; nil: never paired.
    public private(set) var pairLayout: PairLayout?
    /// The shapes of the playlist's pictures by source, as read off the frame loop (a source
    /// missing: not known, never paired).
    public private(set) var shapes: [String: PhotoShape] = [:]
    /// The pairs the carousel plays: the partner of each first (playlist indices). The first
    /// stands in the carousel's sequence, its partner does not (docs/carousel.md "Pairs").
    public private(set) var partners: [Int: Int] = [:]

    /// The photos in `carousel`'s show: its items (``Carousel/activeCount``, where a pair is one
    /// item) and the partners of those that are firsts of pairs (``partners``).
    public func photosInShow(_ carousel: Carousel) -> Int {
        guard !partners.isEmpty else { return carousel.activeCount }
        let inShow = Set(carousel.order)
        return carousel.activeCount + partners.keys.filter { inShow.contains($0) }.count
    }

    /// The first of the pair `item` is the partner of, if it is one.
    public func first(ofPartner item: Int) -> Int? { partners.first { $0.value == item }?.key }

    /// Pictures pair as `layout` says from now on (nil: never; the screen turned, say): the
    /// carousel gets the sequence again when the pairs change.
    public mutating func setPairLayout(_ layout: PairLayout?, at now: Duration,
                                       carousel: inout Carousel) -> [CarouselAction] {
        guard layout != pairLayout else { return [] }
        pairLayout = layout
        return repair(at: now, carousel: &carousel)
    }

    /// The shapes of pictures read off the frame loop (by source; they are added to those
    /// known): the carousel gets the sequence again when the pairs change.
    public mutating func learnShapes(_ learnt: [String: PhotoShape], at now: Duration,
                                     carousel: inout Carousel) -> [CarouselAction] {
        let before = shapes
        shapes.merge(learnt) { $1 }
        guard shapes != before, pairLayout != nil else { return [] }
        return repair(at: now, carousel: &carousel)
    }

    /// The carousel gets the sequence again when pairing it gives other pairs than it plays.
    private mutating func repair(at now: Duration, carousel: inout Carousel,
                                 dropFailed: Bool = false) -> [CarouselAction] {
        let before = partners
        let sequence = played(rotation, carousel, dropFailed: dropFailed)
        guard partners != before else { return [] }
        return carousel.replaceItems(playlist, showing: sequence, at: now)
    }

    /// Whether playlist item `index` is in the rotation now (`goto` refuses one that is not).
    public func inRotation(_ index: Int) -> Bool { rotation?.contains(index) ?? true }

    /// `source` was prepared: when it had failed, it is back in the show.
    public mutating func imageReady(source: String) {
        if !failedSources.isEmpty, failedSources.remove(source) != nil { notes.append(.imageBack(source: source)) }
    }

    /// `source` could not be prepared at `now` (`unavailable`: its download is not there) and left
    /// the show: said once (not again while it keeps failing), and tried again ``retryInterval``
    /// from now (or sooner, when another failure set an earlier retry).
    public mutating func imageFailed(source: String, reason: String, unavailable: Bool = false, at now: Duration) {
        if failedSources.insert(source).inserted {
            notes.append(.imageSkipped(source: source, reason: reason, unavailable: unavailable))
        }
        if nextRetry.map({ $0 > now + retryInterval }) ?? true { nextRetry = now + retryInterval }
        if pairLayout != nil,
           partners.keys.contains(where: { playlist.indices.contains($0) && playlist[$0].source == source }) {
            pairsStale = true
        }
    }

    /// After the carousel took the finished decodes: fallback items stand in for a rotation none
    /// of whose images can be shown (each failed), or stand down when a scheduled one loaded; the
    /// round's line is written once every item was shown or could not be loaded.
    public mutating func review(at now: Duration, carousel: inout Carousel) -> [CarouselAction] {
        var actions = reviewStandIn(at: now, carousel: &carousel)
        if pairsStale {
            // The partner of a first that failed comes back into the sequence.
            pairsStale = false
            actions += repair(at: now, carousel: &carousel, dropFailed: true)
        }
        // The frame loop reviews on every turn. Between `shown` events (which look at the round
        // themselves) only a change of the carousel's order (an item failed and left it, a new
        // list) can end the round; comparing with the order last looked at costs nothing while
        // the array is unchanged (the same storage), so a folder of 100000 photos is not counted
        // through on every frame.
        if carousel.order != round.order {
            round.order = carousel.order
            reviewRound(carousel)
        }
        return actions
    }

    /// A `shown` event for playlist item `item`.
    public mutating func shown(item: Int, carousel: Carousel) {
        guard !round.reported else { return }
        round.shown.insert(item)
        reviewRound(carousel)
    }

    /// At a schedule's boundary the image on screen that left the rotation gives way at once (a
    /// cross-fade to the rotation's first item) rather than after its interval; once any
    /// transition under way has ended and no finger holds the show. Call after each tick.
    public mutating func leaveRetiredImage(at now: Duration, carousel: inout Carousel) -> [CarouselAction] {
        guard leaveRetired, !carousel.isAnimating, !carousel.isHeld else { return [] }
        leaveRetired = false
        guard carousel.currentItem == nil, carousel.activeCount > 0 else { return [] }
        return carousel.move(.forward, at: now)
    }

    /// Works out which items are in the rotation now (one reading of the wall time) and sets
    /// ``nextScheduleLook`` at the next boundary. The carousel gets the playlist again when the
    /// rotation changed, or always when `replace` (a new playlist). Without schedules or
    /// fallback items, no wall time is read: every item is in the rotation.
    private mutating func applyRotation(at now: Duration, replace: Bool, wall: any WallTimeSource,
                                        carousel: inout Carousel) -> [CarouselAction] {
        guard playlist.contains(where: { $0.schedule != nil || $0.fallback }) else {
            notes.append(.emptyScreen(playlist.isEmpty ? .emptyPlaylist : .noneShown))
            nextScheduleLook = nil
            standIn = FallbackStandIn()
            let hadRotation = rotation != nil
            rotation = nil
            guard replace || hadRotation else { return [] }
            return carousel.replaceItems(playlist, showing: played(nil, carousel), at: now)
        }
        let (sinceEpoch, zone) = wall.readWallTime()
        let (showing, standby, next) = ScheduledRotation.showing(playlist, atEpochSecond: sinceEpoch.components.seconds,
                                                                 zone: zone)
        if let next {
            let until = Duration.seconds(next) - sinceEpoch
            nextScheduleLook = now + (wall.scheduleRecheck.map { min(until, $0) } ?? until)
        } else {
            nextScheduleLook = nil
        }
        let empty: EmptyScreen = !showing.isEmpty ? .noneShown : playlist.isEmpty ? .emptyPlaylist : .nothingScheduled
        notes.append(.emptyScreen(empty))
        if standIn.active, standIn.scheduled == showing, standIn.standby == standby {
            // Still standing in for the same rotation: the fallback items stay on (a look at the
            // schedules, or the same playlist again, does not end it; an image that loads does).
            return replace ? carousel.replaceItems(playlist, showing: played(rotation, carousel), at: now) : []
        }
        standIn = FallbackStandIn(scheduled: showing, standby: standby)
        guard replace || showing != rotation else { return [] }
        if showing != rotation {
            let fallbackOnly = !showing.isEmpty && showing.allSatisfy { playlist[$0].fallback }
            notes.append(showing.isEmpty ? .nothingScheduled(of: playlist.count)
                         : .rotationChanged(showing: showing.count, of: playlist.count, fallbackOnly: fallbackOnly))
            round = PlaylistRound()
        }
        rotation = showing
        leaveRetired = !replace
        return carousel.replaceItems(playlist, showing: played(showing, carousel), at: now)
    }

    /// Fallback items stand in for a rotation none of whose images can be shown (each failed
    /// to download or decode): the rotation becomes those items and the fallback items, so
    /// the failed ones are tried again at each retry while a fallback image stays on screen (no
    /// empty screen in between, no flapping). The first of the scheduled items that loads ends
    /// it: the rotation is the scheduled items again, and the fallback image gives way to it.
    private mutating func reviewStandIn(at now: Duration, carousel: inout Carousel) -> [CarouselAction] {
        guard let current = rotation, !standIn.standby.isEmpty else { return [] }
        if !standIn.active {
            guard current == standIn.scheduled, carousel.activeCount == 0 else { return [] }
            standIn.active = true
            let both = (standIn.scheduled + standIn.standby).sorted()
            rotation = both
            return carousel.replaceItems(playlist, showing: played(both, carousel), at: now)
        }
        if standIn.scheduled.contains(where: { !carousel.readySlots(ofItem: $0).isEmpty }) {
            standIn.active = false
            rotation = standIn.scheduled
            notes.append(.fallbackStoodDown)
            leaveRetired = true
            return carousel.replaceItems(playlist, showing: played(standIn.scheduled, carousel), at: now)
        }
        // Said once a fallback image is ready to stand in, or once they all failed too.
        if !standIn.said, standIn.standby.contains(where: { !carousel.readySlots(ofItem: $0).isEmpty }) {
            standIn.said = true
            notes.append(.fallbackStandingIn(scheduled: standIn.scheduled.count, standby: standIn.standby.count))
        } else if !standIn.said, !standIn.failedSaid, carousel.activeCount == 0 {
            standIn.failedSaid = true
            notes.append(.fallbackFailedToo(scheduled: standIn.scheduled.count, standby: standIn.standby.count))
        }
        return []
    }

    /// Writes the round's note once every item of the rotation was shown or could not be
    /// loaded (failed and out of the show until its retry); an item still downloading or
    /// decoding keeps it waiting.
    private mutating func reviewRound(_ carousel: Carousel) {
        guard !round.reported else { return }
        let items = rotation ?? Array(playlist.indices)
        guard !items.isEmpty else { return }
        // The show's order looked at once, not once per item (`isInShow` searches it): per item
        // made each review quadratic, and a folder of 4000 photos took 77 s for a 2 s show.
        // A partner is in the show with its first (it is not in the carousel's order).
        var inShow = Set(carousel.order)
        for (first, partner) in partners where inShow.contains(first) { inShow.insert(partner) }
        let failed = items.filter { !round.shown.contains($0) && !inShow.contains($0) }.count
        let shown = items.filter { round.shown.contains($0) }.count
        guard shown + failed == items.count else { return }
        round.reported = true
        notes.append(.roundDone(shown: shown, items: items.count, inRotation: rotation != nil, failed: failed))
    }
}

/// The fallback items in their schedule while other items are in the rotation (``standby``),
/// and whether they stand in for those (``active``: none of ``scheduled`` could be shown).
struct FallbackStandIn: Sendable {
    var scheduled: [Int] = []
    var standby: [Int] = []
    var active = false
    /// ``ShowPolicy/Note/fallbackStandingIn(scheduled:standby:)`` was said (a fallback item is ready).
    var said = false
    /// ``ShowPolicy/Note/fallbackFailedToo(scheduled:standby:)`` was said.
    var failedSaid = false
}

/// The items of the current playlist shown at least once (playlist indices), and whether the
/// round's note was written. A new playlist or rotation starts it again.
struct PlaylistRound: Sendable {
    var shown: Set<Int> = []
    var reported = false
    /// The carousel's order when ``ShowPolicy/review(at:carousel:)`` last looked at the round.
    var order: [Int]?
}
