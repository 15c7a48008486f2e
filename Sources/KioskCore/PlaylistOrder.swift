// SPDX-License-Identifier: Apache-2.0
/// The order the show plays its playlist in (`--order`, the manifest's `order`;
/// docs/carousel.md "Order"). The order is a sequence of playlist indices that the carousel
/// plays in turn (``ShowPolicy/reorder(_:at:carousel:)``); the playlist and its indices (what
/// events report) stay as listed.
public enum PlaylistOrder: String, CaseIterable, Sendable {
    /// As listed: a folder's files by name, a manifest's items as the manifest lists them.
    case name
    /// A shuffle bag (``ShuffleBag``): every image once per round, in a new order each round.
    case shuffle
    /// By capture time, oldest first (``CaptureTime``; items without one keep their place
    /// after those with one).
    case date
    /// By capture time, newest first.
    case newest
    /// Only the photos taken on today's month and day in earlier years, oldest first; the
    /// whole playlist by date when none was.
    case onThisDay = "on-this-day"

    /// The sequence of playlist indices for a fixed order (all but ``shuffle``, which keeps a
    /// bag): `taken[i]` is item i's capture time (nil: unknown), `today` the local date now.
    /// Returns nil for ``name`` (the playlist as listed). `matchedToday` is false when
    /// ``onThisDay`` found no photo of this day and fell back to the whole playlist by date.
    public func sequence(taken: [CaptureTime?], today: LocalDate) -> (sequence: [Int]?, matchedToday: Bool) {
        let byDate = taken.indices.sorted { a, b in
            switch (taken[a], taken[b]) {
            case let (x?, y?): return x.epochSecond != y.epochSecond ? x.epochSecond < y.epochSecond : a < b
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a < b
            }
        }
        switch self {
        case .name, .shuffle: return (nil, true)
        case .date: return (byDate, true)
        case .newest:
            let known = byDate.filter { taken[$0] != nil }, unknown = byDate.filter { taken[$0] == nil }
            return (known.reversed() + unknown, true)
        case .onThisDay:
            let matching = byDate.filter { i in
                guard let t = taken[i] else { return false }
                return t.localDate.anniversary(in: today.year) == today && t.localDate.year < today.year
            }
            return matching.isEmpty ? (byDate, false) : (matching, true)
        }
    }
}

/// When a photo was taken: EXIF DateTimeOriginal (with OffsetTimeOriginal when the file has it),
/// else the file's modification time.
public struct CaptureTime: Hashable, Sendable {
    /// The instant, seconds since the Unix epoch. For an EXIF time without an offset, the
    /// recorded wall time read in the show's time zone.
    public var epochSecond: Int64
    /// The calendar day on the camera's clock (EXIF) or in the show's zone (a file time): the
    /// day "on this day" compares.
    public var localDate: LocalDate

    public init(epochSecond: Int64, localDate: LocalDate) {
        self.epochSecond = epochSecond
        self.localDate = localDate
    }

    /// Whole years from this capture to `today` (the calendar difference: 2016-12-02 to
    /// 2026-12-01 is 9; a 29 February comes round on 28 February in a common year, so
    /// 2024-02-29 to 2025-02-28 is 1). Never negative.
    public func yearsAgo(today: LocalDate) -> Int {
        var years = today.year - localDate.year
        let anniversary = localDate.anniversary(in: today.year)
        if (today.month, today.day) < (anniversary.month, anniversary.day) { years -= 1 }
        return max(0, years)
    }
}

/// A shuffle bag over the playlist's sources (`--order shuffle`, docs/carousel.md "Order"):
/// each round every source has its places (one; two for a recent photo, ``recent``) in a random
/// order, and no source comes round again before the round is over. Sources that join the
/// playlist (a new file) take a random place among the round's places still to come; sources
/// that leave it lose theirs. The round survives a restart through ``encoded()`` and
/// ``init(decoding:seed:)``.
///
/// A recent photo's two places lie in different halves of the round (its first place is drawn
/// with the others, the second in the other half), so it is shown twice per round but not
/// twice in a row. Two places of one source are never next to each other across the end of a
/// round either: a round never starts with what the last one ended on.
///
/// A value: it reads no clock and no file; randomness comes from its ``SplitMix64`` (seeded by
/// the caller: the app from the system's random source, tests with a fixed seed).
public struct ShuffleBag: Sendable {
    /// The round's places still to come, in play order.
    public private(set) var upcoming: [String] = []
    /// The sources shown this round (its places taken), in the order shown.
    public private(set) var shownThisRound: [String] = []
    /// Rounds completed since the bag was made (or restored).
    public private(set) var completedRounds = 0
    /// The sources in the bag (the playlist's, as last given).
    public private(set) var sources: [String] = []
    /// Sources that get two places per round (photos taken within `--recent-days`).
    public private(set) var recent: Set<String> = []
    private var random: SplitMix64

    /// An empty bag drawing from `seed` (the app seeds it from the system's random source).
    public init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// The playlist's sources now: new ones take random places among the round's places to
    /// come (two for a new recent source), removed ones leave it; one found recent since (its
    /// capture time read) takes its second place among those to come. The first call starts
    /// the first round. Duplicate sources count once.
    public mutating func update(sources new: [String], recent newRecent: Set<String> = []) {
        var seen = Set<String>()
        let unique = new.filter { seen.insert($0).inserted }
        let before = Set(sources)
        let wasRecent = recent
        sources = unique
        recent = newRecent.intersection(seen)
        upcoming.removeAll { !seen.contains($0) }
        shownThisRound.removeAll { !seen.contains($0) }
        // No source has more places this round than it is due (one, two when recent), shown
        // ones counted: a kept round from an older playlist, or a damaged one, is cut to that.
        var taken: [String: Int] = [:]
        for s in shownThisRound { taken[s, default: 0] += 1 }
        upcoming = upcoming.filter { s in
            taken[s, default: 0] += 1
            return taken[s]! <= (recent.contains(s) ? 2 : 1)
        }
        if upcoming.isEmpty && shownThisRound.isEmpty {
            startRound(after: nil)
            return
        }
        var joining: [String] = []
        for source in unique where !before.contains(source) {
            joining.append(source)
            if recent.contains(source) { joining.append(source) }
        }
        // Recent now and not before, with fewer than two places this round (shown and to come).
        for source in unique where before.contains(source) && recent.contains(source) && !wasRecent.contains(source)
            && taken[source, default: 0] < 2 {
            joining.append(source)
        }
        upcoming = Self.merging(joining.shuffled(using: &random), into: upcoming, using: &random)
        if upcoming.isEmpty { startRound(after: shownThisRound.last) }
    }

    /// `places` each put before a random place of `into` (or at its end), in their order where
    /// two take the same one: as many inserts at random places would, in one pass (an insert
    /// each made a folder of 10000 new files quadratic).
    private static func merging(_ places: [String], into: [String], using random: inout SplitMix64) -> [String] {
        guard !places.isEmpty else { return into }
        let before = places.map { (place: $0, at: Int.random(in: 0...into.count, using: &random)) }
        return merged(before, into: into)
    }

    /// `into` with each of `inserts` before its place `at` (`into.count`: at the end); inserts
    /// with the same place keep their order.
    private static func merged(_ inserts: [(place: String, at: Int)], into: [String]) -> [String] {
        var byPlace = Array(repeating: [String](), count: into.count + 1)
        for i in inserts { byPlace[i.at].append(i.place) }
        var out: [String] = []
        out.reserveCapacity(into.count + inserts.count)
        for (i, group) in byPlace.enumerated() {
            out += group
            if i < into.count { out.append(into[i]) }
        }
        return out
    }

    /// `source` was shown: it takes its next place this round (the first place of it still to
    /// come). A source shown out of turn (a swipe, `goto`) takes that place too; one with no
    /// place left this round (shown again by a swipe back) changes nothing. When the round's
    /// last place is taken the next round starts. Returns true when a round was completed.
    @discardableResult
    public mutating func shown(_ source: String) -> Bool {
        guard let place = upcoming.firstIndex(of: source) else { return false }
        upcoming.remove(at: place)
        shownThisRound.append(source)
        guard upcoming.isEmpty else { return false }
        completedRounds += 1
        startRound(after: source)
        return true
    }

    /// The next source to show after `current`: the first place to come that is not `current`
    /// itself (nil with an empty bag).
    public func next(after current: String?) -> String? {
        upcoming.first { $0 != current } ?? (sources.count == 1 ? sources.first : nil)
    }

    /// A cycle of the bag's sources (each once) for the carousel, starting at `current` (when it
    /// is in the bag), then the places to come in order, then the rest: the carousel moving
    /// forward from `current` shows ``next(after:)`` next.
    public func cycle(from current: String?) -> [String] {
        var out: [String] = []
        out.reserveCapacity(sources.count)
        // A set, not `sources.contains` per place: that made each cycle quadratic (4 s for a
        // folder of 10000 photos, on every `shown` that handed a new cycle).
        let inBag = Set(sources)
        var seen = Set<String>()
        for s in [current].compactMap({ $0 }) + upcoming + shownThisRound + sources
        where inBag.contains(s) && seen.insert(s).inserted {
            out.append(s)
        }
        return out
    }

    /// A new round's places in random order (Fisher-Yates, through `shuffled(using:)`), a recent
    /// source's second place in the other half, never starting with `last`.
    private mutating func startRound(after last: String?) {
        shownThisRound = []
        var places = sources.shuffled(using: &random)
        let half = (places.count + 1) / 2
        // The second places are put before places of the shuffled round (its end: count), all
        // in one pass; the first places are looked up once, not searched for per source.
        var firstPlace: [String: Int] = [:]
        for (i, s) in places.enumerated() where recent.contains(s) { firstPlace[s] = i }
        var seconds: [(place: String, at: Int)] = []
        for source in sources where recent.contains(source) {
            guard let first = firstPlace[source] else { continue }
            let range = first < half ? half...places.count : 0...max(0, half - 1)
            var at = Int.random(in: range, using: &random)
            // Not next to the first place (possible only at the halves' border).
            if Swift.abs(at - first) <= 1 { at = first < half ? places.count : 0 }
            seconds.append((source, at))
        }
        if !seconds.isEmpty { places = Self.merged(seconds, into: places) }
        if places.count > 1, let last, places.first == last,
           let swap = places.indices.first(where: { places[$0] != last }) {
            places.swapAt(0, swap)
        }
        upcoming = places
    }

    // MARK: Keeping the round (the state directory's `shuffle-round`)

    /// The first line of an encoded bag.
    public static let header = "kiosk-carousel shuffle round 1"

    /// The round as text: ``header``, then one line per place: `shown SOURCE` for this
    /// round's shown sources, `next SOURCE` for the places to come, in order. Sources with a
    /// line break are left out (they join as new on restore).
    public func encoded() -> String {
        var lines = [Self.header]
        for s in shownThisRound where !s.contains(where: \.isNewline) { lines.append("shown " + s) }
        for s in upcoming where !s.contains(where: \.isNewline) { lines.append("next " + s) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A bag restored from ``encoded()`` text, drawing from `seed`; nil when `text` is not one
    /// (wrong header, an unknown line). The sources are set by the next ``update(sources:recent:)``,
    /// which drops the places of files gone since and gives new ones their places.
    public init?(decoding text: String, seed: UInt64) {
        self.init(seed: seed)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first == Substring(Self.header) else { return nil }
        lines.removeFirst()
        for line in lines {
            if line.hasPrefix("shown ") {
                shownThisRound.append(String(line.dropFirst(6)))
            } else if line.hasPrefix("next ") {
                upcoming.append(String(line.dropFirst(5)))
            } else {
                return nil
            }
        }
        sources = Array(Set(shownThisRound + upcoming)).sorted()
        // The state's own places only: `update` keeps these and adds the playlist's new ones.
    }
}

/// The play order over a changing playlist (docs/carousel.md "Order"): the sequence of playlist
/// indices the show's policy hands the carousel (``ShowPolicy/sequence``), worked out again for
/// each new playlist and, with ``PlaylistOrder/shuffle``, after each `shown` event: the bag
/// takes the shown source, and when the carousel's next item is not the bag's next place, a
/// new cycle is handed (so the carousel's wrap-around never decides a shuffled round).
///
/// A value, reading no clock or file: capture times and today's date come from the caller.
public struct ShowOrder: Sendable {
    /// The order in force (the command line's, or a manifest's `order`).
    public var order: PlaylistOrder
    /// Photos taken within this many days of today are recent (two places per shuffle round);
    /// nil: none is.
    public let recentDays: Int?
    /// The shuffle bag (``PlaylistOrder/shuffle`` only).
    public private(set) var bag: ShuffleBag
    /// The sources shown, oldest first (at most one per source in the playlist), and the place
    /// of the one on screen in it: `previous` walks back through it and `next` forward again
    /// before the bag's places to come, as in name order (``PlaylistOrder/shuffle`` only).
    private var history: [String] = []
    private var historyPosition = -1
    /// The source the carousel was last given to show next, moving forward: a `shown` of it is
    /// a step forward even when it is also the one before in the history.
    private var handedForward: String?

    public init(order: PlaylistOrder, recentDays: Int? = nil, bag: ShuffleBag) {
        self.order = order
        self.recentDays = recentDays
        self.bag = bag
    }

    /// The sources of `playlist` taken within ``recentDays`` of `today` (`taken` by index).
    public func recentSources(_ playlist: [PlaylistItem], taken: [CaptureTime?], today: LocalDate) -> Set<String> {
        guard let days = recentDays else { return [] }
        let since = today.daysSinceEpoch - Int64(days)
        var out = Set<String>()
        for (i, item) in playlist.enumerated() where i < taken.count {
            if let t = taken[i], t.localDate.daysSinceEpoch >= since { out.insert(item.source) }
        }
        return out
    }

    /// The sequence for a new `playlist` (nil: as listed), with the source on screen `current`
    /// (nil before the first): `matchedToday` false when
    /// ``PlaylistOrder/onThisDay`` fell back to the whole playlist.
    public mutating func sequence(for playlist: [PlaylistItem], taken: [CaptureTime?], today: LocalDate,
                                  current: String?) -> (sequence: [Int]?, matchedToday: Bool) {
        guard order == .shuffle else { return order.sequence(taken: taken, today: today) }
        bag.update(sources: playlist.map(\.source), recent: recentSources(playlist, taken: taken, today: today))
        // The history keeps the sources still in the playlist; the place stays on the same entry
        // (or the last kept one before it).
        let present = Set(playlist.map(\.source))
        var kept: [String] = [], position = -1
        for (i, s) in history.enumerated() where present.contains(s) {
            kept.append(s)
            if i <= historyPosition { position = kept.count - 1 }
        }
        history = kept
        historyPosition = position
        return (indices(bag.cycle(from: current), in: playlist), true)
    }

    /// Playlist item `item` was shown while the carousel plays `sequence`. Returns the new
    /// sequence when the carousel's next item must change (nil: it is right), and whether a
    /// shuffle round was completed. `partner`: `item` is shown as the partner of a pair
    /// (docs/carousel.md "Pairs"): the bag takes its place, but the history (what `previous`
    /// walks back through) and the carousel's neighbours follow the pair's first alone.
    public mutating func shown(item: Int, playlist: [PlaylistItem], sequence: [Int]?,
                               partner: Bool = false) -> (newSequence: [Int]?, roundDone: Bool) {
        guard order == .shuffle, playlist.indices.contains(item) else { return (nil, false) }
        let source = playlist[item].source
        let done = bag.shown(source)
        if partner { return (nil, done) }
        walkHistory(to: source, limit: Swift.max(1, bag.sources.count))
        // The neighbours the carousel must have: forward the next one in the history (after a
        // step back), else the bag's next place; backward the one shown before.
        let forward = historyPosition + 1 < history.count ? history[historyPosition + 1] : bag.next(after: source)
        let backward = historyPosition > 0 ? history[historyPosition - 1] : nil
        handedForward = forward
        guard let forward else { return (nil, done) }
        let playing = sequence ?? Array(playlist.indices)
        if let at = playing.firstIndex(of: item), playing.count > 1,
           playlist[playing[(at + 1) % playing.count]].source == forward,
           backward.map({ playlist[playing[(at + playing.count - 1) % playing.count]].source == $0 }) ?? true {
            return (nil, done)
        }
        // The bag's cycle from the source on screen, with `forward` second and `backward` last.
        var cycle = bag.cycle(from: source).filter { $0 != forward && $0 != backward }
        cycle.insert(forward, at: Swift.min(1, cycle.count))
        if let backward, backward != forward, backward != source { cycle.append(backward) }
        return (indices(cycle, in: playlist), done)
    }

    /// `source` is on screen: one step back or forward in the history when it is the entry
    /// there, else a new entry after the place (the entries after it are dropped); at most
    /// `limit` entries are kept.
    private mutating func walkHistory(to source: String, limit: Int) {
        let expected = source == handedForward
        if expected, historyPosition + 1 < history.count, history[historyPosition + 1] == source {
            historyPosition += 1
        } else if !expected, historyPosition > 0, history[historyPosition - 1] == source {
            historyPosition -= 1
        } else if historyPosition + 1 < history.count, history[historyPosition + 1] == source {
            historyPosition += 1
        } else if historyPosition < 0 || history[historyPosition] != source {
            history.removeSubrange((historyPosition + 1)...)
            history.append(source)
            if history.count > limit { history.removeFirst(history.count - limit) }
            historyPosition = history.count - 1
        }
    }

    /// The first playlist index of each source, then the playlist's other indices (a source
    /// listed again) as listed: the policy plays only the indices a sequence names.
    private func indices(_ sources: [String], in playlist: [PlaylistItem]) -> [Int] {
        var first: [String: Int] = [:]
        for (i, item) in playlist.enumerated() where first[item.source] == nil { first[item.source] = i }
        let out = sources.compactMap { first[$0] }
        let named = Set(out)
        return out + playlist.indices.filter { !named.contains($0) }
    }
}
