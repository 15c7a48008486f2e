// SPDX-License-Identifier: Apache-2.0
/// When a playlist item is in the rotation (docs/schedules.md): an optional start (`from`) and
/// end (`until`), the days of the week, and daily windows of local wall-clock time that may
/// cross midnight. Every part given must hold; a part left out always holds.
///
/// Pure: instants are seconds since the Unix epoch; the local calendar comes from a
/// ``TimeZoneRules``. Across a daylight-saving change a window keeps its wall-clock times: one
/// that starts in the skipped hour starts at the change, one in the repeated hour runs once
/// (see ``TimeZoneRules/instant(of:minute:)``).
public struct ItemSchedule: Hashable, Sendable {
    /// A start or end: an instant (RFC 3339 with an offset), or a local date. A date in `from`
    /// starts at its local midnight; in `until` it ends at the end of that day (the midnight
    /// after it), so `"until": "2026-12-04"` shows the item all of 4 December.
    public enum Bound: Hashable, Sendable, CustomStringConvertible {
        /// Seconds since the epoch.
        case instant(Int64)
        case date(LocalDate)

        public var description: String {
            switch self {
            case .instant(let t): return "@\(t)"
            case .date(let d): return d.description
            }
        }
    }

    public var from: Bound?
    public var until: Bound?
    /// Weekdays (0 = Monday ... 6 = Sunday) the windows may start on; nil: every day. A window
    /// that crosses midnight belongs to the day it starts on.
    public var days: Set<Int>?
    /// Daily windows of local time (minutes of the day, as in `--display-off`); empty: all day.
    public var times: [DisplaySchedule.Range]

    public init(from: Bound? = nil, until: Bound? = nil, days: Set<Int>? = nil, times: [DisplaySchedule.Range] = []) {
        self.from = from; self.until = until; self.days = days; self.times = times
    }

    /// `mon` ... `sun` (also `monday` ... `sunday`, any case).
    public static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    // MARK: Evaluation

    /// Whether the item is in the rotation at `t` (seconds since the epoch).
    public func holds(atEpochSecond t: Int64, zone: TimeZoneRules) -> Bool {
        if let from, t < start(from, zone) { return false }
        if let until, t >= end(until, zone) { return false }
        let today = zone.local(atEpochSecond: t).date
        for date in [today.adding(days: -1), today] where allows(date) {
            if windows(on: date, zone).contains(where: { $0.start <= t && t < $0.end }) { return true }
        }
        return false
    }

    /// The first instant after `t` where the schedule may change (a window's start or end, the
    /// start or end of `from`/`until`); nil when it never changes again. A boundary that turns
    /// out not to change anything (two windows that meet) only costs a look.
    public func nextChange(afterEpochSecond t: Int64, zone: TimeZoneRules) -> Int64? {
        var best: Int64?
        func consider(_ c: Int64) { if c > t, best.map({ c < $0 }) ?? true { best = c } }
        let untilAt = until.map { end($0, zone) }
        if let u = untilAt, t >= u { return nil }
        if let from { consider(start(from, zone)) }
        if let u = untilAt { consider(u) }
        guard days != nil || !times.isEmpty else { return best }
        let today = zone.local(atEpochSecond: t).date
        for n in -1...8 {
            let date = today.adding(days: n)
            guard allows(date) else { continue }
            for w in windows(on: date, zone) { consider(w.start); consider(w.end) }
            if let b = best, b < zone.instant(of: date, minute: 0) { break }
        }
        return best
    }

    private func allows(_ date: LocalDate) -> Bool { days?.contains(date.weekday) ?? true }

    private func start(_ b: Bound, _ zone: TimeZoneRules) -> Int64 {
        switch b {
        case .instant(let t): return t
        case .date(let d): return zone.instant(of: d, minute: 0)
        }
    }

    private func end(_ b: Bound, _ zone: TimeZoneRules) -> Int64 {
        switch b {
        case .instant(let t): return t
        case .date(let d): return zone.instant(of: d.adding(days: 1), minute: 0)
        }
    }

    /// The windows that start on `date`, as instants [start, end). When the offset a day before
    /// `date` and two days after it are the same, no change happens in between (at most one per
    /// day either side, as ``TimeZoneRules/instant(of:minute:)`` assumes) and the instants are
    /// worked out without asking the zone again.
    private func windows(on date: LocalDate, _ zone: TimeZoneRules) -> [(start: Int64, end: Int64)] {
        let midnight = date.daysSinceEpoch * 86_400
        let offset = zone.utcOffset(atEpochSecond: midnight - 86_400)
        let steady = offset == zone.utcOffset(atEpochSecond: midnight + 2 * 86_400)
        func at(_ day: Int, _ minute: Int) -> Int64 {
            steady ? midnight + Int64(day * 86_400 + minute * 60 - offset)
                : zone.instant(of: date.adding(days: day), minute: minute)
        }
        guard !times.isEmpty else { return [(at(0, 0), at(1, 0))] }
        return times.map { r in
            let endDay = r.end <= r.start || r.end == DisplaySchedule.minutesPerDay ? 1 : 0
            return (at(0, r.start), at(endDay, r.end % DisplaySchedule.minutesPerDay))
        }
    }

    // MARK: Parsing the parts (the manifest reader puts them together and names the place)

    /// The years a `from` or `until` may name. RFC 3339 allows 0000 ... 9999; a date before the
    /// Unix epoch (1970) is no schedule a device's clock will see, more likely a generator's
    /// placeholder for "no date" (`0000-01-01`), which must be left out instead.
    public static let yearRange = 1970...9999

    /// `2026-12-24` (a local date) or an RFC 3339 date-time with an offset
    /// (`2026-12-24T18:00:00+01:00`, `...Z`, `T` and `Z` in either case, fractional seconds
    /// dropped; RFC 3339 §5.6). The second 60 only as a leap second (RFC 3339 §5.7): at
    /// 23:59:60 UTC on the last day of a month (`1990-12-31T15:59:60-08:00`), taken as :59.
    /// - Throws: ``ItemScheduleError/badBound(_:)`` for the wrong form,
    ///   ``ItemScheduleError/unusableBound(_:reason:)`` for a year outside ``yearRange`` or a
    ///   second 60 that is no leap second.
    public static func parseBound(_ text: String) throws(ItemScheduleError) -> Bound {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for c in b[at..<(at + n)] { guard (48...57).contains(c) else { return nil }; v = v * 10 + Int(c - 48) }
            return v
        }
        guard let y = digits(0, 4), b.count >= 10, b[4] == 45, let mo = digits(5, 2), b[7] == 45, let d = digits(8, 2),
              (1...12).contains(mo), (1...LocalDate.daysIn(month: mo, year: y)).contains(d) else {
            throw .badBound(text)
        }
        guard yearRange.contains(y) else {
            throw .unusableBound(text, reason: "the year \(text.prefix(4)) is outside "
                                 + "\(yearRange.lowerBound)...\(yearRange.upperBound) "
                                 + "(leave the key out for no bound)")
        }
        let date = LocalDate(year: y, month: mo, day: d)
        if b.count == 10 { return .date(date) }
        guard b.count >= 20, b[10] == 84 || b[10] == 116 || b[10] == 32, let h = digits(11, 2), b[13] == 58,
              let mi = digits(14, 2), b[16] == 58, let s = digits(17, 2), h < 24, mi < 60, s <= 60 else {
            throw .badBound(text)
        }
        var i = 19
        if b[i] == 46 {
            i += 1
            let digitsStart = i
            while i < b.count, (48...57).contains(b[i]) { i += 1 }
            guard i > digitsStart else { throw .badBound(text) }
        }
        var offset = 0
        if i < b.count, b[i] == 90 || b[i] == 122 {
            i += 1
        } else if i + 6 == b.count, b[i] == 43 || b[i] == 45, let oh = digits(i + 1, 2), b[i + 3] == 58,
                  let om = digits(i + 4, 2), oh < 24, om < 60 {
            offset = (b[i] == 45 ? -1 : 1) * (oh * 3600 + om * 60)
            i += 6
        } else {
            throw .badBound(text)
        }
        guard i == b.count else { throw .badBound(text) }
        let instant = date.daysSinceEpoch * 86_400 + Int64(h * 3600 + mi * 60 + min(s, 59)) - Int64(offset)
        if s == 60 {
            // 23:59:59 UTC on a month's last day: the next second is in a new month.
            let (days, second) = instant.quotientAndRemainder(dividingBy: 86_400)
            guard second == 86_399, LocalDate(daysSinceEpoch: days + 1).day == 1 else {
                throw .unusableBound(text, reason: "second 60 is only a leap second, at 23:59:60 UTC on the last day "
                                     + "of a month (RFC 3339 section 5.7)")
            }
        }
        return .instant(instant)
    }

    /// `mon` ... `sun` (or the full name), any case, to 0 ... 6.
    /// - Throws: ``ItemScheduleError/badDay(_:)``.
    public static func parseDay(_ text: String) throws(ItemScheduleError) -> Int {
        let lower = text.lowercased()
        let full = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        guard let day = dayNames.firstIndex(of: lower) ?? full.firstIndex(of: lower) else { throw .badDay(text) }
        return day
    }

    /// One window `HH:MM-HH:MM` (as a `--display-off` range; may cross midnight).
    /// - Throws: ``ItemScheduleError/badWindow(_:)`` with the reason.
    public static func parseWindow(_ text: String) throws(ItemScheduleError) -> DisplaySchedule.Range {
        guard !text.contains(",") else {
            throw .badWindow("'\(text)' holds several windows; give each as its own string")
        }
        // Stricter than `--display-off`: exactly HH:MM, two digits each (RFC 3339 section 5.6,
        // time-hour and time-minute), no spaces; `24:00` only as an end (ISO 8601's end of day).
        let ends = text.split(separator: "-", omittingEmptySubsequences: false)
        if ends.count == 2, let bad = ends.first(where: { end in
            let u = Array(end.utf8)
            return u.count != 5 || u[2] != 58 || ![0, 1, 3, 4].allSatisfy({ (48...57).contains(u[$0]) })
        }) {
            throw .badWindow("'\(bad)' in '\(text)' is not a time HH:MM "
                             + "(two digits each, 00:00 ... 23:59, 24:00 as an end)")
        }
        do {
            return try DisplaySchedule.parse(text).ranges[0]
        } catch {
            throw .badWindow(error.description)
        }
    }

    /// Checks that `until` comes after `from` (both dates: not before it) in any zone.
    /// - Throws: ``ItemScheduleError/emptyPeriod`` when it does not.
    public func validate() throws(ItemScheduleError) {
        guard let from, let until else { return }
        let utc = FixedOffsetZone(seconds: 0)
        // An instant against a date is compared in the two zones furthest apart (UTC±14).
        let zones = [FixedOffsetZone(seconds: -14 * 3600), utc, FixedOffsetZone(seconds: 14 * 3600)]
        if zones.allSatisfy({ end(until, $0) <= start(from, $0) }) { throw .emptyPeriod }
    }
}

/// Why a schedule was refused; the manifest reader adds the place (`items[3].schedule.times[0]`).
public enum ItemScheduleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not `YYYY-MM-DD` nor an RFC 3339 date-time with an offset.
    case badBound(String)
    /// In that form, but not a usable bound: the reason (a year before 1970, a second 60 that
    /// is no leap second).
    case unusableBound(String, reason: String)
    /// Not a day name.
    case badDay(String)
    /// Not a window `HH:MM-HH:MM`: the reason.
    case badWindow(String)
    /// `until` is not after `from`.
    case emptyPeriod

    public var description: String {
        switch self {
        case .badBound(let t):
            return "\"\(t)\" is neither a date YYYY-MM-DD nor an RFC 3339 date-time with an offset "
                + "(2026-12-24T18:00:00+01:00)"
        case .unusableBound(let t, let reason):
            return "\"\(t)\": \(reason)"
        case .badDay(let t):
            return "\"\(t)\" is not a day (one of \(ItemSchedule.dayNames.joined(separator: ", ")), "
                + "or the full name; any case)"
        case .badWindow(let reason):
            return reason
        case .emptyPeriod:
            return "until is not after from: the item would never be shown"
        }
    }
}

/// Which playlist items are in the rotation at a moment (docs/schedules.md).
public enum ScheduledRotation {
    /// The indices of `items` in the rotation at `t`: those whose schedule holds (or that have
    /// none), leaving out `fallback` items; when that leaves none, the fallback items whose
    /// schedule holds. `standby`: the fallback items whose schedule holds while others are in
    /// the rotation (they stand in when none of those can be shown). `next` is the first
    /// instant after `t` where that may change (nil: never).
    public static func showing(_ items: [PlaylistItem], atEpochSecond t: Int64,
                               zone: TimeZoneRules) -> (showing: [Int], standby: [Int], next: Int64?) {
        var holds: [ItemSchedule: Bool] = [:]
        var next: Int64?
        func inTime(_ item: PlaylistItem) -> Bool {
            guard let s = item.schedule else { return true }
            if let known = holds[s] { return known }
            let h = s.holds(atEpochSecond: t, zone: zone)
            holds[s] = h
            if let c = s.nextChange(afterEpochSecond: t, zone: zone), next.map({ c < $0 }) ?? true { next = c }
            return h
        }
        var regular: [Int] = [], fallback: [Int] = []
        for (i, item) in items.enumerated() where inTime(item) {
            if item.fallback { fallback.append(i) } else { regular.append(i) }
        }
        return regular.isEmpty ? (fallback, [], next) : (regular, fallback, next)
    }
}
