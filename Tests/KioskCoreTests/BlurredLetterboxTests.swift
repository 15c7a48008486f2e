// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
@testable import KioskCore

/// The `blur` fit: the letterbox is the image scaled to fill, Gaussian-blurred (1/20 of the
/// width) and dimmed, checked against a reference computed here the slow, plain way; the image
/// itself is exactly the `fit` frame's.
@Suite struct BlurredLetterboxTests {
    /// A portrait test picture with sharp structure: four colour bands and a white stripe.
    static func picture(width: Int = 90, height: Int = 160) -> Bitmap {
        let image = Bitmap(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let band: UInt32 = [0xFFC8_2828, 0xFF28_B43C, 0xFF28_3CC8, 0xFFE6_C81E][min(3, 4 * y / height)]
                image[x, y] = (x / 6) % 5 == 2 ? 0xFFFF_FFFF : band
            }
        }
        return image
    }

    /// The reference letterbox: the original picture scaled to fill the frame (bilinear, pixel
    /// centres aligned), a true separable Gaussian of σ = width/20 (kernel to 3σ, edges
    /// clamped) in Double, times `letterboxDim`/256. Channels as [red, green, blue] planes.
    static func reference(_ image: Bitmap, width fw: Int, height fh: Int, blurred: Bool = true,
                          sigmaPerWidth: Double = 1.0 / 20) -> [[Double]] {
        let cover = FitMode.fill.placement(imageWidth: image.width, imageHeight: image.height,
                                           frameWidth: fw, frameHeight: fh)
        var planes = [[Double]](repeating: [Double](repeating: 0, count: fw * fh), count: 3)
        func channel(_ v: UInt32, _ c: Int) -> Double { Double((v >> (16 - 8 * UInt32(c))) & 0xFF) }
        for y in 0..<fh {
            let sy = min(Double(image.height - 1),
                         max(0, (Double(y - cover.y) + 0.5) * Double(image.height) / Double(cover.height) - 0.5))
            for x in 0..<fw {
                let sx = min(Double(image.width - 1),
                             max(0, (Double(x - cover.x) + 0.5) * Double(image.width) / Double(cover.width) - 0.5))
                let xa = Int(sx), ya = Int(sy), xb = min(xa + 1, image.width - 1), yb = min(ya + 1, image.height - 1)
                let wx = sx - Double(xa), wy = sy - Double(ya)
                for c in 0..<3 {
                    let top = channel(image[xa, ya], c) * (1 - wx) + channel(image[xb, ya], c) * wx
                    let bottom = channel(image[xa, yb], c) * (1 - wx) + channel(image[xb, yb], c) * wx
                    planes[c][y * fw + x] = top * (1 - wy) + bottom * wy
                }
            }
        }
        let dim = Double(Compositor.letterboxDim) / 256
        guard blurred else { return planes.map { $0.map { $0 * dim } } }
        let sigma = Double(fw) * sigmaPerWidth, radius = Int((3 * sigma).rounded(.up))
        var kernel = (-radius...radius).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        for c in 0..<3 {
            var horizontal = [Double](repeating: 0, count: fw * fh)
            for y in 0..<fh {
                for x in 0..<fw {
                    var s = 0.0
                    for k in -radius...radius {
                        s += kernel[k + radius] * planes[c][y * fw + min(fw - 1, max(0, x + k))]
                    }
                    horizontal[y * fw + x] = s
                }
            }
            for y in 0..<fh {
                for x in 0..<fw {
                    var s = 0.0
                    for k in -radius...radius {
                        s += kernel[k + radius] * horizontal[min(fh - 1, max(0, y + k)) * fw + x]
                    }
                    planes[c][y * fw + x] = s * dim
                }
            }
        }
        return planes
    }

    /// Mean and largest absolute difference per channel over the pixels outside `rect`.
    static func letterboxDifference(_ frame: Bitmap, _ planes: [[Double]],
                                    outside rect: PixelRect) -> (mean: Double, max: Double) {
        var sum = 0.0, largest = 0.0, n = 0
        for y in 0..<frame.height {
            for x in 0..<frame.width
            where !(rect.x..<rect.x + rect.width).contains(x) || !(rect.y..<rect.y + rect.height).contains(y) {
                for c in 0..<3 {
                    let d = abs(Double((frame[x, y] >> (16 - 8 * UInt32(c))) & 0xFF) - planes[c][y * frame.width + x])
                    sum += d; largest = max(largest, d); n += 1
                }
            }
        }
        return (sum / Double(max(1, n)), largest)
    }

    @Test(arguments: [(240, 135), (135, 240)])
    func letterboxIsTheImageBlurredAndDimmed(size: (Int, Int)) {
        let (fw, fh) = size
        // Portrait picture on a landscape frame (pillarbox), and a landscape one on a portrait frame.
        let image = fw > fh ? Self.picture() : Self.picture(width: 160, height: 90)
        let frame = Bitmap(width: fw, height: fh, fill: 0xFF12_3456)
        Compositor.place(image.copy(), into: frame, fit: .blur, background: .black)
        let rect = FitMode.fit.placement(imageWidth: image.width, imageHeight: image.height,
                                         frameWidth: fw, frameHeight: fh)
        let blurred = Self.letterboxDifference(frame, Self.reference(image, width: fw, height: fh), outside: rect)
        // Within a few levels of 255 (the reduced copy, the three boxes and the fitted image as
        // the source cost a little), on a picture of sharp high-contrast stripes.
        #expect(blurred.mean < 2.5 && blurred.max < 16, "\(fw)x\(fh): against the Gaussian reference \(blurred)")
        // A Gaussian half as wide, or twice as wide, is clearly further off: the strength is right.
        for factor in [1.0 / 40, 1.0 / 10] {
            let other = Self.letterboxDifference(frame, Self.reference(image, width: fw, height: fh,
                                                                       sigmaPerWidth: factor), outside: rect)
            #expect(other.mean > 1.5 * blurred.mean,
                    "\(fw)x\(fh): σ = width × \(factor) gives \(other), width/20 \(blurred)")
        }
        // The same picture unblurred is far off: the blur is real, and the test can tell.
        let sharp = Self.letterboxDifference(frame, Self.reference(image, width: fw, height: fh, blurred: false),
                                             outside: rect)
        #expect(sharp.mean > 10, "\(fw)x\(fh): against the unblurred fill \(sharp)")
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] >> 24 == 0xFF })
    }

    @Test func theImageItselfIsExactlyTheFittedOne() {
        let image = Self.picture()
        let fitted = Bitmap(width: 240, height: 135), blurred = Bitmap(width: 240, height: 135)
        Compositor.place(image.copy(), into: fitted, fit: .fit, background: .black)
        Compositor.place(image.copy(), into: blurred, fit: .blur, background: .black)
        let rect = FitMode.blur.placement(imageWidth: 90, imageHeight: 160, frameWidth: 240, frameHeight: 135)
        #expect(rect == FitMode.fit.placement(imageWidth: 90, imageHeight: 160, frameWidth: 240, frameHeight: 135))
        var inside = 0, letterboxBlack = 0
        for y in 0..<135 {
            for x in 0..<240 {
                if (rect.x..<rect.x + rect.width).contains(x) {
                    #expect(blurred[x, y] == fitted[x, y], "(\(x), \(y))")
                    inside += 1
                } else if blurred[x, y] == 0xFF00_0000 {
                    letterboxBlack += 1
                }
            }
        }
        #expect(inside == rect.width * 135 && rect.width < 240)
        #expect(letterboxBlack == 0)
    }

    @Test func aCoveringImageLeavesTheFrameAlone() {
        let frame = Bitmap(width: 64, height: 36, fill: 0xFF10_2030)
        Compositor.fillLetterboxBlurred(frame, imageRect: PixelRect(x: 0, y: 0, width: 64, height: 36))
        Compositor.fillLetterboxBlurred(frame, imageRect: PixelRect(x: 0, y: 0, width: 0, height: 0))
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == 0xFF10_2030 })
    }

    @Test func threeBoxesHaveTheGaussiansVariance() {
        for sigma in [1.0, 2.5, 6.0, 6.4, 12.0] {
            let boxes = Compositor.gaussianBoxes(sigma: sigma)
            let variance = boxes.map { Double($0 * $0 - 1) / 12 }.reduce(0, +)
            #expect(boxes.count == 3 && boxes.allSatisfy { $0 % 2 == 1 })
            #expect(abs(variance.squareRoot() - sigma) < 0.35,
                    "σ \(sigma): boxes \(boxes) give σ \(variance.squareRoot())")
        }
    }
}
