// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
@testable import KioskImaging
import Testing

private let background = RGBColor(red: 200, green: 40, blue: 90)

/// HEIF files as phones write them (a grid of 512x512 tiles), the project's HEVC decoder
/// plug-in, and a HEIF coded with a codec this libheif cannot decode: files made by
/// make_formats.py (the grid's tiles by heif-enc, its boxes assembled there).
@Suite struct HEIFFileTests {
    /// The grid is what a phone writes: a `grid` primary item over 3x2 hidden `hvc1` tiles of
    /// 512x512, cropped to 1200x700; the project's checks of a grid accept it, and it shows as
    /// heif-convert decodes it, placed the same way.
    @Test(arguments: FitMode.allCases) func aGridOfTilesMatchesHeifConvert(_ fit: FitMode) throws {
        let path = try FormatFiles.path("grid.heic")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes.withUnsafeBytes { b in
            let items = ISOMediaCodedSize.Items(b)
            let primary = ISOMediaHeader.primaryItem(b)
            #expect(primary.map { items.ids(ofType: "grid").contains($0) } == true, "the primary item is a grid")
            #expect(items.ids(ofType: "hvc1").count == 6)
            #expect(primary.map { items.references(from: $0, type: "dimg").count } == 6)
            #expect(ISOMediaHeader.imageSizes(b).values.filter { $0.width == 512 && $0.height == 512 }.count == 6)
            #expect(ISOMediaCodedSize.gridProblem(b) == nil)
            #expect(ISOMediaCodedSize.primaryCoding(b) == "hvc1")
            #expect(ISOMediaHeader.primaryImageSize(b).map { [$0.width, $0.height] } == [1200, 700])
        }
        let takesPlugin = try libheifTakesTheHEVCPlugin()
        let before = HEIFLibrary.hevcImagesDecoded
        let frame = Bitmap(width: 640, height: 400)
        let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: fit, background: background)
        #expect(fitted.sourceWidth == 1200 && fitted.sourceHeight == 700 && fitted.format == .heif)
        if takesPlugin {
            // Every tile went through the project's plug-in (other tests may decode at the same time).
            #expect(HEIFLibrary.hevcImagesDecoded - before >= 6)
        } else {
            // libheif's own plug-in decoded the tiles: the project's is not registered, and has decoded nothing.
            #expect(HEIFLibrary.hevcImagesDecoded == 0)
        }
        let reference = try ImageDecoder.decode(path: path + ".ref.png")
        let expected = Bitmap(width: 640, height: 400)
        Compositor.place(reference.bitmap, into: expected, fit: fit, background: background)
        let db = psnr(frame, expected)
        #expect(db >= 40, "grid \(fit): \(db) dB against heif-convert")
    }

    /// The whole grid, unplaced: the same pixels as heif-convert's (libde265 decodes each tile
    /// and libheif converts them in both, only on more threads here).
    @Test func aGridDecodesToHeifConvertsPixels() throws {
        let path = try FormatFiles.path("grid.heic")
        let decoded = try ImageDecoder.decode(path: path)
        let reference = try ImageDecoder.decode(path: path + ".ref.png")
        #expect(decoded.bitmap.width == 1200 && decoded.bitmap.height == 700)
        if decoded.bitmap.width == reference.bitmap.width && decoded.bitmap.height == reference.bitmap.height {
            #expect(psnr(decoded.bitmap, reference.bitmap) == .infinity)
        }
    }

    /// HEVC is decoded by the project's plug-in (libde265 with a worker thread per CPU), which
    /// gives heif-convert's pixels exactly (heif-convert decodes with libheif's own plug-in).
    /// libheif 1.21 and later (Debian 13's point release has 1.23) refuse a plug-in of API
    /// version 3 when it is chosen to decode: there it is not registered, the reason is kept,
    /// and libheif's own plug-in decodes the photo (the same pixels, heif-convert's decoder).
    @Test func hevcGoesThroughThePluginWithTheSamePixels() throws {
        guard case .success(let library) = HEIFLibrary.shared else {
            Issue.record("libheif did not load")
            return
        }
        let refusesVersion3 = try !libheifTakesTheHEVCPlugin()
        if refusesVersion3 {
            let problem = library.hevcPluginProblem ?? "nil"
            #expect(problem.contains("API version 5"), "\(problem)")
            #expect(library.hevcThreads == 0)
        } else {
            #expect(library.hevcPluginProblem == nil)
            #expect(library.hevcThreads >= 1 && library.hevcThreads <= 8)
        }
        let path = try FormatFiles.path("photo.heic")
        let before = HEIFLibrary.hevcImagesDecoded
        let decoded = try ImageDecoder.decode(path: path)
        #expect(HEIFLibrary.hevcImagesDecoded > before || refusesVersion3)
        #expect(HEIFLibrary.hevcImagesDecoded == before || !refusesVersion3)
        let reference = try ImageDecoder.decode(path: path + ".ref.png")
        #expect(psnr(decoded.bitmap, reference.bitmap) == .infinity)
    }

    /// The decoder-memory budget of a HEIC without transforms holds no turned copy, and an irot
    /// adds nothing to it: libheif 1.15 turns the decoded image before it makes the RGBA image
    /// (the copy is counted beside the decoded image, as large as the codec's pictures before
    /// it). no-irot.heic and irot-exif6.heic are the same file but for the irot box; both are
    /// shown at the budget the first needs, both refused one byte under it.
    @Test func aTurnedCopyIsCountedWhereLibheifMakesIt() throws {
        let plain = try FormatFiles.path("no-irot.heic"), turned = try FormatFiles.path("irot-exif6.heic")
        for (path, copies) in [(plain, false), (turned, true)] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            bytes.withUnsafeBytes { #expect(ISOMediaHeader.hasCopyingTransform($0) == copies, "\(path)") }
        }
        func shown(_ path: String, budget: Int) -> Result<FittedImage, ImageError> {
            Result { () throws(ImageError) in
                try ImageDecoder.decodeFitted(path: path, into: Bitmap(width: 320, height: 200), fit: .fit,
                                              background: background, options: DecodeOptions(maxDecoderBytes: budget))
            }
        }
        func needed(_ path: String, budget: Int) -> Int? {
            guard case .overMemoryBudget(_, let needed, _, _) = shown(path, budget: budget).failure else { return nil }
            return needed
        }
        let file = try #require(FileManager.default.attributesOfItem(atPath: plain)[.size] as? Int)
        // A budget above the file (41 KB) and under the decode: refused from the header.
        let plainNeeds = try #require(needed(plain, budget: 200_000))
        // The file, the decoded image counted at 4:4:4 at its coded size (x265 codes 400x304:
        // whole 8x8 blocks) and the RGBA image: no turned copy.
        #expect(plainNeeds == file + 400 * 304 * 3 + 400 * 300 * 4, "\(plainNeeds)")
        #expect(needed(turned, budget: 200_000) == plainNeeds + 10, "the irot box and its association: 10 bytes more of file")
        let fitted = try shown(plain, budget: plainNeeds).get()
        #expect(fitted.decodedWidth == 400 && fitted.decodedHeight == 300)
        let upright = try shown(turned, budget: plainNeeds + 10).get()
        #expect(upright.decodedWidth == 300 && upright.decodedHeight == 400)
        #expect(needed(plain, budget: plainNeeds - 1) == plainNeeds)
        #expect(needed(turned, budget: plainNeeds + 9) == plainNeeds + 10)
    }

    /// A HEIF whose primary image is a JPEG-coded item: Debian 12's libheif 1.15 has no JPEG
    /// decoder (and reads such an item as no image at all), so the file is refused with the
    /// codec named, not called damaged. Debian 12's HEVC and AV1 decoders are built into
    /// libheif.so.1 and cannot be taken away from a running libheif (no plug-in directory
    /// holds them), so this is the codec that is really missing here.
    @Test func aCodecLibheifCannotDecodeIsNamed() throws {
        let path = try FormatFiles.path("jpeg.heif")
        let error = Result { () throws(ImageError) in try ImageDecoder.decode(path: path) }.failure
        guard case .unsupported(let where_, let reason) = error else {
            Issue.record("a JPEG-coded HEIF gave \(String(describing: error))")
            return
        }
        #expect(where_ == path)
        #expect(reason == "this libheif has no JPEG decoder (its primary image is coded as 'jpeg'); "
                + "Debian's libheif1 decodes HEVC and AV1 only", "\(reason)")
    }
}

/// Whether the running libheif takes the project's HEVC plug-in (API version 3): libheif before
/// 1.21, by its version number as heif_get_version says it (1.21 and later refuse it when it is
/// chosen to decode, so it is not registered there).
func libheifTakesTheHEVCPlugin() throws -> Bool {
    let running = try #require(CodecLibrary.libheif.version().running)
    let parts = running.split(separator: ".").compactMap { Int($0) }
    try #require(parts.count >= 2, "libheif's version \(running)")
    return (parts[0], parts[1]) < (1, 21)
}

/// libheif's messages reach the log as one line: a broken HEIF's error (every way the fuzz
/// findings and truncations of a phone's grid break) has no newline, no literal `\n`, and no
/// trailing space.
@Test func heifErrorsAreOneLineWithoutATrailingNewline() throws {
    var files = try Fixtures.files("fuzz/heif", suffix: ".heic") + Fixtures.files("fuzz/heif", suffix: ".avif")
    let grid = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try FormatFiles.path("grid.heic"))))
    let dir = try Fixtures.temporaryDirectory()
    for cut in [40, 200, 600, 1500] where cut < grid.count {
        let path = dir + "/grid-cut-\(cut).heic"
        try Data(grid[..<cut]).write(to: URL(fileURLWithPath: path))
        files.append(path)
    }
    var messages: [String] = []
    for path in files {
        do {
            _ = try ImageDecoder.decodeFitted(path: path, into: Bitmap(width: 64, height: 40), fit: .fit,
                                              background: background)
        } catch {
            messages.append("\(error)")
        }
    }
    #expect(messages.count >= 6)
    for m in messages where m.contains("\n") || m.contains("\\n") || m.hasSuffix(" ") || m.contains(" )") {
        Issue.record("not one clean line: \(m.debugDescription)")
    }
}
