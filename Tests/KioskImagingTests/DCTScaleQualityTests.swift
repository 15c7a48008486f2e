// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskImaging
import Testing

/// The DCT scale chosen by cost keeps the picture as good: a baseline JPEG decoded at 4/8 and
/// area-averaged to the frame is at least as close to the full-size decode area-averaged to the
/// frame (the best the file can give) as the same coefficients decoded at 3/8.
@Suite struct DCTScaleQualityTests {
    /// Runs jpegtran (lossless: the same DCT coefficients in another coding process).
    static func jpegtran(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jpegtran")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "jpegtran \(arguments)")
    }

    /// Mean absolute difference per channel (0...255) of two same-size XRGB8888 frames.
    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        var sum = 0
        for i in 0..<a.pixelCount {
            let p = a.pixels[i], q = b.pixels[i]
            for shift in [0, 8, 16] as [UInt32] { sum += abs(Int((p >> shift) & 0xFF) - Int((q >> shift) & 0xFF)) }
        }
        return Double(sum) / Double(a.pixelCount * 3)
    }

    @Test func fourEighthsOfABaselineJPEGIsAtLeastAsGoodAsThreeEighths() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jpegtran") else {
            Issue.record(Comment(rawValue: "/usr/bin/jpegtran is missing: apt-get install libjpeg-turbo-progs "
                                     + "(deploy/apt-deps.sh --tests)"))
            return
        }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // 2560x1440 of the real photo (iMCU-aligned crop), as baseline and as progressive.
        let baseline = directory + "/baseline.jpg", progressive = directory + "/progressive.jpg"
        try Self.jpegtran(["-crop", "2560x1440+1280+720", "-outfile", baseline,
                           Fixtures.path("photos", "volna-5120x2880.jpg")])
        try Self.jpegtran(["-progressive", "-outfile", progressive, baseline])

        let (width, height) = (960, 540)   // 3/8 of 2560x1440 covers it exactly
        func fitted(_ path: String) throws -> (Bitmap, FittedImage) {
            let frame = Bitmap(width: width, height: height, fill: 0)
            let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: .black,
                                                       options: DecodeOptions(maxPixels: 100_000_000))
            return (frame, fitted)
        }
        let (four, baselineFit) = try fitted(baseline)
        let (three, progressiveFit) = try fitted(progressive)
        #expect(baselineFit.scaleNumerator == 4, "a baseline JPEG takes the SIMD 4/8 where 3/8 covers")
        #expect(progressiveFit.scaleNumerator == 3, "a progressive one keeps the smallest covering scale")

        let full = try ImageDecoder.decode(path: baseline, options: DecodeOptions(maxPixels: 100_000_000))
        #expect(full.scaleNumerator == 8)
        let best = Bitmap(width: width, height: height, fill: 0)
        Compositor.place(full.bitmap, into: best, fit: .fit, background: .black)

        let fourError = Self.meanDifference(four, best), threeError = Self.meanDifference(three, best)
        print("DCTScaleQualityTests: mean difference from the full-size decode, per channel: "
              + "4/8 \(fourError), 3/8 \(threeError)")
        #expect(fourError <= threeError, "4/8: \(fourError), 3/8: \(threeError)")
    }
}
