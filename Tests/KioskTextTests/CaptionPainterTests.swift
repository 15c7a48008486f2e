// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskText
import Testing

@Suite struct CaptionPainterTests {
    /// A mid-grey 1920x1080 frame.
    func grey() -> Bitmap { Bitmap(width: 1920, height: 1080, fill: 0xFF80_8080) }

    @Test func aBandAtTheBottomDarkensThePictureUnderWhiteText() throws {
        let painter = CaptionPainter(renderer: try Fonts.renderer())
        let frame = grey()
        let caption = "The harbour at dusk, seen from the old lighthouse on the northern breakwater, with the last"
            + " ferry of the day coming in past the pier and the fishing boats moored along the quay, where the"
            + " lamps are being lit one by one"
        let layout = try #require(painter.draw(caption, into: frame))
        #expect(layout.lines.count == 2 && layout.truncated)
        #expect(CaptionPainter.pixelSize(height: 1080) == 40)
        let top = CaptionPainter.bandTop(height: 1080, layout: layout, pixelSize: 40)
        #expect(top > 1080 - 200 && top < 1080 - 100, "two lines of 40 px and padding: \(top)")
        // Above the band: untouched. In it: darkened (0x80 * 115 / 256 = 0x39) where no glyph is.
        #expect((0..<top).allSatisfy { y in frame[5, y] == 0xFF80_8080 && frame[960, y] == 0xFF80_8080 })
        #expect(frame[5, 1079] == 0xFF39_3939 && frame[5, top] == 0xFF39_3939)
        // White text inside the band, within 90 % of the width.
        var minX = Int.max, maxX = 0, minY = Int.max
        for y in top..<1080 {
            for x in 0..<1920 where frame[x, y] == 0xFFFF_FFFF {
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y)
            }
        }
        #expect(minY > top && minX >= 96 && maxX < 1920 - 96, "\(minX)...\(maxX) from row \(minY)")
    }

    @Test func blankCaptionsDrawNothing() throws {
        let painter = CaptionPainter(renderer: try Fonts.renderer())
        let frame = grey()
        #expect(painter.draw(" \t ", into: frame) == nil)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == 0xFF80_8080 })
    }

    @Test func aSmallScreenGetsAProportionalBand() throws {
        let painter = CaptionPainter(renderer: try Fonts.renderer())
        let frame = Bitmap(width: 800, height: 480, fill: 0xFF80_8080)
        let layout = try #require(painter.draw("Quay 7", into: frame))
        #expect(CaptionPainter.pixelSize(height: 480) == 18)
        #expect(CaptionPainter.bandTop(height: 480, layout: layout, pixelSize: 18) > 480 - 50)
    }
}

/// Captions as people type them, and as a hostile manifest may send them.
@Suite struct CaptionInputTests {
    /// 900,000 characters (a 0.9 MB manifest field): set without overflowing the pen's 32-bit
    /// 26.6 sums (it trapped the whole program before), two lines and "…".
    @Test func aHugeCaptionIsCutNotACrash() throws {
        let painter = CaptionPainter(renderer: try Fonts.renderer())
        let frame = Bitmap(width: 1920, height: 1080, fill: 0xFF80_8080)
        let layout = try #require(painter.draw(String(repeating: "W", count: 900_000), into: frame))
        #expect(layout.lines.count == 2 && layout.truncated)
    }

    /// Windows line ends and blank lines: "\r\n" is a line break like "\n" (no boxes on one
    /// line), and blank lines do not use up the band's two lines.
    @Test func lineBreaksOfEveryKindAndBlankLines() throws {
        let painter = CaptionPainter(renderer: try Fonts.renderer())
        for text in ["Line one\r\nLine two", "Line one\rLine two", "\n\nLine one\n\n\nLine two\n"] {
            let frame = Bitmap(width: 1920, height: 1080, fill: 0xFF80_8080)
            let layout = try #require(painter.draw(text, into: frame))
            #expect(layout.lines.map(\.text) == ["Line one", "Line two"],
                    "\(text.debugDescription): \(layout.lines.map(\.text))")
            #expect(!layout.truncated)
        }
    }
}
