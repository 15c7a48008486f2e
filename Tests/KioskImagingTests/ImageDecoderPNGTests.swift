// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskImaging
import Testing

/// ImageDecoder on PNG: PngSuite against Pillow, the corrupt x*.png files, truncation, the
/// pixel budget, libpng warnings.
@Suite struct ImageDecoderPNGTests {
    static let suite = "pngsuite"

    @Test func everyValidPngSuiteImageMatchesPillow() throws {
        let names = try Fixtures.files(Self.suite, suffix: ".png").filter { !$0.hasPrefix("x") }
        #expect(names.count == 161)
        let references = try Pillow.references(names.map { Fixtures.path(Self.suite, $0) })
        for (name, reference) in zip(names, references) {
            let expected = try reference.get()
            let decoded = try ImageDecoder.decode(path: Fixtures.path(Self.suite, name), options: DecodeOptions())
            #expect(decoded.format == .png)
            #expect(decoded.scaleNumerator == 8)
            #expect(decoded.sourceWidth == expected.width && decoded.sourceHeight == expected.height, "\(name)")
            // Gamma tables are built in floating point by both sides; allow one step there.
            let problem = mismatch(decoded.bitmap, expected, tolerance: expected.gammaCorrected ? 1 : 0)
            #expect(problem == nil, "\(name): \(problem ?? "")")
        }
    }
}

extension ImageDecoderPNGTests {
    @Test func everyCorruptPngSuiteImageGivesAClearError() throws {
        let names = try Fixtures.files(Self.suite, suffix: ".png").filter { $0.hasPrefix("x") }
        #expect(names.count == 14)
        for name in names {
            let path = Fixtures.path(Self.suite, name)
            #expect(throws: ImageError.self, "\(name)") {
                try ImageDecoder.decode(path: path, options: DecodeOptions())
            }
            do {
                _ = try ImageDecoder.decode(path: path, options: DecodeOptions())
            } catch {
                guard case .corrupt(let errorPath, let reason) = error else {
                    Issue.record("\(name): expected .corrupt, got \(error)")
                    continue
                }
                #expect(errorPath == path)
                #expect(!reason.isEmpty)
                #expect(error.description.hasPrefix("\(path): corrupt image: "))
            }
            // The same through memory.
            let bytes = try Fixtures.bytes(Self.suite, name)
            #expect(throws: ImageError.self, "\(name) from memory") {
                try ImageDecoder.decode(bytes: bytes, name: name)
            }
        }
    }

    @Test func specificCorruptionsNameTheProblem() throws {
        func reason(_ name: String) throws -> String {
            do {
                _ = try ImageDecoder.decode(path: Fixtures.path(Self.suite, name), options: DecodeOptions())
                return "decoded"
            } catch {
                return error.reason
            }
        }
        #expect(try reason("xs1n0g01.png").contains("damaged PNG signature 09 50 4E 47"))
        #expect(try reason("xlfn0g04.png").contains("damaged PNG signature"))
        #expect(try reason("xcsn0g01.png").contains("CRC"))
        #expect(try reason("xc9n2c08.png").lowercased().contains("color type"))
        #expect(try reason("xd9n2c08.png").lowercased().contains("bit depth"))
    }

    @Test func truncatedPngIsAnError() throws {
        let whole = try Fixtures.bytes(Self.suite, "basn2c08.png")
        for cut in [whole.count / 2, whole.count - 20, 40] {
            let name = "basn2c08-cut-\(cut).png"
            #expect(throws: ImageError.corrupt(path: name, reason: "unexpected end of data (the file is truncated)")) {
                try ImageDecoder.decode(bytes: Array(whole.prefix(cut)), name: name)
            }
        }
        // And from a file (fread path).
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/cut.png"
        try Data(whole.prefix(whole.count / 2)).write(to: URL(fileURLWithPath: path))
        #expect(throws: ImageError.corrupt(path: path, reason: "unexpected end of file (the file is truncated)")) {
            try ImageDecoder.decode(path: path, options: DecodeOptions())
        }
    }

    /// A PNG whose IHDR claims 65500x65500 (CRC fixed up) is refused from the header.
    @Test func pixelBudgetRefusesAHugePngFromItsHeader() throws {
        var bytes = try Fixtures.bytes(Self.suite, "basn2c08.png")
        // IHDR data starts at 16: width, height (big-endian), then depth, colour type...
        let size: [UInt8] = [0x00, 0x00, 0xFF, 0xDC]  // 65500
        bytes.replaceSubrange(16..<20, with: size)
        bytes.replaceSubrange(20..<24, with: size)
        let crc = crc32(bytes[12..<29])
        bytes.replaceSubrange(29..<33, with: [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF),
                                              UInt8(crc & 0xFF)])
        #expect(throws: ImageError.tooLarge(path: "huge.png", width: 65500, height: 65500, limit: 100_000_000)) {
            try ImageDecoder.decode(bytes: bytes, name: "huge.png")
        }
        // The limit is an option: a 32x32 image is refused at 1000 pixels and accepted at 1024.
        let small = try Fixtures.bytes(Self.suite, "basn2c08.png")
        #expect(throws: ImageError.tooLarge(path: "small.png", width: 32, height: 32, limit: 1000)) {
            try ImageDecoder.decode(bytes: small, name: "small.png", options: DecodeOptions(maxPixels: 1000))
        }
        #expect(try ImageDecoder.decode(bytes: small, name: "small.png", options: DecodeOptions(maxPixels: 1024))
                    .bitmap.width == 32)
    }

    /// A broken gAMA chunk (3 bytes instead of 4) is a libpng warning: the image still
    /// decodes, the warning is reported. A broken iCCP chunk is a warning once per file, and
    /// the picture is shown as sRGB.
    @Test func libpngWarningsAreCollectedNotThrown() throws {
        let original = try Fixtures.bytes(Self.suite, "basn2c08.png")
        // After the signature (8) and IHDR (25), insert the chunk.
        func inserting(_ chunk: [UInt8]) -> [UInt8] { Array(original[0..<33]) + chunk + Array(original[33...]) }
        let broken = try ImageDecoder.decode(bytes: inserting(pngChunk("gAMA", [0, 0, 0])), name: "gama.png")
        let clean = try ImageDecoder.decode(bytes: original, name: "clean.png")
        #expect(clean.warnings.isEmpty)
        #expect(broken.warnings.contains { $0.contains("gAMA") }, "\(broken.warnings)")
        #expect(maxDifference(broken.bitmap, clean.bitmap) == 0)
        // iCCP: name, NUL, method 0, then bytes that are not a zlib stream.
        let iccp = pngChunk("iCCP", Array("broken".utf8) + [0, 0] + [0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02])
        let skipped = try ImageDecoder.decode(bytes: inserting(iccp), name: "iccp.png")
        #expect(skipped.warnings.contains { $0.hasPrefix("iCCP") && $0.contains("shown as sRGB") },
                "\(skipped.warnings)")
        #expect(maxDifference(skipped.bitmap, clean.bitmap) == 0)
        let again = try ImageDecoder.decode(bytes: inserting(iccp), name: "iccp.png")
        #expect(again.warnings.isEmpty, "\(again.warnings)")
    }

    @Test func alphaIsReportedForAlphaChannelsAndTRNS() throws {
        for (name, alpha) in [("basn6a08.png", true), ("basn4a08.png", true), ("tbrn2c08.png", true),
                              ("tp1n3p08.png", true), ("tbbn0g04.png", true),
                              ("basn2c08.png", false), ("basn3p08.png", false), ("basn0g16.png", false)] {
            let decoded = try ImageDecoder.decode(path: Fixtures.path(Self.suite, name), options: DecodeOptions())
            #expect(decoded.bitmap.hasAlpha == alpha, "\(name)")
        }
    }

    @Test func memoryAndFileGiveTheSamePixels() throws {
        for name in ["basi6a16.png", "basn3p02.png", "oi9n2c16.png"] {
            let fromFile = try ImageDecoder.decode(path: Fixtures.path(Self.suite, name), options: DecodeOptions())
            let fromMemory = try ImageDecoder.decode(bytes: Fixtures.bytes(Self.suite, name), name: name)
            #expect(fromFile.bitmap.width == fromMemory.bitmap.width)
            #expect(memcmp(fromFile.bitmap.pixels, fromMemory.bitmap.pixels, fromFile.bitmap.byteCount) == 0, "\(name)")
        }
    }

    /// exif2c08.png carries an eXIf chunk (orientation 1); it is read and nothing turns.
    @Test func eXIfChunkIsRead() throws {
        let decoded = try ImageDecoder.decode(path: Fixtures.path(Self.suite, "exif2c08.png"), options: DecodeOptions())
        #expect(decoded.orientation == .topLeft)
        #expect(decoded.bitmap.width == 32 && decoded.bitmap.height == 32)
    }
}
