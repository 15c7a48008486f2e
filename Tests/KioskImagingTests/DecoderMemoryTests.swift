// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskImaging
import Testing

/// The inputs of Tests/Fixtures/cases (see its README): the two files from real reports, and
/// their siblings written by make_cases.py into a scratch folder once per test run.
enum Cases {
    /// Tests/Fixtures/cases/<name>.
    static func fixture(_ name: String) -> String { Fixtures.path("cases", name) }

    /// The folder make_cases.py wrote (PNGs with text, iCCP, sPLT, unknown and eXIf chunks;
    /// a JPEG with 1000 APPn/COM segments), or the reason it could not.
    static let generated: Result<String, Pillow.Failure> = {
        let out = NSTemporaryDirectory() + "kc-cases-\(UUID().uuidString)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [fixture("make_cases.py"), out]
        do {
            try process.run()
            process.waitUntilExit()
        } catch {
            return .failure(Pillow.Failure(description: "cannot run /usr/bin/python3: \(error)"))
        }
        guard process.terminationStatus == 0 else {
            return .failure(Pillow.Failure(
                description: "make_cases.py failed with status \(process.terminationStatus)"))
        }
        return .success(out)
    }()

    /// The path of a generated case.
    static func generated(_ name: String) throws -> String { try generated.get() + "/" + name }
}

/// The picture rotated a quarter turn clockwise: what EXIF orientation 6 (right-top) shows.
private func clockwise(_ b: Bitmap) -> Bitmap {
    let out = Bitmap(width: b.height, height: b.width)
    for y in 0..<b.height {
        for x in 0..<b.width { out.pixels[x * out.width + (b.height - 1 - y)] = b.pixels[y * b.width + x] }
    }
    return out
}

/// Memory the decoding libraries allocate is inside the decoder budget: nothing ancillary is
/// inflated or kept beyond its bound, and the pictures are unchanged.
@Suite struct DecoderMemoryTests {
    static let pngSiblings = [
        "itxt-100-chunks-4MiB-each.png", "ztxt-one-chunk-512MiB.png", "ztxt-100-chunks-after-image-data.png",
        "iccp-256MiB.png", "splt-2000-chunks.png", "unknown-2000-chunks-8KiB.png", "exif-48MiB.png",
    ]

    /// Every sibling shows the very pixels of the same PNG without its ancillary chunks, and so
    /// does the file from the report; none of them is refused.
    @Test func ancillaryChunksLeaveThePixelsAlone() throws {
        let plain = try ImageDecoder.decode(path: try Cases.generated("plain.png")).bitmap
        #expect(plain.width == 64 && plain.height == 64)
        let paths = [Cases.fixture("ztxt-100-chunks-4MiB-each.png")] + (try Self.pngSiblings.map(Cases.generated))
        for path in paths {
            let decoded = try ImageDecoder.decode(path: path)
            #expect(decoded.orientation == .topLeft, "\(path)")
            #expect(maxDifference(decoded.bitmap, plain) == 0, "\(path)")
            let frame = Bitmap(width: 640, height: 400)
            let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: .black)
            #expect(fitted.streamed, "\(path)")
        }
    }

    /// Image data that goes on after the last row is not inflated to its end (libpng would, to
    /// find the end of the zlib stream: 256 MiB of output for nothing here, 2 GiB from a 2 MB
    /// file): the read stops within KC_PNG_TRAILING_SLACK of the row, with a warning, and the
    /// picture is the plain one, whole and streamed.
    @Test func imageDataAfterTheLastRowIsNotInflated() throws {
        let plain = try ImageDecoder.decode(path: try Cases.generated("plain.png")).bitmap
        let path = try Cases.generated("idat-256MiB-after-the-last-row.png")
        let whole = try ImageDecoder.decode(path: path)
        #expect(maxDifference(whole.bitmap, plain) == 0)
        #expect(whole.warnings == ["IDAT: image data after the last row not read (more than the image needs)"],
                "\(whole.warnings)")
        let frame = Bitmap(width: 640, height: 400)
        let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: .black)
        #expect(fitted.streamed)
        #expect(fitted.warnings == whole.warnings, "\(fitted.warnings)")
        let reference = Bitmap(width: 640, height: 400)
        _ = try ImageDecoder.decodeFitted(path: try Cases.generated("plain.png"), into: reference, fit: .fit,
                                          background: .black)
        #expect(maxDifference(frame, reference) == 0)
    }

    /// An eXIf over 64 KiB is skipped with one warning that says so; a small one after 20 text
    /// and 20 unknown chunks still turns the picture.
    @Test func exifIsKeptUpTo64KiB() throws {
        let plain = try ImageDecoder.decode(path: try Cases.generated("plain.png")).bitmap
        let big = try ImageDecoder.decode(path: try Cases.generated("exif-48MiB.png"))
        // libpng 1.6.39 (Debian 12) allocates it through the budget, which refuses it; 1.6.48 (Debian
        // 13) refuses it itself first, without its length.
        let kept = "skipped (EXIF data is kept up to 65536 bytes); its orientation is not applied"
        #expect(big.warnings == ["eXIf chunk of 50331674 bytes " + kept]
                || big.warnings == ["eXIf chunk past libpng's limit " + kept], "\(big.warnings)")
        let small = try ImageDecoder.decode(path: try Cases.generated("exif-orientation-6-after-chunks.png"))
        #expect(small.orientation == .rightTop)
        #expect(small.warnings.isEmpty, "\(small.warnings)")
        #expect(maxDifference(small.bitmap, clockwise(plain)) == 0)
    }

    /// Of 800 APP1 (XMP) and 200 COM segments of 64 KiB and two Exif APP1 segments after them,
    /// only the first Exif is kept: its orientation 6 turns the picture.
    @Test func onlyTheFirstExifSegmentOfAJPEGIsKept() throws {
        let base = try ImageDecoder.decode(path: Fixtures.path("generated", "progressive.jpg")).bitmap
        let decoded = try ImageDecoder.decode(path: try Cases.generated("app1-800-segments-64KiB.jpg"))
        #expect(decoded.orientation == .rightTop)
        #expect(maxDifference(decoded.bitmap, clockwise(base)) == 0)
    }

    /// What libpng and libjpeg allocate themselves (zlib's window, row buffers, tables) counts:
    /// between the budget our own buffers need and the one that decodes, there are budgets the
    /// library's allocator refuses, with an error that says so.
    @Test func theLibrariesOwnAllocationsCountAgainstTheBudget() throws {
        let cases: [(path: String, library: String)] = [
            (try Cases.generated("plain.png"), "libpng asked for"),
            (Fixtures.path("generated", "progressive.jpg"), "libjpeg asked for"),
            (Fixtures.path("libjpeg-turbo-testimages", "testorig.jpg"), "libjpeg asked for"),
        ]
        for (path, library) in cases {
            var refusedByLibrary = false
            var smallest: Int?
            for budget in stride(from: 4096, through: 400_000, by: 1024) {
                do {
                    _ = try ImageDecoder.decode(path: path, options: DecodeOptions(maxDecoderBytes: budget))
                    smallest = budget
                    break
                } catch {
                    guard case .overMemoryBudget(_, _, let limit, let reason) = error else {
                        Issue.record("\(path) at \(budget): \(error)")
                        break
                    }
                    #expect(limit == budget)
                    if reason.hasPrefix(library) { refusedByLibrary = true }
                }
            }
            #expect(refusedByLibrary, "\(path): never refused by the library's own allocations")
            #expect(smallest != nil, "\(path): no budget up to 400000 bytes decodes it")
        }
    }

    // MARK: Work

    /// A progressive JPEG of single-coefficient scans (made by jpegtran): 32 passes over the
    /// blocks decode to the very pixels of the sequential original; 64 are refused at scan 33.
    @Test func manyTinyScansAreRefusedByTheirWork() throws {
        let jpegtran = "/usr/bin/jpegtran"
        guard FileManager.default.isExecutableFile(atPath: jpegtran) else {
            Issue.record("\(jpegtran) is missing: apt-get install libjpeg-turbo-progs (deploy/apt-deps.sh --tests)")
            return
        }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = Fixtures.path("generated", "gray.jpg")
        func progressive(bands: [ClosedRange<Int>]) throws -> String {
            let script = bands.map { "0: \($0.lowerBound) \($0.upperBound) 0 0;" }.joined(separator: "\n")
            let scans = directory + "/\(bands.count).scans", out = directory + "/\(bands.count).jpg"
            try Data(script.utf8).write(to: URL(fileURLWithPath: scans))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: jpegtran)
            process.arguments = ["-scans", scans, "-outfile", out, original]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            return out
        }
        let thirtyTwo = try progressive(bands: [0...0] + (1...30).map { $0...$0 } + [31...63])
        let sequential = try ImageDecoder.decode(path: original).bitmap
        #expect(maxDifference(try ImageDecoder.decode(path: thirtyTwo).bitmap, sequential) == 0)

        let sixtyFour = try progressive(bands: (0...63).map { $0...$0 })
        #expect(throws: ImageError.unsupported(
            path: sixtyFour,
            reason: "its first 33 scans already pass over the image's 8x8 blocks more than 32 times "
                + "(a progressive JPEG passes over each about 6 times; refused for the CPU time)")) {
            try ImageDecoder.decode(path: sixtyFour)
        }
    }
}

/// Files are named for what they are, whatever their name.
@Suite struct FileFormatTests {
    @Test func theFileFromTheReportIsAGIFAndIsShown() throws {
        let path = Cases.fixture("gif-named.jpg")
        #expect(try ImageDecoder.decode(path: path).format == .gif)
        let frame = Bitmap(width: 64, height: 48)
        #expect(try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: .black).format == .gif)
        #expect(ImageError.otherFormat(path: path, format: FileFormat(.bmp)).description
                == "\(path): a BMP image (not shown: only JPEG, PNG, WebP, HEIF, AVIF and GIF are supported)")
    }

    /// The magic bytes of each format.
    @Test func formatsAreNamedByTheirMagicBytes() throws {
        func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
        let gif = try Fixtures.bytes("cases", "gif-named.jpg")
        let ftyp = { (major: String, compatible: [String]) -> [UInt8] in
            let size = 16 + 4 * compatible.count
            return [0, 0, 0, UInt8(size)] + bytes("ftyp" + major) + [0, 0, 0, 0] + compatible.flatMap(bytes)
                + [0, 0, 0, 8]
        }
        let cases: [([UInt8], FileFormat)] = [
            (try Fixtures.bytes("generated", "gray.jpg"), FileFormat(.jpeg)),
            (try Fixtures.bytes("pngsuite", "basn2c08.png"), FileFormat(.png)),
            (gif, FileFormat(.gif)),
            (bytes("GIF87a") + [1, 0, 1, 0], FileFormat(.gif)),
            (bytes("RIFF") + [0x24, 0, 0, 0] + bytes("WEBPVP8 "), FileFormat(.webp)),
            (ftyp("heic", ["mif1", "heic"]), .heif(brand: "heic")),
            (ftyp("mif1", ["mif1", "heic"]), .heif(brand: "mif1")),
            (ftyp("avif", ["avif", "mif1"]), FileFormat(.avif)),
            (ftyp("mif1", ["mif1", "miaf", "avif"]), FileFormat(.avif)),
            (ftyp("isom", ["isom", "mp41"]), .unknown(firstBytes: [0, 0, 0, 24] + bytes("ftyp"))),
            (bytes("BM") + [0x36, 0x10, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0], FileFormat(.bmp)),
            ([0x49, 0x49, 0x2A, 0, 8, 0, 0, 0], FileFormat(.tiff)),
            ([0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8], FileFormat(.tiff)),
            ([0xFF, 0x0A, 0xFA, 0x7F], FileFormat(.jpegXL)),
            ([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A], FileFormat(.jpegXL)),
            ([0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A], FileFormat(.jpeg2000)),
            ([0xFF, 0x4F, 0xFF, 0x51, 0, 0x2F], FileFormat(.jpeg2000)),
            (bytes("<?xml version=\"1.0\"?>\n<!-- drawn by hand -->\n<svg xmlns=\"http://www.w3.org/2000/svg\">"),
             FileFormat(.svg)),
            ([0xEF, 0xBB, 0xBF] + bytes("  <svg width=\"10\"/>"), FileFormat(.svg)),
            ([0, 0, 1, 0, 1, 0, 16, 16], FileFormat(.ico)),
            (bytes("%PDF-1.7\n"), FileFormat(.pdf)),
            (bytes("<html><body>not found</body></html>"), .unknown(firstBytes: bytes("<html><b"))),
            (bytes("BM but text"), .unknown(firstBytes: bytes("BM but t"))),
            ([1, 2], .unknown(firstBytes: [1, 2])),
        ]
        for (header, expected) in cases {
            #expect(FileFormat.identify(header) == expected, "\(header.prefix(12))")
            let shown = [ImageFormat.jpeg, .png, .webp, .heif, .avif, .gif].contains { $0 == expected.format }
            #expect((FileFormat.identify(header).decodable != nil) == shown)
        }
        #expect(FileFormat.unknown(firstBytes: [0x3C, 0x68]).description == "an unknown format (first bytes 3C 68)")
        #expect(FileFormat.heif(brand: "heic").description == "a HEIF image (brand heic)")
    }

    /// Each format, as a file and as bytes, gives the error that names it.
    @Test func theErrorNamesTheFormat() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0] + [UInt8](repeating: 0, count: 30)
        let path = directory + "/holiday.jpg"
        try Data(tiff).write(to: URL(fileURLWithPath: path))
        #expect(throws: ImageError.otherFormat(path: path, format: FileFormat(.tiff))) {
            try ImageDecoder.decode(path: path)
        }
        #expect(throws: ImageError.otherFormat(path: "d", format: FileFormat(.tiff))) {
            try ImageDecoder.decode(bytes: tiff, name: "d")
        }
        // A WebP of zeros named .jpg is a WebP, and a damaged one.
        let webp = Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [UInt8](repeating: 0, count: 30)
        #expect(throws: ImageError.corrupt(path: "w", reason: "libwebp: bitstream error (the WebP data is damaged)")) {
            try ImageDecoder.decode(bytes: webp, name: "w")
        }
        #expect(ImageError.otherFormat(path: "d", format: FileFormat(.pdf)).description
                == "d: a PDF document (not shown: only JPEG, PNG, WebP, HEIF, AVIF and GIF are supported)")
    }

    /// A file that starts as a JPEG and goes on as a GIF is a corrupt JPEG; one that starts as a
    /// GIF and goes on as a JPEG is a GIF.
    @Test func halfJPEGHalfSomethingElseIsACorruptJPEG() throws {
        let jpeg = try Fixtures.bytes("generated", "progressive.jpg")
        let gif = try Fixtures.bytes("cases", "gif-named.jpg")
        let front = Array(jpeg.prefix(jpeg.count / 2)) + gif
        guard case .corrupt(let path, _) = Result(catching: { () throws(ImageError) in
            try ImageDecoder.decode(bytes: front, name: "half.jpg")
        }).failure else {
            Issue.record("half a JPEG and a GIF was not a corrupt JPEG")
            return
        }
        #expect(path == "half.jpg")
        #expect(try ImageDecoder.decode(bytes: gif + jpeg, name: "g").format == .gif)
    }
}
