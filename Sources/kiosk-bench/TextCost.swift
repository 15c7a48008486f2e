// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskApp
import KioskCore
import KioskText

/// Section 8: what text costs. A caption is drawn once per prepared slot (on the decode
/// worker); the clock overlay is blended into every frame presented during a fade.
enum TextCostCase {
    /// Prints "captionDeltaMs captionDrawMs overlayDeltaMs overlayBlendMs": the median prepare
    /// of a 1080p slot from `photo` with a two-line caption minus the median without (the memory
    /// cache off, so every prepare decodes), the median of the caption's draw alone, the median
    /// cross-fade frame (``SceneRenderer/render(_:slots:)`` at weight 128) with the clock minus
    /// without, and the median of the overlay's blend alone. `runs` of each, after a warm-up.
    static func run(photo: String, runs: Int) -> Int32 {
        let w = ChildCase.frameWidth, h = ChildCase.frameHeight
        guard let library = try? FontLibrary(), let captionRenderer = try? TextRenderer(library: library),
              let clockRenderer = try? TextRenderer(library: library),
              let preparer = try? SlotPreparer(width: w, height: h, fit: .fill, background: .black,
                                               maxPixels: 100_000_000,
                                               memoryCacheBytes: 0) else {
            fputs("text: no fonts or no decoder\n", stderr); return 1
        }
        preparer.captions = CaptionPainter(renderer: captionRenderer)
        let caption = "The harbour at dusk, seen from the old lighthouse on the northern breakwater, "
            + "with the last ferry of the day coming in past the pier and the moored fishing boats"
        func timePrepare(_ caption: String?) -> Double {
            let t0 = nowMs()
            guard case .frame = preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: photo, caption: caption))
                .outcome else { return .nan }
            return nowMs() - t0
        }
        _ = timePrepare(caption); _ = timePrepare(nil)
        var plain: [Double] = [], captioned: [Double] = []
        // interleaved: same load
        for _ in 0..<runs { plain.append(timePrepare(nil)); captioned.append(timePrepare(caption)) }
        let painter = CaptionPainter(renderer: captionRenderer)
        let frame = Bitmap(width: w, height: h, fill: 0xFF80_8080)
        var draws: [Double] = []
        for _ in 0..<runs { let t0 = nowMs(); painter.draw(caption, into: frame); draws.append(nowMs() - t0) }

        let a = Bitmap(width: w, height: h, fill: 0xFF20_4060), b = Bitmap(width: w, height: h, fill: 0xFF60_4020)
        let renderer = SceneRenderer(width: w, height: h, background: .black)
        let fade = Scene(base: .slot(0), overlay: .slot(1), weight: 128)
        let overlay = ClockOverlay(format: "%H:%M", renderer: clockRenderer, frameWidth: w, frameHeight: h)
        overlay.update(epochSeconds: Int(time(nil)))
        func timeFrame() -> Double { let t0 = nowMs(); _ = renderer.render(fade, slots: [a, b]); return nowMs() - t0 }
        var without: [Double] = [], with: [Double] = [], blends: [Double] = []
        for _ in 0..<3 { _ = timeFrame() }
        for _ in 0..<(runs * 4) {
            renderer.frameOverlay = nil; without.append(timeFrame())
            renderer.frameOverlay = overlay; with.append(timeFrame())
            let t0 = nowMs(); overlay.blend(into: frame); blends.append(nowMs() - t0)
        }
        print(median(captioned) - median(plain), median(draws), median(with) - median(without), median(blends))
        return 0
    }
}

extension Bench {
    func textCost() {
        let photo = root + "/deploy/samples/eveningglow-1920x1200.jpg"
        let r = ourCase(["text", photo, settings.quick ? "5" : "21"])
        guard r.ok else { failRow("caption prepare", firstLine(r.stderr)); return }
        let f = r.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
        guard f.count == 4 else { failRow("caption prepare", "unexpected output: \(firstLine(r.stdout))"); return }
        compare("two-line caption: prepare with - without", ours: f[0], ms(f[0]), reference: "the goal", 3, ms(3),
                max: 1.0, targetText: "<= 3 ms")
        compare("two-line caption: the draw alone", ours: f[1], ms(f[1]), reference: "the goal", 3, ms(3), max: nil)
        compare("clock overlay: fade frame with - without", ours: f[2], ms(f[2]), reference: "the goal", 0.2, ms(0.2),
                max: 1.0, targetText: "<= 0.2 ms")
        compare("clock overlay: the blend alone", ours: f[3], ms(f[3]), reference: "the goal", 0.2, ms(0.2), max: nil)
    }
}
