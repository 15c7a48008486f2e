// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

private let red: UInt32 = 0xFFFF_0000
private let blue = RGBColor(red: 0, green: 0, blue: 255)

@Suite struct CompositorTests {
    // MARK: place

    @Test func fitPillarboxesA4by3ImageIn16by9() {
        // 8x6 into 32x18: height 18, width 8*18/6 = 24, x = (32 - 24)/2 = 4.
        let image = Bitmap(width: 8, height: 6, fill: red)
        let frame = Bitmap(width: 32, height: 18, fill: 0xFF12_3456)
        Compositor.place(image, into: frame, fit: .fit, background: blue)
        for y in 0..<18 {
            for x in 0..<32 {
                let bar = x < 4 || x >= 28
                #expect(frame[x, y] == (bar ? blue.xrgb : red), "pixel (\(x), \(y))")
            }
        }
    }

    @Test func fitLetterboxesAWideImage() {
        // 20x5 into 10x10: width 10, height 5*10/20 = 2.5 -> 3, y = (10 - 3)/2 = 3.
        let image = Bitmap(width: 20, height: 5, fill: red)
        let frame = Bitmap(width: 10, height: 10, fill: 0)
        Compositor.place(image, into: frame, fit: .fit, background: blue)
        for y in 0..<10 {
            #expect(frame[5, y] == ((3..<6).contains(y) ? red : blue.xrgb), "row \(y)")
        }
    }

    @Test func fillCoversTheWholeFrame() {
        let image = Bitmap(width: 8, height: 6, fill: red)
        let frame = Bitmap(width: 32, height: 18, fill: 0xFF12_3456)
        Compositor.place(image, into: frame, fit: .fill, background: blue)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == red })
    }

    @Test func fillCropsTheCentre() {
        // 4x1 (columns 10, 20, 30, 40) filling a 1x1 frame: the image becomes 4x1 at x = -1,
        // so the frame shows column 1 unscaled... except the placement keeps the aspect: height
        // 1 -> width 4, x = (1 - 4)/2 = -1, so the visible pixel is column 1 (20).
        let image = Bitmap(width: 4, height: 1, fill: 0)
        for x in 0..<4 { image[x, 0] = 0xFF00_0000 | UInt32(10 * (x + 1)) }
        let frame = Bitmap(width: 1, height: 1, fill: 0)
        Compositor.place(image, into: frame, fit: .fill, background: .black)
        #expect(frame[0, 0] == 0xFF00_0014)
    }

    @Test func stretchIgnoresTheAspectRatio() {
        // 2x1 (red, blue) stretched to 4x2: each row 255*(1, 0.75, 0.25, 0) red, the rest blue.
        let image = Bitmap(width: 2, height: 1, fill: 0)
        image[0, 0] = 0xFFFF_0000
        image[1, 0] = 0xFF00_00FF
        let frame = Bitmap(width: 4, height: 2, fill: 0)
        Compositor.place(image, into: frame, fit: .stretch, background: .white)
        for y in 0..<2 {
            // 255 * 0.75 = 191.25 -> 191, 255 * 0.25 = 63.75 -> 64
            #expect([frame[0, y], frame[1, y], frame[2, y], frame[3, y]]
                    == [0xFFFF_0000, 0xFFBF_0040, 0xFF40_00BF, 0xFF00_00FF])
        }
    }

    /// The row form gives the bytes the bitmap form gives, for every alpha and a few colours.
    @Test func flattenAlphaOfARowIsTheSameAsOfTheBitmap() {
        let image = Bitmap(width: 256, height: 4, hasAlpha: true)
        for y in 0..<4 {
            for x in 0..<256 {
                image[x, y] = UInt32(x) << 24 | UInt32((x * 7 + y * 50) & 0xFF) << 16 | UInt32(y * 60) << 8
                    | UInt32(255 - x)
            }
        }
        let rows = image.copy()
        let background = RGBColor(red: 17, green: 200, blue: 99)
        Compositor.flattenAlpha(image, over: background)
        for y in 0..<4 { Compositor.flattenAlpha(rows.row(y), count: 256, over: background) }
        #expect((0..<image.pixelCount).allSatisfy { image.pixels[$0] == rows.pixels[$0] })
    }

    @Test func flattenAlphaIsExact() {
        let image = Bitmap(width: 3, height: 1, hasAlpha: true, fill: 0)
        image[0, 0] = 0x0011_2233 // alpha 0 -> background
        image[1, 0] = 0xFF11_2233 // alpha 255 -> source
        image[2, 0] = 0x80C8_6400 // alpha 128, (200, 100, 0)
        let bg = RGBColor(red: 100, green: 50, blue: 250)
        Compositor.flattenAlpha(image, over: bg)
        #expect(image.hasAlpha == false)
        // (128*200 + 127*100 + 127)/255 = 150, (128*100 + 127*50 + 127)/255 = 75,
        // (128*0 + 127*250 + 127)/255 = 125
        #expect([image[0, 0], image[1, 0], image[2, 0]] == [0xFF64_32FA, 0xFF11_2233, 0xFF96_4B7D])
    }

    @Test func flattenLeavesOpaqueImagesAlone() {
        let image = Bitmap(width: 1, height: 1, hasAlpha: false, fill: 0x0011_2233)
        Compositor.flattenAlpha(image, over: .white)
        #expect(image[0, 0] == 0x0011_2233)
    }

    @Test func placeFlattensAlphaOverTheBackground() {
        let image = Bitmap(width: 2, height: 2, hasAlpha: true, fill: 0x80C8_6400)
        let frame = Bitmap(width: 4, height: 4, fill: 0)
        Compositor.place(image, into: frame, fit: .fit, background: RGBColor(red: 100, green: 50, blue: 250))
        #expect(image.hasAlpha == false)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == 0xFF96_4B7D })
    }

    // MARK: blend

    private func frames(_ a: UInt32, _ b: UInt32) -> (Bitmap, Bitmap, Bitmap) {
        (Bitmap(width: 3, height: 2, fill: a), Bitmap(width: 3, height: 2, fill: b),
         Bitmap(width: 3, height: 2, fill: 0))
    }

    @Test func blendEndsAreExact() {
        let (a, b, out) = frames(0x0012_3456, 0x00AB_CDEF)
        Compositor.blend(a, b, weight: 0, into: out)
        #expect(out[2, 1] == 0xFF12_3456)
        Compositor.blend(a, b, weight: 256, into: out)
        #expect(out[2, 1] == 0xFFAB_CDEF)
        Compositor.blend(a, b, weight: -5, into: out)
        #expect(out[0, 0] == 0xFF12_3456)
        Compositor.blend(a, b, weight: 999, into: out)
        #expect(out[0, 0] == 0xFFAB_CDEF)
    }

    @Test func blendMidpointRoundsHalfUp() {
        // (a + b + 1)/2: (0x12 + 0xAB + 1)/2 = 0x5F, (0x34 + 0xCD + 1)/2 = 0x81, (0x56 + 0xEF + 1)/2 = 0xA3
        let (a, b, out) = frames(0xFF12_3456, 0xFFAB_CDEF)
        Compositor.blend(a, b, weight: 128, into: out)
        #expect(out[1, 1] == 0xFF5F_81A3)
    }

    @Test func blendChannelsDoNotBleed() {
        // Alternate full and empty channels, so a carry out of one channel would show in the next.
        let (a, b, out) = frames(0xFFFF_00FF, 0x0000_FF00)
        Compositor.blend(a, b, weight: 128, into: out)
        #expect(out[0, 0] == 0xFF80_8080) // (255 + 0 + 1)/2 = 128 each
        Compositor.blend(a, b, weight: 1, into: out)
        // 255: (255*255 + 128) >> 8 = 254; 0: (255*1 + 128) >> 8 = 1
        #expect(out[0, 0] == 0xFFFE_01FE)
        Compositor.blend(a, b, weight: 255, into: out)
        #expect(out[0, 0] == 0xFF01_FE01)
        let (c, d, out2) = frames(0xFFFF_FFFF, 0xFFFF_FFFF)
        for w in [1, 77, 128, 200, 255] {
            Compositor.blend(c, d, weight: w, into: out2)
            #expect(out2[0, 0] == 0xFFFF_FFFF, "weight \(w)")
        }
    }

    @Test func blendMatchesThePerChannelFormula() {
        let a = Bitmap(width: 64, height: 4, fill: 0), b = Bitmap(width: 64, height: 4, fill: 0)
        for i in 0..<a.pixelCount {
            a.pixels[i] = UInt32(truncatingIfNeeded: i &* 0x9E37_79B9)
            b.pixels[i] = UInt32(truncatingIfNeeded: (i + 7) &* 0x85EB_CA6B)
        }
        let out = Bitmap(width: 64, height: 4, fill: 0)
        for w in [0, 1, 3, 64, 100, 128, 129, 250, 256] {
            Compositor.blend(a, b, weight: w, into: out)
            for i in 0..<out.pixelCount {
                var expected: UInt32 = 0xFF00_0000
                for shift: UInt32 in [0, 8, 16] {
                    let ca = Int(a.pixels[i] >> shift & 0xFF), cb = Int(b.pixels[i] >> shift & 0xFF)
                    expected |= UInt32((ca * (256 - w) + cb * w + 128) / 256) << shift
                }
                #expect(out.pixels[i] == expected, "weight \(w) pixel \(i)")
            }
        }
    }

    @Test func blendInPlaceIntoEitherInput() {
        let (a, b, out) = frames(0xFF12_3456, 0xFFAB_CDEF)
        Compositor.blend(a, b, weight: 77, into: out)
        let a2 = a.copy(), b2 = b.copy()
        Compositor.blend(a2, b, weight: 77, into: a2)
        Compositor.blend(a, b2, weight: 77, into: b2)
        for i in 0..<out.pixelCount {
            #expect(a2.pixels[i] == out.pixels[i])
            #expect(b2.pixels[i] == out.pixels[i])
        }
    }

    // MARK: page dots

    @Test func oneDotDrawsNothing() {
        let frame = Bitmap(width: 600, height: 360, fill: 0xFF20_2020)
        Compositor.drawPageDots(into: frame, count: 1, current: 0)
        Compositor.drawPageDots(into: frame, count: 0, current: 0)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == 0xFF20_2020 })
    }

    @Test func currentDotIsWhiteOthersTranslucent() {
        // 600x360: d = max(6, 360/60) = 6; row width (2*3 - 1)*6 = 30 from x = 285;
        // centres x = 288, 300, 312; y = 360 - 12 + 3 = 351.
        let layout = Compositor.pageDotLayout(frameWidth: 600, frameHeight: 360, count: 3)
        #expect(layout.diameter == 6)
        #expect(layout.centres.map(\.x) == [288, 300, 312])
        #expect(layout.centres.map(\.y) == [351, 351, 351])

        let frame = Bitmap(width: 600, height: 360, fill: 0xFF00_0000)
        Compositor.drawPageDots(into: frame, count: 3, current: 1)
        #expect(frame[300, 351] == 0xFFFF_FFFF)
        // 40 % white over black: round(0.4*256) = 102, (255*102 + 128) >> 8 = 102
        #expect(frame[288, 351] == 0xFF66_6666)
        #expect(frame[312, 351] == 0xFF66_6666)
        // Outside the dots: untouched.
        #expect(frame[0, 0] == 0xFF00_0000)
        #expect(frame[300, 340] == 0xFF00_0000)
        #expect(frame[294, 351] == 0xFF00_0000) // between two dots
        // Anti-aliased rim: partly covered, darker than the centre, lighter than black.
        let rim = frame[300, 348] & 0xFF
        #expect(rim > 0 && rim < 255)
    }

    @Test func otherDotsAreLighterThanTheBackgroundButNotWhite() {
        let frame = Bitmap(width: 600, height: 360, fill: 0xFF40_6080)
        Compositor.drawPageDots(into: frame, count: 3, current: 4) // 4 mod 3 = 1
        #expect(frame[300, 351] == 0xFFFF_FFFF)
        for x in [288, 312] {
            let p = frame[x, 351]
            #expect(p != 0xFFFF_FFFF)
            #expect(p >> 16 & 0xFF > 0x40 && p >> 8 & 0xFF > 0x60 && p & 0xFF > 0x80)
        }
    }

    // MARK: message

    /// Records what the screen asks a painter to draw (the glyphs are KioskText's, tested there).
    final class Recorder: TextPainter {
        var calls: [(String, RGBColor)] = []
        func drawMessage(_ text: String, into frame: Bitmap, color: RGBColor) { calls.append((text, color)) }
    }

    @Test func messageFillsTheBackgroundAndAsksThePainterForTheWords() {
        let frame = Bitmap(width: 64, height: 48, fill: 0)
        let recorder = Recorder()
        Compositor.drawMessage(into: frame, "No images to show", background: RGBColor(red: 10, green: 10, blue: 40),
                               painter: recorder)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == RGBColor(red: 10, green: 10, blue: 40).xrgb })
        #expect(recorder.calls.map(\.0) == ["No images to show"])
        #expect(recorder.calls.map(\.1) == [RGBColor(red: 0xD0, green: 0xD0, blue: 0xD0)])
        Compositor.drawMessage(into: frame, "X", background: .white, painter: nil)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == RGBColor.white.xrgb })
    }

    @Test func lightBackgroundGetsDarkText() {
        #expect(Compositor.messageColor(on: .white) == RGBColor(red: 0x30, green: 0x30, blue: 0x30))
        #expect(Compositor.messageColor(on: .black) == RGBColor(red: 0xD0, green: 0xD0, blue: 0xD0))
    }
}
