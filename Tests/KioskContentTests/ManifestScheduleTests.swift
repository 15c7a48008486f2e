// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore
import KioskContent

@Test func aMalformedScheduleRefusesThePlaylistNamingThePlace() throws {
    func error(_ json: String) -> String {
        do {
            _ = try Manifest.parse(Array(json.utf8), origin: .local(path: "/tmp/show.json")); return "accepted"
        } catch {
            return error.description
        }
    }
    let item = #"{"src": "a.png"}, {"src": "b.png"}, {"src": "c.png"}"#
    #expect(error(#"{"items": [\#(item), {"src": "d.png", "schedule": {"times": ["25:00-26:00"]}}]}"#)
                .contains("items[3].schedule.times[0]"))
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"days": ["fri", "someday"]}}]}"#)
                .contains("items[0].schedule.days[1]"))
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"from": "2026-12-24 18:00"}}]}"#)
                .contains("items[0].schedule.from"))
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"from": "2026-12-24", "until": "2026-12-01"}}]}"#)
                .contains("items[0].schedule.until"))
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"time": ["07:00-11:00"]}}]}"#)
                .contains("items[0].schedule.time"))
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"times": []}}]}"#).contains("items[0].schedule.times"))
    #expect(error(#"{"items": [{"src": "d.png", "fallback": "yes"}]}"#).contains("items[0].fallback"))
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"days": ["mon"], "times": ["17:30-02:00"]}, "#
                  + #""fallback": false}]}"#) == "accepted")
    // At most 64 windows (each is looked at on every look at the schedules): 500,000 stalled the loop.
    let windows = (0..<65).map { _ in #""07:00-08:00""# }.joined(separator: ",")
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"times": [\#(windows)]}}]}"#)
                .contains("items[0].schedule.times: 65 entries, more than the 64 allowed"))
    let refused = error(#"{"items": [\#(item), "#
                        + #"{"src": "d.png", "schedule": {"times": ["07:00-11:00", "25:00-26:00"]}}]}"#)
    #expect(refused.contains("items[3].schedule.times[1]: '25:00' in '25:00-26:00' is not a time"), "\(refused)")
}

/// Strict as docs/schedules.md says: a window is HH:MM-HH:MM (two digits each, as RFC 3339's
/// partial-time; `--display-off` refuses `9:00` too), and `schedule` or `fallback` set to null is
/// refused, not read as "always" (a generator's missing schedule must not show an item all day).
@Test func aScheduleIsReadStrictlyNullAndOneDigitHoursRefused() throws {
    func error(_ json: String) -> String {
        do {
            _ = try Manifest.parse(Array(json.utf8), origin: .local(path: "/tmp/show.json")); return "accepted"
        } catch {
            return error.description
        }
    }
    let item = #"{"src": "a.png"}, {"src": "b.png"}, {"src": "c.png"}"#
    let oneDigit = error(#"{"items": [\#(item), "#
                         + #"{"src": "d.png", "schedule": {"times": ["07:00-11:00", "9:00-11:00"]}}]}"#)
    #expect(oneDigit == "/tmp/show.json: items[3].schedule.times[1]: '9:00' in '9:00-11:00' is not a time HH:MM "
            + "(two digits each, 00:00 ... 23:59, 24:00 as an end)", "\(oneDigit)")
    for bad in [" 07:00-11:00", "07:00 - 11:00", "07:00-1100", "07:0-11:00", "07:00-11:000", "０７:00-11:00"] {
        #expect(error(#"{"items": [{"src": "d.png", "schedule": {"times": ["\#(bad)"]}}]}"#)
                    .contains("items[0].schedule.times[0]: "), "\(bad)")
    }
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"times": ["00:00-24:00", "22:00-06:30"]}}]}"#)
            == "accepted")
    let null = error(#"{"items": [{"src": "a.png"}, {"src": "d.png", "schedule": null}]}"#)
    #expect(null == "/tmp/show.json: items[1].schedule: expected an object, found null "
            + "(leave schedule out for an item always in the rotation)",
            "\(null)")
    #expect(error(#"{"items": [{"src": "d.png", "fallback": null}]}"#)
                .contains("items[0].fallback: expected true or false, found null"))
    #expect(error(#"{"items": [{"src": "d.png", "schedule": {"days": null}}]}"#)
                .contains("items[0].schedule.days: expected an array, found null"))
}

@Test func aPlaylistItemCarriesItsScheduleAndFallback() throws {
    let json = #"{"items": [{"src": "menu.png", "schedule": {"from": "2026-12-01", "#
        + #""until": "2026-12-04T18:00:00+01:00", "#
        + #""days": ["Mon", "tue"], "times": ["07:00-11:00", "17:30-02:00"]}}, {"src": "logo.png", "fallback": true}]}"#
    let m = try Manifest.parse(Array(json.utf8), origin: .local(path: "/srv/show.json"))
    let s = try #require(m.items[0].schedule)
    #expect(s.from == .date(LocalDate(year: 2026, month: 12, day: 1)))
    let until: Int64 = LocalDate(year: 2026, month: 12, day: 4).daysSinceEpoch * 86_400 + 17 * 3600
    #expect(s.until == .instant(until))
    #expect(s.days == [0, 1])
    #expect(s.times == [DisplaySchedule.Range(start: 420, end: 660), DisplaySchedule.Range(start: 1050, end: 120)])
    #expect(!m.items[0].fallback && m.items[1].fallback && m.items[1].schedule == nil)
}

/// docs/schedules.md: day names in any case, each day and each window once; dates in the
/// years 1970...9999; the second 60 only as a leap second (RFC 3339 section 5.7). Every refusal
/// names the item's place and the bad value.
@Test func daysInAnyCaseOnceEachAndOnlySensibleDatesAndLeapSeconds() throws {
    func error(_ schedule: String) -> String {
        let json = #"{"items": [{"src": "a.png"}, {"src": "d.png", "schedule": \#(schedule)}]}"#
        do {
            _ = try Manifest.parse(Array(json.utf8), origin: .local(path: "/tmp/show.json")); return "accepted"
        } catch {
            return error.description
        }
    }
    let upperJSON = #"{"items": [{"src": "d.png", "schedule": {"days": ["MON", "Tuesday", "sUn"]}}]}"#
    let upper = try Manifest.parse(Array(upperJSON.utf8),
                                   origin: .local(path: "/tmp/show.json"))
    #expect(upper.items[0].schedule?.days == [0, 1, 6])
    #expect(error(#"{"days": ["mon", "mon"]}"#)
            == #"/tmp/show.json: items[1].schedule.days[1]: "mon" is the same day as items[1].schedule.days[0] "#
            + #""mon" (each day once)"#)
    #expect(error(#"{"days": ["sun", "fri", "SUNDAY"]}"#)
                .contains(#"items[1].schedule.days[2]: "SUNDAY" is the same day as items[1].schedule.days[0] "sun""#))
    #expect(error(#"{"times": ["07:00-11:00", "12:00-13:00", "07:00-11:00"]}"#)
            == #"/tmp/show.json: items[1].schedule.times[2]: "07:00-11:00" is the same window as "#
            + #"items[1].schedule.times[0] (each window once)"#)
    #expect(error(#"{"from": "0000-01-01"}"#)
            == #"/tmp/show.json: items[1].schedule.from: "0000-01-01": the year 0000 is outside 1970...9999 "#
            + #"(leave the key out for no bound)"#)
    #expect(error(#"{"until": "1969-12-31T23:00:00Z"}"#)
                .contains(#"items[1].schedule.until: "1969-12-31T23:00:00Z": the year 1969 is outside"#))
    #expect(error(#"{"from": "1970-01-01", "until": "9999-12-31T23:59:59Z"}"#) == "accepted")
    let second60 = error(#"{"until": "2026-12-04T18:00:60Z"}"#)
    #expect(second60 == #"/tmp/show.json: items[1].schedule.until: "2026-12-04T18:00:60Z": second 60 is only a "#
            + #"leap second, "#
            + "at 23:59:60 UTC on the last day of a month (RFC 3339 section 5.7)", "\(second60)")
    #expect(error(#"{"until": "2026-06-29T23:59:60Z"}"#).contains("second 60 is only a leap second"))
    #expect(error(#"{"until": "2026-06-30T23:59:60+02:00"}"#).contains("second 60 is only a leap second"))
    // Leap seconds as RFC 3339 writes them (section 5.8): at 23:59:60 UTC, whatever the offset.
    for leap in ["2016-12-31T23:59:60Z", "1990-12-31T15:59:60-08:00", "2026-06-30T23:59:60z"] {
        #expect(error(#"{"until": "\#(leap)"}"#) == "accepted", "\(leap)")
    }
}
