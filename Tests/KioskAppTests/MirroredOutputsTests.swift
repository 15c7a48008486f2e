// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
import KioskSystem
@testable import KioskApp

// Several outputs showing one show (docs/displays.md "Several outputs"): the real frame loop,
// decoder, renderer and carousel on virtual time, a MirroredDisplay of test outputs of their
// own sizes standing in for the connectors of a card.

/// One output: keeps a copy of every frame with its show time; goes away and comes back (at
/// another size) at the show times of `script`.
private final class TestOutput: ReconnectingDisplay, NamedOutput {
    let name: String
    var outputName: String { name }
    private(set) var width: Int, height: Int
    var panelWidth: Int { width }
    var panelHeight: Int { height }
    var summary: String { "test output \(name) \(width)x\(height)" }
    var pacesFrames: Bool { false }
    var isLost = false
    var wakeDescriptor: Int32? { nil }
    var retryAt: Duration? { script.first?.at }
    private var script: [(at: Duration, size: (width: Int, height: Int)?)]
    private(set) var frames: [(at: Int64, frame: Bitmap)] = []
    private(set) var wrongSize: [String] = []
    private(set) var powerCalls: [Bool] = []

    init(_ name: String, _ width: Int, _ height: Int, script: [(at: Duration, size: (width: Int, height: Int)?)] = []) {
        self.name = name; self.width = width; self.height = height; self.script = script
    }
    func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        if frame.width != width || frame.height != height {
            wrongSize.append("\(frame.width)x\(frame.height) on \(name)")
        }
        if !isLost { frames.append((showTime, frame.copy())) }
    }
    func restore() {}
    func setPower(on: Bool) throws(DisplayError) { powerCalls.append(on) }
    var reconnection: (any ReconnectingDisplay)? { script.isEmpty && !isLost ? nil : self }
    func service(now: Duration) throws(DisplayError) -> [DisplayChange] {
        var changes: [DisplayChange] = []
        while let first = script.first, first.at <= now {
            script.removeFirst()
            if let size = first.size {
                (width, height) = size
                isLost = false
                changes.append(.reopened(summary: summary))
            } else {
                isLost = true
                changes.append(.lost(reason: "test: \(name) unplugged"))
            }
        }
        return changes
    }
}

/// Runs a show of `a` then `b` (1 s each, 400 ms fades) on `display` for `runFor`; returns the
/// event lines and `status`'s `outputs` at the end.
private func runShow(_ display: Display, _ a: String, _ b: String, runFor: Duration) throws -> [String] {
    try runShowWithStatus(display, a, b, runFor: runFor).lines
}

private func runShowWithStatus(_ display: Display, _ a: String, _ b: String,
                               runFor: Duration) throws -> (lines: [String], outputs: JSONValue?) {
    var fds: [Int32] = [-1, -1]
    pipe(&fds)
    defer { close(fds[0]) }
    _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
    let events = EventWriter(descriptor: fds[1])
    let preparer = try SlotPreparer(width: display.width, height: display.height, fit: .fit, background: .black,
                                    maxPixels: 1 << 20)
    let configuration = FrameLoop.Configuration(events: events, runFor: runFor)
    let loop = FrameLoop(display: display, driver: VirtualTimeDriver(),
                         carousel: Carousel(items: [PlaylistItem(source: a), PlaylistItem(source: b)],
                                            config: CarouselConfig(interval: .seconds(1), fade: .milliseconds(400),
                                                                   screenWidth: display.width)),
                         preparer: preparer, configuration: configuration)
    _ = try loop.run()
    events.flush()
    close(fds[1])
    var bytes = [UInt8](repeating: 0, count: 65536)
    let n = read(fds[0], &bytes, bytes.count)
    var outputs: JSONValue?
    if case .object(let status) = loop.statusData(at: .zero) { outputs = status["outputs"] }
    return (String(decoding: bytes[0..<max(0, n)], as: UTF8.self).split(separator: "\n").map(String.init), outputs)
}

/// Photos a and b of the shows here: `dir`/a.png and `dir`/b.png, four quadrants each
/// (``writePattern(_:colours:)``) in colours of their own.
private func twoPatterns(in dir: String) throws -> (a: String, b: String) {
    let a = "\(dir)/a.png", b = "\(dir)/b.png"
    try writePattern(a, colours: [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF, 0xFFFF_FFFF])
    try writePattern(b, colours: [0xFF80_8000, 0xFF00_8080, 0xFF80_0080, 0xFF40_4040])
    return (a, b)
}

@Test func mirroredOutputsEachShowThePictureFittedToTheirOwnSizeInStep() throws {
    let dir = frameTestDirectory("outputs")
    defer { for f in ["a.png", "b.png"] { unlink("\(dir)/\(f)") }; rmdir(dir) }
    let (a, b) = try twoPatterns(in: dir)
    let wide = TestOutput("HDMI-A-1", 160, 100), square = TestOutput("HDMI-A-2", 96, 96)
    let twin = TestOutput("HDMI-A-3", 160, 100)
    let display = MirroredDisplay(outputs: [wide, square, twin])
    #expect(display.frameSizes == [FrameSize(width: 160, height: 100), FrameSize(width: 96, height: 96)])
    let lines = try runShow(display, a, b, runFor: .milliseconds(1500))
    // The events name the outputs (a field added; the others as with one output).
    #expect(lines.first == "{\"event\":\"shown\",\"index\":0,\"src\":\"\(a)\","
            + "\"outputs\":[\"HDMI-A-1\",\"HDMI-A-2\",\"HDMI-A-3\"],\"t\":0}", "\(lines)")

    for output in [wide, square, twin] { #expect(output.wrongSize.isEmpty, "\(output.wrongSize)") }
    // Each output's first frame is the picture fitted to its own size, not the other's scaled.
    #expect(try same(#require(wide.frames.first).frame, expected(a, 160, 100)))
    #expect(try same(#require(square.frames.first).frame, expected(a, 96, 96)))
    #expect(try same(#require(square.frames.last).frame, expected(b, 96, 96)), "the fade ends on b at 96x96")
    // In step: the same frames at the same show times (the fade from 600 to 1000 ms).
    #expect(wide.frames.map(\.at) == square.frames.map(\.at))
    #expect(wide.frames.count > 3, "a fade of several frames: \(wide.frames.map(\.at))")
    // The outputs of one size share one composed frame.
    #expect(zip(wide.frames, twin.frames).allSatisfy { $0.at == $1.at && same($0.frame, $1.frame) })
    #expect(twin.frames.count == wide.frames.count)
}

@Test func oneOutputLostLeavesTheOtherShowingAndComesBackAtItsNewSize() throws {
    let dir = frameTestDirectory("outputs")
    defer { for f in ["a.png", "b.png"] { unlink("\(dir)/\(f)") }; rmdir(dir) }
    let (a, b) = try twoPatterns(in: dir)
    let first = TestOutput("HDMI-A-1", 160, 100)
    // Unplugged at 300 ms, back at 600 ms as a portrait 72x120.
    let second = TestOutput("HDMI-A-2", 96, 96, script: [(.milliseconds(300), nil), (.milliseconds(600), (72, 120))])
    let display = MirroredDisplay(outputs: [first, second])
    let (lines, outputs) = try runShowWithStatus(display, a, b, runFor: .milliseconds(1500))
    #expect(outputs == .array([
        .object(["name": .string("HDMI-A-1"), "width": .int(160), "height": .int(100), "showing": .bool(true)]),
        .object(["name": .string("HDMI-A-2"), "width": .int(72), "height": .int(120), "showing": .bool(true)]),
    ]), "status's outputs: \(String(describing: outputs))")

    // Named while it shows: both at 0 ms, the first alone while the second is away, both again.
    #expect(lines.first?.contains("\"outputs\":[\"HDMI-A-1\",\"HDMI-A-2\"]") == true, "\(lines)")
    #expect(first.wrongSize.isEmpty && second.wrongSize.isEmpty, "\(first.wrongSize) \(second.wrongSize)")
    // The show never went dark and never paused: a then b, announced once each; no display event.
    #expect(lines.filter { $0.contains("\"display\"") }.isEmpty, "\(lines)")
    #expect(lines.filter { $0.contains("\"shown\"") }.count == 2, "\(lines)")
    #expect(lines.contains { $0.contains("\"shown\"") && $0.contains("\"index\":1") && $0.contains("\"t\":1000") },
            "b shown on time, as if nothing had happened: \(lines)")
    // The second output: its 96x96 frame, nothing while unplugged, then a at its new size.
    #expect(second.frames.map(\.at).first == 0)
    #expect(!second.frames.contains { $0.at > 0 && $0.at < 600 })
    let back = try #require(second.frames.first { $0.at >= 600 })
    #expect(try same(back.frame, expected(a, 72, 120)), "back at \(back.at) ms, a fitted to 72x120")
    #expect(try same(#require(second.frames.last).frame, expected(b, 72, 120)))
    #expect(try same(#require(first.frames.last).frame, expected(b, 160, 100)))
    // The first output went on meanwhile; from 600 ms on, the fade on both, in step.
    #expect(first.frames.filter { $0.at >= 600 }.map(\.at) == second.frames.filter { $0.at >= 600 }.map(\.at))
}

@Test func theScreensPowerGoesToEveryOutput() throws {
    let one = TestOutput("HDMI-A-1", 16, 10), two = TestOutput("HDMI-A-2", 8, 8)
    let display = MirroredDisplay(outputs: [one, two])
    try display.setPower(on: false)
    try display.setPower(on: true)
    #expect(one.powerCalls == [false, true] && two.powerCalls == [false, true])
    #expect(display.abilities.outputs == 2)
    #expect(display.outputNames == ["HDMI-A-1", "HDMI-A-2"])
}

@Test func theLastOutputLostIsTheDisplayLost() throws {
    let only = TestOutput("HDMI-A-1", 16, 10, script: [(.milliseconds(300), nil), (.milliseconds(600), (16, 10))])
    let display = MirroredDisplay(outputs: [only])
    #expect(try display.service(now: .milliseconds(100)).isEmpty)
    #expect(try display.service(now: .milliseconds(300)) == [.lost(reason: "test: HDMI-A-1 unplugged")])
    #expect(display.isLost)
    #expect(try display.service(now: .milliseconds(600)) == [.reopened(summary: "test output HDMI-A-1 16x10")])
    // Of two, the first lost is only logged; the second too: the display is lost.
    let one = TestOutput("HDMI-A-1", 16, 10, script: [(.milliseconds(300), nil)])
    let two = TestOutput("HDMI-A-2", 8, 8, script: [(.milliseconds(400), nil)])
    let pair = MirroredDisplay(outputs: [one, two])
    #expect(try pair.service(now: .milliseconds(300)).isEmpty && !pair.isLost)
    #expect(pair.outputNames == ["HDMI-A-2"])
    #expect(try pair.service(now: .milliseconds(400)) == [.lost(reason: "test: HDMI-A-2 unplugged")])
    #expect(pair.isLost)
}

/// A finger dragging the show moves the picture on every output by the same share of its own
/// width (docs/touch.md): half the first output's width is half of a smaller second output's.
/// Every output was handed the first output's offset in its pixels, so a 96-pixel-wide screen
/// moved 80 of its 96 columns for a drag of half of a 160-pixel one.
@Test func aDragMovesEveryOutputByTheSameShareOfItsWidth() throws {
    let dir = frameTestDirectory("outputs")
    defer { for f in ["a.png", "b.png"] { unlink("\(dir)/\(f)") }; rmdir(dir) }
    let (a, b) = try twoPatterns(in: dir)
    let wide = TestOutput("HDMI-A-1", 160, 100), square = TestOutput("HDMI-A-2", 96, 96)
    let display = MirroredDisplay(outputs: [wide, square])
    var fds: [Int32] = [-1, -1]
    pipe(&fds)
    defer { close(fds[0]); close(fds[1]) }
    _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
    let driver = VirtualTimeDriver()
    var configuration = FrameLoop.Configuration(events: EventWriter(descriptor: fds[1]), runFor: .milliseconds(900))
    // A finger down at x 150, dragged left past the slop and held at 150 - 80 from 200 to 700 ms.
    configuration.touch = VirtualTouches([
        .sample(TouchSample(.down, x: 150, y: 50, time: .milliseconds(100))),
        .sample(TouchSample(.move, x: 120, y: 50, time: .milliseconds(150))),
        .sample(TouchSample(.move, x: 70, y: 50, time: .milliseconds(200))),
        .sample(TouchSample(.up, x: 70, y: 50, time: .milliseconds(700))),
    ], on: driver)
    let preparer = try SlotPreparer(width: 160, height: 100, fit: .fit, background: .black, maxPixels: 1 << 20)
    let loop = FrameLoop(display: display, driver: driver,
                         carousel: Carousel(items: [PlaylistItem(source: a), PlaylistItem(source: b)],
                                            config: CarouselConfig(interval: .seconds(10), fade: .milliseconds(400),
                                                                   screenWidth: 160)),
                         preparer: preparer, configuration: configuration)
    var offset: Int?
    driver.at(.milliseconds(400)) { offset = loop.carousel.scene(at: .milliseconds(400)).offset }
    _ = try loop.run()
    let first = try #require(offset)
    #expect(first <= -40 && first >= -160, "the drag moved the first output by \(first) of 160")
    let share = Int((Double(first) * 96 / 160).rounded())
    let frame = try #require(square.frames.last { $0.at <= 400 }?.frame)
    let alone = try expected(a, 96, 96)
    // The picture's columns, moved by the same share: column x shows the picture's x - share.
    var wrong: [Int] = []
    for x in 0..<(96 + share) where (0..<96).contains(where: { frame.row($0)[x] != alone.row($0)[x - share] }) {
        wrong.append(x)
    }
    #expect(wrong.isEmpty, "drag \(first) of 160 should move 96 columns by \(share): columns \(wrong) differ")
}

/// A touchscreen mounted on a second, smaller output (`--touch-output DSI-1`; chosen so without
/// it too, as the one built-in panel): touches map onto that panel, a drag moves the show by the
/// same share of its width as the finger moved across that screen, and a tap is reported in its
/// pixels with its name (docs/touch.md "Several screens").
@Test func aTouchscreenOnTheSecondOutputDrivesTheShowInItsOwnPixels() throws {
    let dir = frameTestDirectory("outputs")
    defer { for f in ["a.png", "b.png"] { unlink("\(dir)/\(f)") }; rmdir(dir) }
    let (a, b) = try twoPatterns(in: dir)
    for named in ["DSI-1", nil] as [String?] {
        let tv = TestOutput("HDMI-A-1", 160, 100), panel = TestOutput("DSI-1", 96, 96)
        let display = MirroredDisplay(outputs: [tv, panel])
        var fds: [Int32] = [-1, -1]
        pipe(&fds)
        defer { close(fds[0]) }
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let driver = VirtualTimeDriver()
        var configuration = FrameLoop.Configuration(events: EventWriter(descriptor: fds[1]),
                                                    runFor: .milliseconds(1500))
        configuration.touchOutput = named
        // In the panel's pixels: a drag from x 90 to x 42 held from 200 to 700 ms (past a third
        // of the width: the move completes), then a tap at (80, 20) from 1200 to 1230 ms.
        let touches = VirtualTouches([
            .sample(TouchSample(.down, x: 90, y: 50, time: .milliseconds(100))),
            .sample(TouchSample(.move, x: 70, y: 50, time: .milliseconds(150))),
            .sample(TouchSample(.move, x: 42, y: 50, time: .milliseconds(200))),
            .sample(TouchSample(.up, x: 42, y: 50, time: .milliseconds(700))),
            .sample(TouchSample(.down, x: 80, y: 20, time: .milliseconds(1200))),
            .sample(TouchSample(.up, x: 80, y: 20, time: .milliseconds(1230))),
        ], on: driver)
        configuration.touch = touches
        let preparer = try SlotPreparer(width: 160, height: 100, fit: .fit, background: .black, maxPixels: 1 << 20)
        let loop = FrameLoop(display: display, driver: driver,
                             carousel: Carousel(items: [PlaylistItem(source: a), PlaylistItem(source: b)],
                                                config: CarouselConfig(interval: .seconds(10),
                                                                       fade: .milliseconds(400), screenWidth: 160)),
                             preparer: preparer, configuration: configuration)
        var offset: Int?
        driver.at(.milliseconds(400)) { offset = loop.carousel.scene(at: .milliseconds(400)).offset }
        _ = try loop.run()
        configuration.events.flush()
        close(fds[1])
        var bytes = [UInt8](repeating: 0, count: 65536)
        let n = read(fds[0], &bytes, bytes.count)
        let lines = String(decoding: bytes[0..<max(0, n)], as: UTF8.self).split(separator: "\n").map(String.init)
        let label = named ?? "chosen"
        #expect(touches.panels == ["96x96"], "\(label): the touches map onto the panel: \(touches.panels)")
        // The finger moved 48 - slop of the panel's 96 pixels: the show moves that share of its 160.
        let slop = GestureConfig.slop(screenWidth: 96, pixelsPerMillimetre: nil)
        let share = (42 - (90 - slop)) * 160 / 96
        let moved = try #require(offset)
        #expect(abs(Double(moved) - share) <= 1, "\(label): moved \(moved) of 160, the finger \(share) in its share")
        // The drag went past a third of the width: b is shown; the tap is on b, in the panel's pixels.
        let tap = lines.first { $0.contains("\"tap\"") }
        #expect(tap == "{\"event\":\"tap\",\"index\":1,\"src\":\"\(b)\",\"x\":80,\"y\":20,\"output\":\"DSI-1\","
                + "\"t\":1230}", "\(label): \(lines)")
    }
}

@Test func theTouchOutputIsTheNamedOneElseABuiltInPanelElseASmallPanelElseTheFirst() {
    func g(_ name: String, _ w: Int, _ h: Int) -> OutputGeometry {
        OutputGeometry(name: name, width: w, height: h, panelWidth: w, panelHeight: h)
    }
    let tv = g("HDMI-A-1", 1920, 1080), tv2 = g("HDMI-A-2", 1920, 1080), dsi = g("DSI-1", 800, 480)
    let small = g("HDMI-A-2", 1024, 600), edp = g("eDP-1", 1920, 1080)
    #expect(TouchOutputChoice.choose([tv, tv2], named: "HDMI-A-2").index == 1)
    let missing = TouchOutputChoice.choose([tv, tv2], named: "DSI-1")
    #expect(missing.index == 0 && missing.missing && missing.reason.contains("DSI-1"))
    #expect(TouchOutputChoice.choose([tv, dsi], named: nil) == .init(index: 1, reason: "the one built-in panel",
                                                                      missing: false))
    #expect(TouchOutputChoice.choose([edp, tv], named: nil).index == 0, "a laptop's own panel")
    #expect(TouchOutputChoice.choose([tv, small], named: nil).index == 1, "the one touch-sized panel beside a TV")
    #expect(TouchOutputChoice.choose([tv, tv2], named: nil).reason == "the first output")
    #expect(TouchOutputChoice.choose([small, g("HDMI-A-3", 800, 480)], named: nil).index == 0,
            "two small panels: no way to tell, the first")
    #expect(TouchOutputChoice.choose([tv, dsi, g("DSI-2", 800, 480)], named: nil).index == 0,
            "two built-in panels: the first")
}

@Test func theTouchOutputIsNamedOnTheCommandLineOrInTheConfigurationFile() throws {
    #expect(try CommandLineParser.parse(["/photos"]).touchOutput == nil)
    #expect(try CommandLineParser.parse(["--touch-output", "DSI-1", "/photos"]).touchOutput == "DSI-1")
    #expect(try CommandLineParser.parse(["--touch-output", "auto", "/photos"]).touchOutput == nil)
    #expect(throws: UsageError.self) { try CommandLineParser.parse(["--touch-output", "", "/photos"]) }
    let dir = frameTestDirectory("touch-output")
    defer { unlink("\(dir)/kiosk.conf"); rmdir(dir) }
    let file = try #require(fopen("\(dir)/kiosk.conf", "w"))
    fputs("touch-output HDMI-A-2\nsource /photos\n", file)
    fclose(file)
    #expect(try CommandLineParser.parse(["--config", "\(dir)/kiosk.conf"]).touchOutput == "HDMI-A-2")
}
