// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
import KioskInput
import KioskSystem
@testable import KioskApp

// Presence (docs/power.md): the real frame loop, decoder and offscreen display on the real clock,
// with a motion sensor's edges arriving at set show times (the GPIO line itself is read on a
// real kernel: the kernel suite's presence-gpio case) and touches from a scripted feed.

/// Edges posted at their show times from another thread, as the GPIO reader posts them.
private final class TimedPresenceFeed: PresenceFeed {
    let mailbox = try! Mailbox<PresenceInputEvent>()
    let debounce: Duration
    var wakeDescriptor: Int32 { mailbox.wakeDescriptor }
    init(_ script: [PresenceInputEvent], clock: ShowClock, debounce: Duration) {
        self.debounce = debounce
        let box = mailbox
        for event in script {
            let at: Duration
            switch event {
            case .attached(_, _, let t), .edge(_, let t): at = t
            case .unavailable: at = .zero
            }
            let delay = max(0, (at - clock.now).wholeMilliseconds)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay))) { box.post(event) }
        }
    }
    func take() -> [PresenceInputEvent] { mailbox.take() }
}

/// A touch feed that plays a script of samples on the frame loop's real clock: each sample is
/// handed out once the clock reaches its time. A timer writing into a pipe every 4 ms wakes
/// the loop's poll.
/// This stands in for the evdev reader only: the loop, gestures, carousel, decoder, renderer
/// and display are the real ones.
private final class ScriptedFeed: TouchFeed {
    let wakeDescriptor: Int32
    private let writeEnd: Int32
    private var script: [TouchFeedEvent]
    private let clock: ShowClock
    private let timer: DispatchSourceTimer

    init(_ script: [TouchFeedEvent], clock: ShowClock) {
        self.script = script
        self.clock = clock
        var fds: [Int32] = [-1, -1]
        pipe(&fds)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        wakeDescriptor = fds[0]
        writeEnd = fds[1]
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now(), repeating: .milliseconds(4))
        let fd = writeEnd
        timer.setEventHandler { var b: UInt8 = 1; _ = write(fd, &b, 1) }
        timer.resume()
    }
    deinit { timer.cancel(); close(wakeDescriptor); close(writeEnd) }

    func take() -> [TouchFeedEvent] {
        var drain = [UInt8](repeating: 0, count: 256)
        while read(wakeDescriptor, &drain, drain.count) > 0 {}
        let now = clock.now
        var due: [TouchFeedEvent] = []
        while let first = script.first {
            if case .sample(let s) = first, s.time > now { break }
            due.append(script.removeFirst())
        }
        return due
    }
}

/// Three solid images (interval `interval`, no fade) for `seconds`, the presence timeout
/// `timeout`; returns the event lines.
private func run(seconds: Double, interval: Duration, timeout: Duration?, sensor: [PresenceInputEvent]? = nil,
                 touches: [TouchFeedEvent] = [], setUp: (inout FrameLoop.Configuration) -> Void = { _ in },
                 hooks: [(at: Duration, action: (FrameLoop) -> Void)] = []) throws -> [[String: Any]] {
    let dir = NSTemporaryDirectory() + "kc-presence-\(getpid())-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir + "/frames", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var items: [PlaylistItem] = []
    for (name, colour) in [("red", 0xFFFF_0000), ("green", 0xFF00_FF00), ("blue", 0xFF00_00FF)] as [(String, UInt32)] {
        try PNGWriter.write(Bitmap(width: 32, height: 20, fill: colour), to: "\(dir)/\(name).png")
        items.append(PlaylistItem(source: "\(dir)/\(name).png"))
    }
    let clock = MonotonicClock()
    var fds: [Int32] = [-1, -1]
    pipe(&fds)
    let events = EventWriter(descriptor: fds[1])
    let touch = HookFeed(touches, hooks: hooks, clock: clock)
    var configuration = FrameLoop.Configuration(events: events, runFor: .milliseconds(Int64(seconds * 1000)))
    configuration.touch = touch
    configuration.presenceTimeout = timeout
    if let sensor { configuration.presence = TimedPresenceFeed(sensor, clock: clock, debounce: ms(20)) }
    setUp(&configuration)
    let loop = FrameLoop(
        display: try OffscreenDisplay(directory: dir + "/frames", width: 160, height: 100),
        driver: RealTimeDriver(clock: clock),
        carousel: Carousel(items: items, config: CarouselConfig(interval: interval, fade: .zero)),
        preparer: try SlotPreparer(width: 160, height: 100, fit: .fill, background: .black, maxPixels: 1 << 20),
        configuration: configuration)
    touch.loop = loop
    _ = try loop.run()
    events.flush()
    close(fds[1])
    let out = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
    return String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

/// ``ScriptedFeed``'s touches, plus things done to the loop at set show times.
private final class HookFeed: TouchFeed {
    let touches: ScriptedFeed
    var hooks: [(at: Duration, action: (FrameLoop) -> Void)]
    weak var loop: FrameLoop?
    private let clock: ShowClock
    var wakeDescriptor: Int32 { touches.wakeDescriptor }
    init(_ script: [TouchFeedEvent], hooks: [(at: Duration, action: (FrameLoop) -> Void)], clock: ShowClock) {
        touches = ScriptedFeed(script, clock: clock)
        self.hooks = hooks
        self.clock = clock
    }
    func take() -> [TouchFeedEvent] {
        while let first = hooks.first, first.at <= clock.now, let loop {
            hooks.removeFirst()
            first.action(loop)
        }
        return touches.take()
    }
}

private func t(_ e: [String: Any]) -> Int { e["t"] as? Int ?? -1 }
private func kinds(_ events: [[String: Any]]) -> [String] {
    events.map { "\($0["event"]!) \($0["state"] ?? $0["index"] ?? "") \($0["reason"] ?? "")" }
}
private func displays(_ events: [[String: Any]]) -> [[String: Any]] {
    events.filter { $0["event"] as? String == "display" }
}

@Test func theScreenGoesOffATimeoutAfterTheLastMotionAndAMotionEdgeLightsItAtOnce() throws {
    // Timeout 500 ms, no motion at the start: off at 500. Motion 1300 ... 1350 ms: on at 1320
    // (the 20 ms debounce), off again 500 ms after the motion ended (1850).
    let sensor: [PresenceInputEvent] = [.attached(summary: "test line", active: false, time: ms(0)),
                                        .edge(active: true, time: ms(1300)), .edge(active: false, time: ms(1350))]
    let events = try run(seconds: 2.4, interval: ms(250), timeout: ms(500), sensor: sensor)
    let d = displays(events)
    #expect(
        d.map { "\($0["state"]!) \($0["reason"]!)" } == ["off presence", "on presence", "off presence"],
        "\(describe(events))")
    guard d.count == 3 else { return }
    // Bounds for the real clock on a loaded machine.
    #expect(t(d[0]) >= 500 && t(d[0]) < 700, "\(describe(events))")
    #expect(t(d[1]) >= 1320 && t(d[1]) < 1520, "lit within the debounce of the edge: \(describe(events))")
    #expect(t(d[2]) >= 1850 && t(d[2]) < 2050, "\(describe(events))")
    let shown = events.filter { $0["event"] as? String == "shown" }
    #expect(!shown.contains { t($0) > t(d[0]) && t($0) < t(d[1]) }, "no shown while dark: \(describe(events))")
    // Lit: the image on screen is announced at once, and the show resumes with a full interval.
    let lit = shown.filter { t($0) >= t(d[1]) && t($0) < t(d[2]) }
    #expect(lit.first.map { t($0) - t(d[1]) } ?? -1 < 150, "\(describe(events))")
    #expect(lit.count >= 2 && t(lit[1]) - t(d[1]) >= 240, "a full interval after it was lit: \(describe(events))")
}

@Test func aTouchCountsAsPresenceAndTheWakingTouchIsNoTap() throws {
    // No sensor, --presence-timeout 500 ms: off at 500; a touch at 800 lights it (no tap); a
    // tap at 1100 while lit is a tap and keeps it on until 1600.
    let touches: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 80, y: 50, time: ms(800))),
                                     .sample(TouchSample(.up, x: 80, y: 50, time: ms(840))),
                                     .sample(TouchSample(.down, x: 80, y: 50, time: ms(1100))),
                                     .sample(TouchSample(.up, x: 80, y: 50, time: ms(1140)))]
    let events = try run(seconds: 2.0, interval: ms(60_000), timeout: ms(500), touches: touches)
    #expect(
        kinds(events) == [
            "shown 0 ", "display off presence", "display on touch", "shown 0 ", "tap 0 ", "display off presence",
        ],
            "\(describe(events))")
    guard events.count == 6 else { return }
    #expect(t(events[2]) >= 800 && t(events[2]) < 1000)
    #expect(t(events[5]) >= 1640 && t(events[5]) < 1900, "500 ms after the tap's last sample: \(describe(events))")
}

@Test func theScheduleSaysWhenTheScreenMayBeOnWhateverMoves() throws {
    // Off all day by --display-off: motion does not light it.
    let sensor: [PresenceInputEvent] = [.attached(summary: "test line", active: false, time: ms(0)),
                                        .edge(active: true, time: ms(300)), .edge(active: false, time: ms(700))]
    let events = try run(seconds: 1.2, interval: ms(250), timeout: ms(400), sensor: sensor) { configuration in
        configuration.displaySchedule = DisplaySchedule(ranges: [.init(start: 0, end: 1440)])
        configuration.wakeDuration = .zero
    }
    #expect(kinds(events) == ["display off schedule"], "\(describe(events))")
}

@Test func displayOffHoldsUntilPresenceChangesAndAnUnreadableSensorLeavesTheSchedule() throws {
    // Motion from 300 to 3600 ms, timeout 1800: `display off` at 1200 holds while someone is
    // there, ends when the timeout runs out (5400; the screen stays off), and the next motion
    // (6300) lights it. On the real clock, in seconds rather than tenths: in a full test run on
    // two cores the loop was seen to take the first edge 730 ms late (the timeout ran out first).
    let sensor: [PresenceInputEvent] = [.attached(summary: "test line", active: false, time: ms(0)),
                                        .edge(active: true, time: ms(300)), .edge(active: false, time: ms(3600)),
                                        .edge(active: true, time: ms(6300)), .edge(active: false, time: ms(6450))]
    let events = try run(seconds: 7.5, interval: ms(60_000), timeout: ms(1800), sensor: sensor,
                         hooks: [(ms(1200), { $0.setDisplayPower(on: false, reason: "test") })])
    let d = displays(events)
    #expect(d.map { "\($0["state"]!) \($0["reason"]!)" } == ["off control", "on presence"], "\(describe(events))")
    if d.count == 2 { #expect(t(d[1]) >= 6320 && t(d[1]) < 7000, "\(describe(events))") }
    // A sensor that cannot be read: the screen follows the schedule alone (on), however long.
    let broken = try run(seconds: 0.8, interval: ms(60_000), timeout: ms(200),
                         sensor: [.unavailable(reason: "no such chip")])
    #expect(displays(broken).isEmpty, "\(describe(broken))")
}

@Test func theDisplaySupervisionFollowsPresenceAndDimsThePixelsOnVirtualTime() throws {
    // The part alone (docs/frame-loop.md): no sensor, --presence-timeout 500 ms, --brightness
    // 00:00=40 by the pixels of an offscreen display, on a clock moved by hand.
    let dir = NSTemporaryDirectory() + "kc-presence-part-\(getpid())-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let display = try OffscreenDisplay(directory: dir, width: 8, height: 8)
    let driver = VirtualTimeDriver()
    let power = PowerControl(feed: nil, timeout: ms(500), tiers: try BrightnessTiers.parse("00:00=40"),
                             sink: .pixels(display), cec: nil, cecAbsence: nil)
    let supervisor = DisplaySupervisor(display: display, console: nil, schedule: nil, wakeDuration: .seconds(120),
                                       clock: driver.clock, driver: driver, power: power)
    var carousel = Carousel(items: [PlaylistItem(source: "/a.jpg")])
    // The first turn: the tier's level on the pixels (a redraw), the screen on (someone counts as
    // there from the start), the timeout's end as the presence deadline.
    #expect(supervisor.service(carousel: &carousel) == [.redraw])
    #expect(display.pixelBrightness.permille == 400 && supervisor.canDraw)
    var deadlines = Deadlines<LoopDuty>()
    supervisor.setDeadlines(&deadlines)
    #expect(deadlines[.presence] == ms(500))
    driver.virtualClock.advance(to: ms(500))
    #expect(supervisor.service(carousel: &carousel) == [.visibility(on: false, reason: "presence", at: ms(500))])
    #expect(!supervisor.canDraw && carousel.isPaused)
    // A touch on the screen dark for want of presence lights it; that touch is no tap.
    driver.virtualClock.advance(to: ms(800))
    let (admitted, effects) = supervisor.admits(TouchSample(.down, x: 1, y: 1, time: ms(800)), carousel: &carousel)
    #expect(!admitted && effects == [.visibility(on: true, reason: "touch", at: ms(800)), .redraw])
    #expect(supervisor.canDraw && !carousel.isPaused)
    // `display off` holds while someone is there; it ends when the timeout runs out (1300 ms),
    // the screen staying off, for want of presence now.
    #expect(supervisor.setPower(on: false, reason: "test", carousel: &carousel)
            == [.visibility(on: false, reason: "control", at: ms(800))])
    driver.virtualClock.advance(to: ms(1200))
    #expect(supervisor.service(carousel: &carousel).isEmpty)
    #expect(supervisor.powerStatus(at: ms(1200))["display_reason"] == .string("control"))
    driver.virtualClock.advance(to: ms(1300))
    #expect(supervisor.service(carousel: &carousel).isEmpty && !supervisor.canDraw)
    #expect(supervisor.powerStatus(at: ms(1300))["display_reason"] == .string("presence"))
}
