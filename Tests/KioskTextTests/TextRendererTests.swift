// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskText
import Testing

@Suite struct TextRendererTests {
    /// Draws `text` white on black at `size` with its first line's baseline at row `baseline`.
    func ours(_ r: TextRenderer, _ text: String, size: Int, width: Int, height: Int, x: Int, baseline: Int) -> [UInt8] {
        let frame = Bitmap(width: width, height: height, fill: 0xFF00_0000)
        let layout = r.layout(text, pixelSize: size, maxWidth: width, maxLines: 1)
        r.draw(layout, into: frame, x: x, y: baseline - layout.ascender, color: .white)
        return coverage(frame)
    }

    @Test(arguments: [("Harbour lights at dusk, 2026", 40), ("Opening hours: 9 to 17", 24), ("Quay 7", 72)])
    func latinMatchesPillow(text: String, size: Int) throws {
        let r = try Fonts.renderer()
        let font = Fonts.library.fonts[0].path
        let (w, h, x, base) = (size * text.count, size * 2, 10, size * 3 / 2)
        let mine = ours(r, text, size: size, width: w, height: h, x: x, baseline: base)
        let pillow = try PillowText.render(font: font, size: size, width: w, height: h, x: x, baseline: base,
                                           text: text)
        let a = try #require(boundingBox(mine, width: w)), b = try #require(boundingBox(pillow, width: w))
        #expect(abs(a.0 - b.0) <= 2 && abs(a.1 - b.1) <= 2 && abs(a.2 - b.2) <= 2 && abs(a.3 - b.3) <= 2,
                "ours \(a), Pillow \(b)")
        // The text band: the rows and columns either rendering touches.
        let (x0, y0, x1, y1) = (min(a.0, b.0), min(a.1, b.1), max(a.2, b.2), max(a.3, b.3))
        var bandA: [UInt8] = [], bandB: [UInt8] = []
        for y in y0...y1 { for x in x0...x1 { bandA.append(mine[y * w + x]); bandB.append(pillow[y * w + x]) } }
        let db = psnr(bandA, bandB)
        #expect(db >= 30, "PSNR \(db) dB on the text band")
    }

    @Test func chineseFallsBackToAnInstalledCJKFont() throws {
        let r = try Fonts.renderer()
        let text = "港口灯光 2026"
        let cjk = try #require(Fonts.library.font(covering: "港"))
        #expect(cjk != 0, "DejaVu Sans has no Han: the fallback must be another font")
        #expect(Fonts.library.fonts[cjk].path.contains("wqy"), "fonts-wqy-microhei (deploy/apt-deps.sh --tests)")
        let (w, h, size) = (600, 80, 40)
        let mine = ours(r, text, size: size, width: w, height: h, x: 10, baseline: 55)
        // Pillow with the CJK font alone draws the same Han glyphs at the same place.
        let pillow = try PillowText.render(font: Fonts.library.fonts[cjk].path, size: size, width: w, height: h,
                                           x: 10, baseline: 55, text: "港口灯光")
        let a = try #require(boundingBox(Array(mine), width: w)), b = try #require(boundingBox(pillow, width: w))
        #expect(abs(a.0 - b.0) <= 2 && abs(a.1 - b.1) <= 2, "ours \(a), Pillow \(b)")
        let cut = b.2 + 1
        var bandA: [UInt8] = [], bandB: [UInt8] = []
        for y in b.1...b.3 { for x in b.0..<cut { bandA.append(mine[y * w + x]); bandB.append(pillow[y * w + x]) } }
        #expect(psnr(bandA, bandB) >= 30)
    }

    @Test func arabicIsShapedRightToLeftLikePillowWithHarfBuzz() throws {
        // Pillow shapes through libraqm with HarfBuzz's unhinted advances: the same here.
        let r = try Fonts.renderer(hintedAdvances: false)
        let text = "مرحبا بالعالم"
        let font = try #require(Fonts.library.font(covering: "م"))
        let (w, h, size) = (500, 80, 36)
        let mine = ours(r, text, size: size, width: w, height: h, x: 10, baseline: 55)
        let pillow = try PillowText.render(font: Fonts.library.fonts[font].path, size: size, width: w, height: h, x: 10,
                                           baseline: 55, layout: "raqm", text: text)
        let a = try #require(boundingBox(mine, width: w)), b = try #require(boundingBox(pillow, width: w))
        #expect(abs(a.0 - b.0) <= 2 && abs(a.1 - b.1) <= 2 && abs(a.2 - b.2) <= 2 && abs(a.3 - b.3) <= 2,
                "ours \(a), Pillow \(b)")
        var bandA: [UInt8] = [], bandB: [UInt8] = []
        for y in min(a.1, b.1)...max(a.3, b.3) {
            for x in min(a.0, b.0)...max(a.2, b.2) { bandA.append(mine[y * w + x]); bandB.append(pillow[y * w + x]) }
        }
        #expect(psnr(bandA, bandB) >= 30)
        // Unshaped (isolated forms) or left-to-right letters would not match Pillow's; the
        // isolated forms of a word's letters are also wider than the joined word.
        let l = r.layout(text, pixelSize: size, maxWidth: w, maxLines: 1)
        #expect(l.lines.count == 1 && l.lines[0].glyphs.count >= 10)
        let unshaped = r.layout("م ر ح ب ا", pixelSize: size, maxWidth: w, maxLines: 1)
        #expect(unshaped.lines[0].width > r.layout("مرحبا", pixelSize: size, maxWidth: w, maxLines: 1).lines[0].width)
    }

    @Test func longTextWrapsToTwoLinesAndEndsInAnEllipsis() throws {
        let r = try Fonts.renderer()
        let text = "The harbour at dusk, seen from the old lighthouse on the northern breakwater,"
            + " with the ferry coming in"
        let l = r.layout(text, pixelSize: 30, maxWidth: 500, maxLines: 2)
        #expect(l.lines.count == 2)
        #expect(l.truncated)
        #expect(l.lines.allSatisfy { $0.width <= 500 })
        #expect(l.lines[1].text.hasSuffix("\u{2026}"))
        #expect(l.lines[0].text.hasPrefix("The harbour"))
        #expect(!l.lines[0].text.hasSuffix(" "))
        let short = r.layout("Quay 7", pixelSize: 30, maxWidth: 500, maxLines: 2)
        #expect(short.lines.map(\.text) == ["Quay 7"] && !short.truncated)
        let forced = r.layout("one\ntwo\nthree", pixelSize: 30, maxWidth: 500, maxLines: 2)
        #expect(forced.lines.count == 2 && forced.truncated && forced.lines[1].text.hasSuffix("\u{2026}"))
    }

    @Test func glyphCacheStaysWithinItsBudget() throws {
        let r = try Fonts.renderer(cacheBytes: 16 << 10)
        let frame = Bitmap(width: 800, height: 200, fill: 0xFF00_0000)
        for size in [40, 60] {
            let l = r.layout("ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz 0123456789", pixelSize: size,
                             maxWidth: 100_000, maxLines: 1)
            r.draw(l, into: frame, x: 0, y: 0, color: .white)
            #expect(r.glyphCacheBytes <= 16 << 10)
        }
        #expect(r.glyphCacheBytes > 0)
    }

    @Test func aCharacterNoFontCoversIsReportedOnce() throws {
        let r = try Fonts.renderer()
        // U+10900 PHOENICIAN LETTER ALF: in neither DejaVu Sans nor WenQuanYi Micro Hei.
        #expect(Fonts.library.font(covering: "\u{10900}") == nil)
        let l = r.layout("Alf \u{10900}\u{10900}", pixelSize: 30, maxWidth: 1000, maxLines: 1)
        #expect(l.lines.count == 1 && l.lines[0].glyphs.count == 6)  // drawn (as the box), not dropped
        #expect(r.reportedMissing == [0x10900])
    }
}
