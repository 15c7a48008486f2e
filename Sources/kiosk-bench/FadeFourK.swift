// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskApp
import KioskCore
import KioskDisplay
import KioskSystem

/// `kiosk-bench --case fade-4k [FRAMES] [DEVICE]` (docs/planes.md): one 3840x2160 cross-fade
/// frame of the CPU path, the blend (Compositor.blend) and the scanout conversion into a
/// dumb-buffer-like pitch (ScanoutWriter.copy), on one core and on every core (ParallelRows),
/// the median and the fastest frame (the fastest is the figure for a machine shared with others);
/// then the CPU time per fade frame on the plane path, where a DRM device with atomic KMS and an
/// overlay plane with "alpha" is there (DEVICE, default the first /dev/dri/card*): the layers of
/// a fade presented FRAMES times with the alpha ramped, CPU time from getrusage (user + system;
/// the waits for vertical blank cost none). Prints one line per figure.
enum FadeFourKCase {
    static let width = 3840, height = 2160

    static func run(frames: Int, device: String?) -> Int32 {
        let a = ChildCase.testFrame(width: width, height: height, seed: 1)
        let b = ChildCase.testFrame(width: width, height: height, seed: 2)
        let out = Bitmap(uninitializedWidth: width, height: height)
        let pitch = width * 4 + 256   // a pitch wider than the row, as some drivers give
        let scan = UnsafeMutableRawPointer.allocate(byteCount: pitch * height, alignment: 64)
        defer { scan.deallocate() }
        scan.initializeMemory(as: UInt8.self, repeating: 0, count: pitch * height)
        let team = ParallelRows()
        func time(_ splitter: RowSplitter?) -> (blend: Double, frame: Double, fastest: Double) {
            var blends: [Double] = [], whole: [Double] = []
            for i in -3..<max(5, frames / 4) {
                let w = 32 + (i & 127)
                let t0 = nowMs()
                Compositor.blend(a, b, weight: w, into: out, rows: splitter)
                let t1 = nowMs()
                ScanoutWriter.copy(out, to: scan, stride: pitch, format: .xrgb8888, rotation: .none, dither: false,
                                   swapRedBlue: false, rows: splitter)
                let t2 = nowMs()
                if i >= 0 { blends.append(t1 - t0); whole.append(t2 - t0) }
            }
            return (median(blends), median(whole), whole.min() ?? 0)
        }
        let one = time(nil), all = time(team)
        print("fade-4k cpu path, 1 core: blend \(fmt(one.blend)) ms, blend + scanout copy \(fmt(one.frame)) ms a frame"
              + " (median; fastest \(fmt(one.fastest)) ms)")
        print("fade-4k cpu path, \(team.parallelism) cores: blend \(fmt(all.blend)) ms, "
              + "blend + scanout copy \(fmt(all.frame)) ms"
              + " a frame (\(fmt(all.frame / one.frame, 2)) of one core's time; fastest \(fmt(all.fastest)) ms,"
              + " \(fmt(all.fastest / max(0.001, one.fastest), 2)) of one core's)")
        planePath(frames: frames, device: device, a: a, b: b)
        return 0
    }

    /// The plane path's CPU time per fade frame on a real DRM device, or why it is not measured.
    static func planePath(frames: Int, device: String?, a: Bitmap, b: Bitmap) {
        let display: DRMDisplay
        do {
            display = try DRMDisplay.open(device: device, connector: nil, mode: nil, rotation: .none)
        } catch {
            print("fade-4k plane path: not measured: no DRM device here (\(error)); "
                  + "the kernel suite's drm-vkms-planes measures it")
            return
        }
        defer { display.restore() }
        let w = display.width, h = display.height
        let fa = ChildCase.testFrame(width: w, height: h, seed: 1),
            fb = ChildCase.testFrame(width: w, height: h, seed: 2)
        var layers = [FrameLayer(bitmap: fa), FrameLayer(bitmap: fb, alpha: 0)]
        do {
            guard try display.present(layers: layers, background: .black, showTime: 0) else {
                print("fade-4k plane path: not measured: \(display.summary) cannot show a fade on planes")
                return
            }
            var before = rusage(), after = rusage()
            getrusage(RUSAGE_SELF.rawValue, &before)
            let t0 = nowMs()
            for i in 0..<max(1, frames) {
                let weight = Easing.easeInOutWeight(elapsed: Int64(i), total: Int64(max(1, frames)))
                layers[1].alpha = FrameLayer.alpha(forWeight: weight)
                _ = try display.present(layers: layers, background: .black, showTime: Int64(i))
            }
            let wall = nowMs() - t0
            getrusage(RUSAGE_SELF.rawValue, &after)
            let cpu = seconds(after.ru_utime) + seconds(after.ru_stime) - seconds(before.ru_utime)
                - seconds(before.ru_stime)
            print("fade-4k plane path (\(w)x\(h), \(display.summary)): "
                  + "\(fmt(cpu * 1000 / Double(max(1, frames)), 3)) ms CPU a frame"
                  + " over \(frames) frames, \(fmt(wall / Double(max(1, frames)))) ms apart")
        } catch {
            print("fade-4k plane path: failed: \(error)")
        }
    }

    static func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    /// `v` with `digits` decimals (no Foundation formatting).
    static func fmt(_ v: Double, _ digits: Int = 2) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let n = Int((abs(v) * scale).rounded())
        let whole = n / Int(scale), frac = String(n % Int(scale))
        return (v < 0 && n > 0 ? "-" : "") + "\(whole)"
            + (digits > 0 ? "." + String(repeating: "0", count: digits - frac.count) + frac : "")
    }
}
