// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskImaging
import Testing

/// `--fit blur` on real photos: the picture is exactly the `fit` frame's (JPEG streamed, PNG),
/// and the letterbox matches Pillow's own blur of the photo scaled to fill (an independent
/// implementation: Image.resize, ImageFilter.GaussianBlur with σ = width/20, then dimmed).
@Suite struct FitBlurTests {
    static let frameWidth = 200, frameHeight = 300
    static var photo: String { DecodeFittedTests.samplesFolder + "/colorfulcups-1920x1200.jpg" }

    /// Pillow's letterbox reference, R,G,B bytes of the whole frame.
    static func pillowReference(_ path: String) throws -> [UInt8] {
        let script = """
            import sys
            from PIL import Image, ImageFilter
            w, h = \(frameWidth), \(frameHeight)
            im = Image.open(sys.argv[1]).convert("RGB")
            s = max(w / im.width, h / im.height)
            sw, sh = round(im.width * s), round(im.height * s)
            im = im.resize((sw, sh), Image.Resampling.BOX).crop(((sw - w) // 2, (sh - h) // 2, \
            (sw - w) // 2 + w, (sh - h) // 2 + h))
            im = im.filter(ImageFilter.GaussianBlur(w / 20)).point(lambda v: v * \(Compositor.letterboxDim) / 256)
            sys.stdout.buffer.write(im.tobytes())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Pillow.python)
        process.arguments = ["-c", script, path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        guard process.terminationStatus == 0, data.count == frameWidth * frameHeight * 3 else {
            throw Pillow.Failure(description: "Pillow's blur reference failed (status \(process.terminationStatus), "
                                     + "\(data.count) bytes; Debian package python3-pil)")
        }
        return data
    }

    @Test func thePhotoIsTheFittedOneAndTheLetterboxPillowsBlur() throws {
        let (blurred, fitted) = try DecodeFittedTests.fitted(path: Self.photo, width: Self.frameWidth,
                                                             height: Self.frameHeight, fit: .blur)
        let (plain, _) = try DecodeFittedTests.fitted(path: Self.photo, width: Self.frameWidth,
                                                      height: Self.frameHeight, fit: .fit)
        #expect(fitted.streamed, "a JPEG stored upright is streamed with blur too")
        let rect = FitMode.fit.placement(imageWidth: 1920, imageHeight: 1200, frameWidth: Self.frameWidth,
                                         frameHeight: Self.frameHeight)
        let reference = try Self.pillowReference(Self.photo)
        var sum = 0.0, largest = 0, n = 0
        for y in 0..<Self.frameHeight {
            for x in 0..<Self.frameWidth {
                if (rect.y..<rect.y + rect.height).contains(y) {
                    #expect(blurred[x, y] == plain[x, y], "(\(x), \(y)): the picture differs from fit")
                    continue
                }
                let v = blurred[x, y]
                for c in 0..<3 {
                    let d = abs(Int((v >> (16 - 8 * UInt32(c))) & 0xFF)
                                - Int(reference[(y * Self.frameWidth + x) * 3 + c]))
                    sum += Double(d); largest = max(largest, d); n += 1
                }
            }
        }
        #expect(n == Self.frameWidth * (Self.frameHeight - rect.height) * 3)
        #expect(sum / Double(n) < 2.5 && largest < 16, "against Pillow: mean \(sum / Double(n)), max \(largest)")
    }

    @Test func aPNGWithAlphaIsFlattenedThenBlurred() throws {
        let path = Fixtures.path("pngsuite", "basn6a08.png")  // 32x32 RGBA, into 40x40 at x = 12
        let (blurred, _) = try DecodeFittedTests.fitted(path: path, width: 64, height: 40, fit: .blur)
        let (plain, _) = try DecodeFittedTests.fitted(path: path, width: 64, height: 40, fit: .fit)
        for y in 0..<40 {
            for x in 12..<52 { #expect(blurred[x, y] == plain[x, y], "(\(x), \(y))") }
            for x in [0, 11, 52, 63] {
                #expect(blurred[x, y] != plain[x, y] && blurred[x, y] >> 24 == 0xFF, "(\(x), \(y)) is letterbox")
            }
        }
    }
}
