// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

// The show's policy on virtual time, over a real carousel: what the frame loop does with it
// (the carousel's actions, the decodes finishing, `shown` events), played here by hand.

private func ms(_ v: Int) -> Duration { .milliseconds(v) }

/// A wall clock at a set time, in UTC, counting its readings.
private final class TestWall: WallTimeSource {
    var sinceEpoch: Duration
    var scheduleRecheck: Duration?
    private(set) var reads = 0
    init(_ sinceEpoch: Duration, recheck: Duration? = nil) { self.sinceEpoch = sinceEpoch; scheduleRecheck = recheck }
    func readWallTime() -> (sinceEpoch: Duration, zone: any TimeZoneRules) {
        reads += 1
        return (sinceEpoch, FixedOffsetZone(seconds: 0))
    }
}

/// 2026-03-02 at `hour`:`minute` UTC.
private func wallAt(_ hour: Int, _ minute: Int = 0) -> Duration {
    .seconds(LocalDate(year: 2026, month: 3, day: 2).daysSinceEpoch * 86_400 + Int64(hour * 3600 + minute * 60))
}

private func window(_ text: String) throws -> ItemSchedule { ItemSchedule(times: [try ItemSchedule.parseWindow(text)]) }

/// The policy, a carousel, and what the loop would do with their actions.
private struct Show {
    var h: Harness
    var policy: ShowPolicy
    var notes: [ShowPolicy.Note] = []
    let wall: TestWall

    init(_ items: [PlaylistItem], wall: TestWall, interval: Duration = .seconds(10)) {
        h = Harness(count: 0)
        h.carousel = Carousel(items: items, config: CarouselConfig(interval: interval, fade: .zero))
        policy = ShowPolicy(playlist: items)
        self.wall = wall
    }

    var currentName: String? { h.carousel.currentItem.map { String(h.carousel.items[$0].source.dropFirst(3)) } }

    /// Carousel actions as the loop takes them; `shown` events go to the policy's round.
    mutating func take(_ actions: [CarouselAction]) {
        let before = h.shown.count
        h.record(actions)
        for s in h.shown[before...] {
            policy.shown(item: s.item, carousel: h.carousel)
            // A pair's partner is shown with its first (the frame loop counts both).
            if let p = policy.partners[s.item] { policy.shown(item: p, carousel: h.carousel) }
        }
        notes += policy.takeNotes()
    }

    /// Every outstanding prepare finishes at `now` (those of `failing` sources fail), then the
    /// policy reviews the show, as the loop's accept does; again for what that asked for.
    mutating func decode(at now: Duration, failing: Set<String> = []) {
        repeat {
            decodeOnce(at: now, failing: failing)
        } while h.prepares.contains { h.carousel.status(ofSlot: $0.slot) == .pending(ticket: $0.ticket) }
    }

    private mutating func decodeOnce(at now: Duration, failing: Set<String>) {
        while let p = h.prepares.first(where: { h.carousel.status(ofSlot: $0.slot) == .pending(ticket: $0.ticket) }) {
            let name = String(h.carousel.items[p.item].source.dropFirst(3))
            if failing.contains(name) {
                let actions = h.carousel.imageFailed(ticket: p.ticket, at: now)
                policy.imageFailed(source: h.carousel.items[p.item].source, reason: "test", at: now)
                take(actions)
            } else {
                policy.imageReady(source: h.carousel.items[p.item].source)
                take(h.carousel.imageReady(ticket: p.ticket, at: now))
            }
        }
        take(policy.review(at: now, carousel: &h.carousel))
    }

    mutating func start(failing: Set<String> = []) {
        take(policy.begin(at: .zero, wall: wall, carousel: &h.carousel))
        take(h.carousel.start(at: .zero))
        decode(at: .zero, failing: failing)
    }

    /// One turn at `now`: the schedules and the retry when due, the decodes, the carousel's tick
    /// and a retired image leaving.
    mutating func turn(at now: Duration, failing: Set<String> = []) {
        if let look = policy.nextScheduleLook, look <= now {
            take(policy.lookAtSchedules(at: now, wall: wall, carousel: &h.carousel))
        }
        if let retry = policy.nextRetry, retry <= now { take(policy.retryFailed(at: now, carousel: &h.carousel)) }
        decode(at: now, failing: failing)
        take(h.carousel.tick(at: now))
        decode(at: now, failing: failing)
        take(policy.leaveRetiredImage(at: now, carousel: &h.carousel))
        decode(at: now, failing: failing)
    }
}

private func items(_ names: String..., schedules: [String: String] = [:],
                   fallback: Set<String> = []) throws -> [PlaylistItem] {
    try names.map {
        PlaylistItem(source: "/p/\($0)", schedule: try schedules[$0].map(window), fallback: fallback.contains($0))
    }
}

@Test func withoutSchedulesEveryItemIsInTheRotationAndNoWallTimeIsRead() throws {
    let wall = TestWall(wallAt(6))
    var show = Show(try items("a", "b"), wall: wall)
    show.start()
    #expect(wall.reads == 0)
    #expect(show.policy.rotation == nil && show.policy.nextScheduleLook == nil)
    #expect(show.h.shown.map(\.item) == [0])
    #expect(show.notes.first == .emptyScreen(.noneShown))
    // An empty playlist says so (the loop words why).
    var empty = Show([], wall: wall)
    empty.start()
    #expect(empty.notes == [.emptyScreen(.emptyPlaylist)])
}

@Test func aScheduleBoundaryChangesTheRotationAndTheRetiredImageGivesWayAtOnce() throws {
    // 06:00: only the fallback logo; from 07:00 breakfast, from 11:00 lunch.
    let wall = TestWall(wallAt(6))
    let playlist = try items("breakfast", "lunch", "logo",
                             schedules: ["breakfast": "07:00-11:00", "lunch": "11:00-15:00"], fallback: ["logo"])
    var show = Show(playlist, wall: wall, interval: .seconds(86_400))
    show.start()
    #expect(show.policy.rotation == [2] && show.currentName == "logo")
    #expect(show.notes.contains(.rotationChanged(showing: 1, of: 3, fallbackOnly: true)))
    #expect(show.policy.nextScheduleLook == .seconds(3600), "the next boundary, 07:00, an hour of show time away")
    show.notes = []
    // 07:00: breakfast enters; the logo, out of the rotation, gives way now (not after a day).
    wall.sinceEpoch = wallAt(7)
    show.turn(at: .seconds(3600))
    #expect(show.policy.rotation == [0])
    // Breakfast, the whole rotation, shown: the round of the new rotation is done.
    #expect(show.notes == [.emptyScreen(.noneShown), .rotationChanged(showing: 1, of: 3, fallbackOnly: false),
                           .roundDone(shown: 1, items: 1, inRotation: true, failed: 0)])
    #expect(show.currentName == "breakfast" && show.h.shown.last?.at == .seconds(3600))
    #expect(!show.policy.inRotation(2) && show.policy.inRotation(0))
    #expect(show.policy.nextScheduleLook == .seconds(5 * 3600))
}

@Test func onAClockThatCanBeSetTheSchedulesAreLookedAtAgainWithinTheRecheck() throws {
    let wall = TestWall(wallAt(6), recheck: .seconds(60))
    var show = Show(try items("a", schedules: ["a": "07:00-08:00"]), wall: wall)
    show.start()
    #expect(show.policy.nextScheduleLook == .seconds(60))
    // Set forward to 07:30 meanwhile: the next look takes it up.
    wall.sinceEpoch = wallAt(7, 30)
    show.turn(at: .seconds(60))
    #expect(show.policy.rotation == [0] && show.currentName == "a")
    #expect(show.policy.nextScheduleLook == .seconds(120))
}

@Test func fallbackItemsStandInWhileNoScheduledImageLoadsAndStandDownWhenOneDoes() throws {
    let wall = TestWall(wallAt(8))
    var show = Show(try items("gone", "logo", schedules: ["gone": "07:00-11:00"], fallback: ["logo"]), wall: wall)
    show.start(failing: ["gone"])
    // The one scheduled item failed: the logo stands in, and `gone` is tried again in 60 s.
    #expect(show.notes.contains(.fallbackStandingIn(scheduled: 1, standby: 1)))
    #expect(show.policy.rotation == [0, 1] && show.currentName == "logo")
    #expect(show.notes.filter { if case .imageSkipped = $0 { true } else { false } }
            == [.imageSkipped(source: "/p/gone", reason: "test", unavailable: false)])
    #expect(show.policy.nextRetry == .seconds(60))
    // Failing again at the retry: no second note, the logo stays, the next retry a minute on.
    show.notes = []
    show.turn(at: .seconds(60), failing: ["gone"])
    #expect(show.notes.isEmpty && show.currentName == "logo" && show.policy.nextRetry == .seconds(120))
    // It loads at the next retry: the fallback stands down, the logo gives way at once.
    show.turn(at: .seconds(120))
    #expect(show.notes == [.imageBack(source: "/p/gone"), .fallbackStoodDown])
    #expect(show.policy.rotation == [0] && show.currentName == "gone")
    #expect(show.h.shown.map(\.item) == [1, 0])
}

/// The fallback failed too: it is not said to stand in; that it failed too is said once, and
/// when it loads at a retry it is said to stand in then.
@Test func aFallbackThatFailedTooIsNotSaidToStandIn() throws {
    let wall = TestWall(wallAt(8))
    var show = Show(try items("gone", "logo", schedules: ["gone": "07:00-11:00"], fallback: ["logo"]), wall: wall)
    show.start(failing: ["gone", "logo"])
    #expect(!show.notes.contains(.fallbackStandingIn(scheduled: 1, standby: 1)), "\(show.notes)")
    #expect(show.notes.filter { $0 == .fallbackFailedToo(scheduled: 1, standby: 1) }.count == 1, "\(show.notes)")
    show.notes = []
    show.turn(at: .seconds(60), failing: ["gone", "logo"])
    #expect(!show.notes.contains(.fallbackFailedToo(scheduled: 1, standby: 1)), "said once: \(show.notes)")
    show.turn(at: .seconds(120), failing: ["gone"])
    #expect(show.notes.contains(.fallbackStandingIn(scheduled: 1, standby: 1)), "\(show.notes)")
    #expect(show.currentName == "logo")
}

@Test func aSecondFailureDoesNotPutTheRetryOff() throws {
    var policy = ShowPolicy(playlist: try items("a", "b"))
    policy.imageFailed(source: "/p/a", reason: "x", at: ms(1000))
    policy.imageFailed(source: "/p/b", reason: "y", unavailable: true, at: ms(5000))
    policy.imageFailed(source: "/p/a", reason: "x", at: ms(9000))
    #expect(policy.nextRetry == ms(61_000))
    #expect(policy.takeNotes() == [.imageSkipped(source: "/p/a", reason: "x", unavailable: false),
                                   .imageSkipped(source: "/p/b", reason: "y", unavailable: true)])
    policy.imageReady(source: "/p/b")
    policy.imageReady(source: "/p/b")
    #expect(policy.takeNotes() == [.imageBack(source: "/p/b")])
}

/// The loop reviews the show on every turn: with a folder of 20000 photos a review looked for
/// each item in the carousel's order (quadratic: seconds each, a 2 s show of 4000 photos took
/// 77 s and a stop waited for it); now a thousand reviews take a few milliseconds. (That a
/// failed item still ends the round is the next test's.)
@Test func reviewingALargePlaylistDoesNotCountThroughItEveryTime() throws {
    let count = 20_000
    let playlist = (0..<count).map { PlaylistItem(source: "/p/\($0).jpg") }
    var carousel = Carousel(items: playlist, config: CarouselConfig(interval: .seconds(10), fade: .zero))
    var policy = ShowPolicy(playlist: playlist)
    _ = policy.begin(at: .zero, wall: TestWall(wallAt(6)), carousel: &carousel)
    policy.shown(item: 0, carousel: carousel)
    let clock = ContinuousClock()
    let end = clock.now + .seconds(5)
    var reviews = 0
    while reviews < 1000, clock.now < end {
        _ = policy.review(at: .seconds(1), carousel: &carousel)
        reviews += 1
    }
    #expect(reviews == 1000, "only \(reviews) reviews in 5 s")
    #expect(!policy.takeNotes().contains { if case .roundDone = $0 { true } else { false } })
}

@Test func theRoundIsDoneOnceEveryItemWasShownOrCouldNotBeLoaded() throws {
    var show = Show(try items("a", "bad", "c"), wall: TestWall(wallAt(6)))
    show.start(failing: ["bad"])
    #expect(!show.notes.contains { if case .roundDone = $0 { true } else { false } })
    for t in stride(from: 1, through: 30, by: 1) { show.turn(at: .seconds(Int64(t)), failing: ["bad"]) }
    let rounds = show.notes.filter { if case .roundDone = $0 { true } else { false } }
    #expect(rounds == [.roundDone(shown: 2, items: 3, inRotation: false, failed: 1)], "\(show.notes)")
    // A new playlist starts the round again.
    show.notes = []
    show.take(show.policy.begin(try items("a", "c"), at: .seconds(31), wall: show.wall, carousel: &show.h.carousel))
    for t in 31...60 { show.turn(at: .seconds(Int64(t))) }
    #expect(show.notes.contains(.roundDone(shown: 2, items: 2, inRotation: false, failed: 0)), "\(show.notes)")
}

// MARK: Pairs (--pair-portraits)

/// Pictures pair side by side, with the shapes of `shapes` (by name: P portrait, L landscape).
private func pairing(_ show: inout Show, _ shapes: [String: PhotoShape], at now: Duration = .zero) {
    show.take(show.policy.setPairLayout(.sideBySide, at: now, carousel: &show.h.carousel))
    let learnt = Dictionary(uniqueKeysWithValues: shapes.map { ("/p/" + $0.key, $0.value) })
    show.take(show.policy.learnShapes(learnt, at: now, carousel: &show.h.carousel))
}

@Test func thePartnerOfAFirstThatFailedIsShownPairedWithTheNextPortrait() throws {
    // aP does not decode: cP (its partner) comes back into the sequence and pairs with dP.
    var show = Show(try items("aP", "bL", "cP", "dP", "eL"), wall: TestWall(wallAt(6)))
    pairing(&show, ["aP": .portrait, "bL": .landscape, "cP": .portrait, "dP": .portrait, "eL": .landscape])
    #expect(show.policy.partners == [0: 2])
    show.start(failing: ["aP"])
    for t in 1...40 { show.turn(at: .seconds(Int64(t)), failing: ["aP"]) }
    #expect(show.policy.partners == [2: 3])
    #expect(show.h.shown.contains { $0.item == 2 }, "\(show.h.shown.map(\.item))")
    let rounds = show.notes.filter { if case .roundDone = $0 { true } else { false } }
    #expect(rounds == [.roundDone(shown: 4, items: 5, inRotation: false, failed: 1)], "\(show.notes)")
}

@Test func aPartnerNotShownYetIsNotCountedAsFailedInTheRound() throws {
    // The shapes come after aP and bL were shown alone: aP now has cP as partner, which is not
    // in the carousel's order but in the show, with aP.
    var show = Show(try items("aP", "bL", "cP"), wall: TestWall(wallAt(6)))
    show.take(show.policy.setPairLayout(.sideBySide, at: .zero, carousel: &show.h.carousel))
    show.start()
    show.turn(at: .seconds(10))
    #expect(show.h.shown.map(\.item) == [0, 1])
    pairing(&show, ["aP": .portrait, "bL": .landscape, "cP": .portrait], at: .seconds(11))
    show.turn(at: .seconds(11))
    #expect(show.policy.partners == [0: 2])
    #expect(!show.notes.contains { if case .roundDone = $0 { true } else { false } }, "\(show.notes)")
    show.turn(at: .seconds(20))
    show.turn(at: .seconds(30))
    let rounds = show.notes.filter { if case .roundDone = $0 { true } else { false } }
    #expect(rounds == [.roundDone(shown: 3, items: 3, inRotation: false, failed: 0)], "\(show.notes)")
}

@Test func thePairOnScreenIsKeptBySourceWhenAFileBeforeItIsDeleted() throws {
    // xP+aP and bP+cP pair; bP+cP is on screen when xP is deleted: the new list renumbers them
    // (bP 1, cP 2) and they stay the pair (not aP+bP, the pairing of the new list from scratch).
    let shapes: [String: PhotoShape] = ["xP": .portrait, "aP": .portrait, "bP": .portrait, "cP": .portrait]
    var show = Show(try items("xP", "aP", "bP", "cP"), wall: TestWall(wallAt(6)))
    pairing(&show, shapes)
    show.start()
    #expect(show.policy.partners == [0: 1, 2: 3])
    show.turn(at: .seconds(10))
    #expect(show.currentName == "bP")
    show.take(show.policy.begin(try items("aP", "bP", "cP"), at: .seconds(11), wall: show.wall,
                                carousel: &show.h.carousel))
    #expect(show.policy.partners == [1: 2])
    #expect(show.policy.first(ofPartner: 2) == 1)
}
