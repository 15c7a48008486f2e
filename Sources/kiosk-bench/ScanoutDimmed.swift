// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskDisplay

/// `kiosk-bench --case scanout-dimmed [N]` (docs/power.md): what dimming by the pixels adds to
/// the copy to scanout, one 1920x1080 frame on one core: XRGB8888 into a 7680-byte pitch and
/// RGB565 with dithering, at full brightness and at 40 % (PixelBrightness's table on each
/// channel, ScanoutWriter's stack buffer). The two copies alternate, N of each after 3 warm-ups,
/// each timed in this thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, so that other work on a
/// shared machine adds little); the medians are printed with their ratio.
enum ScanoutDimmedCase {
    static func run(iterations: Int) -> Int32 {
        let w = 1920, h = 1080, pitch = 7680
        let frame = ChildCase.testFrame(width: w, height: h, seed: 1)
        let scan = UnsafeMutableRawPointer.allocate(byteCount: pitch * h, alignment: 64)
        defer { scan.deallocate() }
        scan.initializeMemory(as: UInt8.self, repeating: 0, count: pitch * h)
        let forty = PixelBrightness(permille: 400)
        func cpuMs() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
            return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
        }
        for (name, format) in [("XRGB8888", ScanoutFormat.xrgb8888), ("RGB565 dithered", .rgb565)] {
            var full: [Double] = [], dim: [Double] = []
            for i in -3..<max(5, iterations) {
                for level in [PixelBrightness.full, forty] {
                    let t0 = cpuMs()
                    ScanoutWriter.copy(frame, to: scan, stride: format == .rgb565 ? w * 2 : pitch, format: format,
                                       rotation: .none, dither: format == .rgb565, swapRedBlue: false,
                                       brightness: level)
                    let t = cpuMs() - t0
                    if i >= 0 { if level.isFull { full.append(t) } else { dim.append(t) } }
                }
            }
            let f = median(full), d = median(dim)
            print("scanout-dimmed \(name) 1920x1080, 1 core (CPU time): full \(FadeFourKCase.fmt(f)) ms,"
                  + " at 40 % \(FadeFourKCase.fmt(d)) ms (\(FadeFourKCase.fmt(d / f, 2)) of full)")
        }
        return 0
    }
}
