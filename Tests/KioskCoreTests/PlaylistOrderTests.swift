// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

// The play order (docs/carousel.md "Order"): the shuffle bag on its own, and over a real
// carousel and show policy on virtual time, as the frame loop drives them.

private final class UTCWall: WallTimeSource {
    func readWallTime() -> (sinceEpoch: Duration, zone: any TimeZoneRules) { (.zero, FixedOffsetZone(seconds: 0)) }
    var scheduleRecheck: Duration? { nil }
}

private func names(_ n: Int) -> [String] { (0..<n).map { "/p/\(String(format2: $0)).jpg" } }

extension String {
    fileprivate init(format2 v: Int) { self = v < 10 ? "0\(v)" : "\(v)" }
}

/// Takes places from `bag` as a carousel would show them, `count` times.
private func play(_ bag: inout ShuffleBag, _ count: Int) -> [String] {
    var out: [String] = []
    var current: String?
    for _ in 0..<count {
        guard let next = bag.next(after: current) else { break }
        bag.shown(next)
        out.append(next)
        current = next
    }
    return out
}

@Test func aShuffleRoundShowsEverySourceOnceInAnOrderOtherThanTheNames() {
    let sources = names(12)
    var bag = ShuffleBag(seed: 7)
    bag.update(sources: sources)
    var lastOfRound: String?
    for round in 0..<5 {
        let shown = play(&bag, 12)
        #expect(shown.sorted() == sources, "round \(round): each once, no repeats")
        #expect(shown != sources, "round \(round) is not in name order")
        if let lastOfRound { #expect(shown.first != lastOfRound, "a round does not start with the last one's end") }
        lastOfRound = shown.last
        #expect(bag.completedRounds == round + 1)
    }
}

@Test func roundsDifferFromEachOtherAndTheSeedReplaysThem() {
    var a = ShuffleBag(seed: 42), b = ShuffleBag(seed: 42), c = ShuffleBag(seed: 43)
    a.update(sources: names(10)); b.update(sources: names(10)); c.update(sources: names(10))
    let ra = play(&a, 30), rb = play(&b, 30), rc = play(&c, 30)
    #expect(ra == rb)
    #expect(ra != rc)
    #expect(Array(ra[0..<10]) != Array(ra[10..<20]))
}

@Test func newSourcesJoinTheRoundAndRemovedOnesLeaveIt() {
    var bag = ShuffleBag(seed: 3)
    let sources = names(8)
    bag.update(sources: sources)
    let first = play(&bag, 3)
    // Two new files arrive, one not yet shown and one shown leave.
    let gone = [first[0], bag.upcoming[0]]
    let now = sources.filter { !gone.contains($0) } + ["/p/new-a.jpg", "/p/new-b.jpg"]
    bag.update(sources: now)
    #expect(!bag.upcoming.contains(gone[1]) && !bag.shownThisRound.contains(gone[0]))
    let rest = play(&bag, bag.upcoming.count)
    #expect(Set(first + rest).count == first.count + rest.count, "no repeats within the round")
    #expect(Set(first + rest).isSuperset(of: now), "every file now in the playlist was in this round")
    #expect(bag.completedRounds == 1)
}

@Test func recentPhotosHaveTwoPlacesPerRoundNeverSideBySide() {
    let sources = names(10)
    var bag = ShuffleBag(seed: 11)
    bag.update(sources: sources, recent: [sources[2], sources[7]])
    for _ in 0..<20 {
        let round = play(&bag, 12)
        #expect(round.count == 12)
        #expect(round.filter { $0 == sources[2] }.count == 2 && round.filter { $0 == sources[7] }.count == 2)
        #expect(Set(round) == Set(sources))
        for i in 1..<round.count { #expect(round[i] != round[i - 1]) }
    }
}

/// Capture times come after the first round started (they are read off the frame loop): a
/// photo found recent then takes its second place in the round under way, not only from the
/// next round on; one shown once already gets one more place still to come.
@Test func aPhotoFoundRecentDuringARoundTakesItsSecondPlaceInIt() {
    let sources = names(6)
    for seed in [1, 2, 3, 11] as [UInt64] {
        var bag = ShuffleBag(seed: seed)
        bag.update(sources: sources)
        let first = play(&bag, 1)
        bag.update(sources: sources, recent: [sources[4], first[0]])
        let rest = play(&bag, 20)
        let round = first + Array(rest.prefix(8))
        #expect(bag.completedRounds >= 1)
        #expect(round.filter { $0 == sources[4] }.count == 2, "seed \(seed): \(round)")
        #expect(round.filter { $0 == first[0] }.count == 2, "seed \(seed): \(round)")
        #expect(Set(round) == Set(sources), "seed \(seed): \(round)")
    }
}

@Test func theEncodedRoundCarriesOnAfterARestart() throws {
    var bag = ShuffleBag(seed: 5)
    bag.update(sources: names(9))
    let before = play(&bag, 4)
    let text = bag.encoded()
    var restored = try #require(ShuffleBag(decoding: text, seed: 999))
    restored.update(sources: names(9))
    #expect(restored.upcoming == bag.upcoming && restored.shownThisRound == before)
    let after = play(&restored, 5)
    #expect((before + after).sorted() == names(9))
    #expect(ShuffleBag(decoding: "something else\nnext /a", seed: 1) == nil)
    #expect(ShuffleBag(decoding: ShuffleBag.header + "\nnext /a\nbogus /b", seed: 1) == nil)
}

// MARK: Over the carousel and the show policy

/// A show whose order the policy hands the carousel, as the frame loop does.
private struct OrderedShow {
    var h: Harness
    var policy: ShowPolicy
    var order: ShowOrder
    var shownSources: [String] = []
    /// How many of the harness's `shown` events were handed on.
    var handled = 0
    let wall = UTCWall()

    init(_ sources: [String], order: ShowOrder, taken: [CaptureTime?] = []) {
        let items = sources.map { PlaylistItem(source: $0) }
        h = Harness(count: 0)
        h.carousel = Carousel(items: items, config: CarouselConfig(interval: .seconds(10), fade: .zero))
        policy = ShowPolicy(playlist: items)
        self.order = order
        let taken = taken.isEmpty ? Array(repeating: nil, count: items.count) : taken
        let first = self.order.sequence(for: items, taken: taken, today: LocalDate(year: 2026, month: 12, day: 2),
                                        current: nil)
        take(policy.begin(items, sequence: first.sequence, at: .zero, wall: wall, carousel: &h.carousel))
        take(h.carousel.start(at: .zero))
        h.prepareAll(at: .zero)
        take([])
        h.prepareAll(at: .zero)
    }

    mutating func take(_ actions: [CarouselAction]) {
        h.record(actions)
        while handled < h.shown.count {
            let s = h.shown[handled]
            handled += 1
            shownSources.append(h.carousel.items[s.item].source)
            policy.shown(item: s.item, carousel: h.carousel)
            let step = order.shown(item: s.item, playlist: policy.playlist, sequence: policy.sequence)
            if let new = step.newSequence { h.record(policy.reorder(new, at: s.at, carousel: &h.carousel)) }
        }
    }

    /// Runs to `seconds` of show time, a turn every second.
    mutating func run(to seconds: Int, from start: Int = 1) {
        for t in start...seconds {
            take(h.carousel.tick(at: .seconds(t)))
            h.prepareAll(at: .seconds(t))
            take([])
        }
    }
}

@Test func theCarouselPlaysShuffleRoundsWithoutRepeatsAndCarriesOnOverARestart() throws {
    let sources = names(7)
    var show = OrderedShow(sources, order: ShowOrder(order: .shuffle, bag: ShuffleBag(seed: 21)))
    show.run(to: 3 * 70 + 5)  // three rounds of seven at 10 s
    let shown = show.shownSources
    #expect(shown.count >= 21)
    for r in 0..<3 { #expect(Array(shown[(7 * r)..<(7 * r + 7)]).sorted() == sources, "round \(r)") }
    #expect(Array(shown[0..<7]) != sources)
    #expect(Array(shown[0..<7]) != Array(shown[7..<14]))

    // A power cut after four pictures of a round: the new process restores the bag and the
    // round is finished before any picture of it comes again.
    var first = OrderedShow(sources, order: ShowOrder(order: .shuffle, bag: ShuffleBag(seed: 8)))
    first.run(to: 35)  // shown at 0, 10, 20, 30
    let beforeCut = first.shownSources
    #expect(beforeCut.count == 4)
    let saved = first.order.bag.encoded()
    let restored = try #require(ShuffleBag(decoding: saved, seed: 1234))
    var second = OrderedShow(sources, order: ShowOrder(order: .shuffle, bag: restored))
    second.run(to: 25)  // 0, 10, 20: the round's last three
    #expect((beforeCut + second.shownSources).sorted() == sources)
    #expect(second.order.bag.completedRounds == 1)
}

@Test func dateNewestAndOnThisDaySequences() {
    func at(_ y: Int, _ m: Int, _ d: Int) -> CaptureTime {
        let date = LocalDate(year: y, month: m, day: d)
        return CaptureTime(epochSecond: date.daysSinceEpoch * 86_400, localDate: date)
    }
    let taken: [CaptureTime?] = [at(2020, 5, 1), nil, at(2016, 12, 2), at(2023, 12, 2), at(2026, 12, 2)]
    let today = LocalDate(year: 2026, month: 12, day: 2)
    #expect(PlaylistOrder.name.sequence(taken: taken, today: today).sequence == nil)
    #expect(PlaylistOrder.date.sequence(taken: taken, today: today).sequence == [2, 0, 3, 4, 1])
    #expect(PlaylistOrder.newest.sequence(taken: taken, today: today).sequence == [4, 3, 0, 2, 1])
    let otd = PlaylistOrder.onThisDay.sequence(taken: taken, today: today)
    #expect(otd.sequence == [2, 3] && otd.matchedToday)  // not this year's
    let none = PlaylistOrder.onThisDay.sequence(taken: taken, today: LocalDate(year: 2026, month: 7, day: 9))
    #expect(none.sequence == [2, 0, 3, 4, 1] && !none.matchedToday)
    #expect(at(2016, 12, 2).yearsAgo(today: today) == 10)
    #expect(at(2016, 12, 3).yearsAgo(today: today) == 9)
}

@Test func theCarouselPlaysTheDateOrder() {
    func at(_ day: Int) -> CaptureTime {
        let date = LocalDate(year: 2025, month: 1, day: day)
        return CaptureTime(epochSecond: date.daysSinceEpoch * 86_400, localDate: date)
    }
    let sources = names(4)
    var show = OrderedShow(sources, order: ShowOrder(order: .newest, bag: ShuffleBag(seed: 1)),
                           taken: [at(3), at(1), at(4), at(2)])
    show.run(to: 45)
    #expect(show.shownSources == [sources[2], sources[0], sources[3], sources[1], sources[2]])
}

@Test func onThisDayPlaysOnlyTheDaysPhotosOldestFirst() {
    func at(_ y: Int, _ m: Int, _ d: Int) -> CaptureTime {
        let date = LocalDate(year: y, month: m, day: d)
        return CaptureTime(epochSecond: date.daysSinceEpoch * 86_400, localDate: date)
    }
    // OrderedShow's today is 2026-12-02: items 1 (2023) and 3 (2016) were taken on this day.
    let sources = names(5)
    var show = OrderedShow(sources, order: ShowOrder(order: .onThisDay, bag: ShuffleBag(seed: 1)),
                           taken: [at(2020, 5, 1), at(2023, 12, 2), nil, at(2016, 12, 2), at(2026, 12, 2)])
    show.run(to: 45)  // shown at 0, 10, 20, 30, 40
    #expect(show.shownSources == [sources[3], sources[1], sources[3], sources[1], sources[3]],
            "only the day's photos of earlier years, oldest first, and nothing else")
}

/// `previous` in a shuffle walks back through the pictures shown, one step each, and `next`
/// then walks forward again through them before the round goes on, as in name order (it
/// bounced between the last two).
@Test func previousInAShuffleWalksBackThroughWhatWasShown() {
    let sources = names(8)
    var show = OrderedShow(sources, order: ShowOrder(order: .shuffle, bag: ShuffleBag(seed: 4)))
    show.run(to: 45)  // shown at 0, 10, 20, 30, 40
    let played = show.shownSources
    #expect(played.count == 5)
    func step(_ direction: Direction, at t: Int) {
        show.take(show.h.carousel.move(direction, at: .seconds(t)))
        show.h.prepareAll(at: .seconds(t))
        show.take([])
    }
    for t in 46...49 { step(.backward, at: t) }
    #expect(Array(show.shownSources[5...]) == [played[3], played[2], played[1], played[0]])
    step(.forward, at: 50)
    step(.forward, at: 51)
    #expect(Array(show.shownSources[9...]) == [played[1], played[2]])
    // Forward past the last shown: the round's places to come, none of the round again.
    show.run(to: 51 + 10 * 5, from: 52)
    let after = Array(show.shownSources[11...])
    #expect(after.count >= 4)
    #expect(Array(after[0..<2]) == [played[3], played[4]])
    #expect(Set(after[2...]).isDisjoint(with: played), "\(after)")
}

/// A restored round that a folder of 3000 new files joins (some of them recent): each new file
/// takes its places among the round's places to come, in one pass, and the round still shows
/// every file once (twice when recent, never side by side).
@Test func manyNewSourcesJoinARestoredRoundEachInItsPlaces() throws {
    let old = names(20)
    var bag = ShuffleBag(seed: 9)
    bag.update(sources: old)
    let before = play(&bag, 5)
    var restored = try #require(ShuffleBag(decoding: bag.encoded(), seed: 10))
    let new = (0..<3000).map { "/q/\($0).jpg" }
    let recent = Set(new.prefix(100))
    restored.update(sources: old + new, recent: recent)
    #expect(restored.upcoming.count == 15 + 3000 + 100)
    #expect(Set(restored.upcoming) == Set(old + new).subtracting(before))
    let rest = play(&restored, restored.upcoming.count)
    #expect(restored.completedRounds == 1)
    for s in recent { #expect(rest.filter { $0 == s }.count == 2) }
    // The next round: every source, the recent ones twice and never twice in a row.
    let next = play(&restored, 3020 + 100)
    #expect(Set(next) == Set(old + new) && next.count == 3120)
    for i in 1..<next.count { #expect(next[i] != next[i - 1]) }
}

/// A photo taken on 29 February comes round on 28 February in a common year (on 29 February in a
/// leap year, and never on 1 March): "on this day" shows it then, and "N years ago" counts the
/// year as passed that day.
@Test func aPhotoOf29FebruaryComesRoundOn28FebruaryInACommonYear() {
    func at(_ y: Int, _ m: Int, _ d: Int) -> CaptureTime {
        let date = LocalDate(year: y, month: m, day: d)
        return CaptureTime(epochSecond: date.daysSinceEpoch * 86_400, localDate: date)
    }
    let taken: [CaptureTime?] = [at(2024, 2, 29), at(2020, 2, 28), at(2023, 3, 1), at(2016, 2, 29)]
    func onThisDay(_ y: Int, _ m: Int, _ d: Int) -> [Int]? {
        let result = PlaylistOrder.onThisDay.sequence(taken: taken, today: LocalDate(year: y, month: m, day: d))
        return result.matchedToday ? result.sequence : nil
    }
    #expect(onThisDay(2025, 2, 28) == [3, 1, 0], "a common year: the 29th's photos with the 28th's, oldest first")
    #expect(onThisDay(2025, 3, 1) == [2], "not on 1 March")
    #expect(onThisDay(2028, 2, 28) == [1], "a leap year: the 28th's only")
    #expect(onThisDay(2028, 2, 29) == [3, 0], "a leap year: on its own day")
    #expect(onThisDay(2100, 2, 28) == [3, 1, 0], "2100 is a common year")
    #expect(at(2024, 2, 29).yearsAgo(today: LocalDate(year: 2025, month: 2, day: 28)) == 1)
    #expect(at(2024, 2, 29).yearsAgo(today: LocalDate(year: 2025, month: 2, day: 27)) == 0)
    #expect(at(2024, 2, 29).yearsAgo(today: LocalDate(year: 2028, month: 2, day: 28)) == 3)
    #expect(at(2024, 2, 29).yearsAgo(today: LocalDate(year: 2028, month: 2, day: 29)) == 4)
}
