// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import KioskCore
import KioskImaging

/// End-to-end: the real `kiosk-carousel` executable, the offscreen backend, the real photos
/// shipped in deploy/samples, real libjpeg-turbo, and an independent decoder (Pillow) as oracle.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
private let samples = repository.appendingPathComponent("deploy/samples")

private struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
    var frames: [String: URL]  // "frame-00001750.png" -> file
    var directory: URL

    var shown: [(index: Int, src: String, t: Int)] {
        stdout.split(separator: "\n").compactMap { line in
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  obj["event"] as? String == "shown" else { return nil }
            return (obj["index"] as! Int, obj["src"] as! String, obj["t"] as! Int)
        }
    }

    func frame(_ ms: Int) throws -> Bitmap {
        let name = String(format: "frame-%08d.png", ms)
        guard let url = frames[name] else {
            throw Failure("no \(name) among \(frames.keys.sorted().prefix(12))...")
        }
        return try ImageDecoder.decode(path: url.path, options: DecodeOptions()).bitmap
    }
}

private struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// The executable built beside the test bundle.
private func executable() -> URL {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("kiosk-carousel").path), dir.path != "/" {
        dir.deleteLastPathComponent()
    }
    return dir.appendingPathComponent("kiosk-carousel")
}

private func runShow(_ arguments: [String]) throws -> Run {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-e2e-\(UUID().uuidString)")
    let process = Process()
    process.executableURL = executable()
    process.arguments = ["--display", "offscreen:\(dir.path)"] + arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
    var frames: [String: URL] = [:]
    for n in names where n.hasPrefix("frame-") { frames[n] = dir.appendingPathComponent(n) }
    return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
               stderr: String(decoding: errData, as: UTF8.self), frames: frames, directory: dir)
}

/// Pillow's decode of `path` resized to `w`x`h` with its box filter: an independent "fitted" image.
private func pillowFitted(_ path: String, width w: Int, height h: Int) throws -> [UInt8] {
    let out = FileManager.default.temporaryDirectory.appendingPathComponent("pil-\(UUID().uuidString).rgb")
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    p.arguments = ["-c", """
        import sys
        from PIL import Image
        im = Image.open(sys.argv[1]).convert('RGB').resize((int(sys.argv[2]), int(sys.argv[3])), Image.BOX)
        open(sys.argv[4], 'wb').write(im.tobytes())
        """, path, String(w), String(h), out.path]
    try p.run()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { throw Failure("Pillow failed: install python3-pil (/usr/bin/python3)") }
    return [UInt8](try Data(contentsOf: out))
}

private func channel(_ pixel: UInt32, _ shift: UInt32) -> Int { Int((pixel >> shift) & 0xFF) }

@Test func theFirstFrameIsTheFirstPhotoFittedAndMidFadeIsTheBlendOfItsNeighbours() throws {
    let photos = ["path-1920x1200.jpg", "colorfulcups-1920x1200.jpg", "fallenleaf-1920x1200.jpg"]
        .map { samples.appendingPathComponent($0).path }
    let run = try runShow(["--size", "640x400", "--interval", "2", "--fade", "500", "--run-for", "4.5"] + photos)
    #expect(run.status == 0, "stderr: \(run.stderr)")

    // shown events: one per image, one interval apart, in playlist order, wrapping.
    #expect(run.shown.map(\.index) == [0, 1, 2])
    #expect(run.shown.map(\.t) == [0, 2000, 4000])
    #expect(run.shown.map(\.src) == photos)

    // The first frame is the first photo fitted (1920x1200 -> 640x400): within 1 level on average
    // and 30 dB PSNR of Pillow's independent decode and box-filter resize.
    let first = try run.frame(0)
    #expect(first.width == 640 && first.height == 400)
    let reference = try pillowFitted(photos[0], width: 640, height: 400)
    var squared = 0.0
    for i in 0..<(640 * 400) {
        let p = first.pixels[i]
        for (c, shift) in [(0, UInt32(16)), (1, 8), (2, 0)] {
            let d = Double(channel(p, shift) - Int(reference[i * 3 + c]))
            squared += d * d
        }
    }
    let mse = squared / Double(640 * 400 * 3)
    let psnr = 10 * log10(255 * 255 / max(mse, 1e-9))
    #expect(psnr > 30, "PSNR against Pillow \(psnr) dB")

    // No frames while an image is simply on screen: nothing between 0 and the fade at 1500 ms.
    let idle = run.frames.keys.filter { $0 > "frame-00000000.png" && $0 < "frame-00001500.png" }
    #expect(idle.isEmpty, "frames drawn while idle: \(idle.sorted())")

    // The fade runs 1500...2000 ms, paced at 60 Hz by show time: the frame at 1750 ms is the
    // midpoint (eased weight 128/256) of the frames on either side of the fade.
    let before = try run.frame(0), after = try run.frame(2000), mid = try run.frame(1750)
    var worst = 0
    for i in stride(from: 0, to: 640 * 400, by: 7) {
        for shift: UInt32 in [16, 8, 0] {
            let a = channel(before.pixels[i], shift), b = channel(after.pixels[i], shift)
            let expected = (a * 128 + b * 128) >> 8
            worst = max(worst, abs(channel(mid.pixels[i], shift) - expected))
        }
    }
    #expect(worst <= 1, "mid-fade frame differs from the blend by up to \(worst)")
    #expect(run.frames.count > 20 && run.frames.count < 80, "\(run.frames.count) frames")
}

@Test func aCorruptFileInTheFolderIsLoggedByNameAndSkipped() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-corrupt-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try FileManager.default.copyItem(at: samples.appendingPathComponent("path-1920x1200.jpg"),
                                     to: dir.appendingPathComponent("a.jpg"))
    // b.jpg: the first 20 kB of a real JPEG (truncated); c.png: not an image at all.
    let whole = try Data(contentsOf: samples.appendingPathComponent("grey-1920x1200.jpg"))
    try whole.prefix(20_000).write(to: dir.appendingPathComponent("b.jpg"))
    try Data("this is not a PNG\n".utf8).write(to: dir.appendingPathComponent("c.png"))
    try FileManager.default.copyItem(at: samples.appendingPathComponent("fallenleaf-1920x1200.jpg"),
                                     to: dir.appendingPathComponent("d.jpg"))

    let run = try runShow(["--size", "320x200", "--interval", "1", "--fade", "200", "--run-for", "3", dir.path])
    #expect(run.status == 0, "stderr: \(run.stderr)")
    #expect(run.stderr.contains("b.jpg"), "stderr: \(run.stderr)")
    #expect(run.stderr.contains("c.png"), "stderr: \(run.stderr)")
    // The show goes on with the good ones, wrapping past the bad ones.
    #expect(run.shown.map(\.index) == [0, 3, 0, 3])
    #expect(run.shown.map(\.t) == [0, 1000, 2000, 3000])

    // Without --run-for: one round of the images that could be shown, until the first comes again.
    let round = try runShow(["--size", "320x200", "--interval", "1", "--fade", "200", dir.path])
    #expect(round.status == 0, "stderr: \(round.stderr)")
    #expect(round.shown.map(\.index) == [0, 3, 0])
    // Each bad file is logged once.
    #expect(round.stderr.components(separatedBy: "b.jpg").count == 2, "stderr: \(round.stderr)")
}

@Test func anEmptyFolderShowsTheNoImagesScreen() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-empty-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let run = try runShow(["--size", "320x200", "--run-for", "1", dir.path])
    #expect(run.status == 0, "stderr: \(run.stderr)")
    #expect(run.shown.isEmpty)
    let frame = try run.frame(0)
    // Background at the corner, light text pixels somewhere in the middle band.
    #expect(frame[0, 0] & 0xFFFFFF == 0)
    var lit = 0
    for y in 60..<140 { for x in 0..<320 where frame[x, y] & 0xFF > 0x80 { lit += 1 } }
    #expect(lit > 50)
}

/// A folder whose only image cannot be decoded shows an empty screen with other words than an
/// empty folder's ("No image could be shown … see the log", not "Add … files"): the two frames
/// differ in the text band and both have text there.
@Test func aFolderOfOnlyBrokenImagesSaysSoNotAddFiles() throws {
    let empty = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-empty-\(UUID().uuidString)")
    let broken = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-broken-\(UUID().uuidString)")
    for dir in [empty, broken] { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
    try Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x41, count: 300))
        .write(to: broken.appendingPathComponent("cut.jpg"))
    let a = try runShow(["--size", "320x200", "--run-for", "1", empty.path])
    let b = try runShow(["--size", "320x200", "--run-for", "1", broken.path])
    #expect(a.status == 0 && b.status == 0, "stderr: \(a.stderr) \(b.stderr)")
    #expect(b.stderr.contains("cut.jpg"), "\(b.stderr)")
    let fa = try a.frame(0), fb = try b.frame(0)
    var lit = 0, differ = 0
    for y in 60..<140 {
        for x in 0..<320 {
            if fb[x, y] & 0xFF > 0x80 { lit += 1 }
            if fa[x, y] != fb[x, y] { differ += 1 }
        }
    }
    #expect(lit > 50 && differ > 50, "lit \(lit), differing \(differ)")
}

@Test func aUsageErrorExitsWith64AndSaysWhy() throws {
    let run = try runShow(["--fit", "zoom", samples.path])
    #expect(run.status == 64)
    #expect(run.stderr.contains("--fit"))
    #expect(run.frames.isEmpty)
}

@Test func sighupIsLoggedAndSigtermEndsALongShowCleanly() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-signal-\(UUID().uuidString)")
    let process = Process()
    process.executableURL = executable()
    process.arguments = ["--display", "offscreen:\(dir.path)", "--size", "160x100", "--interval", "0.2",
                         "--fade", "100",
                         "--run-for", "1000000", samples.path]
    let err = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = err
    try process.run()
    // Wait until the show is running (frames appear), then signal it.
    for _ in 0..<100 where ((try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.count ?? 0) < 3 {
        usleep(50_000)
    }
    kill(process.processIdentifier, SIGHUP)
    usleep(300_000)
    #expect(process.isRunning, "SIGHUP must not end the show")
    kill(process.processIdentifier, SIGTERM)
    let deadline = Date().addingTimeInterval(10)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    #expect(!process.isRunning, "SIGTERM did not end the show within 10 s")
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(log)")
    #expect(log.contains("SIGHUP received"))
    #expect(log.contains("stopping"))
    // Where the frames went, and how many, as at the end of a --run-for.
    let written = (try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.count ?? 0
    #expect(log.contains("show done path=\(dir.path) detail=\"\(written) frames written\""), "\(written) files; \(log)")
    try? FileManager.default.removeItem(at: dir)
}

/// The log lines people read most count right for one and for two: "show started" gives the
/// playlist's items (not images shown: an item may never load), "playlist read" a local
/// playlist's, and once each item was tried, "playlist round done" how many were really shown.
@Test func theStartAndRoundLinesCountItemsAndImagesShownRightForOneAndTwo() throws {
    func lines(_ run: Run, _ what: String) -> [Substring] {
        run.stderr.split(separator: "\n").filter { $0.contains("info \(what) ") }
    }
    let one = try runShow(["--size", "160x100", samples.appendingPathComponent("grey-1920x1200.jpg").path])
    #expect(one.status == 0, "\(one.stderr)")
    #expect(lines(one, "show started").first?.contains(#"detail="playlist of 1 item, interval"#) == true,
            "\(one.stderr)")
    #expect(lines(one, "playlist round done").first?.hasSuffix(#"detail="1 of 1 item shown""#) == true, "\(one.stderr)")

    // Two photos and a file that does not decode: three items, two of them shown.
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-counts-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let broken = dir.appendingPathComponent("cut.jpg")
    try Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x41, count: 300)).write(to: broken)
    let photos = ["grey-1920x1200.jpg", "path-1920x1200.jpg"].map { samples.appendingPathComponent($0).path }
    let three = try runShow(["--size", "160x100", "--fade", "0"] + photos + [broken.path])
    #expect(three.status == 0, "\(three.stderr)")
    #expect(lines(three, "show started").first?.contains(#"detail="playlist of 3 items, interval"#) == true,
            "\(three.stderr)")
    #expect(lines(three, "playlist round done").first?.hasSuffix(
                #"detail="2 of 3 items shown, 1 could not be loaded (tried again every 60 s)""#) == true,
            "\(three.stderr)")

    // A local playlist of one item, then of two.
    let playlist = dir.appendingPathComponent("show.json")
    for (count, noun) in [(1, "1 item"), (2, "2 items")] {
        let items = photos.prefix(count).map { #"{"src": "\#($0)"}"# }.joined(separator: ", ")
        try Data(#"{"items": [\#(items)]}"#.utf8).write(to: playlist)
        let run = try runShow(["--size", "160x100", "--fade", "0", playlist.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(lines(run, "playlist read").first?.hasSuffix("detail=\"\(noun)\"") == true, "\(run.stderr)")
        #expect(lines(run, "show started").first?.contains("detail=\"playlist of \(noun), interval") == true,
                "\(run.stderr)")
        #expect(lines(run, "playlist round done").first?.hasSuffix("detail=\"\(count) of \(noun) shown\"") == true,
                "\(run.stderr)")
        #expect(lines(run, "show started").first?.contains("playlist's") == false, "\(run.stderr)")
    }
    // A playlist's own interval replaces --interval's, and the start line says whose it is.
    try Data(#"{"interval": 8, "items": [{"src": "\#(photos[0])"}]}"#.utf8).write(to: playlist)
    let own = try runShow(["--size", "160x100", "--fade", "0", "--interval", "3", playlist.path])
    #expect(own.status == 0, "\(own.stderr)")
    #expect(lines(own, "show started").first?.contains(
        "interval 8000 ms (the playlist's, over --interval 3000 ms), fade 0 ms\"") == true, "\(own.stderr)")
}
