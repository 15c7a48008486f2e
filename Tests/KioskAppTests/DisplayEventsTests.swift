// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
@testable import KioskApp

// `shown` means it was on a lit screen: the real frame loop, decoder and offscreen display on
// the real clock, with the VT switch, `display off|on` and touches happening at set times.

/// ``ScriptedFeed``'s touches, plus things done to the loop at set show times (from inside the
/// loop's turn, as a signal or a control request would be).
private final class HookedFeed: TouchFeed {
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

private func ms(_ v: Int) -> Duration { .milliseconds(v) }

/// Runs three solid images (interval `interval`, no fade) for `seconds`; returns the event lines.
private func run(seconds: Double, interval: Duration, script: [TouchFeedEvent] = [],
                 hooks: [(at: Duration, action: (FrameLoop) -> Void)] = [],
                 setUp: (inout FrameLoop.Configuration) -> Void = { _ in }) throws -> [[String: Any]] {
    let dir = NSTemporaryDirectory() + "kc-display-\(getpid())-\(UUID().uuidString)"
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
    let feed = HookedFeed(script, hooks: hooks, clock: clock)
    var configuration = FrameLoop.Configuration(events: events, runFor: .milliseconds(Int64(seconds * 1000)))
    configuration.touch = feed
    setUp(&configuration)
    let loop = FrameLoop(display: try OffscreenDisplay(directory: dir + "/frames", width: 160, height: 100),
                         driver: RealTimeDriver(clock: clock),
                         carousel: Carousel(items: items, config: CarouselConfig(interval: interval, fade: .zero)),
                         preparer: try SlotPreparer(width: 160, height: 100, fit: .fill, background: .black, maxPixels: 1 << 20),
                         configuration: configuration)
    feed.loop = loop
    _ = try loop.run()
    events.flush()
    close(fds[1])
    let out = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
    return String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

private func t(_ e: [String: Any]) -> Int { e["t"] as? Int ?? -1 }
private func describe(_ events: [[String: Any]]) -> String {
    events.map { "\($0["event"]!) \($0["state"] ?? $0["index"] ?? "") \($0["reason"] ?? "") @\(t($0))" }.joined(separator: "; ")
}

@Test func noShownWhileTheVTIsAwayOrTheScreenIsOffByControlAndOneWhenItIsLitAgain() throws {
    // Moves every 250 ms. VT away 900 ... 1500 ms (the show goes on unseen), `display off`
    // 2000 ... 2600 ms (the show pauses).
    let events = try run(seconds: 3.0, interval: ms(250), hooks: [
        (ms(900), { _ = $0.perform(.releaseDisplay) }), (ms(1500), { _ = $0.perform(.acquireDisplay) }),
        (ms(2000), { $0.setDisplayPower(on: false, reason: "test") }), (ms(2600), { $0.setDisplayPower(on: true, reason: "test") }),
    ])
    let display = events.filter { $0["event"] as? String == "display" }
    #expect(display.map { "\($0["state"]!) \($0["reason"]!)" } == ["off vt", "on vt", "off control", "on control"], "\(describe(events))")
    let shown = events.filter { $0["event"] as? String == "shown" }
    #expect(!shown.contains { (900..<1500).contains(t($0)) || (2000..<2600).contains(t($0)) }, "\(describe(events))")
    // Lit again: the image on screen is announced at that moment (the show moved on meanwhile).
    let back = shown.first { t($0) >= 1500 }, again = shown.first { t($0) >= 2600 }
    // (Within 200 ms: the real clock on a loaded machine; the next move would be 250 ms on.)
    #expect(back.map { t($0) - t(display[1]) } ?? -1 < 200, "\(describe(events))")
    #expect(again.map { t($0) - t(display[3]) } ?? -1 < 200, "\(describe(events))")
    #expect(shown.filter { t($0) < 900 }.count >= 3)
    // Every event is in time order, and a shown follows each "on".
    #expect(events.map(t) == events.map(t).sorted())
}

@Test func aTouchWakesAScreenOffBySchedulesForTheWakeTimeAndIsNoTap() throws {
    // Off all day by --display-off; a tap at 600 ms lights it for 700 ms; a second touch while
    // lit is a tap and starts the wake again.
    let script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 80, y: 50, time: ms(600))),
                                    .sample(TouchSample(.up, x: 80, y: 50, time: ms(650))),
                                    .sample(TouchSample(.down, x: 80, y: 50, time: ms(1000))),
                                    .sample(TouchSample(.up, x: 80, y: 50, time: ms(1040)))]
    let events = try run(seconds: 2.4, interval: ms(60_000), script: script) { loop in
        loop.displaySchedule = DisplaySchedule(ranges: [.init(start: 0, end: 1440)])
        loop.wakeDuration = ms(700)
    }
    let kinds = events.map { "\($0["event"]!) \($0["state"] ?? $0["index"] ?? "") \($0["reason"] ?? "")" }
    #expect(kinds == ["display off schedule", "display on touch", "shown 0 ", "tap 0 ", "display off schedule"], "\(describe(events))")
    guard events.count == 5 else { return }
    // Bounds for the real clock on a loaded machine: what tells the cases apart is that the
    // screen goes off 700 ms after the tap (1740), not after the waking touch (1300).
    #expect(t(events[1]) >= 600 && t(events[1]) < 900)
    #expect(t(events[2]) - t(events[1]) < 200)
    #expect(t(events[4]) >= 1740 && t(events[4]) < 2300, "the wake started again at the tap: \(describe(events))")
}

@Test func withNoWakeTimeTouchesOnADarkScreenDoNothing() throws {
    let script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 80, y: 50, time: ms(400))),
                                    .sample(TouchSample(.up, x: 80, y: 50, time: ms(450)))]
    let events = try run(seconds: 0.9, interval: ms(60_000), script: script) { loop in
        loop.displaySchedule = DisplaySchedule(ranges: [.init(start: 0, end: 1440)])
        loop.wakeDuration = .zero
    }
    #expect(events.map { "\($0["event"]!) \($0["state"] ?? "")" } == ["display off"], "\(describe(events))")
}

/// `pause` sent while the screen is off by control is what the show comes back to: it stays
/// paused when the screen is on again (it was forgotten, and the show moved on).
@Test func aPauseSentWhileTheScreenIsOffHoldsWhenItComesBack() throws {
    let events = try run(seconds: 2.0, interval: ms(250), hooks: [
        (ms(400), { $0.setDisplayPower(on: false, reason: "test") }),
        (ms(600), { _ = $0.perform(ControlCommand.pause) }),
        (ms(800), { $0.setDisplayPower(on: true, reason: "test") }),
    ])
    let shown = events.filter { $0["event"] as? String == "shown" }
    // One shown when the screen is lit again (the image on it), none after: paused.
    #expect(shown.filter { t($0) >= 800 }.count == 1, "\(describe(events))")
    #expect(!shown.contains { t($0) > 1100 }, "\(describe(events))")
}
