// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing

/// ImageDecoder.decodeFitted and FittedImage: a JPEG streamed into the frame gives exactly the
/// frame of decode + Compositor.place, for real files, many frame sizes and every fit mode;
/// what cannot be streamed falls back; errors mid-stream are thrown.
@Suite struct DecodeFittedTests {
    static let background = RGBColor(red: 0x33, green: 0x66, blue: 0x99)

    /// The frame the whole-image path gives: decode for the frame, then place.
    static func reference(path: String, width: Int, height: Int, fit: FitMode,
                          maxPixels: Int = 100_000_000) throws -> (frame: Bitmap, decoded: DecodedImage) {
        let options = DecodeOptions(maxPixels: maxPixels, targetWidth: width, targetHeight: height, fit: fit)
        let decoded = try ImageDecoder.decode(path: path, options: options)
        let frame = Bitmap(width: width, height: height, fill: 0x1234_5678)
        Compositor.place(decoded.bitmap, into: frame, fit: fit, background: background)
        return (frame, decoded)
    }

    /// decodeFitted into a frame full of junk (so an unwritten pixel shows).
    static func fitted(path: String, width: Int, height: Int,
                       fit: FitMode) throws -> (frame: Bitmap, fitted: FittedImage) {
        let frame = Bitmap(width: width, height: height, fill: 0xDEAD_BEEF)
        let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: fit, background: background,
                                                   options: DecodeOptions(maxPixels: 100_000_000))
        return (frame, fitted)
    }

    /// Where two frames first differ, or nil when they are equal byte for byte.
    static func firstDifference(_ a: Bitmap, _ b: Bitmap) -> String? {
        guard a.width == b.width, a.height == b.height else {
            return "sizes \(a.width)x\(a.height) and \(b.width)x\(b.height)"
        }
        if memcmp(a.pixels, b.pixels, a.byteCount) == 0 { return nil }
        let i = (0..<a.pixelCount).first { a.pixels[$0] != b.pixels[$0] }!
        let count = (0..<a.pixelCount).filter { a.pixels[$0] != b.pixels[$0] }.count
        return "\(count) pixels differ, first at (\(i % a.width), \(i / a.width)):"
            + " \(String(a.pixels[i], radix: 16)) vs \(String(b.pixels[i], radix: 16))"
    }

    /// Checks one file at one frame size in all three fit modes; returns the results.
    @discardableResult
    static func checkSameFrame(_ path: String, width: Int, height: Int,
                               streams: Bool = true) throws -> [FitMode: FittedImage] {
        var results: [FitMode: FittedImage] = [:]
        for fit in FitMode.allCases {
            let (expected, decoded) = try reference(path: path, width: width, height: height, fit: fit)
            let (frame, fitted) = try Self.fitted(path: path, width: width, height: height, fit: fit)
            let name = "\((path as NSString).lastPathComponent) \(fit) \(width)x\(height)"
            #expect(firstDifference(frame, expected) == nil, "\(name): \(firstDifference(frame, expected) ?? "")")
            #expect(fitted.streamed == streams, "\(name)")
            #expect(fitted.scaleNumerator == decoded.scaleNumerator, "\(name)")
            #expect(fitted.sourceWidth == decoded.sourceWidth && fitted.sourceHeight == decoded.sourceHeight, "\(name)")
            #expect(fitted.decodedWidth == decoded.bitmap.width && fitted.decodedHeight == decoded.bitmap.height,
                    "\(name)")
            #expect(fitted.orientation == decoded.orientation && fitted.format == decoded.format, "\(name)")
            #expect(fitted.warnings == decoded.warnings, "\(name)")
            results[fit] = fitted
        }
        return results
    }

    // MARK: Same pixels

    static let samples = ["colorfulcups-1920x1200.jpg", "eveningglow-1920x1200.jpg", "fallenleaf-1920x1200.jpg",
                          "grey-1920x1200.jpg", "path-1920x1200.jpg"]
    static var samplesFolder: String { Fixtures.root + "/../../deploy/samples" }

    /// Frame sizes for the 1920x1200 photos, all smaller than the photo (the resampler is slow in
    /// a debug build; larger and equal frames: the small fixtures below, and
    /// ``fillReadsOnlyTheRowsItShows()``): DCT scales 1/8 (200x125) and 2/8 (333x177), odd
    /// sizes, a portrait frame (fill crops left and right). 1000x200 decodes at 5/8 for fill
    /// and stretch, where libjpeg's 4:2:0 upsampling needs context rows, and fill crops most
    /// rows off the top and bottom (skipped, never decoded).
    static let photoSizes: [(Int, Int)] = [(333, 177), (200, 125), (150, 250), (1000, 200)]

    /// The sample photos: 4:2:0 baseline, 4:2:0 progressive (colorfulcups), grayscale (grey).
    @Test(arguments: samples)
    func samplePhotoStreamsToTheSameFrame(name: String) throws {
        let path = Self.samplesFolder + "/" + name
        for (w, h) in Self.photoSizes {
            let results = try Self.checkSameFrame(path, width: w, height: h)
            if w == 1000 {
                let fill = try #require(results[.fill])
                #expect(fill.scaleNumerator == 5 && fill.decodedHeight == 750)
                #expect(fill.decodedRows.lowerBound > 200 && fill.decodedRows.upperBound < 550, "\(fill.decodedRows)")
            }
        }
    }

    /// The small fixtures: progressive, grayscale, libjpeg's testorig (227x149, odd), CMYK and
    /// YCCK, at sizes below, equal to and above their own.
    @Test(arguments: [("generated", "progressive.jpg"), ("generated", "gray.jpg"),
                      ("libjpeg-turbo-testimages", "testorig.jpg"), ("generated", "cmyk-adobe.jpg"),
                      ("generated", "ycck-adobe.jpg"), ("generated", "cmyk-plain.jpg")])
    func fixtureStreamsToTheSameFrame(folder: String, name: String) throws {
        let path = Fixtures.path(folder, name)
        let own = try ImageDecoder.decode(path: path).bitmap
        let sizes = [(17, 23), (40, 30), (own.width, own.height), (own.width + 1, own.height - 1), (333, 177),
                     (90, 160)]
        for (w, h) in sizes {
            try Self.checkSameFrame(path, width: w, height: h)
        }
    }

    /// The 14.7 MP progressive 4:4:4 photo: 3/8 for the 1080p screen; fill into a square frame
    /// crops left and right, into a wide one top and bottom.
    @Test func largeProgressivePhotoStreamsToTheSameFrame() throws {
        let path = Fixtures.path("photos", "volna-5120x2880.jpg")
        let results = try Self.checkSameFrame(path, width: 1920, height: 1080)
        #expect(results[.fit]?.scaleNumerator == 3)
        try Self.checkSameFrame(path, width: 1000, height: 300)
    }

    /// A fill that crops top and bottom decodes only the band it shows: rows above are skipped,
    /// rows below are never decoded; fit and stretch read every row.
    @Test func fillReadsOnlyTheRowsItShows() throws {
        let path = Self.samplesFolder + "/path-1920x1200.jpg"
        let results = try Self.checkSameFrame(path, width: 1920, height: 1080)
        let fill = try #require(results[.fill])
        #expect(fill.scaleNumerator == 8 && fill.decodedHeight == 1200)
        // 1920x1200 fills 1920x1080 at 1:1: 60 rows cropped at each end.
        #expect(fill.decodedRows == 60..<1140)
        #expect(results[.fit]?.decodedRows == 0..<1200)
        #expect(results[.stretch]?.decodedRows == 0..<1200)
    }

    // MARK: Fallbacks

    /// A rotated JPEG cannot stream (its file rows are columns of the picture): it is decoded
    /// whole, turned, placed, and stands upright.
    @Test func exifRotatedJPEGFallsBackAndStandsUpright() throws {
        let path = Fixtures.path("exif-orientation", "test_6.jpg")
        let results = try Self.checkSameFrame(path, width: 100, height: 200, streams: false)
        let fit = try #require(results[.fit])
        #expect(fit.orientation == .rightTop)
        #expect(fit.sourceWidth == 100 && fit.sourceHeight == 50)
        #expect(fit.decodedWidth == 50 && fit.decodedHeight == 100)
        let (frame, _) = try Self.fitted(path: path, width: 100, height: 200, fit: .stretch)
        // The upright 50x100 picture stretched to 100x200: red and green above blue and white.
        let quadrants: [(x: Int, y: Int, rgb: [Int])] = [(25, 50, [255, 0, 0]), (75, 50, [0, 255, 0]),
                                                          (25, 150, [0, 0, 255]), (75, 150, [255, 255, 255])]
        for q in quadrants {
            let got = channels(frame[q.x, q.y])
            #expect(zip(got, q.rgb).allSatisfy { abs($0 - $1) <= 12 }, "(\(q.x),\(q.y)): \(got), want \(q.rgb)")
        }
    }

    /// An interlaced (Adam7) PNG cannot stream (its rows come in seven passes): it goes through
    /// decode + place, and gives the same frame.
    @Test func interlacedPNGFallsBackToTheSameFrame() throws {
        for name in ["basi0g01.png", "basi6a08.png", "basi3p02.png"] {
            let path = Fixtures.path("pngsuite", name)
            let results = try Self.checkSameFrame(path, width: 50, height: 21, streams: false)
            #expect(results[.fit]?.format == .png && results[.fit]?.scaleNumerator == 8)
            #expect(results[.fit]?.decodedRows == 0..<32)
        }
    }

    // MARK: PNG streaming

    /// Every valid PngSuite image (alpha, palette with tRNS, 16-bit, gray, gamma, odd sizes...)
    /// gives exactly the frame of decode + Compositor.place, in every fit mode, at sizes below,
    /// equal to and above its own; the non-interlaced ones stream, the interlaced ones do not.
    @Test func everyPngSuiteImageGivesTheSameFrameStreamedOrNot() throws {
        let names = try Fixtures.files("pngsuite", suffix: ".png").filter { !$0.hasPrefix("x") }
        #expect(names.count == 161)
        var streamed = 0
        for name in names {
            let path = Fixtures.path("pngsuite", name)
            let own = try ImageDecoder.decode(path: path).bitmap
            let interlaced = name.dropFirst(3).first == "i"  // PngSuite names: xxxi... = Adam7
            for (w, h) in [(17, 23), (own.width, own.height), (own.width + 5, max(1, own.height - 3)), (48, 20)] {
                let results = try Self.checkSameFrame(path, width: w, height: h, streams: !interlaced)
                if results[.fit]?.streamed == true { streamed += 1 }
            }
        }
        #expect(streamed > 4 * 100, "\(streamed) streamed frames")
    }

    /// Alpha is flattened over the background row by row: the frame depends on the background
    /// exactly as decode + place makes it, for an alpha channel, palette + tRNS, gray + tRNS
    /// and 16-bit alpha.
    @Test(arguments: ["basn6a08.png", "tp1n3p08.png", "tbbn0g04.png", "basn6a16.png", "basn4a16.png", "tbrn2c08.png"])
    func pngAlphaIsFlattenedOverTheBackground(name: String) throws {
        let path = Fixtures.path("pngsuite", name)
        for background in [RGBColor.black, .white, RGBColor(red: 200, green: 10, blue: 90)] {
            for fit in FitMode.allCases {
                let decoded = try ImageDecoder.decode(path: path)
                #expect(decoded.bitmap.hasAlpha)
                let expected = Bitmap(width: 45, height: 30)
                Compositor.place(decoded.bitmap, into: expected, fit: fit, background: background)
                let frame = Bitmap(width: 45, height: 30, fill: 0xDEAD_BEEF)
                let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: fit, background: background)
                #expect(fitted.streamed)
                #expect(Self.firstDifference(frame, expected) == nil, "\(name) \(fit) over \(background)")
            }
        }
    }

    /// A generated 300x200 RGBA PNG in a wide frame: fill reads rows from the top (a PNG cannot
    /// skip) down to the end of the band it shows, never below; fit reads them all.
    @Test func pngFillStopsBelowTheBandItShows() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/gradient.png"
        let image = Bitmap(width: 300, height: 200, hasAlpha: true)
        for y in 0..<200 {
            for x in 0..<300 { image[x, y] = UInt32(x % 256) << 24 | UInt32(y) << 16 | UInt32(x) << 8 & 0xFF00 | 0x40 }
        }
        try PNGWriter.write(image, to: path)
        let results = try Self.checkSameFrame(path, width: 300, height: 50)
        let fill = try #require(results[.fill])
        // 300x200 fills 300x50 at 1:1: rows 75..<125 shown, 0..<75 decoded and dropped.
        #expect(fill.decodedRows == 0..<125)
        #expect(results[.fit]?.decodedRows == 0..<200)

        // Cut the file well below row 125's data: fill still shows its band, fit throws.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let cutPath = directory + "/cut.png"
        try bytes.prefix(bytes.count * 9 / 10).write(to: URL(fileURLWithPath: cutPath))
        let frame = Bitmap(width: 300, height: 50)
        #expect(try ImageDecoder.decodeFitted(path: cutPath, into: frame, fit: .fill,
                                              background: Self.background).streamed)
        #expect(throws: ImageError.corrupt(path: cutPath, reason: "unexpected end of file (the file is truncated)")) {
            try ImageDecoder.decodeFitted(path: cutPath, into: frame, fit: .fit, background: Self.background)
        }
    }

    /// A truncated or corrupt PNG throws mid-stream the error decode throws.
    @Test func damagedPNGsStreamOrThrowLikeDecode() throws {
        for name in ["basn6a16.png", "basn3p08.png", "tp1n3p08.png"] {
            let original = try Fixtures.bytes("pngsuite", name)
            var state: UInt32 = 2_463_534_242
            func next() -> Int { state ^= state << 13; state ^= state >> 17; state ^= state << 5; return Int(state) }
            var failures = 0
            for round in 0..<60 {
                var bytes = original
                bytes[8 + next() % (bytes.count - 8)] = UInt8(truncatingIfNeeded: next())
                if round % 3 == 0 { bytes = Array(original.prefix(40 + next() % (original.count - 40))) }
                let fit = FitMode.allCases[round % 2 == 0 ? 0 : 2]  // fit and stretch read every row
                let frame = Bitmap(width: 40, height: 30)
                let streamed = Result { () throws(ImageError) in
                    try ImageDecoder.decodeFitted(bytes: bytes, name: name, into: frame, fit: fit, background: .black)
                }
                let whole = Result { () throws(ImageError) -> Bitmap in
                    let decoded = try ImageDecoder.decode(bytes: bytes, name: name)
                    let expected = Bitmap(width: 40, height: 30)
                    Compositor.place(decoded.bitmap, into: expected, fit: fit, background: .black)
                    return expected
                }
                switch (streamed, whole) {
                case (.success, .success(let expected)):
                    #expect(Self.firstDifference(frame, expected) == nil, "\(name) round \(round)")
                case (.failure(let error), .failure(let wholeError)):
                    failures += 1
                    #expect(error == wholeError, "\(name) round \(round)")
                default:
                    Issue.record("\(name) round \(round): streamed \(streamed), decode \(whole)")
                }
            }
            #expect(failures > 0, "\(name)")
        }
    }

    /// A PNG turned by its eXIf chunk cannot stream: decoded whole, turned, placed, upright.
    @Test func exifRotatedPNGFallsBackAndStandsUpright() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/rot6.png"
        try Data(PNGFiles.withOrientation(6, Fixtures.bytes("pngsuite", "basn2c08.png")))
            .write(to: URL(fileURLWithPath: path))
        let results = try Self.checkSameFrame(path, width: 40, height: 30, streams: false)
        #expect(results[.fit]?.orientation == .rightTop)
    }

    /// Bytes in memory stream as the file does.
    @Test func bytesGiveTheSameFrameAsTheFile() throws {
        let path = Fixtures.path("libjpeg-turbo-testimages", "testorig.jpg")
        let (expected, _) = try Self.fitted(path: path, width: 120, height: 90, fit: .fill)
        let frame = Bitmap(width: 120, height: 90)
        let fitted = try ImageDecoder.decodeFitted(bytes: Fixtures.bytes("libjpeg-turbo-testimages", "testorig.jpg"),
                                                   name: "t.jpg", into: frame, fit: .fill, background: Self.background)
        #expect(fitted.streamed)
        #expect(Self.firstDifference(frame, expected) == nil)
    }

    // MARK: Errors

    static let truncatedReason = "Premature end of JPEG file (the file is truncated)"
    static let truncated = ImageError.corrupt(path: "cut.jpg", reason: truncatedReason)

    /// A file that ends before the rows the frame needs throws mid-stream, as decode does.
    @Test func truncatedJPEGThrowsMidStream() throws {
        let whole = try Fixtures.bytes("libjpeg-turbo-testimages", "testorig.jpg")
        for fit in FitMode.allCases {
            for cut in [whole.count / 2, whole.count - 100] {
                let frame = Bitmap(width: 160, height: 100)
                #expect(throws: Self.truncated) {
                    try ImageDecoder.decodeFitted(bytes: Array(whole.prefix(cut)), name: "cut.jpg", into: frame,
                                                  fit: fit,
                                                  background: .black)
                }
            }
        }
        // A sample photo cut in the middle, from a file: the error names the path.
        let photo = try Data(contentsOf: URL(fileURLWithPath: Self.samplesFolder + "/path-1920x1200.jpg"))
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/cut.jpg"
        try photo.prefix(photo.count / 2).write(to: URL(fileURLWithPath: path))
        for fit in FitMode.allCases {
            let frame = Bitmap(width: 1920, height: 1080)
            #expect(throws: ImageError.corrupt(path: path, reason: Self.truncatedReason)) {
                try ImageDecoder.decodeFitted(path: path, into: frame, fit: fit, background: .black)
            }
        }
        // A progressive file reads all its scans before the first row: the same error there.
        let progressive = try Fixtures.bytes("generated", "progressive.jpg")
        #expect(throws: Self.truncated) {
            try ImageDecoder.decodeFitted(bytes: Array(progressive.prefix(progressive.count * 2 / 3)), name: "cut.jpg",
                                          into: Bitmap(width: 30, height: 20), fit: .fill, background: .black)
        }
    }

    /// The errors before any pixel: the same as decode's.
    @Test func headerErrorsAreDecodesErrors() throws {
        let frame = Bitmap(width: 64, height: 48)
        #expect(throws: ImageError.tooLarge(path: "t.jpg", width: 227, height: 149, limit: 30_000)) {
            try ImageDecoder.decodeFitted(bytes: Fixtures.bytes("libjpeg-turbo-testimages", "testorig.jpg"),
                                          name: "t.jpg", into: frame, fit: .fit, background: .black,
                                          options: DecodeOptions(maxPixels: 30_000))
        }
        let missing = "/nonexistent/kiosk/missing.jpg"
        #expect(throws: ImageError.unreadable(path: missing, errno: ENOENT)) {
            try ImageDecoder.decodeFitted(path: missing, into: frame, fit: .fit, background: .black)
        }
        #expect(throws: ImageError.otherFormat(path: "x", format: .unknown(firstBytes: Array("not a pi".utf8)))) {
            try ImageDecoder.decodeFitted(bytes: Array("not a picture".utf8), name: "x", into: frame, fit: .fit,
                                          background: .black)
        }
        let twelveBit = Fixtures.path("libjpeg-turbo-testimages", "monkey12.jpg")
        #expect(throws: ImageError.unsupported(path: twelveBit,
                                               reason: "12-bit JPEG (data precision 12) is not supported")) {
            try ImageDecoder.decodeFitted(path: twelveBit, into: frame, fit: .fill, background: .black)
        }
    }

    /// Damaged copies of real JPEGs either stream or throw, and when they stream the frame is
    /// still the one decode + place gives (or both throw). Run under `swift test
    /// --sanitize=address` this also shows that no error path leaks.
    @Test(arguments: [("libjpeg-turbo-testimages", "testorig.jpg"), ("generated", "progressive.jpg"),
                      ("generated", "ycck-adobe.jpg")])
    func damagedJPEGsStreamOrThrowLikeDecode(folder: String, name: String) throws {
        let original = try Fixtures.bytes(folder, name)
        var state: UInt32 = 2_463_534_242
        func next() -> Int { state ^= state << 13; state ^= state >> 17; state ^= state << 5; return Int(state) }
        var failures = 0
        for round in 0..<120 {
            var bytes = original
            for _ in 0..<(1 + round % 4) {
                bytes[8 + next() % (bytes.count - 8)] = UInt8(truncatingIfNeeded: next())
            }
            if round % 5 == 0 { bytes = Array(bytes.prefix(2 + next() % bytes.count)) }
            let fit = FitMode.allCases[round % 3]
            let options = DecodeOptions(maxPixels: 4_000_000, targetWidth: 90, targetHeight: 70, fit: fit)
            let frame = Bitmap(width: 90, height: 70)
            let streamed = Result { () throws(ImageError) in
                try ImageDecoder.decodeFitted(bytes: bytes, name: name, into: frame, fit: fit, background: .black,
                                              options: options)
            }
            let whole = Result { () throws(ImageError) -> Bitmap in
                let decoded = try ImageDecoder.decode(bytes: bytes, name: name, options: options)
                let expected = Bitmap(width: 90, height: 70)
                Compositor.place(decoded.bitmap, into: expected, fit: fit, background: .black)
                return expected
            }
            switch (streamed, whole) {
            case (.success, .success(let expected)):
                #expect(Self.firstDifference(frame, expected) == nil, "round \(round)")
            case (.failure(let error), .failure(let wholeError)):
                // The streamed rows are a subset of the whole image's: its first error is the same.
                failures += 1
                #expect(!error.reason.isEmpty)
                #expect(error == wholeError, "round \(round)")
            case (.failure(let error), .success):
                Issue.record("round \(round): decode succeeded, the stream threw \(error)")
            case (.success, .failure):
                // Only a fill crop may leave damage unread (below the band it shows).
                #expect(fit == .fill, "round \(round): streamed, but decode threw")
            }
        }
        #expect(failures > 0)
    }
}
