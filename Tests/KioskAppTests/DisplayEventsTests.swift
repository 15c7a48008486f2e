// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
@testable import KioskApp

// `shown` means it was on a lit screen: the real frame loop, decoder and offscreen display on
// virtual time, with the VT switch, `display off|on` and touches happening at set show times
// (from inside the loop's wait, as a signal or a control request would), so every event's time
// is exact.

/// Runs three solid images (interval `interval`, no fade) for `seconds`; `setUp` schedules what
/// happens. Returns the event lines.
private func run(seconds: Double, interval: Duration, script: [TouchFeedEvent] = [], displayOffAllDay: Bool = false,
                 wakeDuration: Duration = .seconds(120),
                 setUp: (VirtualShow) -> Void = { _ in }) throws -> [[String: Any]] {
    let show = try VirtualShow(colours: [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF], seconds: seconds)
    show.touch(script)
    if displayOffAllDay { show.configuration.displaySchedule = DisplaySchedule(ranges: [.init(start: 0, end: 1440)]) }
    show.configuration.wakeDuration = wakeDuration
    setUp(show)
    // The --display-off schedule is followed with a real timer (virtual time follows none).
    try show.makeLoop(interval: interval, driver: PartlyRealDriver(show.driver, displayScheduleTimer: displayOffAllDay))
    return try show.run()
}

@Test func noShownWhileTheVTIsAwayOrTheScreenIsOffByControlAndOneWhenItIsLitAgain() throws {
    // Moves every 250 ms. VT away 900 ... 1500 ms (the show goes on unseen), `display off`
    // 2000 ... 2600 ms (the show pauses).
    let events = try run(seconds: 3.0, interval: ms(250)) { show in
        show.at(ms(900)) { _ = $0.perform(.releaseDisplay) }
        show.at(ms(1500)) { _ = $0.perform(.acquireDisplay) }
        show.at(ms(2000)) { $0.setDisplayPower(on: false, reason: "test") }
        show.at(ms(2600)) { $0.setDisplayPower(on: true, reason: "test") }
    }
    // Away, the show moved on unseen (to 1 at 1000, 2 at 1250): back at 1500, its move there is
    // the one announced. Off at 2000 it pauses (the move due then does not happen); lit again
    // at 2600 the image on it is announced, and the next comes a full interval later.
    #expect(describe(events) == "shown 0 @0; shown 1 @250; shown 2 @500; shown 0 @750; display off vt @900; "
            + "display on vt @1500; shown 0 @1500; shown 1 @1750; display off control @2000; display on control @2600; "
            + "shown 1 @2600; shown 2 @2850")
}

@Test func aTouchWakesAScreenOffBySchedulesForTheWakeTimeAndIsNoTap() throws {
    // Off all day by --display-off; a tap at 600 ms lights it for 700 ms; a second touch while
    // lit is a tap and starts the wake again: the screen goes off 700 ms after its last report
    // (1740), not after the waking touch (1300).
    let script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 80, y: 50, time: ms(600))),
                                    .sample(TouchSample(.up, x: 80, y: 50, time: ms(650))),
                                    .sample(TouchSample(.down, x: 80, y: 50, time: ms(1000))),
                                    .sample(TouchSample(.up, x: 80, y: 50, time: ms(1040)))]
    let events = try run(seconds: 2.4, interval: ms(60_000), script: script, displayOffAllDay: true,
                         wakeDuration: ms(700))
    #expect(describe(events) == "display off schedule @0; display on touch @600; shown 0 @600; tap 0 @1040; "
            + "display off schedule @1740")
}

@Test func withNoWakeTimeTouchesOnADarkScreenDoNothing() throws {
    let script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 80, y: 50, time: ms(400))),
                                    .sample(TouchSample(.up, x: 80, y: 50, time: ms(450)))]
    let events = try run(seconds: 0.9, interval: ms(60_000), script: script, displayOffAllDay: true,
                         wakeDuration: .zero)
    #expect(describe(events) == "display off schedule @0")
}

/// `pause` sent while the screen is off by control is what the show comes back to: it stays
/// paused when the screen is on again (it was forgotten, and the show moved on).
@Test func aPauseSentWhileTheScreenIsOffHoldsWhenItComesBack() throws {
    let events = try run(seconds: 2.0, interval: ms(250)) { show in
        show.at(ms(400)) { $0.setDisplayPower(on: false, reason: "test") }
        show.at(ms(600)) { _ = $0.perform(ControlCommand.pause) }
        show.at(ms(800)) { $0.setDisplayPower(on: true, reason: "test") }
    }
    // One shown when the screen is lit again (the image on it), none after: paused.
    #expect(describe(events)
            == "shown 0 @0; shown 1 @250; display off control @400; display on control @800; shown 1 @800")
}

/// A `pause` while the screen is on stops auto-advance (a fade under way finishes); `resume`
/// gives the image a full interval from then (the control socket's `pause` and `resume`).
@Test func pausedAutoAdvanceStopsAndResumeGivesAFullInterval() throws {
    let show = try VirtualShow(colours: [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF], seconds: 5)
    show.at(ms(1000)) { _ = $0.perform(ControlCommand.pause) }
    show.at(ms(3500)) { _ = $0.perform(ControlCommand.resume) }
    try show.makeLoop(interval: ms(800), fade: ms(100))
    let events = try show.run()
    // 0 at 0, 1 at 800; paused at 1000 (the fade to 2 would start at 1500); resumed at 3500: the
    // fade starts at 4200, 2 is shown at 4300.
    #expect(describe(events) == "shown 0 @0; shown 1 @800; shown 2 @4300")
}
