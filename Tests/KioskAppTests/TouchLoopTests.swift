// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
@testable import KioskApp

// Touch on the real frame loop, gesture recogniser, carousel, decoder, renderer and offscreen
// display, on virtual time: the touches of a script are handed over at their show times
// (VirtualTouches, standing in for the evdev reader only), so every frame's time is exact.

/// A finger: down at `from`, moving to `to` in `step` ms steps over `duration` ms, up at the end.
private func swipe(at start: Int, from: Double, to: Double, y: Double = 100, duration: Int,
                   step: Int = 16) -> [TouchFeedEvent] {
    var out: [TouchFeedEvent] = [.sample(TouchSample(.down, x: from, y: y, time: ms(start)))]
    let steps = max(1, duration / step)
    for i in 1...steps {
        let x = from + (to - from) * Double(i) / Double(steps)
        out.append(.sample(TouchSample(.move, x: x, y: y, time: ms(start + i * step))))
    }
    out.append(.sample(TouchSample(.up, x: to, y: y, time: ms(start + steps * step + 4))))
    return out
}

private struct LoopRun {
    var events: [[String: Any]]
    var frames: [(ms: Int, bitmap: Bitmap)]
    var shown: [(index: Int, t: Int)] {
        events.filter { $0["event"] as? String == "shown" }.map { ($0["index"] as! Int, eventTime($0)) }
    }
}

/// Runs the real frame loop on virtual time for `seconds` on a 320x200 offscreen display with
/// three solid colour images (red, green, blue; interval 60 s so only touches move the show; no
/// fades, so the first image is fully shown at 0), the touches of `script` at their times.
private func runLoop(_ script: [TouchFeedEvent], seconds: Double, tapCommand: TapCommand? = nil,
                     interval: Duration = .seconds(60), stuckTouchLimit: Duration? = nil,
                     pacedFrames: Bool = false) throws -> LoopRun {
    let show = try VirtualShow(colours: [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF], seconds: seconds)
    show.touch(script)
    show.configuration.tapCommand = tapCommand
    if let stuckTouchLimit { show.configuration.stuckTouchLimit = stuckTouchLimit }
    try show.makeLoop(width: 320, height: 200, interval: interval,
                      driver: pacedFrames ? PartlyRealDriver(show.driver, pacesFrames: true) : nil)
    let events = try show.run()
    return LoopRun(events: events, frames: try show.frames())
}

@Test func aDragTowardsTheLeftShowsTheNextImageFollowingTheFinger() throws {
    // Finger from x 280 to x 40 over ~300 ms, starting at 800 ms: a swipe past a third of 320.
    let script = swipe(at: 800, from: 280, to: 40, duration: 300)
    let run = try runLoop(script, seconds: 2)
    #expect(run.shown.map(\.index) == [0, 1] && run.shown.first?.t == 0)
    // Frames during the drag: red on the left, green coming in on the right, the edge moving left.
    let reports = Set(script.compactMap { if case .sample(let s) = $0 { Int(s.time.wholeMilliseconds) } else { nil } })
    var edges: [Int] = []
    for frame in run.frames where frame.ms > 800 && frame.ms < 1092 {
        #expect(reports.contains(frame.ms), "a frame at \(frame.ms) ms, when no report came")
        let row = 100
        guard frame.bitmap[0, row] == 0xFFFF_0000, frame.bitmap[319, row] == 0xFF00_FF00 else { continue }
        let edge = (0..<320).first { frame.bitmap[$0, row] != 0xFFFF_0000 }!
        #expect((edge..<320).allSatisfy { frame.bitmap[$0, row] == 0xFF00_FF00 },
                "one clean edge at \(edge) ms \(frame.ms)")
        edges.append(edge)
    }
    #expect(edges.count >= 10, "frames while the finger moved: \(run.frames.map(\.ms))")
    #expect(edges == edges.sorted(by: >), "the edge only moves left: \(edges)")
    // At the end, the whole screen is green.
    let last = run.frames.last!.bitmap
    #expect(last[0, 0] == 0xFF00_FF00 && last[319, 199] == 0xFF00_FF00)
}

/// A display that does not pace its frames gets at most one per 1/60 s (the real driver's
/// pacing, on virtual time): a 125 Hz touchscreen's reports, 8 ms apart, are drawn 16 or 17 ms
/// apart (1/60 s in whole milliseconds), each frame at the first pacing time after the last.
@Test func framesFollowTheRefreshNotEachTouchReport() throws {
    let script = swipe(at: 800, from: 280, to: 40, duration: 296, step: 8)
    let paced = try runLoop(script, seconds: 2, pacedFrames: true)
    let times = paced.frames.map(\.ms).filter { $0 > 800 && $0 < 1096 }
    #expect(times.count >= 15, "\(times)")
    for (a, b) in zip(times, times.dropFirst()) { #expect(b - a == 16 || b - a == 17, "frames at \(a) and \(b) ms") }
    // Without pacing (virtual time's own answer) every report is a frame: 8 ms apart.
    let unpaced = try runLoop(script, seconds: 2)
    let every = unpaced.frames.map(\.ms).filter { $0 > 800 && $0 < 1096 }
    #expect(every.count > times.count + 10 && zip(every, every.dropFirst()).allSatisfy { $1 - $0 == 8 }, "\(every)")
    #expect(paced.shown.map(\.index) == [0, 1] && unpaced.shown.map(\.index) == [0, 1])
}

@Test func aTapReportsTheCurrentIndexAndPoint() throws {
    // Swipe right (previous: index 2, blue), then tap at (150, 120).
    var script = swipe(at: 800, from: 40, to: 280, duration: 200)
    script += [.sample(TouchSample(.down, x: 150, y: 120, time: ms(1400))),
               .sample(TouchSample(.up, x: 152, y: 121, time: ms(1480)))]
    let run = try runLoop(script, seconds: 1.8)
    #expect(run.shown.map(\.index) == [0, 2])
    let taps = run.events.filter { $0["event"] as? String == "tap" }
    #expect(taps.count == 1)
    #expect(taps.first?["index"] as? Int == 2)
    #expect(taps.first?["x"] as? Int == 150 && taps.first?["y"] as? Int == 120)
    #expect(taps.first?["t"] as? Int == 1480)
    #expect((taps.first?["src"] as? String)?.hasSuffix("/2.png") == true)
}

@Test func aVerticalDragAndASlowShortDragLeaveTheShowWhereItWas() throws {
    var script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 160, y: 20, time: ms(800)))]
    script += (1...12).map { .sample(TouchSample(.move, x: 162, y: 20 + Double($0) * 14, time: ms(800 + $0 * 16))) }
    script += [.sample(TouchSample(.up, x: 162, y: 188, time: ms(1020)))]
    // Then 60 px to the left over 600 ms: slow and short, it springs back.
    script += swipe(at: 1200, from: 200, to: 140, duration: 600)
    let run = try runLoop(script, seconds: 2.3)
    #expect(run.shown.map(\.index) == [0])
    #expect(run.events.allSatisfy { $0["event"] as? String != "tap" })
    let last = run.frames.last!.bitmap
    #expect(last[0, 0] == 0xFFFF_0000 && last[319, 199] == 0xFFFF_0000)
}

@Test func aFingerStuckOnTheGlassStopsHoldingTheShowAfterTheLimit() throws {
    // Down at 800 ms and never a report again; interval 1 s, stuck limit 500 ms: held until
    // 1300 ms, then auto-advance resumes with a full interval: shown 1 at 2300 ms.
    let script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 160, y: 100, time: ms(800)))]
    let run = try runLoop(script, seconds: 2.8, interval: .seconds(1), stuckTouchLimit: .milliseconds(500))
    #expect(run.shown.map(\.index) == [0, 1])
    #expect(run.shown.map(\.t) == [0, 2300])
}

@Test func onTapRunsTheCommandWithTheIndexAndSourceInItsEnvironment() throws {
    let out = NSTemporaryDirectory() + "kc-ontap-\(getpid()).txt"
    unlink(out)
    defer { unlink(out) }
    let command = TapCommand(arguments: ["/bin/sh", "-c",
                                         "printf '%s %s' \"$KIOSK_INDEX\" \"$KIOSK_SRC\" > \(out).part "
                                             + "&& mv \(out).part \(out)"])
    let script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 10, y: 10, time: ms(800))),
                                    .sample(TouchSample(.up, x: 10, y: 10, time: ms(850)))]
    _ = try runLoop(script, seconds: 1.0, tapCommand: command)
    // The command is a process of its own: its file appears when it has run (renamed whole).
    #expect(waitFor(10) { access(out, F_OK) == 0 }, "the tap command did not run")
    let text = try String(contentsOfFile: out)
    #expect(text.hasPrefix("0 /") && text.hasSuffix("/0.png"))
}
