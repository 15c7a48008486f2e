// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
@testable import KioskApp
import KioskCore
import KioskDisplay
import KioskImaging
import Testing

// `--order` and `--caption date` end to end: the real program on the offscreen backend
// (virtual time), photos whose EXIF exiftool wrote (Tests/Fixtures/exif-dates).

private let exifDates = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/exif-dates").path

/// Runs the show to its end and returns the sources of its `shown` events, in order.
private func shownSources(_ arguments: [String]) throws -> [String] {
    let child = try KioskChild(arguments)
    #expect(waitFor(60) { !child.process.isRunning }, "the show did not end")
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
    return child.shown.map(\.src)
}

/// A folder holding copies of `paths` under their own names.
private func folder(of paths: [String]) throws -> String {
    let dir = controlTestDirectory() + "/photos"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    for p in paths {
        try FileManager.default.copyItem(atPath: p, toPath: dir + "/" + (p as NSString).lastPathComponent)
    }
    return dir
}

@Test func aShuffleRoundCarriesOnOverARestartWithoutRepeats() throws {
    let photos = try folder(of: controlTestPhotos)
    let state = controlTestDirectory()
    let common = ["--display", "offscreen:\(state)/frames", "--size", "64x40", "--fade", "0", "--interval", "1",
                  "--order", "shuffle", "--state-dir", state]
    let first = try shownSources(common + ["--run-for", "2.5", photos])  // shown at 0, 1 and 2 s
    #expect(first.count == 3)
    let kept = try String(contentsOfFile: state + "/shuffle-round", encoding: .utf8)
    #expect(kept.hasPrefix(ShuffleBag.header + "\n"))
    #expect(kept.components(separatedBy: "\n").filter { $0.hasPrefix("shown ") }.count == 3)
    // The next start finishes the round: the two not shown yet, then a new round.
    let second = try shownSources(common + ["--run-for", "1.5", photos])
    #expect(second.count == 2)
    #expect(Set(first + second) == Set(controlTestPhotos.map { photos + "/" + ($0 as NSString).lastPathComponent }))
}

/// A show in name order on a state directory that kept a shuffle round (an earlier
/// `--order shuffle`) keeps it for a manifest that may ask for a shuffle, but says nothing of
/// it: "shuffle round restored" in a show that does not shuffle read as a fault.
@Test func aKeptRoundIsNotMentionedByAShowThatDoesNotShuffle() throws {
    let photos = try folder(of: controlTestPhotos)
    let state = controlTestDirectory()
    let common = ["--display", "offscreen:\(state)/frames", "--size", "64x40", "--fade", "0", "--interval", "1",
                  "--state-dir", state, "--run-for", "1.5"]
    _ = try shownSources(common + ["--order", "shuffle", photos])
    #expect(FileManager.default.fileExists(atPath: state + "/shuffle-round"))
    for (order, said) in [("name", false), ("shuffle", true)] {
        let child = try KioskChild(common + ["--order", order, photos])
        #expect(waitFor(60) { !child.process.isRunning }, "the show did not end")
        #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
        #expect(child.stderr.text.contains("shuffle round restored") == said, "--order \(order): \(child.stderr.text)")
    }
}

/// A state directory the round cannot be written into (here `shuffle-round` is a folder, so
/// each rename fails alike): the show goes on and says so once, not at every round.
@Test func aShuffleRoundThatCannotBeKeptIsLoggedOnce() throws {
    let photos = try folder(of: controlTestPhotos)
    let state = controlTestDirectory()
    try FileManager.default.createDirectory(atPath: state + "/shuffle-round", withIntermediateDirectories: false)
    let child = try KioskChild(["--display", "offscreen:\(state)/frames", "--size", "64x40", "--fade", "0",
                                "--interval", "1", "--order", "shuffle", "--state-dir", state,
                                "--run-for", "\(3 * controlTestPhotos.count - 1).5", photos])
    #expect(waitFor(60) { !child.process.isRunning }, "the show did not end")
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
    #expect(child.shown.count == 3 * controlTestPhotos.count, "three rounds shown")
    let lines = child.stderr.text.split(separator: "\n").filter { $0.contains("shuffle round not kept") }
    #expect(lines.count == 1, "stderr: \(child.stderr.text)")
    #expect(lines.first?.contains("Is a directory") == true)
}

@Test func newestPlaysByTheCaptureTimeNotTheNames() throws {
    // Names: bigendian (2001), local (2019), offset (2016); newest first: local, offset, bigendian.
    let names = ["taken-bigendian.jpg", "taken-local.jpg", "taken-offset.jpg"]
    let photos = try folder(of: names.map { exifDates + "/" + $0 })
    let out = controlTestDirectory()
    let args = ["--display", "offscreen:\(out)/frames", "--size", "64x40", "--fade", "0", "--interval", "1"]
    #expect(try shownSources(args + ["--run-for", "2.5", photos]) == names.map { photos + "/" + $0 })
    let newest = try shownSources(args + ["--order", "newest", "--run-for", "2.5", photos])
    #expect(newest == ["taken-local.jpg", "taken-offset.jpg", "taken-bigendian.jpg"].map { photos + "/" + $0 })
    let date = try shownSources(args + ["--order", "date", "--run-for", "2.5", photos])
    #expect(date == ["taken-bigendian.jpg", "taken-offset.jpg", "taken-local.jpg"].map { photos + "/" + $0 })
}

/// A folder named by a relative path (`kiosk-carousel --order date photos`, as the README's own
/// examples name `deploy/samples`) is ordered by its capture times too, not left in name order.
@Test func aRelativeFolderIsOrderedByCaptureTime() throws {
    let names = ["taken-bigendian.jpg", "taken-local.jpg", "taken-offset.jpg"]  // 2001, 2019, 2016
    let photos = try folder(of: names.map { exifDates + "/" + $0 })
    let parent = (photos as NSString).deletingLastPathComponent
    let out = controlTestDirectory()
    for (order, expected) in [("newest", ["taken-local.jpg", "taken-offset.jpg", "taken-bigendian.jpg"]),
                              ("date", ["taken-bigendian.jpg", "taken-offset.jpg", "taken-local.jpg"])] {
        let child = try KioskChild(["--display", "offscreen:\(out)/frames-\(order)", "--size", "64x40", "--fade", "0",
                                    "--interval", "1", "--order", order, "--run-for", "2.5", "photos"],
                                   currentDirectory: parent)
        #expect(waitFor(60) { !child.process.isRunning }, "the show did not end")
        #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
        #expect(child.shown.map(\.src) == expected.map { "photos/" + $0 }, "--order \(order)")
    }
}

/// `--caption date` draws the capture time with `--caption-format`: the frame is the one a
/// playlist giving those very words as the caption makes, and not the uncaptioned one.
@Test func theDateCaptionIsDrawnOnScreen() throws {
    let photo = exifDates + "/taken-offset.jpg"  // 2016:12:02 14:30:05 +01:00
    let format = "%A %-d %B %Y, {ago}"
    var now = time(nil), parts = tm()
    localtime_r(&now, &parts)
    let today = LocalDate(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
    let taken = EXIFDateTime(date: LocalDate(year: 2016, month: 12, day: 2), secondOfDay: 52_205,
                             utcOffsetSeconds: 3600)
    let words = CaptureCaption.format(format, taken: .exif(taken), today: today)
    #expect(words.hasPrefix("Friday 2 December 2016, ") && words.hasSuffix(" years ago"))

    func firstFrame(_ extra: [String], _ source: String) throws -> Bitmap {
        let dir = controlTestDirectory()
        let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "480x300", "--fade", "0"]
                                   + extra + [source])
        #expect(waitFor(60) { !child.process.isRunning }, "the show did not end")
        #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
        if let keep = ProcessInfo.processInfo.environment["KC_KEEP_FRAME"] {
            try? FileManager.default.removeItem(atPath: keep)
            try? FileManager.default.copyItem(atPath: "\(dir)/frames/frame-00000000.png", toPath: keep)
        }
        return try ImageDecoder.decode(path: "\(dir)/frames/frame-00000000.png").bitmap
    }
    let dated = try firstFrame(["--caption", "date", "--caption-format", format], photo)
    let playlist = controlTestDirectory() + "/show.json"
    try #"{"items":[{"src":"\#(photo)","caption":"\#(words)"}]}"#
        .write(toFile: playlist, atomically: true, encoding: .utf8)
    let given = try firstFrame([], playlist)
    let plain = try firstFrame(["--caption", "off"], photo)
    func same(_ a: Bitmap, _ b: Bitmap, _ range: Range<Int>) -> Bool {
        range.allSatisfy { a.pixels[$0] == b.pixels[$0] }
    }
    let all = 0..<(480 * 300)
    #expect(same(dated, given, all), "the date caption is those words")
    #expect(!same(dated, plain, all), "a caption was drawn")
    // The words sit in the bottom band; the top of the picture is untouched.
    #expect(same(dated, plain, 0..<(480 * 150)))
}

@Test func captionFormatTokens() {
    let taken = EXIFDateTime(date: LocalDate(year: 2016, month: 12, day: 2), secondOfDay: 52_205)
    let today = LocalDate(year: 2026, month: 12, day: 1)
    #expect(CaptureCaption.format("%Y-%m-%d %H:%M:%S %a {ago}", taken: .exif(taken), today: today)
            == "2016-12-02 14:30:05 Fri 9 years ago")
    #expect(CaptureCaption.format("{ago}", taken: .exif(taken), today: LocalDate(year: 2017, month: 12, day: 2))
            == "1 year ago")
    #expect(CaptureCaption.format("%j {ago}", taken: .exif(taken), today: LocalDate(year: 2016, month: 12, day: 25))
            == "337 this year")
}

private final class UTCWall: WallTimeSource {
    func readWallTime() -> (sinceEpoch: Duration, zone: any TimeZoneRules) { (.zero, FixedOffsetZone(seconds: 0)) }
    var scheduleRecheck: Duration? { nil }
}

/// The capture times are read off the frame loop: a playlist plays in the order of the times
/// known when it arrives (none: as listed), and the reader's answer orders it by them; a file
/// rewritten is read again, an unchanged one is not asked of the disk twice.
@Test func captureTimesArriveFromTheReaderAndOrderThePlaylist() throws {
    let names = ["taken-bigendian.jpg", "taken-local.jpg", "taken-offset.jpg"]  // 2001, 2019, 2016
    let photos = try folder(of: names.map { exifDates + "/" + $0 })
    let playlist = names.map { PlaylistItem(source: photos + "/" + $0) }
    let order = try PlayOrder(order: .newest, recentDays: nil, stateDirectory: nil, seed: 1)
    let before = order.sequence(for: playlist, current: nil, wall: UTCWall(), at: .zero)
    #expect(before != [1, 2, 0], "the times cannot be known before the reader answered")
    order.reader.waitForAnswers(interrupt: -1)
    #expect(order.timesArrived(current: nil, wall: UTCWall(), at: .zero) == .some([1, 2, 0]))
    // Asked again with nothing changed: the same facts, no new order.
    _ = order.sequence(for: playlist, current: nil, wall: UTCWall(), at: .zero)
    order.reader.waitForAnswers(interrupt: -1)
    #expect(order.timesArrived(current: nil, wall: UTCWall(), at: .zero) == nil)
    // The 2001 photo replaced by one without a date (its file's time, now): it is the newest.
    let replaced = photos + "/taken-bigendian.jpg"
    try FileManager.default.removeItem(atPath: replaced)
    try FileManager.default.copyItem(atPath: exifDates + "/no-date.jpg", toPath: replaced)
    _ = order.sequence(for: playlist, current: nil, wall: UTCWall(), at: .zero)
    order.reader.waitForAnswers(interrupt: -1)
    #expect(order.timesArrived(current: nil, wall: UTCWall(), at: .zero) == .some([0, 1, 2]))
}

/// A wall clock standing at `epoch` in UTC.
private final class FixedWall: WallTimeSource {
    let epoch: Int64
    init(_ epoch: Int64) { self.epoch = epoch }
    func readWallTime() -> (sinceEpoch: Duration, zone: any TimeZoneRules) {
        (.seconds(epoch), FixedOffsetZone(seconds: 0))
    }
    var scheduleRecheck: Duration? { nil }
}

/// `on-this-day` on 2 December: only the photo of 2016-12-02 plays, and "none" is not said on
/// the first ordering, made before the capture times were read (the whole folder by date then).
@Test func onThisDayWaitsForTheCaptureTimesBeforeSayingNone() throws {
    let names = ["taken-bigendian.jpg", "taken-local.jpg", "taken-offset.jpg"]  // 2001, 2019, 2016-12-02
    let photos = try folder(of: names.map { exifDates + "/" + $0 })
    let playlist = names.map { PlaylistItem(source: photos + "/" + $0) }
    let order = try PlayOrder(order: .onThisDay, recentDays: nil, stateDirectory: nil, seed: 1)
    let wall = FixedWall(LocalDate(year: 2026, month: 12, day: 2).daysSinceEpoch * 86_400 + 43_200)
    _ = order.sequence(for: playlist, current: nil, wall: wall, at: .zero)
    #expect(order.saidNoneOn == nil, "no capture time is known yet: nothing can be said about the day")
    order.reader.waitForAnswers(interrupt: -1)
    #expect(order.timesArrived(current: nil, wall: wall, at: .zero) == .some([2]))
    #expect(order.saidNoneOn == nil)
    // On 3 December none matches: now that the times are known, that is said.
    let later = FixedWall(LocalDate(year: 2026, month: 12, day: 3).daysSinceEpoch * 86_400 + 43_200)
    _ = order.sequence(for: playlist, current: nil, wall: later, at: .zero)
    order.reader.waitForAnswers(interrupt: -1)
    _ = order.timesArrived(current: nil, wall: later, at: .zero)
    #expect(order.saidNoneOn == LocalDate(year: 2026, month: 12, day: 3))
}

/// `on-this-day` follows the day on the loop's clock: a show started at 23:59 on 2 December
/// plays the photos of 2 December until midnight (UTC here, the show's zone), then those of
/// 3 December. The photos are PNGs without EXIF, dated by their files' modification times.
@Test func onThisDayMovesOnAtMidnight() throws {
    let dir = controlTestDirectory()
    try FileManager.default.createDirectory(atPath: dir + "/frames", withIntermediateDirectories: true)
    func photo(_ name: String, _ taken: LocalDate, _ colour: UInt32) throws -> String {
        let path = "\(dir)/\(name).png"
        try PNGWriter.write(Bitmap(width: 16, height: 10, fill: colour), to: path)
        let t = time_t(taken.daysSinceEpoch * 86_400 + 43_200)
        var times = [timeval(tv_sec: t, tv_usec: 0), timeval(tv_sec: t, tv_usec: 0)]
        #expect(utimes(path, &times) == 0)
        return path
    }
    let sources = [try photo("a2020", LocalDate(year: 2020, month: 12, day: 2), 0xFF20_2020),
                   try photo("b2019", LocalDate(year: 2019, month: 12, day: 3), 0xFF40_4040),
                   try photo("c2021", LocalDate(year: 2021, month: 12, day: 2), 0xFF60_6060),
                   try photo("d2018", LocalDate(year: 2018, month: 6, day: 1), 0xFF80_8080)]
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    var configuration = FrameLoop.Configuration(events: EventWriter(descriptor: fds[1]), runFor: .seconds(100))
    configuration.order = try PlayOrder(order: .onThisDay, recentDays: nil, stateDirectory: nil, seed: 1)
    let start = LocalDate(year: 2026, month: 12, day: 2).daysSinceEpoch * 86_400 + 86_340  // 23:59:00 UTC
    let loop = FrameLoop(display: try OffscreenDisplay(directory: dir + "/frames", width: 64, height: 40),
                         driver: VirtualTimeDriver(wallStart: .seconds(start), zone: FixedOffsetZone(seconds: 0)),
                         carousel: Carousel(items: sources.map { PlaylistItem(source: $0) },
                                            config: CarouselConfig(interval: .seconds(20), fade: .zero)),
                         preparer: try SlotPreparer(width: 64, height: 40, fit: .fill, background: .black,
                                                    maxPixels: 1 << 20),
                         configuration: configuration)
    _ = try loop.run()
    configuration.events.flush()
    close(fds[1])
    let out = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
    let shown: [(String, Int)] = String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { line in
        guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              o["event"] as? String == "shown", let src = o["src"] as? String, let t = o["t"] as? Int else {
            return nil
        }
        return ((src as NSString).lastPathComponent, t)
    }
    // 2 December: 2020, 2021, 2020 (at 0, 20 and 40 s); at midnight (60 s) the photo of 2019-12-03.
    #expect(shown.map(\.0) == ["a2020.png", "c2021.png", "a2020.png", "b2019.png"], "\(shown)")
    #expect(shown.last?.1 == 60_000)
}
