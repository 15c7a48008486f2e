// SPDX-License-Identifier: Apache-2.0
/// When the screen is switched off (`--display-off HH:MM-HH:MM[,HH:MM-HH:MM...]`, kiosk-carousel(1)):
/// a set of daily ranges of local wall-clock time. A range runs from its start (inclusive) to
/// its end (exclusive) and crosses midnight when the end is earlier than the start
/// (`22:00-07:00`: off from 22:00 until 07:00 the next morning). `24:00` may end a range.
///
/// Pure minute arithmetic on the minute of the day (0 ... 1439): no calendar, no time zone, no
/// DST. The frame loop turns the local wall time (localtime_r) into a minute of the day and
/// asks ``isOff(minuteOfDay:)`` and ``minutesUntilChange(from:)``; on a day with a DST shift a
/// change can therefore come an hour early or late, once.
public struct DisplaySchedule: Equatable, Sendable, CustomStringConvertible {
    /// One daily off range, in minutes of the day.
    public struct Range: Hashable, Sendable, CustomStringConvertible {
        /// First minute off, 0 ... 1439.
        public var start: Int
        /// First minute on again, 0 ... 1440 (1440 = midnight at the end of the day).
        public var end: Int

        public init(start: Int, end: Int) { self.start = start; self.end = end }

        /// True when the range runs past midnight (`22:00-07:00`).
        public var crossesMidnight: Bool { end < start }

        /// Whether `minute` (0 ... 1439) lies in the range.
        public func contains(_ minute: Int) -> Bool {
            crossesMidnight ? (minute >= start || minute < end) : (minute >= start && minute < end)
        }

        /// `22:00-07:00`.
        public var description: String { "\(DisplaySchedule.format(start))-\(DisplaySchedule.format(end))" }
    }

    /// Minutes in a day.
    public static let minutesPerDay = 1440

    /// The ranges as given, in order.
    public let ranges: [Range]

    public init(ranges: [Range]) { self.ranges = ranges }

    /// `22:00-07:00,12:00-13:00`: the ranges as they parse back.
    public var description: String { ranges.map(\.description).joined(separator: ",") }

    /// Parses `HH:MM-HH:MM`, several separated by commas (spaces around them are ignored).
    /// Hours 00 ... 23 (24:00 only as an end), minutes 00 ... 59, two digits each, as an item's
    /// schedule takes them (RFC 3339 section 5.6, time-hour and time-minute): `9:00` is refused.
    /// A range whose start equals its end is refused (empty, or the whole day?), and so is a
    /// range given twice (a copied piece), as a schedule refuses a window given twice.
    /// - Throws: ``DisplayScheduleError`` naming the bad value.
    public static func parse(_ text: String) throws(DisplayScheduleError) -> DisplaySchedule {
        let pieces = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: " \t") }
        guard !(pieces.count == 1 && pieces[0].isEmpty) else { throw .empty }
        var ranges: [Range] = []
        for piece in pieces {
            let ends = piece.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2 else { throw .badRange(piece) }
            for end in ends where !Self.isTwoDigitTime(end) { throw .badTime(String(end), range: piece) }
            guard let start = minute(ends[0], allowEndOfDay: false) else {
                throw .badTime(String(ends[0]), range: piece)
            }
            guard let end = minute(ends[1], allowEndOfDay: true) else { throw .badTime(String(ends[1]), range: piece) }
            guard start != end % minutesPerDay || (start == 0 && end == minutesPerDay) else {
                throw .emptyRange(piece)
            }
            let range = Range(start: start, end: end)
            guard !ranges.contains(range) else { throw .duplicate(piece) }
            ranges.append(range)
        }
        return DisplaySchedule(ranges: ranges)
    }

    /// `HH:MM`: exactly two digits, a colon, two digits.
    static func isTwoDigitTime(_ text: Substring) -> Bool {
        let u = Array(text.utf8)
        return u.count == 5 && u[2] == UInt8(ascii: ":") && [0, 1, 3, 4].allSatisfy { (48...57).contains(u[$0]) }
    }

    /// Whether the screen is off at `minuteOfDay` (taken modulo a day, so any integer works).
    public func isOff(minuteOfDay: Int) -> Bool {
        let m = Self.normalize(minuteOfDay)
        return ranges.contains { $0.contains(m) }
    }

    /// How many minutes after `minuteOfDay` the state (off or on) next changes: 1 ... 1440;
    /// nil when it never changes (the ranges cover the whole day, or there are none).
    /// A change "at minute m" takes effect at the start of minute m (hh:mm:00).
    public func minutesUntilChange(from minuteOfDay: Int) -> Int? {
        let m = Self.normalize(minuteOfDay)
        let now = isOff(minuteOfDay: m)
        // Changes only happen at range boundaries: check those, nearest first.
        var best: Int?
        for r in ranges {
            for b in [r.start, r.end % Self.minutesPerDay] {
                var ahead = Self.normalize(b - m)
                if ahead == 0 { ahead = Self.minutesPerDay }
                if isOff(minuteOfDay: m + ahead) != now, best.map({ ahead < $0 }) ?? true { best = ahead }
            }
        }
        return best
    }

    /// The minute of the day (0 ... 1439) of the next change after `minuteOfDay`, nil when none.
    public func nextChange(after minuteOfDay: Int) -> Int? {
        minutesUntilChange(from: minuteOfDay).map { Self.normalize(minuteOfDay + $0) }
    }

    /// Seconds from the wall time `minuteOfDay`:`second` until the next change (the change
    /// happens at hh:mm:00); nil when it never changes.
    public func secondsUntilChange(minuteOfDay: Int, second: Int) -> Int? {
        minutesUntilChange(from: minuteOfDay).map { $0 * 60 - second }
    }

    /// `7:05` / `07:05` → 425; `24:00` only when `allowEndOfDay` (``BrightnessTiers`` too).
    static func minute(_ text: Substring, allowEndOfDay: Bool) -> Int? {
        let t = text.trimmingCharacters(in: " \t")
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let h = Int(parts[0]), let m = Int(parts[1]), m < 60 else { return nil }
        if h == 24 && m == 0 && allowEndOfDay { return minutesPerDay }
        guard h < 24 else { return nil }
        return h * 60 + m
    }

    static func normalize(_ minute: Int) -> Int {
        let r = minute % minutesPerDay
        return r < 0 ? r + minutesPerDay : r
    }

    static func format(_ minute: Int) -> String {
        let h = minute / 60, m = minute % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }
}

/// Why a `--display-off` value was refused; the description names the value.
public enum DisplayScheduleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing given.
    case empty
    /// A piece that is not `HH:MM-HH:MM`.
    case badRange(String)
    /// A time that is not `HH:MM` (hours 0 ... 23, 24:00 as an end only; minutes 00 ... 59).
    case badTime(String, range: String)
    /// Start and end are the same time.
    case emptyRange(String)
    /// The same range given twice.
    case duplicate(String)

    public var description: String {
        switch self {
        case .empty:
            return "expected HH:MM-HH:MM (several separated by commas), got an empty value"
        case .badRange(let r):
            return "'\(r)' is not a range HH:MM-HH:MM (e.g. 22:00-07:00)"
        case .badTime(let t, let r):
            return "'\(t)' in '\(r)' is not a time HH:MM (two digits each, 00:00 ... 23:59, 24:00 as an end)"
        case .emptyRange(let r):
            return "'\(r)' starts and ends at the same time"
        case .duplicate(let r):
            return "'\(r)' is given twice"
        }
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        String(drop(while: { set.contains($0) }).reversed().drop(while: { set.contains($0) }).reversed())
    }
}

private extension String {
    func trimmingCharacters(in set: String) -> String { Substring(self).trimmingCharacters(in: set) }
}
