import Glibc
import Testing

/// End to end on the real executable (offscreen backend, `--clock real`): deadlines that must
/// wake the frame loop, and files changed under the same name. Serialized: these tests follow
/// wall time on a shared machine.
@Suite(.serialized) struct FaultShowTests {
    /// Writes `bytes` into the existing file at `path` in place (same inode: no rename), the way
    /// a copy still under way finishes.
    func rewriteInPlace(_ path: String, _ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        precondition(fd >= 0, "open \(path)")
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        precondition(n == bytes.count)
        close(fd)
    }

    // MARK: A retry wakes the loop

    /// `good.png` and `late.png`, the latter 0 bytes at start (a copy still under way) and a valid
    /// PNG 5 s later, written in place. The failed image is tried again 60 s after it failed,
    /// with one image in the show and nothing else to wake the loop.
    @Test func aFailedImageIsTriedAgainSixtySecondsAfterItFailedWithOneImageInTheShow() throws {
        let dir = makeTempDirectory("retry")
        try writeFile(dir + "/good.png", solidPNG(Swatch.red))
        try writeFile(dir + "/late.png", [])
        let show = try KioskShow(["--size", "160x100", "--clock", "real", "--interval", "5", "--fade", "500",
                                  "--run-for", "75", dir + "/good.png", dir + "/late.png"])
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.logLines(containing: "late.png").isEmpty }, "\(show.transcript)")
        let failedAt = show.stderrLines.first { $0.text.contains("image skipped") && $0.text.contains("late.png") }?.at
        usleep(5_000_000)
        rewriteInPlace(dir + "/late.png", solidPNG(Swatch.blue))
        #expect(show.waitUntil(70) { $0.shown.contains { $0.src.hasSuffix("/late.png") } }, "\(show.transcript)")
        let backAt = show.stderrLines.first { $0.text.contains("image back in the show") }?.at
        let lateShown = show.shown.first { $0.src.hasSuffix("/late.png") }
        show.stop()

        let failed = try #require(failedAt, "\(show.transcript)")
        let back = try #require(backAt, "\(show.transcript)")
        let shown = try #require(lateShown, "\(show.transcript)")
        print("retry: late.png failed at \(failed) s, back in the show at \(back) s (\(back - failed) s later), "
              + "shown at show time \(shown.t) ms")
        #expect(abs(back - failed - 60) <= 1, "retry \(back - failed) s after the failure: \(show.transcript)")
        // Shown once its cross-fade (0.5 s) from good.png ends.
        #expect(shown.t >= 59_000 && shown.t <= 61_500, "\(show.transcript)")
        #expect(shown.index == 1)
        // Until then good.png alone: one `shown` for it, none for late.png.
        #expect(show.shown.filter { $0.at < back - 0.1 }.map(\.src) == [dir + "/good.png"], "\(show.transcript)")
        // The frame at that time is late.png's blue.
        let frames = try analyzeFrames(show.frames)
        let frame = try #require(frames.last { $0.ms <= Int(shown.t) }, "no frame up to \(shown.t) ms")
        #expect(frame.centerIs(Swatch.blue), "\(frame)")
    }
}
