// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskImaging
import Testing

/// EXIFOrientation: the APP1/TIFF parser (IFD0 only, both byte orders, hostile offsets), the
/// pixel transform, and the eight real test images standing upright after decoding.
@Suite struct EXIFOrientationTests {
    // MARK: The eight images

    /// Red and green above blue and white, sampled at the centre of each quadrant of the upright
    /// 50x100 picture (the orientation number is drawn in the middle, away from these points).
    static let quadrants: [(x: Int, y: Int, rgb: [Int])] = [
        (12, 25, [255, 0, 0]), (37, 25, [0, 255, 0]), (12, 75, [0, 0, 255]), (37, 75, [255, 255, 255]),
    ]

    @Test(arguments: 1...8)
    func testImageStandsUpright(value: Int) throws {
        let path = Fixtures.path("exif-orientation", "test_\(value).jpg")
        let decoded = try ImageDecoder.decode(path: path, options: DecodeOptions())
        #expect(decoded.orientation.rawValue == value)
        // Stored 50x100 for 1-4, 100x50 for 5-8; upright always 50x100.
        #expect(decoded.sourceWidth == (value <= 4 ? 50 : 100))
        #expect(decoded.sourceHeight == (value <= 4 ? 100 : 50))
        #expect(decoded.bitmap.width == 50 && decoded.bitmap.height == 100)
        for q in Self.quadrants {
            let got = channels(decoded.bitmap[q.x, q.y])
            #expect(zip(got, q.rgb).allSatisfy { abs($0 - $1) <= 8 },
                    "test_\(value) at (\(q.x),\(q.y)): \(got), want \(q.rgb)")
        }
    }

    /// The orientation is applied before the scale is chosen: test_6 is stored 100x50 but shown
    /// 50x100, so covering a 25x50 frame needs 4/8 (stored-size thinking would pick 2/8).
    @Test func scaleIsChosenForTheUprightSize() throws {
        let path = Fixtures.path("exif-orientation", "test_6.jpg")
        let decoded = try ImageDecoder.decode(path: path, options: DecodeOptions(targetWidth: 25, targetHeight: 50))
        #expect(decoded.scaleNumerator == 4)
        #expect(decoded.bitmap.width == 25 && decoded.bitmap.height == 50)
        for q in Self.quadrants {
            let got = channels(decoded.bitmap[q.x / 2, q.y / 2])
            #expect(zip(got, q.rgb).allSatisfy { abs($0 - $1) <= 12 }, "(\(q.x / 2),\(q.y / 2)): \(got), want \(q.rgb)")
        }
    }

    // MARK: Parsing

    /// An APP1 payload: "Exif\0\0", a TIFF header, IFD0 with `ifd0` entries (tag, type, value),
    /// and, when `ifd1` is not empty, IFD1 after it. Values are stored as SHORT or LONG per type.
    static func segment(bigEndian: Bool = false, ifd0: [(tag: Int, type: Int, value: Int)],
                        ifd1: [(tag: Int, type: Int, value: Int)] = []) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] {
            bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)]
        }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16) }
        func directory(_ entries: [(tag: Int, type: Int, value: Int)], next: Int) -> [UInt8] {
            var out = u16(entries.count)
            for e in entries {
                out += u16(e.tag) + u16(e.type) + u32(1)
                out += e.type == 3 ? u16(e.value) + [0, 0] : u32(e.value)
            }
            return out + u32(next)
        }
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        tiff += u16(42) + u32(8)
        let ifd1Offset = ifd1.isEmpty ? 0 : 8 + 2 + ifd0.count * 12 + 4
        tiff += directory(ifd0, next: ifd1Offset)
        if !ifd1.isEmpty { tiff += directory(ifd1, next: 0) }
        return Array("Exif".utf8) + [0, 0] + tiff
    }

    @Test func readsIFD0InBothByteOrders() {
        let others = [(tag: 0x010F, type: 2, value: 0), (tag: 0x011A, type: 5, value: 100)]
        for bigEndian in [false, true] {
            for value in 1...8 {
                let bytes = Self.segment(bigEndian: bigEndian, ifd0: others + [(tag: 0x0112, type: 3, value: value)])
                #expect(EXIFOrientation.parse(exifSegment: bytes).rawValue == value,
                        "bigEndian \(bigEndian) value \(value)")
            }
        }
        // LONG instead of SHORT is accepted.
        #expect(EXIFOrientation.parse(exifSegment: Self.segment(bigEndian: true, ifd0: [(0x0112, 4, 6)])) == .rightTop)
        // The bare TIFF form (PNG eXIf) is the same minus the prefix.
        let tiff = Array(Self.segment(ifd0: [(0x0112, 3, 8)]).dropFirst(6))
        #expect(EXIFOrientation.parse(tiff: tiff) == .leftBottom)
    }

    @Test func thumbnailIFD1DoesNotCount() {
        let onlyThumbnail = Self.segment(ifd0: [(0x010F, 2, 0)], ifd1: [(0x0112, 3, 6)])
        #expect(EXIFOrientation.parse(exifSegment: onlyThumbnail) == .topLeft)
        let both = Self.segment(bigEndian: true, ifd0: [(0x0112, 3, 3)], ifd1: [(0x0112, 3, 6)])
        #expect(EXIFOrientation.parse(exifSegment: both) == .bottomRight)
    }

    @Test func zeroAndOutOfRangeMeanUpright() {
        for value in [0, 9, 255, 65535] {
            #expect(EXIFOrientation.parse(exifSegment: Self.segment(ifd0: [(0x0112, 3, value)])) == .topLeft)
        }
        #expect(EXIFOrientation(exifValue: 0) == .topLeft)
        #expect(EXIFOrientation(exifValue: -3) == .topLeft)
        #expect(EXIFOrientation(exifValue: 7) == .rightBottom)
        // A type that is neither SHORT nor LONG (ASCII) is ignored.
        #expect(EXIFOrientation.parse(exifSegment: Self.segment(ifd0: [(0x0112, 2, 6)])) == .topLeft)
    }

    @Test func malformedSegmentsGiveUprightAndNeverReadOutOfBounds() {
        let good = Self.segment(bigEndian: true, ifd0: [(0x010F, 2, 0), (0x0112, 3, 6)])
        #expect(EXIFOrientation.parse(exifSegment: good) == .rightTop)
        // Every truncation: the tag is only found when its whole entry is present.
        let entryEnd = 6 + 8 + 2 + 2 * 12
        for length in 0..<good.count {
            let expected: EXIFOrientation = length >= entryEnd ? .rightTop : .topLeft
            #expect(EXIFOrientation.parse(exifSegment: Array(good.prefix(length))) == expected, "length \(length)")
        }
        var badPrefix = good; badPrefix[4] = 0x20
        #expect(EXIFOrientation.parse(exifSegment: badPrefix) == .topLeft)
        var badOrder = good; badOrder[7] = 0x49  // "MI"
        #expect(EXIFOrientation.parse(exifSegment: badOrder) == .topLeft)
        var badMagic = good; badMagic[9] = 43
        #expect(EXIFOrientation.parse(exifSegment: badMagic) == .topLeft)
        // IFD0 offset past the end, at 0xFFFFFFFF, and inside the header.
        for offset: [UInt8] in [[0, 0, 0, 200], [0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 2]] {
            var bad = good
            bad.replaceSubrange(10..<14, with: offset)
            #expect(EXIFOrientation.parse(exifSegment: bad) == .topLeft)
        }
        // An entry count far larger than the data: the entries that exist are read, no more.
        var hugeCount = good
        hugeCount.replaceSubrange(14..<16, with: [0xFF, 0xFF])
        #expect(EXIFOrientation.parse(exifSegment: hugeCount) == .rightTop)
        // Noise of every length (a fixed linear congruential sequence): no crash, a valid case.
        var state: UInt32 = 12345
        for length in 0..<300 {
            var noise = Array("Exif".utf8) + [0, 0] + (length % 2 == 0 ? [0x49, 0x49, 42, 0] : [0x4D, 0x4D, 0, 42])
            for _ in 0..<length {
                state = state &* 1_103_515_245 &+ 12345
                noise.append(UInt8(state >> 24))
            }
            #expect((1...8).contains(EXIFOrientation.parse(exifSegment: noise).rawValue))
        }
    }

    // MARK: Applying

    /// Where each upright pixel comes from in the stored picture (EXIF 2.32 table 4.6.4-2),
    /// written independently of the implementation's source-to-destination stepping.
    static func storedPixel(for orientation: EXIFOrientation, x: Int, y: Int,
                            storedWidth w: Int, storedHeight h: Int) -> (Int, Int) {
        switch orientation {
        case .topLeft: return (x, y)
        case .topRight: return (w - 1 - x, y)
        case .bottomRight: return (w - 1 - x, h - 1 - y)
        case .bottomLeft: return (x, h - 1 - y)
        case .leftTop: return (y, x)
        case .rightTop: return (y, h - 1 - x)
        case .rightBottom: return (w - 1 - y, h - 1 - x)
        case .leftBottom: return (w - 1 - y, x)
        }
    }

    /// A bitmap whose every pixel names its own position.
    static func numbered(width: Int, height: Int) -> Bitmap {
        let b = Bitmap(width: width, height: height, hasAlpha: true)
        for y in 0..<height { for x in 0..<width { b[x, y] = UInt32(y << 16 | x) } }
        return b
    }

    @Test(arguments: EXIFOrientation.allCases)
    func applyMovesEveryPixelWhereTheSpecSays(orientation: EXIFOrientation) {
        // 3x2 for reading, 130x70 to cross the 64-pixel tiles.
        for (w, h) in [(3, 2), (130, 70), (1, 1)] {
            let stored = Self.numbered(width: w, height: h)
            let upright = orientation.apply(to: stored)
            #expect(upright.hasAlpha)
            #expect(upright.width == (orientation.swapsAxes ? h : w)
                        && upright.height == (orientation.swapsAxes ? w : h))
            var wrong = 0
            for y in 0..<upright.height {
                for x in 0..<upright.width {
                    let (sx, sy) = Self.storedPixel(for: orientation, x: x, y: y, storedWidth: w, storedHeight: h)
                    if upright[x, y] != UInt32(sy << 16 | sx) { wrong += 1 }
                }
            }
            #expect(wrong == 0, "\(orientation) \(w)x\(h): \(wrong) pixels misplaced")
        }
        // Upright 3x2 of the 6-rotated picture: the stored left column becomes the top row.
        if orientation == .rightTop {
            let upright = orientation.apply(to: Self.numbered(width: 3, height: 2))
            #expect((0..<2).map { upright[$0, 0] } == [UInt32(1 << 16 | 0), UInt32(0 << 16 | 0)])
        }
    }

    @Test func inversePairsRestoreTheOriginal() {
        let stored = Self.numbered(width: 67, height: 41)
        for (first, second) in [(EXIFOrientation.rightTop, EXIFOrientation.leftBottom), (.topRight, .topRight),
                                (.bottomRight, .bottomRight), (.leftTop, .leftTop), (.rightBottom, .rightBottom)] {
            let back = second.apply(to: first.apply(to: stored))
            #expect(back.width == 67 && back.height == 41)
            #expect(maxDifference(back, stored) == 0
                        && (0..<back.pixelCount).allSatisfy { back.pixels[$0] == stored.pixels[$0] },
                    "\(first) then \(second)")
        }
    }
}
