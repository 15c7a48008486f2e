// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskImaging

/// `kiosk-bench --case animation-frame PATH N`: what playing an animated GIF or WebP costs at
/// 1920x1080 (docs/benchmarks.md "Animations"). The first frame is prepared as the app prepares a
/// slot (a new frame, ImageDecoder.decodeFitted), N times; then N frames of the animation are
/// made as the decode worker makes them (``AnimationDecoder/placeNext(into:fit:background:)``
/// into a new 1920x1080 frame: the next frame composed on the canvas, copied, flattened and
/// resampled), looping as needed. Prints the medians in ms and the thread's CPU time per second
/// of animation: `first F frame A ratio A/F cpu-per-second C (canvas WxH, K frames, D ms)` with D
/// the animation's mean frame duration, so C/1000 is the share of one core it keeps busy.
enum AnimationFrameCase {
    static func run(path: String, iterations: Int) -> Int32 {
        let width = ChildCase.frameWidth, height = ChildCase.frameHeight
        let options = DecodeOptions(maxPixels: 100_000_000, targetWidth: width, targetHeight: height, fit: .fit)
        do {
            var first: [Double] = []
            for i in 0...iterations {  // round 0 warms up
                let t0 = nowMs()
                let frame = Bitmap(uninitializedWidth: width, height: height)
                _ = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: .black,
                                                  options: options)
                if i > 0 { first.append(nowMs() - t0) }
            }
            guard let decoder = try AnimationDecoder.open(path: path, options: options) else {
                fputs("kiosk-bench: \(path) is not an animation\n", stderr)
                return 1
            }
            var frames: [Double] = [], durations: [Int] = []
            let c0 = BlurPrepareCase.threadCPUMs()
            for _ in 0..<max(1, iterations) {
                let t0 = nowMs()
                let frame = Bitmap(uninitializedWidth: width, height: height)
                guard let next = try decoder.placeNext(into: frame, fit: .fit, background: .black) else { break }
                frames.append(nowMs() - t0)
                durations.append(next.milliseconds)
            }
            let cpu = (BlurPrepareCase.threadCPUMs() - c0) / Double(max(1, frames.count))
            let mean = Double(durations.reduce(0, +)) / Double(max(1, durations.count))
            let f = median(first), a = median(frames)
            print("first \(f) frame \(a) ratio \(a / f) cpu-per-second \(cpu * 1000 / mean)"
                  + " (canvas \(decoder.canvasWidth)x\(decoder.canvasHeight), \(frames.count) frames,"
                  + " \(mean) ms, \(width)x\(height))")
            return 0
        } catch {
            fputs("kiosk-bench: \(error)\n", stderr)
            return 1
        }
    }
}
