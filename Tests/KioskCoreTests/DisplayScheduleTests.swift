// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// A test clock: minutes of the day, advanced by hand, that records when the schedule says
/// the screen goes off and on, stepping from change to change as the frame loop does
/// (``DisplaySchedule/minutesUntilChange(from:)``), and checked against a minute-by-minute walk.
private struct ScheduleClock {
    let schedule: DisplaySchedule
    var minute: Int
    /// (absolute minute since the start, off?) at each change.
    var changes: [(at: Int, off: Bool)] = []

    init(_ schedule: DisplaySchedule, startingAt minute: Int) { self.schedule = schedule; self.minute = minute }

    /// Runs for `days` days jumping straight to each change.
    mutating func run(days: Int) {
        let end = minute + days * DisplaySchedule.minutesPerDay
        while let step = schedule.minutesUntilChange(from: minute), minute + step <= end {
            minute += step
            changes.append((minute, schedule.isOff(minuteOfDay: minute)))
        }
    }
}

/// The changes found by looking at every single minute.
private func bruteForceChanges(_ s: DisplaySchedule, from start: Int, days: Int) -> [(Int, Bool)] {
    var out: [(Int, Bool)] = []
    var state = s.isOff(minuteOfDay: start)
    for m in (start + 1)...(start + days * 1440) where s.isOff(minuteOfDay: m) != state {
        state.toggle()
        out.append((m, state))
    }
    return out
}

private func hm(_ h: Int, _ m: Int) -> Int { h * 60 + m }

@Suite struct DisplayScheduleTests {
    @Test func parsesOneRangeAndSeveral() throws {
        let s = try DisplaySchedule.parse("22:00-07:00")
        #expect(s.ranges == [.init(start: hm(22, 0), end: hm(7, 0))])
        #expect(s.ranges[0].crossesMidnight)
        let t = try DisplaySchedule.parse(" 01:30-02:45 , 12:00-13:15,23:00-24:00")
        #expect(t.ranges == [.init(start: 90, end: 165), .init(start: 720, end: 795), .init(start: 1380, end: 1440)])
        #expect(t.description == "01:30-02:45,12:00-13:15,23:00-24:00")
        #expect(try DisplaySchedule.parse("00:00-24:00").ranges == [.init(start: 0, end: 1440)])
    }

    @Test func refusesBadValuesNamingThem() {
        #expect(throws: DisplayScheduleError.empty) { try DisplaySchedule.parse("") }
        #expect(throws: DisplayScheduleError.badRange("22:00")) { try DisplaySchedule.parse("22:00") }
        #expect(throws: DisplayScheduleError.badRange("22:00-07:00-08:00")) {
            try DisplaySchedule.parse("22:00-07:00-08:00")
        }
        #expect(throws: DisplayScheduleError.badTime("25:00", range: "25:00-07:00")) {
            try DisplaySchedule.parse("25:00-07:00")
        }
        #expect(throws: DisplayScheduleError.badTime("07:60", range: "22:00-07:60")) {
            try DisplaySchedule.parse("22:00-07:60")
        }
        #expect(throws: DisplayScheduleError.badTime("24:00", range: "24:00-07:00")) {
            try DisplaySchedule.parse("24:00-07:00")
        }
        #expect(throws: DisplayScheduleError.badTime("7h", range: "7h-8:00")) { try DisplaySchedule.parse("7h-8:00") }
        #expect(throws: DisplayScheduleError.badTime("07:5", range: "07:5-08:00")) {
            try DisplaySchedule.parse("07:5-08:00")
        }
        #expect(throws: DisplayScheduleError.badRange("")) { try DisplaySchedule.parse("22:00-07:00,") }
        #expect(throws: DisplayScheduleError.emptyRange("07:00-07:00")) { try DisplaySchedule.parse("07:00-07:00") }
        // As an item's schedule: two digits each, and a range given once.
        #expect(throws: DisplayScheduleError.badTime("9:00", range: "9:00-17:00")) {
            try DisplaySchedule.parse("9:00-17:00")
        }
        #expect(throws: DisplayScheduleError.badTime("2:45", range: "01:30-2:45")) {
            try DisplaySchedule.parse("01:30-2:45")
        }
        #expect(throws: DisplayScheduleError.duplicate("22:00-07:00")) {
            try DisplaySchedule.parse("22:00-07:00, 12:00-13:00, 22:00-07:00")
        }
        #expect("\(DisplayScheduleError.badTime("9:00", range: "9:00-17:00"))"
                == "'9:00' in '9:00-17:00' is not a time HH:MM (two digits each, 00:00 ... 23:59, 24:00 as an end)")
        let e = DisplayScheduleError.badTime("25:00", range: "25:00-07:00")
        #expect(e.description.contains("'25:00'") && e.description.contains("25:00-07:00"))
    }

    @Test func offInsideTheRangeOnlyStartInclusiveEndExclusive() throws {
        let s = try DisplaySchedule.parse("09:00-17:30")
        #expect(!s.isOff(minuteOfDay: hm(8, 59)))
        #expect(s.isOff(minuteOfDay: hm(9, 0)))
        #expect(s.isOff(minuteOfDay: hm(17, 29)))
        #expect(!s.isOff(minuteOfDay: hm(17, 30)))
        #expect(s.minutesUntilChange(from: hm(8, 0)) == 60)
        #expect(s.nextChange(after: hm(8, 0)) == hm(9, 0))
        #expect(s.nextChange(after: hm(9, 0)) == hm(17, 30))
        #expect(s.nextChange(after: hm(17, 30)) == hm(9, 0))   // tomorrow
        #expect(s.minutesUntilChange(from: hm(17, 30)) == 1440 - hm(8, 30))
    }

    @Test func crossingMidnight() throws {
        let s = try DisplaySchedule.parse("22:00-07:00")
        #expect(!s.isOff(minuteOfDay: hm(21, 59)))
        #expect(s.isOff(minuteOfDay: hm(22, 0)))
        #expect(s.isOff(minuteOfDay: hm(23, 59)))
        #expect(s.isOff(minuteOfDay: 0))
        #expect(s.isOff(minuteOfDay: hm(6, 59)))
        #expect(!s.isOff(minuteOfDay: hm(7, 0)))
        // At 23:30 the next change is 07:00 tomorrow, 7 h 30 min away, across midnight.
        #expect(s.minutesUntilChange(from: hm(23, 30)) == 450)
        #expect(s.nextChange(after: hm(23, 30)) == hm(7, 0))
        // In seconds from 23:30:20: the change is at 07:00:00.
        #expect(s.secondsUntilChange(minuteOfDay: hm(23, 30), second: 20) == 450 * 60 - 20)
        // Minutes outside 0..<1440 wrap (the day before, the day after).
        #expect(s.isOff(minuteOfDay: -30))
        #expect(s.isOff(minuteOfDay: 1440 + hm(1, 0)))
        #expect(!s.isOff(minuteOfDay: -hm(3, 0)))
    }

    @Test func testClockOverSeveralDaysMatchesMinuteByMinute() throws {
        for text in ["22:00-07:00", "09:00-17:30", "23:59-00:01", "00:00-06:00,12:00-13:00,18:00-24:00",
                     "20:00-02:00,01:00-03:00", "12:00-13:00,13:00-14:00", "23:00-24:00,00:00-01:00"] {
            let s = try DisplaySchedule.parse(text)
            for start in [0, hm(6, 59), hm(12, 30), hm(21, 59), hm(23, 59)] {
                var clock = ScheduleClock(s, startingAt: start)
                clock.run(days: 3)
                let brute = bruteForceChanges(s, from: start, days: 3)
                #expect(clock.changes.map(\.at) == brute.map(\.0), "\(text) from \(start)")
                #expect(clock.changes.map(\.off) == brute.map(\.1), "\(text) from \(start)")
            }
        }
    }

    @Test func crossingMidnightDayByDay() throws {
        var clock = ScheduleClock(try DisplaySchedule.parse("22:00-07:00"), startingAt: hm(12, 0))
        clock.run(days: 2)
        // off 22:00 day 0, on 07:00 day 1, off 22:00 day 1, on 07:00 day 2 (= minute 2880 + 420 > end? no: end is
        // 12:00 day 2)
        #expect(clock.changes.map(\.at) == [hm(22, 0), 1440 + hm(7, 0), 1440 + hm(22, 0), 2880 + hm(7, 0)])
        #expect(clock.changes.map(\.off) == [true, false, true, false])
    }

    @Test func adjoiningRangesMergeAndTheWholeDayNeverChanges() throws {
        let s = try DisplaySchedule.parse("12:00-13:00,13:00-14:00")
        #expect(s.nextChange(after: hm(12, 10)) == hm(14, 0))
        let all = try DisplaySchedule.parse("00:00-24:00")
        #expect(all.isOff(minuteOfDay: 0) && all.isOff(minuteOfDay: 1439))
        #expect(all.minutesUntilChange(from: 100) == nil)
        let wrapped = try DisplaySchedule.parse("23:00-24:00,00:00-01:00")
        #expect(wrapped.isOff(minuteOfDay: hm(23, 30)) && wrapped.isOff(minuteOfDay: hm(0, 30)))
        #expect(wrapped.nextChange(after: hm(23, 30)) == hm(1, 0))
        #expect(DisplaySchedule(ranges: []).minutesUntilChange(from: 0) == nil)
    }
}
