// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskText
import Testing

/// Mixed-direction text, characters of the Common script after a run of another font, and
/// control characters, drawn by the real text stack and compared with Pillow's rendering
/// (FreeType underneath; with libraqm, HarfBuzz and FriBidi for right-to-left text).
@Suite struct BidiAndFallbackTests {
    /// Draws `text` white on black at `size`, its baseline at row `baseline`, from column `x`.
    func ours(_ r: TextRenderer, _ text: String, size: Int, width: Int, height: Int, x: Int, baseline: Int) -> [UInt8] {
        let frame = Bitmap(width: width, height: height, fill: 0xFF00_0000)
        let layout = r.layout(text, pixelSize: size, maxWidth: width, maxLines: 1)
        r.draw(layout, into: frame, x: x, y: baseline - layout.ascender, color: .white)
        return coverage(frame)
    }

    /// The pixels of `image` (`width` wide) inside `box`, rows packed.
    func crop(_ image: [UInt8], width: Int, _ box: (Int, Int, Int, Int)) -> [UInt8] {
        var out: [UInt8] = []
        for y in box.1...box.3 { for x in box.0...box.2 { out.append(image[y * width + x]) } }
        return out
    }

    /// Numbers inside Arabic and Hebrew read left to right ("204", never "402"), and an Arabic
    /// phrase with a number inside a Latin caption is placed as the Unicode Bidirectional
    /// Algorithm places it: the same pixels as Pillow's libraqm layout (FriBidi, then HarfBuzz).
    @Test(arguments: ["غرفة 204", "חדר 204", "החדר 204, קומה 3", "Room غرفة 204 opens at 9", "חדר (204)",
                      "Room \u{2067}חדר 204\u{2069} today"])
    func numbersInRightToLeftTextKeepTheirOrder(text: String) throws {
        let r = try Fonts.renderer(hintedAdvances: false)  // Pillow's raqm layout: unhinted advances
        let strong = try #require(text.unicodeScalars.first { (0x590...0x6FF).contains($0.value) })  // Hebrew or Arabic
        let font = try #require(Fonts.library.font(covering: strong))
        #expect(Fonts.library.covers(font: font, "2") && Fonts.library.covers(font: font, "R"), "one font for the line")
        let (w, h, size) = (700, 80, 36)
        let mine = ours(r, text, size: size, width: w, height: h, x: 10, baseline: 55)
        let pillow = try PillowText.render(font: Fonts.library.fonts[font].path, size: size, width: w, height: h, x: 10,
                                           baseline: 55, layout: "raqm", text: text)
        let a = try #require(boundingBox(mine, width: w)), b = try #require(boundingBox(pillow, width: w))
        #expect(abs(a.0 - b.0) <= 2 && abs(a.1 - b.1) <= 2 && abs(a.2 - b.2) <= 2 && abs(a.3 - b.3) <= 2,
                "ours \(a), Pillow \(b)")
        let band = (min(a.0, b.0), min(a.1, b.1), max(a.2, b.2), max(a.3, b.3))
        let db = psnr(crop(mine, width: w, band), crop(pillow, width: w, band))
        #expect(db >= 30, "PSNR \(db) dB on the text band")
    }

    /// An emoji or symbol that the Latin font lacks, after Latin text, is drawn from the font
    /// that covers it (Symbola, fonts-symbola), not as the Latin font's box: the same glyph as
    /// Pillow draws with Symbola alone, where Pillow's Latin words end.
    @Test(arguments: [("Party 🎉", "🎉"), ("Checked ✅", "✅"), ("港口 🎉", "🎉")])
    func aSymbolAfterOtherTextIsDrawnFromAFontThatCoversIt(text: String, symbol: String) throws {
        let r = try Fonts.renderer()
        let scalar = try #require(symbol.unicodeScalars.first)
        let symbolFont = try #require(Fonts.library.font(covering: scalar),
                                      "fonts-symbola (deploy/apt-deps.sh --tests)")
        #expect(Fonts.library.fonts[symbolFont].family == "Symbola")
        let before = String(text.dropLast(symbol.count))
        let beforeFont = try #require(Fonts.library.font(covering: before.unicodeScalars.first!))
        #expect(!Fonts.library.covers(font: beforeFont, scalar),
                "the words' font lacks \(symbol): the fallback is needed")
        #expect(r.reportedMissing.isEmpty)
        let (w, h, size) = (600, 90, 40)
        let mine = ours(r, text, size: size, width: w, height: h, x: 10, baseline: 60)
        #expect(r.reportedMissing.isEmpty, "no box: \(r.reportedMissing)")
        // Where the words end in Pillow's rendering of them with their own font.
        let words = try PillowText.render(font: Fonts.library.fonts[beforeFont].path, size: size, width: w, height: h,
                                          x: 10, baseline: 60, text: before)
        let wordsBox = try #require(boundingBox(words, width: w))
        var right = mine
        for y in 0..<h { for x in 0...(wordsBox.2 + 1) { right[y * w + x] = 0 } }
        let a = try #require(boundingBox(right, width: w), "something is drawn after the words")
        let alone = try PillowText.render(font: Fonts.library.fonts[symbolFont].path, size: size, width: w, height: h,
                                          x: 10, baseline: 60, text: symbol)
        let b = try #require(boundingBox(alone, width: w))
        // The same glyph: its size, its height on the baseline, its pixels.
        #expect(abs((a.2 - a.0) - (b.2 - b.0)) <= 1 && abs((a.3 - a.1) - (b.3 - b.1)) <= 1, "ours \(a), Pillow \(b)")
        #expect(abs(a.1 - b.1) <= 1 && abs(a.3 - b.3) <= 1, "ours \(a), Pillow \(b)")
        let size2 = (min(a.2 - a.0, b.2 - b.0), min(a.3 - a.1, b.3 - b.1))
        let db = psnr(crop(mine, width: w, (a.0, a.1, a.0 + size2.0, a.1 + size2.1)),
                      crop(alone, width: w, (b.0, b.1, b.0 + size2.0, b.1 + size2.1)))
        #expect(db >= 25, "PSNR \(db) dB on the symbol")
    }

    /// BEL, ESC, DEL and C1 controls (U+009B, the one-byte CSI) draw nothing: the same pixels
    /// as the text without them, no box; each is reported once.
    @Test func controlCharactersDrawNothingAndAreReportedOnce() throws {
        let r = try Fonts.renderer()
        let (w, h) = (700, 80)
        for (text, plain) in [("Bell\u{07} ring", "Bell ring"), ("Esc\u{1B}[31m red", "Esc[31m red"),
                              ("Del\u{7F}ete \u{9B}2J", "Delete 2J"), ("\u{07}Bell again\u{07}", "Bell again")] {
            let mine = ours(r, text, size: 36, width: w, height: h, x: 10, baseline: 55)
            let without = ours(r, plain, size: 36, width: w, height: h, x: 10, baseline: 55)
            let differing = mine.indices.filter { mine[$0] != without[$0] }.count
            #expect(differing == 0, "\(text.debugDescription) is drawn as \(plain.debugDescription)")
            #expect(r.layout(text, pixelSize: 36, maxWidth: w, maxLines: 1).lines.map(\.text) == [plain])
        }
        #expect(r.reportedControls == [0x07, 0x1B, 0x7F, 0x9B])
        #expect(r.reportedMissing.isEmpty, "\(r.reportedMissing)")
        // Tab and line breaks are not among them.
        #expect(!TextRenderer.isHiddenControl("\t") && !TextRenderer.isHiddenControl("\n")
                && !TextRenderer.isHiddenControl("\r") && !TextRenderer.isHiddenControl("\u{85}"))
    }

    /// Explicit bidirectional overrides, embeddings and isolates in a caption (a file name, an
    /// image description, a manifest) are not applied: "abc" RLO "def" PDF is drawn as
    /// "abcdef", never "abcfed"; each is reported once. Zero-width and invisible characters
    /// draw nothing and no box: the same pixels as the text without them.
    @Test func bidiOverridesAreNotAppliedAndInvisibleCharactersDrawNothing() throws {
        let r = try Fonts.renderer()
        let (w, h) = (700, 80)
        let reordered = ours(r, "abc\u{202E}def\u{202C} ghi", size: 36, width: w, height: h, x: 10, baseline: 55)
        #expect(reordered == ours(r, "abcdef ghi", size: 36, width: w, height: h, x: 10, baseline: 55),
                "an override reorders the caption")
        #expect(reordered != ours(r, "abcfed ghi", size: 36, width: w, height: h, x: 10, baseline: 55))
        for (text, plain) in [("a\u{202D}b\u{202B}c\u{202A}d\u{202C}", "abcd"),
                              ("x \u{2067}12 34\u{2069} \u{2066}y\u{2069}\u{2068}z\u{2069}", "x 12 34 yz"),
                              ("x\u{200B}y\u{2060}z\u{FEFF}w\u{2061}v", "xyzwv")] {
            let mine = ours(r, text, size: 36, width: w, height: h, x: 10, baseline: 55)
            let without = ours(r, plain, size: 36, width: w, height: h, x: 10, baseline: 55)
            #expect(mine.indices.filter { mine[$0] != without[$0] }.count == 0,
                    "\(text.debugDescription) is drawn as \(plain.debugDescription)")
        }
        #expect(r.layout("abc\u{202E}def", pixelSize: 36, maxWidth: w, maxLines: 1).lines.map(\.text) == ["abcdef"])
        #expect(r.reportedControls == Set([0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]))
        #expect(r.reportedMissing.isEmpty, "no box: \(r.reportedMissing)")
        // Right-to-left text keeps its own order, and its marks (RLM) stay.
        #expect(!TextRenderer.isExplicitBidiControl("\u{200F}") && !TextRenderer.isExplicitBidiControl("\u{61C}"))
        // A caption of them only is blank: no band.
        let painter = CaptionPainter(renderer: r)
        let frame = Bitmap(width: 640, height: 360, fill: 0xFF80_8080)
        #expect(painter.draw("\u{202E}\u{200B} \u{2066}\u{FEFF}\u{2069}", into: frame) == nil)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == 0xFF80_8080 })
    }

    /// A caption of control characters only is blank: no band.
    @Test func aCaptionOfControlCharactersOnlyDrawsNothing() throws {
        let painter = CaptionPainter(renderer: try Fonts.renderer())
        let frame = Bitmap(width: 640, height: 360, fill: 0xFF80_8080)
        #expect(painter.draw("\u{07}\u{1B} \u{7F}", into: frame) == nil)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == 0xFF80_8080 })
        // A line of controls between two lines of words does not use up one of the two lines.
        let layout = try #require(painter.draw("North pier\n\u{1B}\u{07}\nSouth pier", into: frame))
        #expect(layout.lines.map(\.text) == ["North pier", "South pier"])
    }
}
