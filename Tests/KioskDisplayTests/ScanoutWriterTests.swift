// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore
@testable import KioskDisplay

// MARK: - An independent model of a scanout pixel, shared with FramebufferDisplayTests

/// The 4x4 Bayer matrix (Bayer 1973), as ScanoutWriter documents it.
let bayerMatrix: [[UInt32]] = [[0, 8, 2, 10], [12, 4, 14, 6], [3, 11, 1, 9], [15, 7, 13, 5]]

/// What a panel pixel must hold for the XRGB8888 value `p`, built field by field from the format's
/// offsets and lengths (not through the writer's specialised loops): each channel's top bits, after
/// adding `threshold` (a Bayer entry 0...15, scaled to the bits dropped) when dithering; alpha all
/// ones; the X byte of XRGB8888/XBGR8888 copied from the frame, other unused bits zero.
func expectedScanoutPixel(_ p: UInt32, _ f: ScanoutFormat, threshold: UInt32? = nil) -> UInt32 {
    var v: UInt32 = 0
    for (sample, field) in [((p >> 16) & 0xFF, f.red), ((p >> 8) & 0xFF, f.green), (p & 0xFF, f.blue)] {
        let drop = 8 - field.length
        var s = Int(sample)
        if let t = threshold { s = min(255, s + Int(t) * (1 << drop) / 16) }
        v |= UInt32(s >> drop) << UInt32(field.offset)
    }
    if f.transp.length > 0 {
        v |= UInt32((1 << f.transp.length) - 1) << UInt32(f.transp.offset)
    } else if f.bitsPerPixel == 32 && [f.red, f.green, f.blue].allSatisfy({ $0.length == 8 && $0.offset < 24 }) {
        v |= p & 0xFF00_0000
    }
    return v
}

/// The little-endian pixel value of `bytesPerPixel` bytes at `offset`.
func littleEndianPixel(_ bytes: [UInt8], at offset: Int, bytesPerPixel: Int) -> UInt32 {
    var v: UInt32 = 0
    for k in 0 ..< bytesPerPixel { v |= UInt32(bytes[offset + k]) << (8 * UInt32(k)) }
    return v
}

/// A frame whose pixels all differ (a linear congruential sequence), opaque X byte.
func patternFrame(width: Int, height: Int, seed: UInt32 = 1) -> Bitmap {
    let frame = Bitmap(width: width, height: height)
    var s = seed
    for i in 0 ..< width * height {
        s = s &* 1_664_525 &+ 1_013_904_223
        frame.pixels[i] = 0xFF00_0000 | (s >> 8)
    }
    return frame
}

/// Panel memory filled with 0xAA (so untouched bytes show), the frame copied into it.
private func render(_ frame: Bitmap, _ format: ScanoutFormat, rotation: Rotation = .none, dither: Bool = false,
                    swapRedBlue: Bool = false, padding: Int = 0,
                    brightness: PixelBrightness = .full) -> (bytes: [UInt8], stride: Int) {
    let panelWidth = rotation.swapsAxes ? frame.height : frame.width
    let panelHeight = rotation.swapsAxes ? frame.width : frame.height
    let stride = panelWidth * format.bytesPerPixel + padding
    var bytes = [UInt8](repeating: 0xAA, count: stride * panelHeight)
    bytes.withUnsafeMutableBytes {
        ScanoutWriter.copy(frame, to: $0.baseAddress!, stride: stride, format: format, rotation: rotation,
                           dither: dither, swapRedBlue: swapRedBlue, brightness: brightness)
    }
    return (bytes, stride)
}

/// The panel's pixels, row by row.
private func panelPixels(_ r: (bytes: [UInt8], stride: Int), _ format: ScanoutFormat,
                         width: Int, height: Int) -> [[UInt32]] {
    (0 ..< height).map { y in
        (0 ..< width).map { x in littleEndianPixel(r.bytes, at: y * r.stride + x * format.bytesPerPixel,
                                                   bytesPerPixel: format.bytesPerPixel) }
    }
}

@Suite struct ScanoutWriterTests {
    // MARK: Formats, one known pixel each

    @Test(arguments: [
        (ScanoutFormat.rgb565, UInt32(0x11AA)),        // r 0x12>>3 = 2, g 0x34>>2 = 13, b 0x56>>3 = 10
        (.bgr565, UInt32(0x51A2)),                     // b 10 << 11 | g 13 << 5 | r 2
        (.rgb888, UInt32(0x12_3456)),                  // bytes 56 34 12
        (.bgr888, UInt32(0x56_3412)),                  // bytes 12 34 56
        (.xrgb8888, UInt32(0x7F12_3456)),              // X byte from the frame
        (.xbgr8888, UInt32(0x7F56_3412)),
        (.argb8888, UInt32(0xFF12_3456)),              // alpha all ones whatever the frame says
        (ScanoutFormat(bitsPerPixel: 16, red: .init(offset: 10, length: 5), green: .init(offset: 5, length: 5),
                       blue: .init(offset: 0, length: 5)), UInt32(0x08CA)),  // XRGB1555: 2<<10 | 6<<5 | 10
    ])
    func onePixel(format: ScanoutFormat, expected: UInt32) {
        let frame = Bitmap(width: 1, height: 1, fill: 0x7F12_3456)
        let r = render(frame, format)
        #expect(littleEndianPixel(r.bytes, at: 0, bytesPerPixel: format.bytesPerPixel) == expected)
    }

    @Test func namesAreFourccLike() {
        #expect(ScanoutFormat.rgb565.name == "RGB565")
        #expect(ScanoutFormat.bgr565.name == "BGR565")
        #expect(ScanoutFormat.xrgb8888.name == "XRGB8888")
        #expect(ScanoutFormat.xbgr8888.name == "XBGR8888")
        #expect(ScanoutFormat.argb8888.name == "ARGB8888")
        #expect(ScanoutFormat.rgb888.name == "RGB888")
        #expect(ScanoutFormat.bgr888.name == "BGR888")
        #expect(ScanoutFormat(bitsPerPixel: 16, red: .init(offset: 10, length: 5), green: .init(offset: 5, length: 5),
                              blue: .init(offset: 0, length: 5)).description == "XRGB1555 (16 bpp)")
    }

    @Test func nonsenseLayoutsAreRefusedWithTheValue() {
        #expect { try ScanoutFormat(bitsPerPixel: 8, red: .init(offset: 5, length: 3),
                                    green: .init(offset: 2, length: 3),
                                    blue: .init(offset: 0, length: 2)).validate(device: "/dev/fb0") }
            throws: { "\($0)" == "/dev/fb0: 8 bits per pixel is not supported (16, 24 and 32 are)" }
        #expect { try ScanoutFormat(bitsPerPixel: 16, red: .init(offset: 11, length: 5),
                                    green: .init(offset: 4, length: 6),
                                    blue: .init(offset: 0, length: 5)).validate(device: "fb") }
            throws: { "\($0)" == "fb: blue bitfield offset 0 length 5 overlaps green (offset 4 length 6)" }
        #expect { try ScanoutFormat(bitsPerPixel: 16, red: .init(offset: 12, length: 5),
                                    green: .init(offset: 5, length: 6),
                                    blue: .init(offset: 0, length: 5)).validate(device: "fb") }
            throws: { "\($0)".contains("red bitfield offset 12 length 5 does not fit a 16-bit pixel") }
        #expect { try ScanoutFormat(bitsPerPixel: 32, red: .init(offset: 20, length: 10),
                                    green: .init(offset: 10, length: 10),
                                    blue: .init(offset: 0, length: 10)).validate(device: "fb") }
            throws: { "\($0)".contains("1 to 8 bits per channel") }
        #expect { try ScanoutFormat(bitsPerPixel: 16, red: .init(offset: 11, length: 5),
                                    green: .init(offset: 5, length: 0),
                                    blue: .init(offset: 0, length: 5)).validate(device: "fb") }
            throws: { "\($0)".contains("green bitfield offset 5 length 0") }
    }

    /// Every fast path against the field-by-field model, on a frame with every pixel different,
    /// a padded stride whose padding must stay untouched, dithering on and off.
    @Test(arguments: [ScanoutFormat.rgb565, .bgr565, .rgb888, .bgr888, .xrgb8888, .xbgr8888, .argb8888,
                      ScanoutFormat(bitsPerPixel: 16, red: .init(offset: 10, length: 5),
                                    green: .init(offset: 5, length: 5),
                                    blue: .init(offset: 0, length: 5)),
                      ScanoutFormat(bitsPerPixel: 32, red: .init(offset: 24, length: 8),
                                    green: .init(offset: 16, length: 8),
                                    blue: .init(offset: 8, length: 8), transp: .init(offset: 0, length: 8)),
                      ScanoutFormat(bitsPerPixel: 24, red: .init(offset: 16, length: 6),
                                    green: .init(offset: 8, length: 6),
                                    blue: .init(offset: 0, length: 6))],
          [false, true])
    func wholeFrameMatchesTheModel(format: ScanoutFormat, dither: Bool) {
        let frame = patternFrame(width: 37, height: 9)
        let r = render(frame, format, dither: dither, padding: 6)
        let rowBytes = 37 * format.bytesPerPixel
        for y in 0 ..< 9 {
            for x in 0 ..< 37 {
                let threshold = dither ? bayerMatrix[y & 3][x & 3] : nil
                let got = littleEndianPixel(r.bytes, at: y * r.stride + x * format.bytesPerPixel,
                                            bytesPerPixel: format.bytesPerPixel)
                #expect(got == expectedScanoutPixel(frame[x, y], format, threshold: threshold),
                        "\(format) at \(x),\(y)")
            }
            #expect(r.bytes[y * r.stride + rowBytes ..< (y + 1) * r.stride].allSatisfy { $0 == 0xAA })
        }
    }

    /// Bits outside every channel: the X byte of XRGB8888 passes the frame's top byte through (it is
    /// copied with memcpy); an alpha field is all ones even when the frame's top byte is zero.
    @Test func xByteIsTheFramesAndAlphaIsOpaque() {
        let frame = Bitmap(width: 2, height: 1, fill: 0x0012_3456)
        frame[1, 0] = 0xFF65_4321
        let x = render(frame, .xrgb8888)
        #expect(littleEndianPixel(x.bytes, at: 0, bytesPerPixel: 4) == 0x0012_3456)
        #expect(littleEndianPixel(x.bytes, at: 4, bytesPerPixel: 4) == 0xFF65_4321)
        let a = render(frame, .argb8888)
        #expect(littleEndianPixel(a.bytes, at: 0, bytesPerPixel: 4) == 0xFF12_3456)
        #expect(littleEndianPixel(a.bytes, at: 4, bytesPerPixel: 4) == 0xFF65_4321)
    }

    // MARK: Rotation

    /// A 3x2 frame   a b c   turned clockwise: 90 puts its top row along the panel's right edge,
    ///               d e f   270 along the left edge, 180 along the bottom, reversed.
    @Test(arguments: [
        (Rotation.none, [["a", "b", "c"], ["d", "e", "f"]]),
        (.clockwise90, [["d", "a"], ["e", "b"], ["f", "c"]]),
        (.upsideDown, [["f", "e", "d"], ["c", "b", "a"]]),
        (.clockwise270, [["c", "f"], ["b", "e"], ["a", "d"]]),
    ])
    func rotatesThreeByTwo(rotation: Rotation, expected: [[Character]]) {
        let names: [Character] = ["a", "b", "c", "d", "e", "f"]
        let value: [Character: UInt32] = [
            "a": 0xFF11_0000, "b": 0xFF00_2200, "c": 0xFF00_0033, "d": 0xFF44_4400, "e": 0xFF00_5555, "f": 0xFF66_0066,
        ]
        let frame = Bitmap(width: 3, height: 2)
        for (i, n) in names.enumerated() { frame[i % 3, i / 3] = value[n]! }
        let r = render(frame, .xrgb8888, rotation: rotation, padding: 8)
        let panel = panelPixels(r, .xrgb8888, width: expected[0].count, height: expected.count)
        #expect(panel == expected.map { $0.map { value[$0]! } })
    }

    /// Frames larger than the writer's 16x128 tiles and not multiples of them, in 16 and 32 bits,
    /// dithered: every panel pixel is the model of the logical pixel the rotation table names, with
    /// the dither threshold of its *panel* position.
    @Test(arguments: [Rotation.none, .clockwise90, .upsideDown, .clockwise270], [ScanoutFormat.rgb565, .xbgr8888])
    func rotatesLargeFrames(rotation: Rotation, format: ScanoutFormat) {
        let w = 203, h = 141
        let frame = patternFrame(width: w, height: h, seed: 7)
        let r = render(frame, format, rotation: rotation, dither: true, padding: 4)
        let pw = rotation.swapsAxes ? h : w, ph = rotation.swapsAxes ? w : h
        var mismatches = 0
        for py in 0 ..< ph {
            for px in 0 ..< pw {
                let (x, y): (Int, Int)
                switch rotation {
                case .none: (x, y) = (px, py)
                case .clockwise90: (x, y) = (py, pw - 1 - px)
                case .upsideDown: (x, y) = (pw - 1 - px, ph - 1 - py)
                case .clockwise270: (x, y) = (ph - 1 - py, px)
                }
                let want = expectedScanoutPixel(frame[x, y], format, threshold: bayerMatrix[py & 3][px & 3])
                let got = littleEndianPixel(r.bytes, at: py * r.stride + px * format.bytesPerPixel,
                                            bytesPerPixel: format.bytesPerPixel)
                if got != want { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    // MARK: Dithering

    /// Colours whose dropped bits are zero (red 0x80, green 0x44, blue 0xF8 in RGB565), white and
    /// black come out exactly, with or without dithering.
    @Test(arguments: [UInt32(0xFF80_44F8), 0xFFFF_FFFF, 0xFF00_0000])
    func representableFlatColourStaysExact(colour: UInt32) {
        let frame = Bitmap(width: 16, height: 8, fill: colour)
        let r = render(frame, .rgb565, dither: true)
        let r5 = (colour >> 19) & 0x1F, g6 = (colour >> 10) & 0x3F, b5 = (colour >> 3) & 0x1F
        let want = r5 << 11 | g6 << 5 | b5
        #expect(panelPixels(r, .rgb565, width: 16, height: 8).allSatisfy { $0.allSatisfy { $0 == want } })
    }

    /// A horizontal red ramp 0...255: dithered output differs from plain truncation, and over every
    /// 4x4 block its mean level is nearer the true mean (value / 8 levels) than truncation's.
    @Test func ditheredGradientAveragesCloserThanTruncation() {
        let frame = Bitmap(width: 256, height: 4)
        for y in 0 ..< 4 { for x in 0 ..< 256 { frame[x, y] = 0xFF00_0000 | UInt32(x) << 16 } }
        let plain = panelPixels(render(frame, .rgb565, dither: false), .rgb565, width: 256, height: 4)
        let dithered = panelPixels(render(frame, .rgb565, dither: true), .rgb565, width: 256, height: 4)
        #expect(plain != dithered)
        var plainError = 0.0, ditheredError = 0.0
        for block in 0 ..< 64 {
            var truth = 0.0, p = 0.0, d = 0.0
            for y in 0 ..< 4 {
                for x in block * 4 ..< block * 4 + 4 {
                    truth += Double(x) / 8
                    p += Double(plain[y][x] >> 11)
                    d += Double(dithered[y][x] >> 11)
                }
            }
            plainError += abs(p - truth) / 16
            ditheredError += abs(d - truth) / 16
            #expect(abs(d - truth) <= abs(p - truth), "block \(block)")
        }
        #expect(ditheredError < plainError / 4)
    }

    // MARK: Red/blue swap

    /// Swapping red and blue on RGB565 writes what BGR565 would, and the other way round; on
    /// XRGB8888 it gives XBGR8888.
    @Test func swapRedBlueIsTheMirrorFormat() {
        let frame = patternFrame(width: 21, height: 5, seed: 3)
        for dither in [false, true] {
            #expect(render(frame, .rgb565, dither: dither, swapRedBlue: true).bytes
                    == render(frame, .bgr565, dither: dither).bytes)
            #expect(render(frame, .bgr565, dither: dither, swapRedBlue: true).bytes
                    == render(frame, .rgb565, dither: dither).bytes)
        }
        #expect(render(frame, .xrgb8888, swapRedBlue: true).bytes == render(frame, .xbgr8888).bytes)
        let one = render(Bitmap(width: 1, height: 1, fill: 0xFFFF_0000), .rgb565, swapRedBlue: true)
        #expect(littleEndianPixel(one.bytes, at: 0, bytesPerPixel: 2) == 0x001F)
    }

    // MARK: Brightness (docs/power.md)

    /// Dimmed in the copy: the same bytes as the frame dimmed first (PixelBrightness.dim) and
    /// copied at full brightness, for rows longer than the 256-pixel stack buffer, every
    /// rotation and dithering, and not the bytes of the frame as it is.
    @Test(arguments: [Rotation.none, .clockwise90, .upsideDown], [ScanoutFormat.xrgb8888, .rgb565, .bgr888])
    func dimmedInTheCopyIsTheFrameDimmedFirst(rotation: Rotation, format: ScanoutFormat) {
        let frame = patternFrame(width: 300, height: 21, seed: 7)
        let level = PixelBrightness(permille: 400)
        let dimmed = Bitmap(width: 300, height: 21)
        level.dim(frame, into: dimmed, rows: nil)
        let dither = format == .rgb565
        let inCopy = render(frame, format, rotation: rotation, dither: dither, padding: 8, brightness: level)
        #expect(inCopy.bytes == render(dimmed, format, rotation: rotation, dither: dither, padding: 8).bytes)
        #expect(inCopy.bytes != render(frame, format, rotation: rotation, dither: dither, padding: 8).bytes)
        #expect(
            render(frame, format, rotation: rotation, brightness: .full).bytes
                == render(frame, format, rotation: rotation).bytes)
    }
}
