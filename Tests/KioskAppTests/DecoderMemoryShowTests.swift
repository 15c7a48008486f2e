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
