// SPDX-License-Identifier: Apache-2.0
/// How bright the screen is through the day (`--brightness HH:MM=PCT,...`, kiosk-carousel(1),
/// docs/power.md): daily tiers of local wall-clock time, each from its time until the next
/// tier's, the last one running past midnight until the first (`07:00=100,20:00=40,23:00=off`:
/// 100 % from 07:00, 40 % from 20:00, off from 23:00 until 07:00). A level is a percentage of
/// full brightness, 1 ... 100, or `off`, which is the same as a `--display-off` range
/// (``offSchedule``).
///
/// Pure minute arithmetic on the minute of the day (0 ... 1439), like ``DisplaySchedule``.
public struct BrightnessTiers: Equatable, Sendable, CustomStringConvertible {
    /// A tier's level.
    public enum Level: Hashable, Sendable, CustomStringConvertible {
        /// A share of full brightness, 1 ... 100 %.
        case percent(Int)
        /// The screen off (as in a `--display-off` range).
        case off

        /// `40` or `off`, as written in a tier.
        public var description: String {
            switch self {
            case .percent(let p): return String(p)
            case .off: return "off"
            }
        }
    }

    /// One tier: its level from `start` (a minute of the day, 0 ... 1439) until the next tier's start.
    public struct Tier: Hashable, Sendable, CustomStringConvertible {
        public var start: Int
        public var level: Level
        public init(start: Int, level: Level) { self.start = start; self.level = level }
        /// `20:00=40`.
        public var description: String { DisplaySchedule.format(start) + "=" + level.description }
    }

    /// The tiers in the order of their times (at least one, no two at the same minute, at least
    /// one not `off`).
    public let tiers: [Tier]

    /// The tiers, put in the order of their times.
    public init(tiers: [Tier]) { self.tiers = tiers.sorted { $0.start < $1.start } }

    /// `07:00=100,20:00=40,23:00=off`, in the order of the times: the value as it parses back.
    public var description: String { tiers.map(\.description).joined(separator: ",") }

    /// Parses `HH:MM=PCT` or `HH:MM=off`, several separated by commas, in any order (spaces
    /// around the pieces are ignored). Times as in `--display-off` (`7:00`, `07:00`; no `24:00`);
    /// PCT a whole number 1 ... 100, with an optional `%`.
    /// - Throws: ``BrightnessTiersError`` naming the bad piece.
    public static func parse(_ text: String) throws(BrightnessTiersError) -> BrightnessTiers {
        let pieces = text.split(separator: ",", omittingEmptySubsequences: false).map { trimmed($0) }
        guard !(pieces.count == 1 && pieces[0].isEmpty) else { throw .empty }
        var tiers: [Tier] = []
        for piece in pieces {
            let sides = piece.split(separator: "=", omittingEmptySubsequences: false).map { trimmed($0) }
            guard sides.count == 2 else { throw .badTier(piece) }
            guard let start = DisplaySchedule.minute(Substring(sides[0]), allowEndOfDay: false) else {
                throw .badTime(sides[0], tier: piece)
            }
            let level: Level
            if sides[1].lowercased() == "off" {
                level = .off
            } else {
                let digits = sides[1].hasSuffix("%") ? String(sides[1].dropLast()) : sides[1]
                guard (1...3).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                      let p = Int(digits), (1...100).contains(p) else { throw .badLevel(sides[1], tier: piece) }
                level = .percent(p)
            }
            if tiers.contains(where: { $0.start == start }) { throw .sameTime(DisplaySchedule.format(start)) }
            tiers.append(Tier(start: start, level: level))
        }
        guard tiers.contains(where: { $0.level != .off }) else { throw .allOff }
        return BrightnessTiers(tiers: tiers)
    }

    /// The tier in force at `minuteOfDay` (taken modulo a day): the last one starting at or
    /// before it, else (before the day's first tier) the day's last one.
    public func tier(atMinute minuteOfDay: Int) -> Tier {
        let m = DisplaySchedule.normalize(minuteOfDay)
        return tiers.last { $0.start <= m } ?? tiers[tiers.count - 1]
    }

    /// The level in force at `minuteOfDay`.
    public func level(atMinute minuteOfDay: Int) -> Level { tier(atMinute: minuteOfDay).level }

    /// How many minutes after `minuteOfDay` the level next changes, 1 ... 1440 (a change at
    /// minute m takes effect at hh:mm:00); nil when it never does (one level all day).
    public func minutesUntilChange(from minuteOfDay: Int) -> Int? {
        let m = DisplaySchedule.normalize(minuteOfDay)
        let now = level(atMinute: m)
        var best: Int?
        for t in tiers where t.level != now {
            var ahead = DisplaySchedule.normalize(t.start - m)
            if ahead == 0 { ahead = DisplaySchedule.minutesPerDay }
            if best.map({ ahead < $0 }) ?? true { best = ahead }
        }
        return best
    }

    /// Seconds from the wall time `minuteOfDay`:`second` until the level next changes; nil when
    /// it never does.
    public func secondsUntilChange(minuteOfDay: Int, second: Int) -> Int? {
        minutesUntilChange(from: minuteOfDay).map { $0 * 60 - second }
    }

    /// The `off` tiers as display-off ranges (each from its start to the next tier's), so that
    /// they switch the screen as `--display-off` does; nil when no tier is `off`.
    public var offSchedule: DisplaySchedule? {
        var ranges: [DisplaySchedule.Range] = []
        for (i, t) in tiers.enumerated() where t.level == .off {
            let next = tiers[(i + 1) % tiers.count].start
            ranges.append(DisplaySchedule.Range(start: t.start, end: next == 0 ? DisplaySchedule.minutesPerDay : next))
        }
        return ranges.isEmpty ? nil : DisplaySchedule(ranges: ranges)
    }
}

/// Why a `--brightness` value was refused; the description names the piece.
public enum BrightnessTiersError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing given.
    case empty
    /// A piece that is not `HH:MM=LEVEL`.
    case badTier(String)
    /// A time that is not `HH:MM` (00:00 ... 23:59).
    case badTime(String, tier: String)
    /// A level that is not a whole percentage 1 ... 100 or `off`.
    case badLevel(String, tier: String)
    /// Two tiers at the same time.
    case sameTime(String)
    /// Every tier is `off`: the screen would never be on.
    case allOff

    public var description: String {
        switch self {
        case .empty:
            return "expected HH:MM=PCT (several separated by commas, e.g. 07:00=100,20:00=40,23:00=off), "
                + "got an empty value"
        case .badTier(let t):
            return "'\(t)' is not a tier HH:MM=PCT or HH:MM=off (e.g. 20:00=40)"
        case .badTime(let time, let t):
            return "'\(time)' in '\(t)' is not a time HH:MM (00:00 ... 23:59)"
        case .badLevel(let level, let t):
            return "'\(level)' in '\(t)' is not a brightness: a whole percentage 1 ... 100, or off"
        case .sameTime(let time):
            return "two tiers start at \(time)"
        case .allOff:
            return "every tier is off, so the screen would never be on "
                + "(--display-off 00:00-24:00 says that, if it is meant)"
        }
    }
}

/// `s` without the spaces and tabs around it.
private func trimmed<S: StringProtocol>(_ s: S) -> String {
    let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    guard let first = s.firstIndex(where: { !blank($0) }), let last = s.lastIndex(where: { !blank($0) }) else {
        return ""
    }
    return String(s[first...last])
}
