// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskImaging
import Testing

/// DCTScale: the choice of libjpeg's M/8 and the output size it gives.
@Suite struct DCTScaleTests {
    struct Case: CustomStringConvertible, Sendable {
        var image: (Int, Int)
        var orientation: EXIFOrientation = .topLeft
        var target: (Int?, Int?)
        var fit: FitMode
        var expected: Int
        var description: String { "\(image) \(orientation) -> \(target) \(fit) = \(expected)/8" }
    }

    static let table: [Case] = [
        Case(image: (5120, 2880), target: (1920, 1080), fit: .fit, expected: 3),    // volna on full HD
        Case(image: (5120, 2880), target: (1920, 1080), fit: .fill, expected: 3),
        Case(image: (5120, 2880), target: (1920, 1080), fit: .stretch, expected: 3),
        Case(image: (6000, 4000), target: (1920, 1080), fit: .fit, expected: 3),    // 1620x1080 placed; 2/8 = 1500 wide
        Case(image: (4000, 4000), target: (1920, 1080), fit: .fit, expected: 3),    // 1080x1080 placed
        Case(image: (4000, 4000), target: (1920, 1080), fit: .fill, expected: 4),   // 1920x1920 placed
        Case(image: (4000, 4000), target: (1920, 1080), fit: .stretch, expected: 4),
        Case(image: (8000, 1000), target: (1920, 1080), fit: .fit, expected: 2),    // 1920x240 placed
        Case(image: (8000, 1000), target: (1920, 1080), fit: .fill, expected: 8),   // needs 8.64/8: capped at 8/8
        Case(image: (3840, 2160), target: (1920, 1080), fit: .fit, expected: 4),
        Case(image: (3841, 2161), target: (1920, 1080), fit: .fit, expected: 4),    // ceil rounding keeps 4/8 enough
        Case(image: (1920, 1080), target: (1920, 1080), fit: .fit, expected: 8),
        Case(image: (800, 600), target: (1920, 1080), fit: .fit, expected: 8),      // never enlarged
        Case(image: (15360, 8640), target: (1920, 1080), fit: .fit, expected: 1),
        Case(image: (2880, 5120), orientation: .rightTop, target: (1920, 1080), fit: .fit, expected: 3),
        // 608x1080 placed
        Case(image: (2880, 5120), orientation: .topLeft, target: (1920, 1080), fit: .fit, expected: 2),
        Case(image: (5120, 2880), target: (1920, nil), fit: .fit, expected: 3),
        Case(image: (5120, 2880), target: (nil, 1080), fit: .fit, expected: 3),
        Case(image: (5120, 2880), target: (nil, nil), fit: .fit, expected: 8),
        Case(image: (5120, 2880), target: (0, -5), fit: .fit, expected: 8),
    ]

    @Test(arguments: table)
    func choosesTheSmallestCoveringScale(_ c: Case) {
        let m = DCTScale.numerator(imageWidth: c.image.0, imageHeight: c.image.1, orientation: c.orientation,
                                   targetWidth: c.target.0, targetHeight: c.target.1, fit: c.fit)
        #expect(m == c.expected)
        // The definition, checked directly: M covers the need and M - 1 does not.
        guard let w = c.target.0, let h = c.target.1, w > 0, h > 0 else { return }
        let upright = c.orientation.orientedSize(width: c.image.0, height: c.image.1)
        let need = c.fit.placement(imageWidth: upright.width, imageHeight: upright.height,
                                   frameWidth: w, frameHeight: h)
        func covers(_ m: Int) -> Bool {
            DCTScale.scaledSize(upright.width, numerator: m) >= need.width
                && DCTScale.scaledSize(upright.height, numerator: m) >= need.height
        }
        #expect(m == 8 || covers(m))
        #expect(m == 1 || !covers(m - 1))
    }

    @Test func scaledSizeRoundsUpLikeLibjpeg() {
        #expect(DCTScale.scaledSize(227, numerator: 2) == 57)
        #expect(DCTScale.scaledSize(149, numerator: 2) == 38)
        #expect(DCTScale.scaledSize(5120, numerator: 3) == 1920)
        #expect(DCTScale.scaledSize(2880, numerator: 3) == 1080)
        #expect(DCTScale.scaledSize(1, numerator: 1) == 1)
        #expect(DCTScale.scaledSize(100, numerator: 8) == 100)
    }

    /// The real library agrees: decoding testorig.jpg (227x149, baseline) for a target exactly
    /// scaledSize(227, M) wide picks M (4 for 3: a baseline JPEG is decoded at the SIMD 4/8
    /// instead) and produces scaledSize(227, M) x scaledSize(149, M).
    @Test(arguments: 1...8)
    func libjpegOutputMatchesScaledSize(m: Int) throws {
        let width = DCTScale.scaledSize(227, numerator: m)
        let decoded = try ImageDecoder.decode(path: Fixtures.path("libjpeg-turbo-testimages", "testorig.jpg"),
                                              options: DecodeOptions(targetWidth: width))
        let chosen = m == 3 ? 4 : m
        #expect(decoded.scaleNumerator == chosen)
        #expect(decoded.bitmap.width == DCTScale.scaledSize(227, numerator: chosen))
        #expect(decoded.bitmap.height == DCTScale.scaledSize(149, numerator: chosen))
    }

    /// By cost: a baseline JPEG takes 4/8 (libjpeg-turbo's SIMD 4x4 IDCT) where 3/8 covers;
    /// a progressive one, and every other covering scale, stay as they are.
    @Test func theDecodeScaleTakesTheSIMDFourEighthsForABaselineJPEG() {
        func m(_ w: Int, _ h: Int, _ target: (Int, Int), progressive: Bool) -> Int {
            DCTScale.decodeNumerator(imageWidth: w, imageHeight: h, targetWidth: target.0, targetHeight: target.1,
                                     fit: .fit, progressive: progressive)
        }
        #expect(m(6000, 4000, (1920, 1080), progressive: false) == 4)   // covering 3/8
        #expect(m(6000, 4000, (1920, 1080), progressive: true) == 3)
        #expect(m(5120, 2880, (1920, 1080), progressive: false) == 4)
        #expect(m(8000, 1000, (1920, 1080), progressive: false) == 2)   // covering 2/8: SIMD already
        #expect(m(3000, 2000, (1920, 1080), progressive: false) == 5)   // 5/8 kept (memory)
        #expect(m(3840, 2160, (1920, 1080), progressive: false) == 4)
        #expect(m(800, 600, (1920, 1080), progressive: false) == 8)
        #expect(m(5120, 2880, (0, 0), progressive: false) == 8)
    }
}
