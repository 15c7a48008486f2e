// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore

/// Central European time by the EU rule (Directive 2000/84/EC): +01:00, and +02:00 from 01:00 UTC
/// on the last Sunday of March to 01:00 UTC on the last Sunday of October. Written out here so
/// these tests need no tz database; KioskAppTests checks the same walks with libc and tzdata.
private struct CentralEuropeanZone: TimeZoneRules {
    func utcOffset(atEpochSecond t: Int64) -> Int {
        let year = LocalDate(daysSinceEpoch: t / 86_400).year
        func lastSunday(_ month: Int) -> Int64 {
            var d = LocalDate(year: year, month: month, day: 31)
            while d.weekday != 6 { d = d.adding(days: -1) }
            return d.daysSinceEpoch * 86_400 + 3600
        }
        return t >= lastSunday(3) && t < lastSunday(10) ? 7200 : 3600
    }
}

private let zone = CentralEuropeanZone()
private func utc(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int = 0) -> Int64 {
    LocalDate(year: y, month: mo, day: d).daysSinceEpoch * 86_400 + Int64(h * 3600 + mi * 60)
}
private func schedule(from: String? = nil, until: String? = nil, days: [String]? = nil,
                      times: [String] = []) throws -> ItemSchedule {
    var s = ItemSchedule()
    s.from = try from.map { try ItemSchedule.parseBound($0) }
    s.until = try until.map { try ItemSchedule.parseBound($0) }
    s.days = try days.map { Set(try $0.map { try ItemSchedule.parseDay($0) }) }
    s.times = try times.map { try ItemSchedule.parseWindow($0) }
    return s
}

@Test func datesAndWeekdaysFollowTheProlepticGregorianCalendar() {
    #expect(LocalDate(year: 1970, month: 1, day: 1).daysSinceEpoch == 0)
    #expect(LocalDate(year: 2000, month: 3, day: 1).daysSinceEpoch == 11_017)
    #expect(LocalDate(daysSinceEpoch: 20_541) == LocalDate(year: 2026, month: 3, day: 29))
    #expect(LocalDate(year: 2026, month: 3, day: 29).weekday == 6)   // a Sunday
    #expect(LocalDate(year: 1969, month: 12, day: 31).weekday == 2)  // a Wednesday
    #expect(LocalDate(daysSinceEpoch: -1) == LocalDate(year: 1969, month: 12, day: 31))
}

@Test func boundsAreLocalDatesOrRFC3339InstantsWithAnOffset() throws {
    #expect(try ItemSchedule.parseBound("2026-12-24") == .date(LocalDate(year: 2026, month: 12, day: 24)))
    #expect(try ItemSchedule.parseBound("2026-03-29T03:00:00+02:00") == .instant(utc(2026, 3, 29, 1)))
    #expect(try ItemSchedule.parseBound("2026-03-29T01:00:00Z") == .instant(utc(2026, 3, 29, 1)))
    #expect(try ItemSchedule.parseBound("2026-03-29t01:00:00.250z") == .instant(utc(2026, 3, 29, 1)))
    #expect(try ItemSchedule.parseBound("2026-03-28T20:00:00-05:00") == .instant(utc(2026, 3, 29, 1)))
    for bad in ["2026-02-29", "2026-13-01", "26-03-29", "2026-03-29T01:00:00", "2026-03-29T25:00:00Z",
                "2026-03-29T01:00Z", "2026-03-29T01:00:00+0200", "2026-03-29T01:00:00.Z", "tomorrow", ""] {
        #expect(throws: ItemScheduleError.badBound(bad)) { try ItemSchedule.parseBound(bad) }
    }
    #expect(throws: ItemScheduleError.unusableBound(
        "0000-01-01", reason: "the year 0000 is outside 1970...9999 (leave the key out for no bound)")) {
        try ItemSchedule.parseBound("0000-01-01")
    }
    // RFC 3339 §5.8's leap second
    #expect(try ItemSchedule.parseBound("1990-12-31T15:59:60-08:00") == .instant(utc(1991, 1, 1, 0) - 1))
    for noLeap in ["2026-12-04T18:00:60Z", "2026-12-31T23:59:60+01:00", "2026-11-30T22:59:60Z"] {
        #expect(throws: ItemScheduleError.self) { try ItemSchedule.parseBound(noLeap) }
    }
    #expect(try ItemSchedule.parseDay("Fri") == 4)
    #expect(try ItemSchedule.parseDay("MON") == 0)
    #expect(try ItemSchedule.parseDay("sunday") == 6)
    #expect(throws: ItemScheduleError.badDay("fr")) { try ItemSchedule.parseDay("fr") }
    #expect(throws: ItemScheduleError.self) { try ItemSchedule.parseWindow("07:00-11:00,12:00-13:00") }
    #expect(throws: ItemScheduleError.self) { try ItemSchedule.parseWindow("7-11") }
    #expect(throws: ItemScheduleError.emptyPeriod) { try schedule(from: "2026-12-24", until: "2026-12-23").validate() }
    #expect(throws: ItemScheduleError.emptyPeriod) {
        try schedule(from: "2026-12-24T10:00:00Z", until: "2026-12-24T10:00:00Z").validate()
    }
    try schedule(from: "2026-12-24", until: "2026-12-24").validate()   // all of that day
}

@Test func aWindowCrossingMidnightBelongsToTheDayItStartsOn() throws {
    // Fridays 22:00 to 02:00 (CET in January: UTC+1).
    let s = try schedule(days: ["fri"], times: ["22:00-02:00"])
    let friday = LocalDate(year: 2026, month: 1, day: 9)
    #expect(friday.weekday == 4)
    #expect(!s.holds(atEpochSecond: utc(2026, 1, 9, 20, 59), zone: zone))
    #expect(s.holds(atEpochSecond: utc(2026, 1, 9, 21), zone: zone))
    #expect(s.holds(atEpochSecond: utc(2026, 1, 10, 0, 59), zone: zone))   // Saturday 01:59
    #expect(!s.holds(atEpochSecond: utc(2026, 1, 10, 1), zone: zone))      // Saturday 02:00
    #expect(!s.holds(atEpochSecond: utc(2026, 1, 10, 21, 30), zone: zone)) // Saturday 22:30
    #expect(s.nextChange(afterEpochSecond: utc(2026, 1, 9, 12), zone: zone) == utc(2026, 1, 9, 21))
    #expect(s.nextChange(afterEpochSecond: utc(2026, 1, 9, 21), zone: zone) == utc(2026, 1, 10, 1))
    // From Saturday, the next is a week on.
    #expect(s.nextChange(afterEpochSecond: utc(2026, 1, 10, 1), zone: zone) == utc(2026, 1, 16, 21))
}

@Test func aWindowInTheSkippedHourStartsAtTheChange() throws {
    // 29 March 2026: 02:00 CET becomes 03:00 CEST (01:00 UTC).
    let s = try schedule(times: ["02:30-04:00"])
    #expect(zone.instant(of: LocalDate(year: 2026, month: 3, day: 29), minute: 150) == utc(2026, 3, 29, 1))
    #expect(s.nextChange(afterEpochSecond: utc(2026, 3, 28, 23), zone: zone) == utc(2026, 3, 29, 1))
    #expect(!s.holds(atEpochSecond: utc(2026, 3, 29, 1) - 1, zone: zone))
    #expect(s.holds(atEpochSecond: utc(2026, 3, 29, 1), zone: zone))
    #expect(s.nextChange(afterEpochSecond: utc(2026, 3, 29, 1), zone: zone) == utc(2026, 3, 29, 2))  // 04:00 CEST
    // The day before, the window ran its full 90 minutes in CET.
    #expect(s.holds(atEpochSecond: utc(2026, 3, 28, 1, 30), zone: zone))
    #expect(!s.holds(atEpochSecond: utc(2026, 3, 28, 3), zone: zone))
}

@Test func aWindowInTheRepeatedHourRunsOnce() throws {
    // 25 October 2026: 03:00 CEST becomes 02:00 CET (01:00 UTC); 02:15 comes twice.
    let s = try schedule(times: ["02:15-02:45"])
    #expect(s.nextChange(afterEpochSecond: utc(2026, 10, 24, 22), zone: zone) == utc(2026, 10, 25, 0, 15))
    #expect(s.holds(atEpochSecond: utc(2026, 10, 25, 0, 30), zone: zone))
    #expect(s.nextChange(afterEpochSecond: utc(2026, 10, 25, 0, 15), zone: zone) == utc(2026, 10, 25, 0, 45))
    #expect(!s.holds(atEpochSecond: utc(2026, 10, 25, 1, 30), zone: zone))   // 02:30 CET, the second time
    #expect(s.nextChange(afterEpochSecond: utc(2026, 10, 25, 0, 45), zone: zone) == utc(2026, 10, 26, 1, 15))
}

@Test func fromAndUntilAreExactEdgesAndALocalUntilDateIsInclusive() throws {
    let s = try schedule(from: "2026-12-01T09:00:00+01:00", until: "2026-12-04")
    #expect(!s.holds(atEpochSecond: utc(2026, 12, 1, 8) - 1, zone: zone))
    #expect(s.holds(atEpochSecond: utc(2026, 12, 1, 8), zone: zone))
    #expect(s.holds(atEpochSecond: utc(2026, 12, 4, 23) - 1, zone: zone))   // 23:59:59 on the 4th
    #expect(!s.holds(atEpochSecond: utc(2026, 12, 4, 23), zone: zone))
    #expect(s.nextChange(afterEpochSecond: utc(2026, 11, 1, 0), zone: zone) == utc(2026, 12, 1, 8))
    #expect(s.nextChange(afterEpochSecond: utc(2026, 12, 1, 8), zone: zone) == utc(2026, 12, 4, 23))
    #expect(s.nextChange(afterEpochSecond: utc(2026, 12, 4, 23), zone: zone) == nil)
}

@Test func theRotationFallsBackOnlyWhenNothingElseIsScheduled() throws {
    let breakfast = PlaylistItem(source: "breakfast.jpg", schedule: try schedule(times: ["07:00-11:00"]))
    let lunch = PlaylistItem(source: "lunch.jpg", schedule: try schedule(times: ["11:00-15:00"]))
    let logo = PlaylistItem(source: "logo.png", fallback: true)
    let items = [breakfast, lunch, logo]
    let morning = ScheduledRotation.showing(items, atEpochSecond: utc(2026, 1, 5, 8), zone: zone)  // 09:00 CET
    #expect(morning.showing == [0])
    #expect(morning.next == utc(2026, 1, 5, 10))
    #expect(ScheduledRotation.showing(items, atEpochSecond: utc(2026, 1, 5, 10), zone: zone).showing == [1])
    let evening = ScheduledRotation.showing(items, atEpochSecond: utc(2026, 1, 5, 17), zone: zone)
    #expect(evening.showing == [2])
    #expect(evening.next == utc(2026, 1, 6, 6))
    #expect(ScheduledRotation.showing(Array(items.prefix(2)), atEpochSecond: utc(2026, 1, 5, 17), zone: zone).showing
            == [])
}
