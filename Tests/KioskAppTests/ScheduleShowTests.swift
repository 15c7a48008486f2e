// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskContent
import KioskDisplay
import KioskImaging
import KioskSystem
@testable import KioskApp

// Item schedules on the real frame loop, decoder and offscreen display, driven by the virtual
// clock with a wall clock that runs with it, and libc's Europe/Berlin from tzdata: each phase
// has one item in the rotation, so every boundary is a `shown` of the item that enters it.

/// Writes a playlist and one solid-colour PNG per item into a fresh directory; runs the loop on
/// the virtual clock from the wall time `start` for `hours`; returns the `shown` events as
/// (source file name, show time in ms). `frames` gets the directory of the frames written
/// (`frame-TTTTTTTT.png`) before it is deleted.
private func runScheduled(playlist: String, names: [String], start: String, hours: Int,
                          frames: ((String) throws -> Void)? = nil) throws -> [(String, Int64)] {
    setenv("TZ", "Europe/Berlin", 1)
    let dir = NSTemporaryDirectory() + "kc-schedule-\(getpid())-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir + "/frames", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    for (i, name) in names.enumerated() {
        try PNGWriter.write(Bitmap(width: 16, height: 10, fill: 0xFF00_0000 | UInt32(40 * (i + 1))),
                            to: "\(dir)/\(name).png")
    }
    try playlist.write(toFile: dir + "/show.json", atomically: true, encoding: .utf8)
    let manifest = try Manifest.load(path: dir + "/show.json")
    let items = manifest.items.map { PlaylistItem(source: $0.src, schedule: $0.schedule, fallback: $0.fallback) }
    var fds: [Int32] = [-1, -1]
    pipe(&fds)
    let events = EventWriter(descriptor: fds[1])
    guard case .instant(let epoch) = try ItemSchedule.parseBound(start) else { throw ScheduleTestFailure("start") }
    let loop = FrameLoop(display: try OffscreenDisplay(directory: dir + "/frames", width: 64, height: 40),
                         driver: VirtualTimeDriver(wallStart: .seconds(epoch), zone: LocalTimeZone()),
                         carousel: Carousel(items: items,
                                            config: CarouselConfig(interval: .seconds(86_400), fade: .zero)),
                         preparer: try SlotPreparer(width: 64, height: 40, fit: .fill, background: .black,
                                                    maxPixels: 1 << 20),
                         configuration: FrameLoop.Configuration(events: events, runFor: .seconds(Int64(hours) * 3600)))
    _ = try loop.run()
    try frames?(dir + "/frames")
    events.flush()
    close(fds[1])
    let out = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
    return String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { line in
        guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              o["event"] as? String == "shown", let src = o["src"] as? String, let t = o["t"] as? Int else {
            return nil
        }
        return (String(src.split(separator: "/").last!.dropLast(4)), Int64(t))
    }
}

private struct ScheduleTestFailure: Error { var what: String; init(_ w: String) { what = w } }

private func h(_ hours: Double) -> Int64 { Int64(hours * 3_600_000) }

@Test func aScheduledShowWalksThroughTheSpringChangeAndAMidnightInBerlin() throws {
    // Saturday 28 March 2026 from 05:00 CET; at 02:00 on Sunday the clocks go to 03:00 CEST.
    let playlist = """
        {"items": [
          {"src": "breakfast.png", "schedule": {"times": ["07:00-11:00"]}},
          {"src": "lunch.png", "schedule": {"times": ["11:00-15:00"]}},
          {"src": "late.png", "schedule": {"days": ["sat"], "times": ["23:00-01:00"]}},
          {"src": "early.png", "schedule": {"days": ["sun"], "times": ["02:30-04:00"]}},
          {"src": "poster.png", "schedule": {"from": "2026-03-28T15:00:00+01:00", "until": "2026-03-28T16:00:00Z"}},
          {"src": "logo.png", "fallback": true}]}
        """
    let shown = try runScheduled(playlist: playlist, names: ["breakfast", "lunch", "late", "early", "poster", "logo"],
                                 start: "2026-03-28T05:00:00+01:00", hours: 26)
    let expected: [(String, Int64)] = [
        ("logo", 0), ("breakfast", h(2)), ("lunch", h(6)), ("poster", h(10)), ("logo", h(12)),
        ("late", h(18)), ("logo", h(20)),
        ("early", h(21)),      // 02:30 does not exist: the window starts at the change, 03:00 CEST
        ("logo", h(22)),       // 04:00 CEST
        ("breakfast", h(25)),  // 07:00 CEST, one hour less after the change
    ]
    #expect(shown.map(\.0) == expected.map(\.0))
    #expect(shown.map(\.1) == expected.map(\.1), "\(shown)")
}

@Test func aScheduledShowWalksThroughTheAutumnChangeInBerlin() throws {
    // Saturday 24 October 2026 from 22:00 CEST; at 03:00 on Sunday the clocks go back to 02:00 CET.
    let playlist = """
        {"items": [
          {"src": "night.png", "schedule": {"until": "2026-10-24", "days": ["sat"], "times": ["22:30-01:30"]}},
          {"src": "repeat.png", "schedule": {"times": ["02:15-02:45"]}},
          {"src": "morning.png", "schedule": {"times": ["06:00-08:00"]}},
          {"src": "logo.png", "fallback": true}]}
        """
    let shown = try runScheduled(playlist: playlist, names: ["night", "repeat", "morning", "logo"],
                                 start: "2026-10-24T22:00:00+02:00", hours: 12)
    let expected: [(String, Int64)] = [
        ("logo", 0), ("night", h(0.5)),
        ("logo", h(2)),         // until 2026-10-24: the end of that day, local midnight
        ("repeat", h(4.25)),    // 02:15 CEST; the second 02:15, in CET, is not shown again
        ("logo", h(4.75)),
        ("morning", h(9)),      // 06:00 CET
        ("logo", h(11)),
    ]
    #expect(shown.map(\.0) == expected.map(\.0))
    #expect(shown.map(\.1) == expected.map(\.1), "\(shown)")
}

@Test func theRealProgramDropsAnItemWhenItsUntilPassesDuringTheShow() throws {
    // The real executable on the real clock: a.jpg is scheduled until 1.5 s from now (an
    // RFC 3339 instant in UTC), b.jpg always; interval 60 s, so only the schedule moves the show.
    let dir = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let until = Int64(wallNow() + 1.5)
    let day = LocalDate(daysSinceEpoch: until / 86_400), second = Int(until % 86_400)
    func two(_ v: Int) -> String { v < 10 ? "0\(v)" : String(v) }
    let stamp = "\(day)T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))Z"
    let playlist = #"{"items": [{"src": "\#(controlTestPhotos[0])", "schedule": {"until": "\#(stamp)"}}, "#
        + #"{"src": "\#(controlTestPhotos[1])"}]}"#
    try playlist.write(toFile: dir + "/show.json", atomically: true, encoding: .utf8)
    let started = wallNow()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: kioskExecutable())
    process.arguments = ["--display", "offscreen:\(dir)/frames", "--size", "320x200", "--clock", "real",
                         "--interval", "60",
                         "--fade", "200", "--run-for", "3.5", dir + "/show.json"]
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(stderr)")
    let shown = String(decoding: stdout, as: UTF8.self).split(separator: "\n").compactMap { line -> (Int, Double)? in
        guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              o["event"] as? String == "shown" else { return nil }
        return (o["index"] as! Int, Double(o["t"] as! Int) / 1000)
    }
    #expect(shown.map(\.0) == [0, 1], "\(shown)\n\(stderr)")
    // b.jpg is fully shown within a second of a.jpg's until (after the 200 ms fade); show time
    // starts a little after `started`.
    if shown.count == 2 {
        let leftAt = started + shown[1].1
        #expect(leftAt >= Double(until) - 0.05 && leftAt < Double(until) + 1.0, "until \(until), left at \(leftAt)")
    }
    #expect(stderr.contains("rotation changed"), "\(stderr)")
}

/// Fallback items stand in when no scheduled item can be shown (here a missing file): from
/// 07:00 the only scheduled item fails, and the logo stays on screen, not the empty screen; the
/// failed item is tried again every minute without the logo leaving (no flapping); an item that
/// loads (lunch, from 09:00) ends it, and the logo is back at 11:00 when nothing is scheduled.
@Test func fallbackItemsStandInWhileNoScheduledItemCanBeShown() throws {
    let playlist = """
        {"items": [
          {"src": "gone.png", "schedule": {"times": ["07:00-11:00"]}},
          {"src": "lunch.png", "schedule": {"times": ["09:00-11:00"]}},
          {"src": "logo.png", "fallback": true}]}
        """
    var logoFrame: Data?, lastBeforeLunch: (name: String, bytes: Data)?, framesAfterSeven = 0
    let shown = try runScheduled(playlist: playlist, names: ["lunch", "logo"], start: "2026-03-02T06:00:00+01:00",
                                 hours: 6) { dir in
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("frame-") }.sorted()
        func ms(_ name: String) -> Int64 { Int64(name.dropFirst(6).dropLast(4))! }
        logoFrame = FileManager.default.contents(atPath: dir + "/" + names[0])
        framesAfterSeven = names.filter { ms($0) > h(1) && ms($0) < h(3) }.count
        if let last = names.last(where: { ms($0) < h(3) }) {
            lastBeforeLunch = (last, FileManager.default.contents(atPath: dir + "/" + last) ?? Data())
        }
    }
    #expect(shown.map(\.0) == ["logo", "lunch", "logo"], "\(shown)")
    #expect(shown.map(\.1) == [0, h(3), h(5)], "\(shown)")
    // 07:00 to 09:00: the logo's own frame stays on screen (an empty screen is another frame),
    // and 120 retries of gone.png draw nothing new.
    #expect(lastBeforeLunch?.bytes == logoFrame, "last frame before 09:00: \(lastBeforeLunch?.name ?? "none")")
    #expect(framesAfterSeven <= 2, "\(framesAfterSeven) frames drawn between 07:00 and 09:00")
}
