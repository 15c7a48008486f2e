// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
@testable import KioskApp

/// A touch feed (also used by ControlSocketTests) that plays a script of samples on the frame loop's real clock: each sample is
/// handed out once the clock reaches its time. A timer writing into a pipe every 4 ms wakes
/// the loop's poll.
/// This stands in for the evdev reader only: the loop, gestures, carousel, decoder, renderer
/// and display are the real ones.
final class ScriptedFeed: TouchFeed {
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

private func ms(_ v: Int) -> Duration { .milliseconds(v) }

/// A finger: down at `from`, moving to `to` in 16 ms steps over `duration` ms, up at the end.
private func swipe(at start: Int, from: Double, to: Double, y: Double = 100, duration: Int) -> [TouchFeedEvent] {
    var out: [TouchFeedEvent] = [.sample(TouchSample(.down, x: from, y: y, time: ms(start)))]
    let steps = max(1, duration / 16)
    for i in 1...steps {
        let x = from + (to - from) * Double(i) / Double(steps)
        out.append(.sample(TouchSample(.move, x: x, y: y, time: ms(start + i * 16))))
    }
    out.append(.sample(TouchSample(.up, x: to, y: y, time: ms(start + steps * 16 + 4))))
    return out
}

private struct LoopRun {
    var events: [[String: Any]]
    var frames: [(ms: Int, bitmap: Bitmap)]
}

/// Runs the real frame loop for `seconds` on a 320x200 offscreen display with three solid
/// colour images (red, green, blue; interval 60 s so only touches move the show; no fades, so
/// the first image is fully shown as soon as it is decoded, well before scripts start touching
/// at 800 ms).
private func runLoop(_ script: [TouchFeedEvent], seconds: Double, tapCommand: TapCommand? = nil,
                     interval: Duration = .seconds(60), stuckTouchLimit: Duration? = nil) throws -> LoopRun {
    let dir = NSTemporaryDirectory() + "kc-touchloop-\(getpid())-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir + "/frames", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var items: [PlaylistItem] = []
    for (name, colour) in [("red", 0xFFFF_0000), ("green", 0xFF00_FF00), ("blue", 0xFF00_00FF)] as [(String, UInt32)] {
        let path = "\(dir)/\(name).png"
        try PNGWriter.write(Bitmap(width: 64, height: 40, fill: colour), to: path)
        items.append(PlaylistItem(source: path))
    }
    let display = try OffscreenDisplay(directory: dir + "/frames", width: 320, height: 200)
    let clock = MonotonicClock()
    var fds: [Int32] = [-1, -1]
    pipe(&fds)
    let events = EventWriter(descriptor: fds[1])
    var configuration = FrameLoop.Configuration(events: events, runFor: .milliseconds(Int64(seconds * 1000)))
    configuration.touch = ScriptedFeed(script, clock: clock)
    configuration.tapCommand = tapCommand
    if let stuckTouchLimit { configuration.stuckTouchLimit = stuckTouchLimit }
    let loop = FrameLoop(display: display, driver: RealTimeDriver(clock: clock),
                         carousel: Carousel(items: items, config: CarouselConfig(interval: interval, fade: .zero)),
                         preparer: try SlotPreparer(width: 320, height: 200, fit: .fill, background: .black, maxPixels: 1 << 24),
                         configuration: configuration)
    _ = try loop.run()
    events.flush()
    close(fds[1])
    var text = Data()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(fds[0], &buffer, buffer.count)
        if n <= 0 { break }
        text.append(contentsOf: buffer[0..<n])
    }
    close(fds[0])
    let lines = String(decoding: text, as: UTF8.self).split(separator: "\n")
    let parsed = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/frames").sorted()
    let frames = try names.map { name -> (Int, Bitmap) in
        let t = Int(name.dropFirst(6).prefix(8))!
        return (t, try ImageDecoder.decode(path: "\(dir)/frames/\(name)", options: DecodeOptions()).bitmap)
    }
    return LoopRun(events: parsed, frames: frames)
}

@Test func aDragTowardsTheLeftShowsTheNextImageFollowingTheFinger() throws {
    // Finger from x 280 to x 40 over ~300 ms, starting at 800 ms: a swipe past a third of 320.
    let run = try runLoop(swipe(at: 800, from: 280, to: 40, duration: 300), seconds: 2)
    let shown = run.events.filter { $0["event"] as? String == "shown" }.map { $0["index"] as! Int }
    #expect(shown == [0, 1])
    // Frames during the drag: red on the left, green coming in on the right, the edge moving left.
    var edges: [Int] = []
    for frame in run.frames where frame.ms > 800 && frame.ms < 1400 {
        let row = 100
        guard frame.bitmap[0, row] == 0xFFFF_0000, frame.bitmap[319, row] == 0xFF00_FF00 else { continue }
        let edge = (0..<320).first { frame.bitmap[$0, row] != 0xFFFF_0000 }!
        #expect((edge..<320).allSatisfy { frame.bitmap[$0, row] == 0xFF00_FF00 }, "one clean edge at \(edge) ms \(frame.ms)")
        edges.append(edge)
    }
    #expect(edges.count >= 5, "frames while the finger moved: \(run.frames.map(\.ms))")
    #expect(edges == edges.sorted(by: >), "the edge only moves left: \(edges)")
    // While the finger moved (16 ms reports), frames came at most one per 1/60 s.
    let times = run.frames.map(\.ms).filter { $0 > 800 && $0 < 1120 }
    for (a, b) in zip(times, times.dropFirst()) { #expect(b - a >= 16, "frames at \(a) and \(b) ms") }
    // At the end, the whole screen is green.
    let last = run.frames.last!.bitmap
    #expect(last[0, 0] == 0xFF00_FF00 && last[319, 199] == 0xFF00_FF00)
}

@Test func aTapReportsTheCurrentIndexAndPoint() throws {
    // Swipe right (previous: index 2, blue), then tap at (150, 120).
    var script = swipe(at: 800, from: 40, to: 280, duration: 200)
    script += [.sample(TouchSample(.down, x: 150, y: 120, time: ms(1400))),
               .sample(TouchSample(.up, x: 152, y: 121, time: ms(1480)))]
    let run = try runLoop(script, seconds: 1.8)
    let shown = run.events.filter { $0["event"] as? String == "shown" }.map { $0["index"] as! Int }
    #expect(shown == [0, 2])
    let taps = run.events.filter { $0["event"] as? String == "tap" }
    #expect(taps.count == 1)
    #expect(taps.first?["index"] as? Int == 2)
    #expect(taps.first?["x"] as? Int == 150 && taps.first?["y"] as? Int == 120)
    #expect(taps.first?["t"] as? Int == 1480)
    #expect((taps.first?["src"] as? String)?.hasSuffix("/blue.png") == true)
}

@Test func aVerticalDragAndASlowShortDragLeaveTheShowWhereItWas() throws {
    var script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 160, y: 20, time: ms(800)))]
    script += (1...12).map { .sample(TouchSample(.move, x: 162, y: 20 + Double($0) * 14, time: ms(800 + $0 * 16))) }
    script += [.sample(TouchSample(.up, x: 162, y: 188, time: ms(1020)))]
    // Then 60 px to the left over 600 ms: slow and short, it springs back.
    script += swipe(at: 1200, from: 200, to: 140, duration: 600)
    let run = try runLoop(script, seconds: 2.3)
    let shown = run.events.filter { $0["event"] as? String == "shown" }.map { $0["index"] as! Int }
    #expect(shown == [0])
    #expect(run.events.allSatisfy { $0["event"] as? String != "tap" })
    let last = run.frames.last!.bitmap
    #expect(last[0, 0] == 0xFFFF_0000 && last[319, 199] == 0xFFFF_0000)
}

@Test func aFingerStuckOnTheGlassStopsHoldingTheShowAfterTheLimit() throws {
    // Down at 800 ms and never a report again; interval 1 s, stuck limit 500 ms: held until
    // ~1.3 s, then auto-advance resumes with a full interval (shown 1 at ~2.3 s).
    let script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 160, y: 100, time: ms(800)))]
    let run = try runLoop(script, seconds: 2.8, interval: .seconds(1), stuckTouchLimit: .milliseconds(500))
    let shown = run.events.filter { $0["event"] as? String == "shown" }
    #expect(shown.map { $0["index"] as! Int } == [0, 1])
    let t = shown.last?["t"] as? Int ?? 0
    #expect(t >= 2200 && t < 2700, "shown at \(t) ms")
}

@Test func onTapRunsTheCommandWithTheIndexAndSourceInItsEnvironment() throws {
    let out = NSTemporaryDirectory() + "kc-ontap-\(getpid()).txt"
    unlink(out)
    defer { unlink(out) }
    let command = TapCommand(arguments: ["/bin/sh", "-c", "printf '%s %s' \"$KIOSK_INDEX\" \"$KIOSK_SRC\" > \(out)"])
    let script: [TouchFeedEvent] = [.sample(TouchSample(.down, x: 10, y: 10, time: ms(800))),
                                    .sample(TouchSample(.up, x: 10, y: 10, time: ms(850)))]
    _ = try runLoop(script, seconds: 1.0, tapCommand: command)
    for _ in 0..<200 where access(out, F_OK) != 0 { usleep(10_000) }
    usleep(50_000)
    let text = try String(contentsOfFile: out)
    #expect(text.hasPrefix("0 /") && text.hasSuffix("/red.png"))
}
