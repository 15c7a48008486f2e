// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskImaging

/// `kiosk-bench --case blur-prepare PHOTO N`: what `--fit blur` adds to preparing a slot at
/// 1920x1080 (docs/benchmarks.md; goal: at most 15 ms over `fit`). A portrait picture is cut
/// from the middle of PHOTO (3:4, the full height) and written as a PNG to /tmp; then it is
/// prepared N times as the app prepares a slot (a new frame, ImageDecoder.decodeFitted) with
/// `fit` and with `blur`, alternately, and the letterbox step
/// (Compositor.fillLetterboxBlurred) is timed alone on the fitted frame. Prints the medians in
/// ms: `fit F blur B extra B-F letterbox L letterbox-cpu C` (C: the thread's CPU time, which
/// other work on a busy machine disturbs least).
enum BlurPrepareCase {
    /// CPU time of the calling thread, ms (CLOCK_THREAD_CPUTIME_ID).
    static func threadCPUMs() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
    }

    static func run(photo: String, iterations: Int) -> Int32 {
        let width = ChildCase.frameWidth, height = ChildCase.frameHeight
        let portraitPath = "/tmp/kiosk-bench-portrait-\(getpid()).png"
        defer { unlink(portraitPath) }
        do {
            let decoded = try ImageDecoder.decode(path: photo, options: DecodeOptions(maxPixels: 100_000_000))
            let h = decoded.bitmap.height, w = min(decoded.bitmap.width, h * 3 / 4), x0 = (decoded.bitmap.width - w) / 2
            let portrait = Bitmap(uninitializedWidth: w, height: h)
            for y in 0..<h { portrait.row(y).update(from: decoded.bitmap.row(y) + x0, count: w) }
            try PNGWriter.write(portrait, to: portraitPath)
            var fit: [Double] = [], blur: [Double] = [], letterbox: [Double] = [], letterboxCPU: [Double] = []
            for i in 0...iterations {  // round 0 warms up
                for mode in [FitMode.fit, .blur] {
                    let t0 = nowMs()
                    let frame = Bitmap(uninitializedWidth: width, height: height)
                    let options = DecodeOptions(maxPixels: 100_000_000, targetWidth: width, targetHeight: height,
                                                fit: mode)
                    let fitted = try ImageDecoder.decodeFitted(path: portraitPath, into: frame, fit: mode,
                                                               background: .black,
                                                               options: options)
                    let t = nowMs() - t0
                    if i > 0 { if mode == .fit { fit.append(t) } else { blur.append(t) } }
                    if mode == .fit {
                        let rect = FitMode.fit.placement(imageWidth: fitted.decodedWidth,
                                                         imageHeight: fitted.decodedHeight,
                                                         frameWidth: width, frameHeight: height)
                        let t1 = nowMs(), c1 = threadCPUMs()
                        Compositor.fillLetterboxBlurred(frame, imageRect: rect)
                        if i > 0 { letterbox.append(nowMs() - t1); letterboxCPU.append(threadCPUMs() - c1) }
                    }
                }
            }
            let f = median(fit), b = median(blur)
            print("fit \(f) blur \(b) extra \(b - f) letterbox \(median(letterbox)) "
                  + "letterbox-cpu \(median(letterboxCPU))"
                  + " (portrait \(w)x\(h) PNG, \(width)x\(height))")
            return 0
        } catch {
            fputs("kiosk-bench: \(error)\n", stderr)
            return 1
        }
    }
}
