// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// End to end: the real `kiosk-carousel` executable shows the inputs of Tests/Fixtures/cases
/// (and the siblings make_cases.py writes) at 640x400 with the whole program's peak resident
/// set at most 32 MiB: what libpng and libjpeg would inflate or keep of their ancillary chunks
/// and segments never reaches memory. The program is started from a small Python process that
/// reports the child's `ru_maxrss` from `wait4`: started straight from this test process (some
/// hundreds of MiB), the kernel would fold this process's own peak into the child's (glibc's
/// posix_spawn shares the address space until `execve`).
private let casesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/cases").path

private struct Measured {
    var status: Int32
    var maxRSSKiB: Int
    var stderr: String
}

private struct Failure: Error, CustomStringConvertible {
    var description: String
}

/// Runs the executable offscreen at 640x400 on `image` through /usr/bin/python3 and returns
/// its exit status, peak RSS (KiB) and stderr.
private func showMeasured(_ image: String, frames: String) throws -> Measured {
    let report = frames + ".report"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", """
        import os, sys
        pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ,
                             file_actions=[(os.POSIX_SPAWN_OPEN, 1, '/dev/null', os.O_WRONLY, 0)])
        _, status, usage = os.wait4(pid, 0)
        open(sys.argv[1], 'w').write('%d %d' % (os.waitstatus_to_exitcode(status), usage.ru_maxrss))
        """, report, kioskExecutable(), "--display", "offscreen:\(frames)", "--size", "640x400", image]
    let err = Pipe()
    process.standardError = err
    try process.run()
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let fields = try String(contentsOfFile: report, encoding: .utf8).split(separator: " ")
    guard fields.count == 2, let status = Int32(fields[0]), let rss = Int(fields[1]) else {
        throw Failure(description: "no report from the launcher: \(stderr)")
    }
    return Measured(status: status, maxRSSKiB: rss, stderr: stderr)
}

@Test func textICCPAndUnknownChunksAndAPPnSegmentsStayOutOfMemory() throws {
    let scratch = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let generator = Process()
    generator.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    generator.arguments = [casesFolder + "/make_cases.py", scratch + "/cases"]
    try generator.run()
    generator.waitUntilExit()
    #expect(generator.terminationStatus == 0)

    let siblings = [
        "itxt-100-chunks-4MiB-each.png", "ztxt-one-chunk-512MiB.png", "ztxt-100-chunks-after-image-data.png",
        "iccp-256MiB.png", "splt-2000-chunks.png", "unknown-2000-chunks-8KiB.png", "exif-48MiB.png",
        "exif-orientation-6-after-chunks.png", "app1-800-segments-64KiB.jpg",
    ]
    let images = [casesFolder + "/ztxt-100-chunks-4MiB-each.png"] + siblings.map { scratch + "/cases/" + $0 }
    for (n, image) in images.enumerated() {
        let run = try showMeasured(image, frames: scratch + "/frames-\(n)")
        #expect(run.status == 0, "\(image): \(run.stderr)")
        #expect(!run.stderr.contains("image skipped"), "\(image): \(run.stderr)")
        #expect(run.maxRSSKiB <= 32 * 1024, "\(image): peak RSS \(run.maxRSSKiB) KiB")
        #expect(FileManager.default.fileExists(atPath: scratch + "/frames-\(n)/frame-00000000.png"))
    }
}

@Test func aGIFNamedJpgIsShownAsAGIF() throws {
    let scratch = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let gif = casesFolder + "/gif-named.jpg"
    let run = try showMeasured(gif, frames: scratch + "/frames")
    #expect(run.status == 0, "\(run.stderr)")
    #expect(!run.stderr.contains("image skipped"), "\(run.stderr)")
    #expect(FileManager.default.fileExists(atPath: scratch + "/frames/frame-00000000.png"))
}

/// Bombs of the other formats, each a few hundred bytes claiming a huge image, shown by the
/// executable: each skipped from its header with "too large", peak RSS at most 32 MiB (the
/// HEIF one is refused before libheif is loaded). A WebP's VP8X canvas of 60000x60000; a HEIF
/// (heif-enc from a 100x50 test image) whose ispe boxes say 60000x60000; a GIF with a
/// 65535x65535 logical screen.
@Test func webpHEIFAndGIFBombsAreRefusedFromTheirHeadersWithin32MiB() throws {
    let scratch = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    let vp8l: [UInt8] = Array("VP8L".utf8) + le(8, 4) + [0x2F] + le(15 | 15 << 14, 4) + [0, 0, 0]
    let vp8x: [UInt8] = Array("VP8X".utf8) + le(10, 4) + [0, 0, 0, 0] + le(59999, 3) + le(59999, 3)
    let webp: [UInt8] = Array("RIFF".utf8) + le(4 + vp8x.count + vp8l.count, 4) + Array("WEBP".utf8) + vp8x + vp8l
    let gif: [UInt8] = Array("GIF89a".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]
        + [0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 2, 2, 0x4C, 0x01, 0, 0x3B]
    let small = scratch + "/small.heic"
    let encoder = Process()
    encoder.executableURL = URL(fileURLWithPath: "/usr/bin/heif-enc")
    encoder.arguments = ["-q", "50", casesFolder + "/../exif-orientation/test_1.jpg", "-o", small]
    encoder.standardOutput = FileHandle.nullDevice
    try encoder.run()
    encoder.waitUntilExit()
    #expect(encoder.terminationStatus == 0, "heif-enc (libheif-examples, deploy/apt-deps.sh --tests)")
    var heif = [UInt8](try Data(contentsOf: URL(fileURLWithPath: small)))
    var from = heif.startIndex
    while let r = heif[from...].firstRange(of: Array("ispe".utf8)) {
        heif.replaceSubrange((r.upperBound + 4)..<(r.upperBound + 12), with: [0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60])
        from = r.upperBound
    }
    for (name, bytes, size) in [("bomb.webp", webp, "60000x60000"), ("bomb.heic", heif, "60000x60000"),
                                ("bomb.gif", gif, "65535x65535")] {
        let path = scratch + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let run = try showMeasured(path, frames: scratch + "/frames-" + name)
        #expect(run.stderr.contains("image skipped path=\(path) reason=\"\(size) pixels"), "\(name): \(run.stderr)")
        #expect(run.maxRSSKiB <= 32 * 1024, "\(name): peak RSS \(run.maxRSSKiB) KiB")
    }
}
