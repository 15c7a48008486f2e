// SPDX-License-Identifier: Apache-2.0
import KioskApp
import KioskCore

/// `kiosk-bench --case pairs [RUNS] PHOTO PHOTO` (docs/benchmarks.md "Pairs"): what the decode
/// worker's prepare of a `--pair-portraits` frame costs against a single fit, at 1920x1080 and
/// 3840x2160: the first PHOTO fitted alone into the screen-sized frame, against the first and
/// second PHOTO each fitted into its half (``PairLayout/halves(width:height:)``) and copied into
/// one frame (``SlotPreparer/composePair(_:_:width:height:captioned:)``), side by side, and the
/// second PHOTO alone (the pair against the sum of both alone); and the copy of the two halves
/// alone (``Compositor/copy(_:into:x:y:)``), the part the pair adds
/// beside its decodes. Medians and fastest of RUNS (default 9) wall times and CPU time per
/// prepare (getrusage, every thread); no memory cache, so every run decodes. The frame loop's
/// cost is that of any slot frame: a pair is one frame.
enum PairCostCase {
    static func run(runs: Int, photos: [String]) -> Int32 {
        let f = FadeFourKCase.fmt
        for (w, h) in [(1920, 1080), (3840, 2160)] {
            guard let preparer = try? SlotPreparer(width: w, height: h, fit: .fit, background: .black,
                                                   maxPixels: 100_000_000, memoryCacheBytes: 0) else { return 1 }
            let single = SlotPreparer.Job(slot: 0, ticket: 1, item: 0, path: photos[0])
            var pair = single
            pair.partner = .init(item: 1, path: photos[1], layout: PairLayout(screenWidth: w, screenHeight: h))
            func time(_ job: SlotPreparer.Job) -> (median: Double, fastest: Double, cpu: Double)? {
                guard case .frame = preparer.prepare(job).outcome else { return nil }  // warm up, and it decodes
                var walls: [Double] = []
                let cpu0 = KenBurnsCostCase.cpuMs()
                for _ in 0..<runs {
                    let t0 = nowMs()
                    _ = preparer.prepare(job)
                    walls.append(nowMs() - t0)
                }
                return (median(walls), walls.min() ?? 0, (KenBurnsCostCase.cpuMs() - cpu0) / Double(runs))
            }
            var otherAlone = single
            otherAlone.path = photos[1]
            guard let one = time(single), let other = time(otherAlone), let two = time(pair) else {
                print("pairs: \(photos[0]) or \(photos[1]) does not decode")
                return 1
            }
            // The copy of the halves alone.
            let frame = Bitmap(width: w, height: h)
            let (a, b) = PairLayout(screenWidth: w, screenHeight: h).halves(width: w, height: h)
            let halves = [Bitmap(width: a.width, height: a.height), Bitmap(width: b.width, height: b.height)]
            var copies: [Double] = []
            for _ in 0..<max(runs, 20) {
                let t0 = nowMs()
                Compositor.copy(halves[0], into: frame, x: a.x, y: a.y)
                Compositor.copy(halves[1], into: frame, x: b.x, y: b.y)
                copies.append(nowMs() - t0)
            }
            print("pairs \(w)x\(h): single fit \(f(one.median, 1)) ms (fastest \(f(one.fastest, 1)), CPU"
                  + " \(f(one.cpu, 1))); pair \(f(two.median, 1)) ms (fastest \(f(two.fastest, 1)), CPU"
                  + " \(f(two.cpu, 1))), \(f(two.median / one.median, 2))x; the second photo alone"
                  + " \(f(other.median, 1)) ms (the pair against both alone:"
                  + " \(f(two.median / (one.median + other.median), 2))x);"
                  + " copying the halves \(f(median(copies), 2)) ms (medians of \(runs))")
        }
        return 0
    }
}
