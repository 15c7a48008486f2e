// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskImaging
@testable import KioskApp

// The real frame loop, decoder, renderer and offscreen display on virtual time: what happens
// when (a touch, a VT switch, a control command) is scheduled on the driver at exact show
// times, so every time a test expects is exact and nothing waits on the wall clock.

/// A touch feed that hands each event over at its show time on a ``VirtualTimeDriver`` (samples
/// at their own time, the rest at zero), as the evdev reader would when the loop polls it.
final class VirtualTouches: TouchFeed {
    var wakeDescriptor: Int32 { -1 }
    private var waiting: [TouchFeedEvent] = []
    /// Panel sizes the loop told the feed (after a resize).
    private(set) var panels: [String] = []

    init(_ script: [TouchFeedEvent], on driver: VirtualTimeDriver) {
        for event in script {
            let at: Duration
            if case .sample(let s) = event { at = s.time } else { at = .zero }
            driver.at(at) { [unowned self] in waiting.append(event) }
        }
    }

    func take() -> [TouchFeedEvent] {
        defer { waiting = [] }
        return waiting
    }

    func setPanelSize(width: Int, height: Int) { panels.append("\(width)x\(height)") }
}

/// Virtual time, with a real-world duty answered as the real driver does: frame pacing on a
/// display that does not pace its frames (1/60 s), the `--display-off` timer (a real timerfd;
/// the schedules tests give hold all day, so only its arming matters), scenes on planes.
final class PartlyRealDriver: LoopDriver {
    let virtual: VirtualTimeDriver
    private let paces: Bool
    private let planes: Bool
    private let timer: DisplayScheduleTimer?

    init(_ virtual: VirtualTimeDriver, pacesFrames: Bool = false, displayScheduleTimer: Bool = false,
         planes: Bool = false) {
        self.virtual = virtual
        paces = pacesFrames
        self.planes = planes
        timer = displayScheduleTimer ? try? DisplayScheduleTimer() : nil
    }

    var clock: ShowClock { virtual.clock }
    func readWallTime() -> (sinceEpoch: Duration, zone: any TimeZoneRules) { virtual.readWallTime() }
    var scheduleRecheck: Duration? { virtual.scheduleRecheck }
    func settle(_ work: some OffLoopWork, interrupt: Int32) { virtual.settle(work, interrupt: interrupt) }
    func holdsTime(for work: some OffLoopWork) -> Bool { virtual.holdsTime(for: work) }
    func nextFrame(after last: Duration) -> Duration {
        paces ? RealTimeDriver().nextFrame(after: last) : virtual.nextFrame(after: last)
    }
    func worldDeadline(_ at: Duration) -> Duration? { virtual.worldDeadline(at) }
    var allowsPlanes: Bool { planes }
    func displayScheduleTimer() -> DisplayScheduleTimer? { timer ?? virtual.displayScheduleTimer() }
    func wait(for deadlines: Deadlines<LoopDuty>, wakeDescriptors: [Int32], now: Duration) -> Bool {
        virtual.wait(for: deadlines, wakeDescriptors: wakeDescriptors, now: now)
    }
}

/// A show on virtual time: solid-colour images, an offscreen display (or the test's own), and
/// what it wrote.
final class VirtualShow {
    let directory: String
    let driver: VirtualTimeDriver
    let items: [PlaylistItem]
    var configuration: FrameLoop.Configuration
    private let eventsRead: Int32, eventsWrite: Int32
    private(set) var loop: FrameLoop?
    private(set) var preparer: SlotPreparer?

    /// `colours`: one image each (64x40 PNGs named after their index); `seconds`: `--run-for`.
    init(colours: [UInt32], seconds: Double, driver: VirtualTimeDriver = VirtualTimeDriver()) throws {
        var template = Array("/tmp/kc-virtual-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        self.driver = driver
        var items: [PlaylistItem] = []
        for (i, colour) in colours.enumerated() {
            let path = "\(directory)/\(i).png"
            try PNGWriter.write(Bitmap(width: 64, height: 40, fill: colour), to: path)
            items.append(PlaylistItem(source: path))
        }
        self.items = items
        var fds: [Int32] = [-1, -1]
        pipe(&fds)
        (eventsRead, eventsWrite) = (fds[0], fds[1])
        configuration = FrameLoop.Configuration(events: EventWriter(descriptor: eventsWrite),
                                                runFor: .milliseconds(Int64(seconds * 1000)))
    }

    /// The files at `paths` as the playlist, in that order (read where they are); `seconds`:
    /// `--run-for`.
    init(paths: [String], seconds: Double, driver: VirtualTimeDriver = VirtualTimeDriver()) throws {
        var template = Array("/tmp/kc-virtual-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        self.driver = driver
        items = paths.map { PlaylistItem(source: $0) }
        var fds: [Int32] = [-1, -1]
        pipe(&fds)
        (eventsRead, eventsWrite) = (fds[0], fds[1])
        configuration = FrameLoop.Configuration(events: EventWriter(descriptor: eventsWrite),
                                                runFor: .milliseconds(Int64(seconds * 1000)))
    }

    deinit {
        close(eventsRead)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The touches of `script` at their times.
    @discardableResult func touch(_ script: [TouchFeedEvent]) -> VirtualTouches {
        let feed = VirtualTouches(script, on: driver)
        configuration.touch = feed
        return feed
    }

    /// Makes the loop (on `display`, default offscreen into DIR/frames at `width` x `height`)
    /// with `interval` and `fade`; `at` schedules things to do to it.
    @discardableResult
    func makeLoop(width: Int = 160, height: Int = 100, interval: Duration, fade: Duration = .zero,
                  display: Display? = nil, driver loopDriver: LoopDriver? = nil) throws -> FrameLoop {
        let display = try display ?? OffscreenDisplay(directory: directory + "/frames", width: width, height: height)
        let preparer = try SlotPreparer(width: display.width, height: display.height, fit: .fill, background: .black,
                                        maxPixels: 1 << 22)
        let loop = FrameLoop(display: display, driver: loopDriver ?? driver,
                             carousel: Carousel(items: items, config: CarouselConfig(interval: interval, fade: fade)),
                             preparer: preparer, configuration: configuration)
        self.loop = loop
        self.preparer = preparer
        return loop
    }

    /// Does `action` to the loop at show time `time` (from inside its wait, as a poll would).
    func at(_ time: Duration, _ action: @escaping (FrameLoop) -> Void) {
        driver.at(time) { [unowned self] in action(loop!) }
    }

    /// Runs the show to its end; returns the event lines, parsed.
    func run() throws -> [[String: Any]] {
        let loop = try loop ?? makeLoop(interval: .seconds(60))
        _ = try loop.run()
        configuration.events.flush()
        close(eventsWrite)
        var text = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(eventsRead, &buffer, buffer.count)
            if n <= 0 { break }
            text.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: text, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The frames the offscreen display wrote: (show time in ms, pixels), oldest first.
    func frames() throws -> [(ms: Int, bitmap: Bitmap)] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory + "/frames")
            .filter { $0.hasPrefix("frame-") }
        return try names.sorted().map { name in
            (Int(name.dropFirst(6).dropLast(4))!,
             try ImageDecoder.decode(path: "\(directory)/frames/\(name)", options: DecodeOptions()).bitmap)
        }
    }
}

func ms(_ v: Int) -> Duration { .milliseconds(v) }

/// An event's show time in ms (`t`), -1 without one.
func eventTime(_ e: [String: Any]) -> Int { e["t"] as? Int ?? -1 }

/// `shown 0 @800; display off vt @900; ...`: the events, for messages and exact comparisons.
func describe(_ events: [[String: Any]]) -> String {
    events.map { e -> String in
        let what = e["event"] as? String ?? "?"
        let detail = what == "display" ? "\(e["state"]!) \(e["reason"]!)" : "\(e["index"] ?? "")"
        return "\(what) \(detail) @\(eventTime(e))"
    }.joined(separator: "; ")
}
