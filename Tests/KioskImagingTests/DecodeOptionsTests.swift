// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing

/// DecodeOptions: the limits every file is held to from its header: the side (65535), the
/// pixel count (overflow-safe), and the decoder memory budget (the DCT coefficients of a
/// multi-scan JPEG with libjpeg's own max_memory_to_use behind our count, an image decoded
/// whole and its turned copy, the ring of a streamed image).
@Suite struct DecodeOptionsTests {
    @Test func defaults() {
        let options = DecodeOptions()
        #expect(options.maxPixels == 100_000_000)
        #expect(options.maxDecoderBytes == 192 * 1024 * 1024)
        #expect(DecodeOptions.defaultMaxDecoderBytes == 201_326_592)
        #expect(DecodeOptions.maxSide == 65535)
        #expect(options.targetWidth == nil && options.targetHeight == nil && options.fit == .fit)
        #expect(DecodeOptions(maxPixels: 5, targetWidth: 3).maxDecoderBytes == DecodeOptions.defaultMaxDecoderBytes)
    }

    // MARK: Sides and pixels

    /// A side over 65535 is refused from the header whatever the pixel limit: a 20000000x1
    /// banner, and sizes whose pixel count or byte count overflow an Int, even with the
    /// largest limits (before, 2147483647x2147483647 trapped in Bitmap.init and 100000x100000
    /// died allocating 40 GB).
    @Test func sidesOver65535AreRefusedFromTheHeader() throws {
        let png = try Fixtures.bytes("pngsuite", "basn2c08.png")
        let limitless = DecodeOptions(maxPixels: Int.max, maxDecoderBytes: Int.max)
        for (w, h) in [(20_000_000, 1), (1, 20_000_000), (2_147_483_647, 2_147_483_647), (100_000, 100_000),
                       (65536, 1)] as [(UInt32, UInt32)] {
            let bytes = PNGFiles.withSize(width: w, height: h, png)
            let error = ImageError.sideTooLong(path: "s.png", width: Int(w), height: Int(h), limit: 65535)
            #expect(throws: error) { try ImageDecoder.decode(bytes: bytes, name: "s.png", options: limitless) }
            for fit in FitMode.allCases {
                #expect(throws: error) {
                    try ImageDecoder.decodeFitted(bytes: bytes, name: "s.png", into: Bitmap(width: 64, height: 36),
                                                  fit: fit,
                                                  background: .black, options: limitless)
                }
            }
        }
        #expect(ImageError.sideTooLong(path: "b.png", width: 20_000_000, height: 1, limit: 65535).description
                    == "b.png: 20000000x1 pixels: a side longer than 65535 pixels is refused")
        // 65535 itself passes the header: this one streams until its (32x32) data runs out.
        let edge = PNGFiles.withSize(width: 65535, height: 1, png)
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(bytes: edge, name: "e.png", into: Bitmap(width: 64, height: 36), fit: .fit,
                                          background: .black)
        }
        guard case .corrupt = result.failure else {
            Issue.record("65535x1: \(result)")
            return
        }
    }

    /// The pixel count is compared without overflow, and the message never overflows either.
    @Test func pixelLimitIsOverflowSafe() {
        let huge = ImageError.tooLarge(path: "h", width: Int.max, height: 3, limit: 10)
        #expect(huge.description == "h: \(Int.max)x3 pixels (more than \(Int.max)) exceeds the pixel limit of 10")
        #expect(ImageError.tooLarge(path: "h", width: 65535, height: 65535, limit: 100).description
                    == "h: 65535x65535 pixels (4294836225) exceeds the pixel limit of 100")
    }

    // MARK: Decoder memory

    /// progressive.jpg (96x64, 4:2:0) with its SOF claiming 10000x10000 (4:2:0): 300000000
    /// bytes of coefficients (1250x1250 + 2 x 625x625 blocks of 128 bytes), refused from the
    /// header with the numbers, before libjpeg allocates anything; within the pixel limit.
    @Test func progressiveJPEGOverTheBudgetIsRefusedFromItsHeader() throws {
        let bytes = JPEGFiles.withSize(width: 10000, height: 10000, try Fixtures.bytes("generated", "progressive.jpg"))
        let frame = Bitmap(width: 192, height: 108)
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(bytes: bytes, name: "big.jpg", into: frame, fit: .fit, background: .black)
        }
        guard case .overMemoryBudget(let path, let needed, let limit, let reason) = result.failure else {
            Issue.record("got \(result)")
            return
        }
        #expect(path == "big.jpg" && limit == 192 << 20)
        #expect(needed > 300_000_000 && needed < 300_000_000 + 200_000, "\(needed)")  // + the ring (1250-pixel rows)
        #expect(reason.hasPrefix("the DCT coefficients a progressive 10000x10000 JPEG keeps until its last scan "
                                 + "(286.1 MiB, 3 bytes per pixel)"),
                "\(reason)")
        let error = try #require(result.failure)
        #expect(error.description.hasPrefix("big.jpg: needs 286.2 MiB of decoder memory, over the limit of 192 MiB: "
                                            + "the DCT coefficients"),
                "\(error)")
        // decode (whole image at full size) counts the image too.
        #expect(throws: ImageError.self) { try ImageDecoder.decode(bytes: bytes, name: "big.jpg") }
        // A budget that holds it lets it through to the data (which is the 96x64 picture's, so
        // libjpeg then fails on it: corrupt, not over the budget).
        let roomy = DecodeOptions(maxDecoderBytes: 400 << 20)
        let past = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(bytes: bytes, name: "big.jpg", into: frame, fit: .fit, background: .black,
                                          options: roomy)
        }
        if case .overMemoryBudget = past.failure { Issue.record("still over the budget: \(past)") }
    }

    /// The 14.7 MP progressive 4:4:4 photo: 84.4 MiB of coefficients, 6 bytes per pixel;
    /// shown within the default budget, refused under 80 MiB.
    @Test func photoCoefficientsAreCountedAtSixBytesPerPixel() throws {
        let path = Fixtures.path("photos", "volna-5120x2880.jpg")
        let frame = Bitmap(width: 192, height: 108)
        #expect(try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: .black).streamed)
        let tight = DecodeOptions(maxDecoderBytes: 80 << 20)
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: .black, options: tight)
        }
        guard case .overMemoryBudget(_, let needed, _, let reason) = result.failure else {
            Issue.record("got \(result)")
            return
        }
        #expect(needed >= 88_473_600)  // 3 x 640 x 360 blocks x 128 bytes
        #expect(reason.contains("progressive 5120x2880 JPEG") && reason.contains("(84.4 MiB, 6 bytes per pixel)"),
                "\(reason)")
    }

    /// Our check counts coefficients and image exactly, with what libjpeg holds after the
    /// header (its tables, the saved EXIF): a budget of our two buffers alone is refused with
    /// the numbers; what the check asked for plus libjpeg's row buffers decodes.
    @Test func budgetCountsCoefficientsAndImage() throws {
        let bytes = try Fixtures.bytes("generated", "progressive.jpg")
        func decode(_ budget: Int) -> Result<DecodedImage, ImageError> {
            Result { () throws(ImageError) in
                try ImageDecoder.decode(bytes: bytes, name: "p.jpg", options: DecodeOptions(maxDecoderBytes: budget))
            }
        }
        // 96x64 at 4:2:0: 12x8 + 2 x 6x4 blocks of 128 bytes, and the 96x64 image.
        let ours = 144 * 128 + 96 * 64 * 4
        let short = decode(ours)
        guard case .overMemoryBudget("p.jpg", let needed, ours, let reason) = short.failure else {
            Issue.record("\(ours) bytes: \(short)")
            return
        }
        #expect(needed > ours && needed < ours + (64 << 10), "\(needed)")
        #expect(reason.hasPrefix("the DCT coefficients a progressive 96x64 JPEG keeps until its last scan "
                    + "(18 KiB, 3 bytes per pixel),"
                    + " the decoded image (96x64 pixels, 24 KiB) and what libjpeg holds after the header ("),
                "\(reason)")
        #expect(try decode(needed + (256 << 10)).get().bitmap.width == 96)
    }

    /// Behind our check, libjpeg's own: max_memory_to_use is the budget less what the decode
    /// holds besides the coefficients, and every request to its memory manager is counted
    /// against it. With a budget of exactly what we count, libjpeg's own row buffers and
    /// tables no longer fit beside the 84 MiB of the photo's coefficients, and the request that
    /// passes the limit is refused before it is allocated; with 1 MiB more the photo is shown.
    @Test func libjpegsOwnLimitBacksOurCheck() throws {
        let path = Fixtures.path("photos", "volna-5120x2880.jpg")
        func fitted(_ budget: Int) -> Result<FittedImage, ImageError> {
            Result { () throws(ImageError) in
                try ImageDecoder.decodeFitted(path: path, into: Bitmap(width: 160, height: 90), fit: .fit,
                                              background: .black,
                                              options: DecodeOptions(maxDecoderBytes: budget))
            }
        }
        guard case .overMemoryBudget(_, let needed, 1 << 20, _) = fitted(1 << 20).failure else {
            Issue.record("a budget of 1 MiB passed")
            return
        }
        let exact = fitted(needed)
        guard case .overMemoryBudget(_, needed, needed, let reason) = exact.failure else {
            Issue.record("\(needed) bytes: \(exact)")
            return
        }
        #expect(reason.hasPrefix("libjpeg asked for ") && reason.contains("over its memory limit of"), "\(reason)")
        let description = try #require(exact.failure).description
        #expect(description.contains(": needs more than the decoder memory limit of 84.")
                    && description.contains("84.4 MiB, 6 bytes per pixel"),
                "\(description)")
        #expect(try fitted(needed + (1 << 20)).get().streamed)
    }

    /// An EXIF-rotated JPEG is decoded whole and turned: its image counts twice.
    @Test func rotatedJPEGCountsItsTurnedCopy() throws {
        let path = Fixtures.path("exif-orientation", "test_6.jpg")  // 100x50, orientation 6
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decode(path: path, options: DecodeOptions(maxDecoderBytes: 100 * 50 * 4 * 2 - 1))
        }
        guard case .overMemoryBudget(_, let needed, _, let reason) = result.failure else {
            Issue.record("got \(result)")
            return
        }
        #expect(needed == 100 * 50 * 4 * 2)
        #expect(reason == "the decoded image (100x50 pixels, 19.5 KiB) and its copy turned upright "
                    + "(50x100 pixels, 19.5 KiB)")
        #expect(try ImageDecoder.decode(path: path, options: DecodeOptions(maxDecoderBytes: needed)).bitmap.height
                    == 100)
    }

    // MARK: PNG

    /// An interlaced PNG is decoded whole (4 bytes per pixel) even when shown: an 8000x8000
    /// Adam7 header is refused before the 244 MiB are allocated; within the budget it gets to
    /// its (32x32) data and fails there.
    @Test func interlacedPNGOverTheBudgetIsRefused() throws {
        let bytes = PNGFiles.withSize(width: 8000, height: 8000, try Fixtures.bytes("pngsuite", "basi2c08.png"))
        let frame = Bitmap(width: 64, height: 36)
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(bytes: bytes, name: "i.png", into: frame, fit: .fit, background: .black)
        }
        guard case .overMemoryBudget("i.png", let needed, 201_326_592, let reason) = result.failure else {
            Issue.record("got \(result)")
            return
        }
        // The image, and what libpng holds after the header (its structures: a few KiB).
        #expect(needed > 256_000_000 && needed < 256_000_000 + (64 << 10), "\(needed)")
        #expect(reason.hasPrefix("the decoded image, held whole as an interlaced (Adam7) PNG cannot be streamed "
                                 + "(8000x8000 pixels, 244.1 MiB)"
                                 + " and what libpng holds after the header ("), "\(reason)")
        #expect(try #require(result.failure).description
                    == "i.png: needs 244.1 MiB of decoder memory, over the limit of 192 MiB: \(reason)")
        // The same file, non-interlaced: streamed (a ring of rows), so within the budget.
        let flat = PNGFiles.withSize(width: 8000, height: 8000, try Fixtures.bytes("pngsuite", "basn2c08.png"))
        let streamed = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(bytes: flat, name: "n.png", into: frame, fit: .fit, background: .black)
        }
        guard case .corrupt = streamed.failure else {
            Issue.record("non-interlaced 8000x8000: \(streamed)")
            return
        }
        // decode holds every image whole: refused there.
        let whole = Result { () throws(ImageError) in try ImageDecoder.decode(bytes: flat, name: "n.png") }
        guard case .overMemoryBudget("n.png", _, 201_326_592, let wholeReason) = whole.failure else {
            Issue.record("decode of 8000x8000: \(whole)")
            return
        }
        #expect(wholeReason.hasPrefix("the decoded image (8000x8000 pixels, 244.1 MiB) and what libpng holds"),
                "\(wholeReason)")
    }

    /// A PNG turned by its eXIf orientation is decoded whole and turned: twice the image.
    @Test func rotatedPNGCountsItsTurnedCopy() throws {
        let bytes = PNGFiles.withOrientation(6, PNGFiles.withSize(width: 6000, height: 5000,
                                                                  try Fixtures.bytes("pngsuite", "basn2c08.png")))
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(bytes: bytes, name: "r.png", into: Bitmap(width: 64, height: 36), fit: .fit,
                                          background: .black)
        }
        guard case .overMemoryBudget("r.png", 240_000_000, _, let reason) = result.failure else {
            Issue.record("got \(result)")
            return
        }
        #expect(reason == "the decoded image, held whole to be turned by its EXIF orientation 6 "
                    + "(6000x5000 pixels, 114.4 MiB)"
                    + " and its copy turned upright (5000x6000 pixels, 114.4 MiB)")
        // The real 32x32 file with that orientation decodes within a budget of twice its image
        // and what libpng needs besides (zlib's 32 KiB window, its state, two rows); a budget of
        // twice the image alone leaves libpng too little.
        let small = PNGFiles.withOrientation(6, try Fixtures.bytes("pngsuite", "basn2c08.png"))
        #expect(try ImageDecoder.decode(bytes: small, name: "s.png",
                                        options: DecodeOptions(maxDecoderBytes: 2 * 32 * 32 * 4 + (64 << 10)))
                    .orientation == .rightTop)
        #expect(throws: ImageError.self) {
            try ImageDecoder.decode(bytes: small, name: "s.png",
                                    options: DecodeOptions(maxDecoderBytes: 2 * 32 * 32 * 4))
        }
    }

    /// A streamed image holds only its ring of rows, `(taps + 8) x width x 4` bytes, which is
    /// counted too: a 65535x1500 PNG (98 MP) in a 1920x1080 frame needs a ring of a few MiB.
    @Test func streamingRingIsCounted() throws {
        let bytes = PNGFiles.withSize(width: 65535, height: 1500, try Fixtures.bytes("pngsuite", "basn2c08.png"))
        let frame = Bitmap(width: 1920, height: 1080)
        let tight = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(bytes: bytes, name: "w.png", into: frame, fit: .fit, background: .black,
                                          options: DecodeOptions(maxDecoderBytes: 1 << 20))
        }
        guard case .overMemoryBudget(_, let needed, _, let reason) = tight.failure else {
            Issue.record("got \(tight)")
            return
        }
        // 1500 rows into 44: 35 or 36 taps, + 8 rows of read-ahead, of 65535 pixels.
        // (And what libpng holds after the header: a few KiB.)
        #expect((43...45).contains(needed / (65535 * 4)), "\(needed)")
        #expect(reason.hasPrefix("a ring of ") && reason.contains(" decoded rows of 65535 pixels (")
                    && reason.contains(" and what libpng holds after the header ("), "\(reason)")
        // Within the default budget it streams, until its (32x32) data runs out.
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decodeFitted(bytes: bytes, name: "w.png", into: frame, fit: .fit, background: .black)
        }
        guard case .corrupt = result.failure else {
            Issue.record("default budget: \(result)")
            return
        }
    }
}

/// ``byteSize`` is internal to KioskImaging; the tests format sizes the same way.
func byteSize(_ bytes: Int) -> String {
    let units = ["KiB", "MiB", "GiB"]
    if bytes < 1024 { return "\(bytes) bytes" }
    var value = Double(bytes) / 1024, unit = 0
    while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
    let tenths = (value * 10).rounded()
    let text = tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(tenths / 10)
    return "\(text) \(units[unit])"
}
