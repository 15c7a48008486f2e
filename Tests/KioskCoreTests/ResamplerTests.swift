// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// A bitmap from rows of pixels.
private func bitmap(_ rows: [[UInt32]]) -> Bitmap {
    let b = Bitmap(width: rows[0].count, height: rows.count, fill: 0)
    for (y, row) in rows.enumerated() { for (x, v) in row.enumerated() { b[x, y] = v } }
    return b
}

/// The pixels of a bitmap as rows.
private func rows(_ b: Bitmap) -> [[UInt32]] {
    (0..<b.height).map { y in (0..<b.width).map { x in b[x, y] } }
}

/// Opaque grey pixel of level `v`.
private func grey(_ v: UInt32) -> UInt32 { 0xFF00_0000 | v << 16 | v << 8 | v }

/// A pixel with blue `v`, red `255 - v`, green 77: the channels move independently.
private func mixed(_ v: UInt32) -> UInt32 { 0xFF00_0000 | (255 - v) << 16 | 77 << 8 | v }

@Suite struct ResamplerTests {
    @Test func halvingIsTheExactBoxMean() {
        let levels: [[UInt32]] = [
            [0, 40, 100, 200],
            [80, 120, 60, 20],
            [255, 255, 0, 0],
            [255, 255, 0, 8],
        ]
        let src = bitmap(levels.map { $0.map(mixed) })
        let dst = Bitmap(width: 2, height: 2, fill: 0)
        Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: 2, height: 2))
        // (0+40+80+120)/4 = 60, (100+200+60+20)/4 = 95, 255, (0+0+0+8)/4 = 2
        #expect(rows(dst) == [[mixed(60), mixed(95)], [mixed(255), mixed(2)]])
    }

    @Test func halfwayMeansRoundUp() {
        let src = bitmap([[grey(10), grey(13)]])
        let dst = Bitmap(width: 1, height: 1, fill: 0)
        Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: 1, height: 1))
        #expect(dst[0, 0] == grey(12)) // 11.5 rounds to 12
    }

    @Test func threeToTwoIsCoverageWeighted() {
        // Output 0 covers source [0, 1.5): (2*30 + 60)/3 = 40; output 1: (60 + 2*90)/3 = 80.
        let row = bitmap([[mixed(30), mixed(60), mixed(90)]])
        let dstRow = Bitmap(width: 2, height: 1, fill: 0)
        Resampler.draw(row, into: dstRow, rect: PixelRect(x: 0, y: 0, width: 2, height: 1))
        #expect(rows(dstRow) == [[mixed(40), mixed(80)]])

        let column = bitmap([[mixed(30)], [mixed(60)], [mixed(90)]])
        let dstColumn = Bitmap(width: 1, height: 2, fill: 0)
        Resampler.draw(column, into: dstColumn, rect: PixelRect(x: 0, y: 0, width: 1, height: 2))
        #expect(rows(dstColumn) == [[mixed(40)], [mixed(80)]])
    }

    @Test func fiveToTwoIsCoverageWeighted() {
        // Output 0 covers [0, 2.5): (10 + 20 + 0.5*30)/2.5 = 18; output 1: (0.5*30 + 40 + 50)/2.5 = 42.
        let src = bitmap([[10, 20, 30, 40, 50].map(grey)])
        let dst = Bitmap(width: 2, height: 1, fill: 0)
        Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: 2, height: 1))
        #expect(rows(dst) == [[grey(18), grey(42)]])
    }

    @Test func manyTapsVertically() {
        // 7 -> 2: output 0 covers rows [0, 3.5): (0 + 14 + 28 + 0.5*42)/3.5 = 18;
        // output 1 covers [3.5, 7): (0.5*42 + 56 + 70 + 84)/3.5 = 66. Four taps each.
        let seven = bitmap([0, 14, 28, 42, 56, 70, 84].map { [mixed($0)] })
        let two = Bitmap(width: 1, height: 2, fill: 0)
        Resampler.draw(seven, into: two, rect: PixelRect(x: 0, y: 0, width: 1, height: 2))
        #expect(rows(two) == [[mixed(18)], [mixed(66)]])
        // 5 -> 1: the plain mean, five taps.
        let five = bitmap([10, 20, 30, 40, 50].map { [mixed($0)] })
        let one = Bitmap(width: 1, height: 1, fill: 0)
        Resampler.draw(five, into: one, rect: PixelRect(x: 0, y: 0, width: 1, height: 1))
        #expect(one[0, 0] == mixed(30))
    }

    /// The filter the resampler documents, in floating point, for one axis: the weights of
    /// each source sample for output sample `o`.
    private func referenceWeights(source s: Int, dest d: Int, _ o: Int) -> [Int: Double] {
        if s == d { return [o: 1] }
        if d < s {
            let lo = Double(o) * Double(s) / Double(d), hi = Double(o + 1) * Double(s) / Double(d)
            var w: [Int: Double] = [:]
            for i in Int(lo.rounded(.down))..<Int(hi.rounded(.up)) {
                w[i] = (min(hi, Double(i + 1)) - max(lo, Double(i))) / (hi - lo)
            }
            return w
        }
        let c = min(Double(s - 1), max(0, (Double(o) + 0.5) * Double(s) / Double(d) - 0.5))
        let i = min(s - 1, Int(c.rounded(.down))), f = c - Double(i)
        return i + 1 < s ? [i: 1 - f, i + 1: f] : [i: 1]
    }

    @Test func matchesAFloatingPointReferenceWithinOneLevel() {
        for (sw, sh, dw, dh) in [(13, 9, 5, 4), (6, 5, 17, 11), (10, 3, 7, 8), (31, 2, 9, 6)] {
            let src = pattern(width: sw, height: sh)
            let dst = Bitmap(width: dw, height: dh, fill: 0)
            Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: dw, height: dh))
            for y in 0..<dh {
                let wy = referenceWeights(source: sh, dest: dh, y)
                for x in 0..<dw {
                    let wx = referenceWeights(source: sw, dest: dw, x)
                    for shift: UInt32 in [0, 8, 16] {
                        var v = 0.0
                        for (sy, a) in wy { for (sx, b) in wx { v += a * b * Double(src[sx, sy] >> shift & 0xFF) } }
                        let got = Double(dst[x, y] >> shift & 0xFF)
                        #expect(abs(got - v) <= 1,
                                "\(sw)x\(sh)->\(dw)x\(dh) (\(x), \(y)) channel \(shift): \(got) vs \(v)")
                    }
                    #expect(dst[x, y] >> 24 == 0xFF)
                }
            }
        }
    }

    @Test func doublingIsABilinearRampWithClampedEdges() {
        // Centres at source -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
        let src = bitmap([[grey(0), grey(200)]])
        let dst = Bitmap(width: 4, height: 1, fill: 0)
        Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: 4, height: 1))
        #expect(rows(dst) == [[grey(0), grey(50), grey(150), grey(200)]])
    }

    @Test func twoToThreeHitsTheMidpoint() {
        // Centres at -1/6 (clamped), 0.5, 7/6 (clamped).
        let src = bitmap([[mixed(0)], [mixed(100)]])
        let dst = Bitmap(width: 1, height: 3, fill: 0)
        Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: 1, height: 3))
        #expect(rows(dst) == [[mixed(0)], [mixed(50)], [mixed(100)]])
    }

    @Test func doublingInTwoDimensionsIsSeparable() {
        // Pixel (1,1) sits at source (0.25, 0.25): (9a + 3b + 3c + d)/16 = (3*160 + 3*160)/16 = 60.
        let src = bitmap([[grey(0), grey(160)], [grey(160), grey(0)]])
        let dst = Bitmap(width: 4, height: 4, fill: 0)
        Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: 4, height: 4))
        #expect(dst[1, 1] == grey(60))
        #expect(dst[0, 0] == grey(0))
        #expect(dst[3, 0] == grey(160))
        #expect(dst[0, 1] == grey(40)) // column clamped, row at 0.25: 0.75*0 + 0.25*160
    }

    @Test func sameSizeIsAnExactCopyWithOpaqueTopByte() {
        let src = Bitmap(width: 5, height: 3, fill: 0)
        for i in 0..<src.pixelCount { src.pixels[i] = UInt32(truncatingIfNeeded: i &* 0x9E37_79B9) }
        let dst = Bitmap(width: 5, height: 3, fill: 0)
        Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: 5, height: 3))
        for i in 0..<src.pixelCount { #expect(dst.pixels[i] == src.pixels[i] | 0xFF00_0000) }
    }

    @Test func solidColourStaysExactAtAnyScale() {
        let src = Bitmap(width: 7, height: 5, fill: 0x1212_3456)
        for (w, h) in [(1, 1), (3, 2), (7, 5), (13, 11), (100, 3), (2, 40), (6, 4), (8, 6)] {
            let dst = Bitmap(width: w, height: h, fill: 0)
            Resampler.draw(src, into: dst, rect: PixelRect(x: 0, y: 0, width: w, height: h))
            let wrong = (0..<dst.pixelCount).filter { dst.pixels[$0] != 0xFF12_3456 }
            #expect(wrong.isEmpty, "\(w)x\(h): \(wrong.count) pixels drifted")
        }
    }

    /// Draws `src` at `rect` into a `dw` x `dh` frame and compares with drawing it whole and cropping.
    private func expectCropMatchesFullDraw(_ src: Bitmap, rect: PixelRect, dw: Int, dh: Int) {
        let full = Bitmap(width: rect.width, height: rect.height, fill: 0)
        Resampler.draw(src, into: full, rect: PixelRect(x: 0, y: 0, width: rect.width, height: rect.height))
        let dst = Bitmap(width: dw, height: dh, fill: 0x1234_5678)
        Resampler.draw(src, into: dst, rect: rect)
        for y in 0..<dh {
            for x in 0..<dw {
                let inside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
                let expected = inside ? full[x - rect.x, y - rect.y] : 0x1234_5678
                #expect(dst[x, y] == expected, "pixel (\(x), \(y)) for \(rect)")
            }
        }
    }

    private func pattern(width: Int, height: Int) -> Bitmap {
        let b = Bitmap(width: width, height: height, fill: 0)
        for y in 0..<height {
            for x in 0..<width {
                b[x, y] = 0xFF00_0000 | UInt32((x * 37 + y * 11) % 256) << 16
                    | UInt32((x * 5 + y * 53) % 256) << 8 | UInt32((x * y * 7) % 256)
            }
        }
        return b
    }

    @Test func fillCropOnlyWritesTheFrameAndMatchesTheFullImage() {
        // Enlarging: the 18x12 image is centred over a 10x8 frame.
        expectCropMatchesFullDraw(pattern(width: 6, height: 4), rect: PixelRect(x: -4, y: -2, width: 18, height: 12),
                                  dw: 10, dh: 8)
        // Shrinking: 40x30 to 20x15 over 12x9.
        expectCropMatchesFullDraw(pattern(width: 40, height: 30), rect: PixelRect(x: -5, y: -3, width: 20, height: 15),
                                  dw: 12, dh: 9)
        // Same size, shifted.
        expectCropMatchesFullDraw(pattern(width: 9, height: 7), rect: PixelRect(x: -2, y: -1, width: 9, height: 7),
                                  dw: 5, dh: 4)
        // Mixed: shrink across, enlarge down.
        expectCropMatchesFullDraw(pattern(width: 17, height: 3), rect: PixelRect(x: -3, y: -4, width: 11, height: 13),
                                  dw: 6, dh: 6)
    }

    @Test func drawingToOneSideLeavesTheRestUntouched() {
        // Partly off the right edge, and entirely outside.
        expectCropMatchesFullDraw(pattern(width: 4, height: 4), rect: PixelRect(x: 6, y: 2, width: 8, height: 3),
                                  dw: 10, dh: 10)
        expectCropMatchesFullDraw(pattern(width: 4, height: 4), rect: PixelRect(x: 1, y: 6, width: 3, height: 2),
                                  dw: 10, dh: 10)
        let dst = Bitmap(width: 4, height: 4, fill: 0xFF00_00FF)
        Resampler.draw(pattern(width: 4, height: 4), into: dst, rect: PixelRect(x: 4, y: 0, width: 4, height: 4))
        Resampler.draw(pattern(width: 4, height: 4), into: dst, rect: PixelRect(x: -4, y: -4, width: 4, height: 4))
        #expect((0..<dst.pixelCount).allSatisfy { dst.pixels[$0] == 0xFF00_00FF })
    }

    @Test func filterTapsSumToOne() {
        for (s, d) in [(3, 2), (7, 3), (1920, 1080), (5, 17), (1080, 1920), (2, 1), (1, 9)] {
            let f = AxisFilter(sourceSize: s, destSize: d, visible: 0..<d)
            for o in 0..<d {
                let ws = f.weights[Int(f.offset[o])..<Int(f.offset[o] + f.count[o])]
                #expect(ws.reduce(0, +) == 1 << 14, "\(s)->\(d) sample \(o)")
                #expect(f.start[o] >= 0 && Int(f.start[o] + f.count[o]) <= s)
            }
        }
    }

    /// The plan's row requests are what a streaming provider relies on: top to bottom (first and
    /// end never go back), touching or overlapping (no row left out in the middle), inside
    /// ``Resampler/Plan/sourceRows``, at most ``Resampler/Plan/maxRowsPerOutputRow`` rows. So
    /// a ring of exactly that many rows, filled in order, gives the very pixels of draw().
    @Test func aRingOfMaxRowsPerOutputRowGivesTheSamePixels() {
        let cases: [(sw: Int, sh: Int, rect: PixelRect, dw: Int, dh: Int)] = [
            (40, 30, PixelRect(x: 0, y: 0, width: 17, height: 11), 17, 11),    // shrink, many taps
            (6, 5, PixelRect(x: 0, y: 0, width: 17, height: 23), 17, 23),      // enlarge
            (9, 7, PixelRect(x: -2, y: -1, width: 9, height: 7), 5, 4),        // same size, cropped
            (40, 30, PixelRect(x: -5, y: -7, width: 20, height: 15), 12, 3),   // shrink, fill crop
            (17, 3, PixelRect(x: -3, y: -4, width: 11, height: 13), 6, 6),     // enlarge down, crop
            (31, 50, PixelRect(x: 2, y: 3, width: 7, height: 9), 12, 15),      // letterboxed
        ]
        for c in cases {
            let src = pattern(width: c.sw, height: c.sh)
            let expected = Bitmap(width: c.dw, height: c.dh, fill: 0x1234_5678)
            Resampler.draw(src, into: expected, rect: c.rect)

            let plan = Resampler.Plan(sourceWidth: c.sw, sourceHeight: c.sh, rect: c.rect, destWidth: c.dw,
                                      destHeight: c.dh)
            let capacity = plan.maxRowsPerOutputRow
            let ring = Bitmap(width: c.sw, height: capacity, fill: 0)
            var next = plan.sourceRows.lowerBound, lastFirst = 0, lastEnd = 0, requests = 0
            let dst = Bitmap(width: c.dw, height: c.dh, fill: 0x1234_5678)
            plan.draw(into: dst) { first, count, rows in
                requests += 1
                #expect(count >= 1 && count <= capacity)
                #expect(first >= lastFirst && first + count >= lastEnd)
                #expect(requests == 1 || first <= lastEnd, "a row left out between \(lastEnd) and \(first)")
                #expect(plan.sourceRows.contains(first) && first + count <= plan.sourceRows.upperBound)
                if requests == 1 { next = first }
                while next < first + count {  // copy the new rows into the ring, overwriting the oldest
                    for x in 0..<c.sw { ring[x, next % capacity] = src[x, next] }
                    next += 1
                }
                for k in 0..<count { rows[k] = UnsafePointer(ring.row((first + k) % capacity)) }
                (lastFirst, lastEnd) = (first, first + count)
            }
            #expect(requests == (0..<c.dh).filter { $0 >= c.rect.y && $0 < c.rect.y + c.rect.height }.count)
            #expect((0..<dst.pixelCount).allSatisfy { dst.pixels[$0] == expected.pixels[$0] }, "\(c)")
        }
    }
}
