// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing

/// ImageDecoder on JPEG: libjpeg-turbo's test images, generated progressive / gray / CMYK /
/// YCCK files, DCT scaling, the pixel budget, and the error paths.
@Suite struct ImageDecoderJPEGTests {
    static let turbo = "libjpeg-turbo-testimages"
    static let generated = "generated"

    /// testorig.ppm: libjpeg's own decode of testorig.jpg (binary PPM, P6, maxval 255).
    static func testorigReference() throws -> Bitmap {
        let data = try Fixtures.bytes(turbo, "testorig.ppm")
        // Header: "P6" width height maxval, each followed by one whitespace byte.
        var fields: [String] = []
        var at = 0
        while fields.count < 4 {
            while data[at] == 0x20 || data[at] == 0x0A || data[at] == 0x0D || data[at] == 0x09 { at += 1 }
            let start = at
            while !(data[at] == 0x20 || data[at] == 0x0A || data[at] == 0x0D || data[at] == 0x09) { at += 1 }
            fields.append(String(decoding: data[start..<at], as: UTF8.self))
        }
        at += 1
        #expect(fields[0] == "P6" && fields[3] == "255")
        let w = Int(fields[1])!, h = Int(fields[2])!
        let bitmap = Bitmap(width: w, height: h)
        for i in 0..<w * h {
            let r = UInt32(data[at + 3 * i]), g = UInt32(data[at + 3 * i + 1]), b = UInt32(data[at + 3 * i + 2])
            bitmap.pixels[i] = 0xFF00_0000 | r << 16 | g << 8 | b
        }
        return bitmap
    }

    @Test func baselineMatchesLibjpegsReferenceDecode() throws {
        let decoded = try ImageDecoder.decode(path: Fixtures.path(Self.turbo, "testorig.jpg"), options: DecodeOptions())
        let reference = try Self.testorigReference()
        #expect(decoded.format == .jpeg)
        #expect(decoded.bitmap.width == 227 && decoded.bitmap.height == 149)
        #expect(decoded.sourceWidth == 227 && decoded.sourceHeight == 149)
        #expect(decoded.scaleNumerator == 8 && decoded.orientation == .topLeft)
        #expect(!decoded.bitmap.hasAlpha)
        #expect((0..<decoded.bitmap.pixelCount).allSatisfy { decoded.bitmap.pixels[$0] >> 24 == 0xFF })
        // testorig.ppm comes from IJG libjpeg 6b; libjpeg-turbo's upsampling rounds a little
        // differently (measured: at most 3, mean 0.19).
        #expect(maxDifference(decoded.bitmap, reference) <= 3)
        #expect(meanDifference(decoded.bitmap, reference) < 0.3)
        #expect(decoded.warnings.isEmpty)
    }

    @Test func arithmeticCodedDecodesLikeTheBaselineFile() throws {
        let decoded = try ImageDecoder.decode(path: Fixtures.path(Self.turbo, "testimgari.jpg"),
                                              options: DecodeOptions())
        let reference = try Self.testorigReference()
        #expect(decoded.bitmap.width == 227 && decoded.bitmap.height == 149)
        // The same picture compressed separately (measured: at most 17 apart, mean 0.47).
        #expect(maxDifference(decoded.bitmap, reference) <= 20)
        #expect(meanDifference(decoded.bitmap, reference) < 1)
    }

    @Test func twelveBitJPEGIsUnsupportedWithAClearMessage() throws {
        let path = Fixtures.path(Self.turbo, "monkey12.jpg")
        let expected = ImageError.unsupported(path: path, reason: "12-bit JPEG (data precision 12) is not supported")
        #expect(throws: expected) { try ImageDecoder.decode(path: path, options: DecodeOptions()) }
        #expect(expected.description.contains("12-bit"))
        let bytes = try Fixtures.bytes(Self.turbo, "monkey12.jpg")
        #expect(throws: ImageError.unsupported(path: "m12",
                                               reason: "12-bit JPEG (data precision 12) is not supported")) {
            try ImageDecoder.decode(bytes: bytes, name: "m12")
        }
    }

    @Test(arguments: [(generated, "progressive.jpg"), (generated, "gray.jpg"), (generated, "cmyk-adobe.jpg"),
                      (generated, "ycck-adobe.jpg"), (turbo, "testorig.jpg"), (turbo, "testimgari.jpg")])
    func jpegsMatchPillow(folder: String, name: String) throws {
        let path = Fixtures.path(folder, name)
        let decoded = try ImageDecoder.decode(path: path, options: DecodeOptions())
        let reference = try Pillow.reference(path)
        // The same libjpeg-turbo decodes the samples; the colour conversion of gray, CMYK and
        // YCCK is ours on one side and Pillow's on the other, and must agree exactly.
        let problem = mismatch(decoded.bitmap, reference, tolerance: 0)
        #expect(problem == nil, "\(name): \(problem ?? "")")
    }

    /// The four quadrants of the CMYK fixtures (make_cmyk.c / make_fixtures.py): RGB from
    /// R = (255 - C)(255 - K) / 255 etc.
    static let cmykQuadrants: [(x: Int, y: Int, rgb: [Int])] = [
        (16, 12, [255, 0, 0]), (48, 12, [0, 191, 0]), (16, 36, [127, 127, 127]), (48, 36, [49, 181, 225]),
    ]

    /// Adobe-inverted CMYK, YCCK, and plain (not inverted) CMYK all give the intended colours.
    /// Pillow reads the plain file as inverted (it always assumes Adobe), so it is checked
    /// against the colours the file was written with.
    @Test(arguments: ["cmyk-adobe.jpg", "ycck-adobe.jpg", "cmyk-plain.jpg"])
    func cmykQuadrantsHaveTheirColours(name: String) throws {
        let decoded = try ImageDecoder.decode(path: Fixtures.path(Self.generated, name), options: DecodeOptions())
        #expect(decoded.bitmap.width == 64 && decoded.bitmap.height == 48)
        for quadrant in Self.cmykQuadrants {
            let got = channels(decoded.bitmap[quadrant.x, quadrant.y])
            let close = zip(got, quadrant.rgb).allSatisfy { abs($0 - $1) <= 3 }
            #expect(close, "\(name) at (\(quadrant.x),\(quadrant.y)): \(got), want \(quadrant.rgb)")
        }
    }

    @Test func grayscaleIsExpandedToGrayPixels() throws {
        let decoded = try ImageDecoder.decode(path: Fixtures.path(Self.generated, "gray.jpg"), options: DecodeOptions())
        #expect(decoded.bitmap.width == 80 && decoded.bitmap.height == 60)
        #expect((0..<decoded.bitmap.pixelCount).allSatisfy {
            let c = channels(decoded.bitmap.pixels[$0])
            return c[0] == c[1] && c[1] == c[2] && c[3] == 255
        })
    }

    /// 1/4 scale through libjpeg's DCT is close to averaging 4x4 blocks of the full decode.
    @Test func dctScaledDecodeIsTheSmallerPicture() throws {
        let path = Fixtures.path(Self.turbo, "testorig.jpg")
        let full = try ImageDecoder.decode(path: path, options: DecodeOptions()).bitmap
        let scaled = try ImageDecoder.decode(path: path, options: DecodeOptions(targetWidth: 57, targetHeight: 38))
        #expect(scaled.scaleNumerator == 2)
        #expect(scaled.bitmap.width == 57 && scaled.bitmap.height == 38)  // ceil(227/4), ceil(149/4)
        #expect(scaled.sourceWidth == 227 && scaled.sourceHeight == 149)
        var total = 0, samples = 0
        for y in 0..<37 {
            for x in 0..<56 {
                var sum = [0, 0, 0]
                for dy in 0..<4 { for dx in 0..<4 {
                    let c = channels(full[x * 4 + dx, y * 4 + dy])
                    for i in 0..<3 { sum[i] += c[i] }
                } }
                let got = channels(scaled.bitmap[x, y])
                for i in 0..<3 { total += abs(got[i] - (sum[i] + 8) / 16); samples += 1 }
            }
        }
        let meanDifference = Double(total) / Double(samples)
        #expect(meanDifference < 4, "mean difference \(meanDifference)")
    }

    /// The real 14.7 MP progressive photograph shown on a 1920x1080 screen decodes at 3/8.
    @Test func largePhotoDecodesAtThreeEighths() throws {
        let path = Fixtures.path("photos", "volna-5120x2880.jpg")
        let decoded = try ImageDecoder.decode(path: path,
                                              options: DecodeOptions(targetWidth: 1920, targetHeight: 1080, fit: .fit))
        #expect(decoded.scaleNumerator == 3)
        #expect(decoded.sourceWidth == 5120 && decoded.sourceHeight == 2880)
        #expect(decoded.bitmap.width == 1920 && decoded.bitmap.height == 1080)
        // A photograph, not a flat fill: many distinct colours.
        var seen = Set<UInt32>()
        for i in stride(from: 0, to: decoded.bitmap.pixelCount, by: 997) { seen.insert(decoded.bitmap.pixels[i]) }
        #expect(seen.count > 500)
    }

    /// testorig.jpg with its SOF0 frame size patched to 65500x65500: a few kilobytes that
    /// claim 4.29 gigapixels, refused from the header.
    static func hugeJPEG() throws -> [UInt8] {
        var bytes = try Fixtures.bytes(turbo, "testorig.jpg")
        // Find the SOF0 marker FF C0: length (2), precision (1), height (2), width (2).
        guard let sof = (0..<bytes.count - 9).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }) else {
            throw Pillow.Failure(description: "no SOF0 in testorig.jpg")
        }
        bytes.replaceSubrange(sof + 5..<sof + 9, with: [0xFF, 0xDC, 0xFF, 0xDC])  // 65500, 65500
        return bytes
    }

    @Test func pixelBudgetRefusesAHugeJPEGFromItsHeader() throws {
        let bytes = try Self.hugeJPEG()
        let error = ImageError.tooLarge(path: "big.jpg", width: 65500, height: 65500, limit: 100_000_000)
        #expect(throws: error) { try ImageDecoder.decode(bytes: bytes, name: "big.jpg") }
        #expect(error.description == "big.jpg: 65500x65500 pixels (4290250000) exceeds the pixel limit of 100000000")

        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/big.jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(bytes.count < 10_000)
        #expect(throws: ImageError.tooLarge(path: path, width: 65500, height: 65500, limit: 100_000_000)) {
            try ImageDecoder.decode(path: path, options: DecodeOptions())
        }
        // A lower limit from the options applies to ordinary files too.
        #expect(throws: ImageError.tooLarge(path: "t.jpg", width: 227, height: 149, limit: 30_000)) {
            try ImageDecoder.decode(bytes: Fixtures.bytes(Self.turbo, "testorig.jpg"), name: "t.jpg",
                                    options: DecodeOptions(maxPixels: 30_000))
        }
    }

    @Test func truncatedJPEGIsAnError() throws {
        let whole = try Fixtures.bytes(Self.turbo, "testorig.jpg")
        let expected = "Premature end of JPEG file (the file is truncated)"
        for cut in [whole.count / 2, whole.count - 100] {
            #expect(throws: ImageError.corrupt(path: "cut.jpg", reason: expected)) {
                try ImageDecoder.decode(bytes: Array(whole.prefix(cut)), name: "cut.jpg")
            }
        }
        // A progressive file reads all its scans in jpeg_start_decompress: same error there.
        let progressive = try Fixtures.bytes(Self.generated, "progressive.jpg")
        #expect(throws: ImageError.corrupt(path: "p.jpg", reason: expected)) {
            try ImageDecoder.decode(bytes: Array(progressive.prefix(progressive.count * 2 / 3)), name: "p.jpg")
        }
        // Cut inside the headers: libjpeg's own error.
        #expect(throws: ImageError.self) { try ImageDecoder.decode(bytes: Array(whole.prefix(300)), name: "head.jpg") }

        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/cut.jpg"
        try Data(whole.prefix(whole.count / 2)).write(to: URL(fileURLWithPath: path))
        #expect(throws: ImageError.corrupt(path: path, reason: expected)) {
            try ImageDecoder.decode(path: path, options: DecodeOptions())
        }
    }

    @Test func garbageAfterTheJPEGSignatureIsCorrupt() throws {
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x41, count: 200)
        #expect(throws: ImageError.self) { try ImageDecoder.decode(bytes: bytes, name: "junk.jpg") }
        do {
            _ = try ImageDecoder.decode(bytes: bytes, name: "junk.jpg")
        } catch {
            guard case .corrupt(_, let reason) = error else { Issue.record("got \(error)"); return }
            #expect(!reason.isEmpty)
        }
    }

    @Test func notAnImageEmptyMissingAndDirectory() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = directory + "/notes.jpg"
        try Data("just some text, not a picture\n".utf8).write(to: URL(fileURLWithPath: text))
        let unknown = FileFormat.unknown(firstBytes: Array("just som".utf8))
        #expect(throws: ImageError.otherFormat(path: text, format: unknown)) {
            try ImageDecoder.decode(path: text, options: DecodeOptions())
        }
        #expect(ImageError.otherFormat(path: text, format: unknown).description
                == "\(text): an unknown format (not shown: only JPEG, PNG, WebP, HEIF, AVIF and GIF are supported)")

        let empty = directory + "/empty.png"
        try Data().write(to: URL(fileURLWithPath: empty))
        #expect(throws: ImageError.corrupt(path: empty, reason: "the file is empty (0 bytes)")) {
            try ImageDecoder.decode(path: empty, options: DecodeOptions())
        }
        #expect(throws: ImageError.corrupt(path: "e", reason: "the file is empty (0 bytes)")) {
            try ImageDecoder.decode(bytes: [], name: "e")
        }

        let missing = directory + "/missing.jpg"
        #expect(throws: ImageError.unreadable(path: missing, errno: ENOENT)) {
            try ImageDecoder.decode(path: missing, options: DecodeOptions())
        }
        #expect(throws: ImageError.unreadable(path: directory, errno: EISDIR)) {
            try ImageDecoder.decode(path: directory, options: DecodeOptions())
        }
        #expect(ImageError.unreadable(path: missing, errno: ENOENT).description
                    == "\(missing): cannot read: No such file or directory (errno 2)")
    }

    /// The format comes from the bytes: a PNG named .jpg and a JPEG named .png both decode.
    @Test func formatIsSniffedNotTakenFromTheName() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pngAsJpg = directory + "/really-a-png.jpg", jpgAsPng = directory + "/really-a-jpeg.png"
        try Data(Fixtures.bytes("pngsuite", "basn2c08.png")).write(to: URL(fileURLWithPath: pngAsJpg))
        try Data(Fixtures.bytes(Self.turbo, "testorig.jpg")).write(to: URL(fileURLWithPath: jpgAsPng))
        #expect(try ImageDecoder.decode(path: pngAsJpg, options: DecodeOptions()).format == .png)
        #expect(try ImageDecoder.decode(path: jpgAsPng, options: DecodeOptions()).format == .jpeg)
        #expect(ImageDecoder.format(ofHeader: [0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(ImageDecoder.format(ofHeader: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .png)
        #expect(ImageDecoder.format(ofHeader: Array("GIF89a".utf8)) == .gif)
        #expect(ImageDecoder.format(ofHeader: Array("BM".utf8) + [UInt8](repeating: 0, count: 12)) == nil)
    }

    @Test func memoryAndFileGiveTheSamePixels() throws {
        for name in ["progressive.jpg", "cmyk-adobe.jpg"] {
            let fromFile = try ImageDecoder.decode(path: Fixtures.path(Self.generated, name), options: DecodeOptions())
            let fromMemory = try ImageDecoder.decode(bytes: Fixtures.bytes(Self.generated, name), name: name)
            #expect(memcmp(fromFile.bitmap.pixels, fromMemory.bitmap.pixels, fromFile.bitmap.byteCount) == 0, "\(name)")
        }
    }
}

extension ImageDecoderJPEGTests {
    /// Damaged copies of real files (bytes overwritten at fixed pseudo-random places, and cut
    /// short) either decode or throw an ImageError; none crashes. Run under
    /// `swift test --sanitize=address` this also shows that no error path leaks.
    @Test(arguments: [(turbo, "testorig.jpg"), (generated, "progressive.jpg"), (generated, "ycck-adobe.jpg"),
                      ("pngsuite", "basi6a16.png"), ("pngsuite", "basn3p08.png")])
    func damagedFilesNeverCrash(folder: String, name: String) throws {
        let original = try Fixtures.bytes(folder, name)
        var state: UInt32 = 2_463_534_242
        func next() -> Int { state ^= state << 13; state ^= state >> 17; state ^= state << 5; return Int(state) }
        var failures = 0
        for round in 0..<150 {
            var bytes = original
            for _ in 0..<(1 + round % 4) {
                bytes[8 + next() % (bytes.count - 8)] = UInt8(truncatingIfNeeded: next())
            }
            if round % 5 == 0 { bytes = Array(bytes.prefix(2 + next() % bytes.count)) }
            do {
                let decoded = try ImageDecoder.decode(bytes: bytes, name: name,
                                                      options: DecodeOptions(maxPixels: 4_000_000))
                #expect(decoded.bitmap.width > 0 && decoded.bitmap.height > 0)
            } catch {
                failures += 1
                #expect(!error.reason.isEmpty)
            }
        }
        #expect(failures > 0)
    }
}

/// The end of a JPEG file (a missing EOI against missing data) and the scan limit.
extension ImageDecoderJPEGTests {
    static let truncatedReason = "Premature end of JPEG file (the file is truncated)"

    /// Huffman-coded fixtures: baseline 4:2:0 (testorig, odd size), progressive, grayscale,
    /// CMYK and YCCK, and a sequential file with one scan per component.
    static let huffman: [(String, String)] = [
        (turbo, "testorig.jpg"), (generated, "progressive.jpg"), (generated, "gray.jpg"),
        (generated, "cmyk-adobe.jpg"), (generated, "ycck-adobe.jpg"), (generated, "cmyk-plain.jpg"),
        (generated, "multiscan.jpg"),
    ]

    // MARK: The end of the file

    /// All data there, only the EOI marker (FF D9) missing, or only its last byte: the image
    /// is shown, the very pixels of the whole file, with a warning; through decode and
    /// decodeFitted, from memory and from a file.
    @Test(arguments: huffman)
    func missingEOIIsShownWithAWarning(folder: String, name: String) throws {
        let whole = try Fixtures.bytes(folder, name)
        #expect(Array(whole.suffix(2)) == [0xFF, 0xD9])
        let intact = try ImageDecoder.decode(bytes: whole, name: name)
        #expect(intact.warnings.isEmpty)
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for cut in [1, 2] {
            let bytes = Array(whole.dropLast(cut))
            let decoded = try ImageDecoder.decode(bytes: bytes, name: name)
            #expect(decoded.warnings == ["JPEG ends without its EOI marker"], "\(name) -\(cut): \(decoded.warnings)")
            #expect(memcmp(decoded.bitmap.pixels, intact.bitmap.pixels, intact.bitmap.byteCount) == 0,
                    "\(name) -\(cut)")

            let path = directory + "/cut-\(cut).jpg"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let fromFile = try ImageDecoder.decode(path: path)
            #expect(fromFile.warnings == ["JPEG ends without its EOI marker"])
            #expect(memcmp(fromFile.bitmap.pixels, intact.bitmap.pixels, intact.bitmap.byteCount) == 0)

            for fit in FitMode.allCases {
                let expected = Bitmap(width: 41, height: 29)
                Compositor.place(try ImageDecoder.decode(bytes: whole, name: name,
                                                         options: DecodeOptions(targetWidth: 41, targetHeight: 29,
                                                                                fit: fit)).bitmap,
                                 into: expected, fit: fit, background: .black)
                let frame = Bitmap(width: 41, height: 29)
                let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: fit, background: .black)
                #expect(fitted.warnings == ["JPEG ends without its EOI marker"], "\(name) -\(cut) \(fit)")
                #expect(memcmp(frame.pixels, expected.pixels, frame.byteCount) == 0, "\(name) -\(cut) \(fit)")
            }
        }
    }

    /// The sample photos and the 14.7 MP progressive photo without their EOI: shown.
    @Test func photosWithoutEOIAreShown() throws {
        let samples = URL(fileURLWithPath: Fixtures.root + "/../../deploy/samples")
        let paths = ["colorfulcups-1920x1200.jpg", "path-1920x1200.jpg", "grey-1920x1200.jpg"]
            .map { samples.appendingPathComponent($0).path }
            + [Fixtures.path("photos", "volna-5120x2880.jpg")]
        for path in paths {
            let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let options = DecodeOptions(targetWidth: 320, targetHeight: 200)
            let intact = try ImageDecoder.decode(bytes: whole, name: path, options: options)
            let cut = try ImageDecoder.decode(bytes: Array(whole.dropLast(2)), name: path, options: options)
            #expect(cut.warnings == ["JPEG ends without its EOI marker"], "\(path)")
            #expect(memcmp(cut.bitmap.pixels, intact.bitmap.pixels, intact.bitmap.byteCount) == 0, "\(path)")
        }
    }

    /// Data missing before the end (cut 3 to 64 bytes short: into the last scan's data) is the
    /// truncation error, never a picture.
    @Test(arguments: huffman)
    func dataMissingIsTruncated(folder: String, name: String) throws {
        let whole = try Fixtures.bytes(folder, name)
        for cut in 3...64 {
            #expect(throws: ImageError.corrupt(path: name, reason: Self.truncatedReason), "\(name) -\(cut)") {
                try ImageDecoder.decode(bytes: Array(whole.dropLast(cut)), name: name)
            }
        }
    }

    /// A multi-scan file cut between two scans (every scan before it complete, the file ending
    /// where the next SOS marker would be) is truncated, not a picture with scans missing:
    /// progressive (its coefficients lack bits) and sequential (a component never came).
    @Test(arguments: ["progressive.jpg", "multiscan.jpg"])
    func multiScanFileCutBetweenScansIsTruncated(name: String) throws {
        let whole = try Fixtures.bytes("generated", name)
        let (scans, _) = JPEGFiles.scans(whole)
        #expect(scans.count >= 3)
        for k in 1..<scans.count {
            let bytes = Array(whole[..<scans[k].lowerBound])
            #expect(throws: ImageError.corrupt(path: name, reason: Self.truncatedReason),
                    "\(name): \(k) of \(scans.count) scans") {
                try ImageDecoder.decode(bytes: bytes, name: name)
            }
            #expect(throws: ImageError.corrupt(path: name, reason: Self.truncatedReason),
                    "\(name): \(k) of \(scans.count) scans") {
                try ImageDecoder.decodeFitted(bytes: bytes, name: name, into: Bitmap(width: 30, height: 20), fit: .fill,
                                              background: .black)
            }
        }
    }

    /// Arithmetic coding pads the end of its data with zeros without a warning, so libjpeg
    /// cannot tell a missing EOI from missing data: there, any end of data before the EOI is
    /// the truncation error (the file has its EOI: it decodes).
    @Test func arithmeticCodedFileNeedsItsEOI() throws {
        let whole = try Fixtures.bytes("libjpeg-turbo-testimages", "testimgari.jpg")
        #expect(try ImageDecoder.decode(bytes: whole, name: "a.jpg").warnings.isEmpty)
        for cut in 1...40 {
            #expect(throws: ImageError.corrupt(path: "a.jpg", reason: Self.truncatedReason), "-\(cut)") {
                try ImageDecoder.decode(bytes: Array(whole.dropLast(cut)), name: "a.jpg")
            }
        }
    }

    // MARK: Scans

    /// A file whose scans pass over its 8x8 blocks more than 32 times in all (a tiny scan costs
    /// a pass as much as a full one) is refused at the scan that passes the limit, before its
    /// data is decoded; a few scans more than usual still decode (a repeated refinement scan is a
    /// bogus progression libjpeg warns about, not an error).
    @Test func scansPassingOverTheBlocksTooOftenAreRefused() throws {
        let progressive = try Fixtures.bytes("generated", "progressive.jpg")
        let scans = JPEGFiles.scans(progressive).scans.count
        let more = JPEGFiles.repeatingLastScan(progressive, times: 10)
        let decoded = try ImageDecoder.decode(bytes: more, name: "more.jpg")
        #expect(decoded.bitmap.width == 96)
        #expect(decoded.warnings.contains { $0.contains("Inconsistent progression sequence") },
                "\(decoded.warnings.prefix(2))")

        let tooMany = JPEGFiles.repeatingLastScan(progressive, times: 1000 - scans)
        guard case .unsupported(let path, let reason) = Result(catching: { () throws(ImageError) in
            try ImageDecoder.decode(bytes: tooMany, name: "1000.jpg")
        }).failure else {
            Issue.record("1000 scans decoded")
            return
        }
        #expect(path == "1000.jpg")
        #expect(reason.hasPrefix("its first ")
                    && reason.contains("already pass over the image's 8x8 blocks more than 32 times"),
                "\(reason)")

        // The attack: a tiny scan repeated 20000 times. Refused after a few dozen scans, in a
        // fraction of the time the whole file would take.
        let attack = JPEGFiles.repeatingLastScan(progressive, times: 20_000)
        let start = ContinuousClock.now
        let frame = Bitmap(width: 64, height: 48)
        #expect(throws: ImageError.self) {
            try ImageDecoder.decodeFitted(bytes: attack, name: "attack.jpg", into: frame, fit: .fit, background: .black)
        }
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}
