// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskText
import Testing

@Suite struct MessagePainterTests {
    /// The lit box of a frame drawn light on black.
    func litBox(_ frame: Bitmap) -> (Int, Int, Int, Int)? { boundingBox(coverage(frame), width: frame.width) }

    @Test func sizeIsAShareOfTheHeightSoScreensLookAlike() throws {
        let painter = MessagePainter(renderer: try Fonts.renderer())
        #expect(painter.pixelSize(for: "Loading\u{2026}", width: 1920, height: 1080) == 54)
        #expect(painter.pixelSize(for: "Loading\u{2026}", width: 800, height: 480) == 24)
        #expect(painter.pixelSize(for: "Loading\u{2026}", width: 3840, height: 2160) == 108)
        // Text height relative to the screen is the same at 480 and 2160 lines (within a pixel's share).
        var shares: [Double] = []
        for (w, h) in [(800, 480), (3840, 2160)] {
            let frame = Bitmap(width: w, height: h, fill: 0xFF00_0000)
            Compositor.drawMessage(into: frame, "Loading\u{2026}", background: .black, painter: painter)
            let b = try #require(litBox(frame))
            shares.append(Double(b.3 - b.1 + 1) / Double(h))
            // Centred both ways, within two pixels.
            #expect(abs((b.0 + b.2) - (w - 1)) <= 4 && abs((b.1 + b.3) - (h - 1)) <= Int(Double(h) * 0.05))
        }
        #expect(abs(shares[0] - shares[1]) < 0.01, "\(shares)")
    }

    @Test func linesThatWouldNotFitAreDrawnSmallerNotCut() throws {
        let painter = MessagePainter(renderer: try Fonts.renderer())
        let frame = Bitmap(width: 480, height: 800, fill: 0xFF00_0000)
        Compositor.drawMessage(into: frame, SceneRenderer.noImagesText, background: .black, painter: painter)
        let b = try #require(litBox(frame))
        #expect(b.0 >= 480 / 20 && b.2 < 480 - 480 / 20, "inside 90 % of the width: \(b)")
        #expect(painter.pixelSize(for: SceneRenderer.noImagesText, width: 480, height: 800) < 40)
        // Fully covered pixels are exactly the message colour; antialiased edges lie between.
        #expect((0..<frame.pixelCount).contains { frame.pixels[$0] == 0xFFD0_D0D0 })
    }

    @Test func lightBackgroundGetsDarkAntialiasedText() throws {
        let painter = MessagePainter(renderer: try Fonts.renderer())
        let frame = Bitmap(width: 1280, height: 720, fill: 0)
        Compositor.drawMessage(into: frame, "X", background: .white, painter: painter)
        #expect((0..<frame.pixelCount).contains { frame.pixels[$0] == 0xFF30_3030 })
        #expect((0..<frame.pixelCount).contains { let v = frame.pixels[$0] & 0xFF; return v > 0x30 && v < 0xFF })
        #expect(frame[0, 0] == RGBColor.white.xrgb)
    }
}
