// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskApp
import KioskCore
import KioskSystem

/// `kiosk-bench --case ken-burns [FRAMES] [PHOTO]` (docs/benchmarks.md "Ken Burns"): what a
/// `--ken-burns` frame costs on the CPU against a plain cross-fade frame, at 1920x1080 and
/// 3840x2160, each rendered by ``SceneRenderer`` on every core (``ParallelRows``) as the frame
/// loop renders it: a plain fade frame (two slot frames blended), a Ken Burns frame of a picture
/// standing (its window resampled, ``Compositor/resampleBilinear(_:window:into:rows:)``) and a
/// Ken Burns fade frame (two windows resampled, then blended). The sources are deterministic
/// pictures of the size a 3:2 photo's source has
/// (``KenBurns/sourceSize(imageWidth:imageHeight:screenWidth:screenHeight:)``), the progress
/// moving on each frame so no frame is a copy of the last. Wall time per frame
/// (median and fastest of FRAMES, default 60) and CPU time of the process per frame (getrusage,
/// every thread). With PHOTO: the decode worker's prepare of it at 1920x1080, with and without
/// `--ken-burns` (median of 5, wall time): the cost that stays off the frame loop.
enum KenBurnsCostCase {
    static func run(frames: Int, photo: String?) -> Int32 {
        let team = ParallelRows()
        for (w, h) in [(1920, 1080), (3840, 2160)] {
            measure(width: w, height: h, frames: max(5, frames), team: team)
        }
        if let photo { prepare(photo) }
        return 0
    }

    static func measure(width: Int, height: Int, frames: Int, team: ParallelRows) {
        let plain = [ChildCase.testFrame(width: width, height: height, seed: 1),
                     ChildCase.testFrame(width: width, height: height, seed: 2)]
        let size = KenBurns.sourceSize(imageWidth: 6000, imageHeight: 4000, screenWidth: width, screenHeight: height)
        let sources = [ChildCase.testFrame(width: size.width, height: size.height, seed: 3),
                       ChildCase.testFrame(width: size.width, height: size.height, seed: 4)]
        let renderer = SceneRenderer(width: width, height: height, background: .black)
        renderer.rows = team
        let seeds = [KenBurns.seed(source: "/photos/a.jpg"), KenBurns.seed(source: "/photos/b.jpg")]
        func time(_ slots: [Bitmap?], _ scene: (Int) -> Scene) -> (median: Double, fastest: Double, cpu: Double) {
            var walls: [Double] = []
            for i in -3..<0 { _ = renderer.render(scene(i + frames), slots: slots) }  // warm up
            let cpu0 = cpuMs()
            for i in 0..<frames {
                let t0 = nowMs()
                _ = renderer.render(scene(i), slots: slots)
                walls.append(nowMs() - t0)
            }
            return (median(walls), walls.min() ?? 0, (cpuMs() - cpu0) / Double(frames))
        }
        let fade = time(plain) { i in Scene(base: .slot(0), overlay: .slot(1), weight: 32 + (i % 192)) }
        let standing = time(sources) { i in
            Scene(base: .kenBurns(slot: 0, seed: seeds[0], progress: Double(i) / Double(frames)))
        }
        let kbFade = time(sources) { i in
            Scene(base: .kenBurns(slot: 0, seed: seeds[0], progress: 0.9 + 0.1 * Double(i) / Double(frames)),
                  overlay: .kenBurns(slot: 1, seed: seeds[1], progress: 0.1 * Double(i) / Double(frames)),
                  weight: 32 + (i % 192))
        }
        let f = FadeFourKCase.fmt
        func line(_ name: String, _ t: (median: Double, fastest: Double, cpu: Double)) -> String {
            "\(name) \(f(t.median, 2)) ms a frame (fastest \(f(t.fastest, 2)) ms, CPU \(f(t.cpu, 2)) ms),"
                + " \(f(t.median / fade.median, 2))x the plain fade (fastest \(f(t.fastest / fade.fastest, 2))x,"
                + " CPU \(f(t.cpu / fade.cpu, 2))x)"
        }
        print("ken-burns \(width)x\(height), \(team.parallelism) cores, source \(size.width)x\(size.height): plain fade"
              + " \(f(fade.median, 2)) ms a frame (fastest \(f(fade.fastest, 2)) ms, CPU \(f(fade.cpu, 2)) ms)")
        print("ken-burns \(width)x\(height): " + line("standing", standing))
        print("ken-burns \(width)x\(height): " + line("fade", kbFade))
    }

    /// The decode worker's prepare of `photo` at 1920x1080 with and without the Ken Burns source.
    static func prepare(_ photo: String) {
        var plain: [Double] = [], moving: [Double] = []
        for i in 0..<10 {
            guard let preparer = try? SlotPreparer(width: 1920, height: 1080, fit: .fit, background: .black,
                                                   maxPixels: 100_000_000, memoryCacheBytes: 0) else { return }
            preparer.kenBurns = i % 2 == 1
            let t0 = nowMs()
            _ = preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: photo))
            if preparer.kenBurns { moving.append(nowMs() - t0) } else { plain.append(nowMs() - t0) }
        }
        let f = FadeFourKCase.fmt
        print("ken-burns prepare of \(photo) at 1920x1080 (off the frame loop): \(f(median(moving), 1)) ms"
              + " against \(f(median(plain), 1)) ms without (\(f(median(moving) / median(plain), 2))x; medians of 5)")
    }

    /// The process's CPU time so far (user + system, every thread), milliseconds.
    static func cpuMs() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return (FadeFourKCase.seconds(u.ru_utime) + FadeFourKCase.seconds(u.ru_stime)) * 1000
    }
}
