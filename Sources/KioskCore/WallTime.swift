// SPDX-License-Identifier: Apache-2.0
/// Wall-clock time, for item schedules (docs/schedules.md): the device's clock and time zone,
/// given to the frame loop from outside so that the core reads neither. The real ones are
/// CLOCK_REALTIME and libc's local time zone (`TZ`, /etc/localtime); tests and the virtual
/// clock give their own.
public protocol WallClock: AnyObject {
    /// Time since 1970-01-01T00:00:00Z (the Unix epoch, leap seconds not counted).
    var sinceEpoch: Duration { get }
}

/// A time zone's rules: its offset from UTC at any instant.
public protocol TimeZoneRules {
    /// Seconds east of UTC in force at `epochSecond` (Berlin in summer: 7200).
    func utcOffset(atEpochSecond epochSecond: Int64) -> Int
}

/// A wall clock that runs with a ``ShowClock``: `start` at show time zero. On a
/// ``VirtualClock`` the wall time jumps with it, so a test walks through days in no time.
public final class ShowWallClock: WallClock {
    private let start: Duration
    private let clock: ShowClock
    /// - Parameters: start: the wall time (since the epoch) at show time zero.
    public init(start: Duration, clock: ShowClock) { self.start = start; self.clock = clock }
    public var sinceEpoch: Duration { start + clock.now }
}

/// A zone with one offset all year (UTC: 0).
public struct FixedOffsetZone: TimeZoneRules, Sendable {
    public let seconds: Int
    public init(seconds: Int) { self.seconds = seconds }
    public func utcOffset(atEpochSecond epochSecond: Int64) -> Int { seconds }
}

/// A day of the proleptic Gregorian calendar.
public struct LocalDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var year: Int
    /// 1 ... 12.
    public var month: Int
    /// 1 ... 31.
    public var day: Int

    public init(year: Int, month: Int, day: Int) { self.year = year; self.month = month; self.day = day }

    /// Days since 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms",
    /// days_from_civil).
    public var daysSinceEpoch: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date `days` days after 1970-01-01 (civil_from_days, same source).
    public init(daysSinceEpoch days: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.init(year: Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), month: Int(m), day: Int(d))
    }

    /// Days in `month` of `year`.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// This date's month and day in `year`: the day "on this day" and "N years ago" count as
    /// its return. 29 February in a year that has none (a common year) is 28 February, the last
    /// day of the same month (docs/carousel.md "Order").
    public func anniversary(in year: Int) -> LocalDate {
        LocalDate(year: year, month: month, day: min(day, Self.daysIn(month: month, year: year)))
    }

    /// The day after (or `n` days after).
    public func adding(days n: Int) -> LocalDate { LocalDate(daysSinceEpoch: daysSinceEpoch + Int64(n)) }

    /// 0 = Monday ... 6 = Sunday (ISO 8601 order; 1970-01-01 was a Thursday).
    public var weekday: Int { Int(((daysSinceEpoch + 3) % 7 + 7) % 7) }

    public static func < (a: LocalDate, b: LocalDate) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    /// `2026-12-24`.
    public var description: String {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : String(v) }
        return "\(year)-\(two(month))-\(two(day))"
    }
}

extension TimeZoneRules {
    /// The local date and second of the day (0 ... 86399) at `epochSecond`.
    public func local(atEpochSecond t: Int64) -> (date: LocalDate, secondOfDay: Int) {
        let l = t + Int64(utcOffset(atEpochSecond: t))
        let days = l >= 0 ? l / 86_400 : (l - 86_399) / 86_400
        return (LocalDate(daysSinceEpoch: days), Int(l - days * 86_400))
    }

    /// The instant the local wall clock reads `minute` (0 ... 1439) on `date`. Across a
    /// daylight-saving change: a time that does not exist (the skipped hour) is the instant of
    /// the change; a time that exists twice (the repeated hour) is its first occurrence.
    /// Assumes at most one change of offset within a day either side, as every zone in the tz
    /// database has.
    public func instant(of date: LocalDate, minute: Int) -> Int64 {
        let l = date.daysSinceEpoch * 86_400 + Int64(minute) * 60
        let before = Int64(utcOffset(atEpochSecond: l - 86_400)), after = Int64(utcOffset(atEpochSecond: l + 86_400))
        let candidates = [l - before, l - after].filter { Int64(utcOffset(atEpochSecond: $0)) == l - $0 }
        if let first = candidates.min() { return first }
        // Skipped: the change lies between the two readings; find its first second.
        var lo = min(l - before, l - after), hi = max(l - before, l - after)
        let old = utcOffset(atEpochSecond: lo)
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2
            if utcOffset(atEpochSecond: mid) == old { lo = mid } else { hi = mid }
        }
        return hi
    }
}
