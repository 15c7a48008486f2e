// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing

/// PNGWriter: round trips through our decoder and Pillow, atomic replacement, errors.
@Suite struct PNGWriterTests {
    /// A bitmap with a different value in every channel of every pixel.
    static func pattern(width: Int, height: Int, alpha: Bool) -> Bitmap {
        let b = Bitmap(width: width, height: height, hasAlpha: alpha)
        for y in 0..<height {
            for x in 0..<width {
                let r = UInt32((x * 7 + y) & 0xFF), g = UInt32((y * 11) & 0xFF), b8 = UInt32((x ^ y) & 0xFF)
                let a: UInt32 = alpha ? UInt32((x * 5 + y * 3) & 0xFF) : 0xFF
                b[x, y] = a << 24 | r << 16 | g << 8 | b8
            }
        }
        return b
    }

    static func samePixels(_ a: Bitmap, _ b: Bitmap) -> Bool {
        a.width == b.width && a.height == b.height && memcmp(a.pixels, b.pixels, a.byteCount) == 0
    }

    @Test(arguments: [false, true])
    func roundTripGivesTheSamePixels(alpha: Bool) throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = Self.pattern(width: 37, height: 23, alpha: alpha)
        let path = directory + "/frame.png"
        try PNGWriter.write(original, to: path)
        let decoded = try ImageDecoder.decode(path: path, options: DecodeOptions())
        #expect(decoded.format == .png)
        #expect(decoded.bitmap.hasAlpha == alpha)
        #expect(Self.samePixels(decoded.bitmap, original))
        // An independent reader agrees.
        let reference = try Pillow.reference(path)
        #expect(mismatch(original, reference, tolerance: 0) == nil)
    }

    @Test func opaqueBitmapsIgnoreTheXByte() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = Self.pattern(width: 9, height: 4, alpha: false)
        for i in 0..<original.pixelCount { original.pixels[i] &= 0x00FF_FFFF }  // X byte 0
        try PNGWriter.write(original, to: directory + "/x.png")
        let decoded = try ImageDecoder.decode(path: directory + "/x.png", options: DecodeOptions())
        #expect(!decoded.bitmap.hasAlpha)
        #expect((0..<original.pixelCount).allSatisfy { decoded.bitmap.pixels[$0] == original.pixels[$0] | 0xFF00_0000 })
    }

    @Test func everyCompressionLevelGivesTheSamePixels() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = try ImageDecoder.decode(path: Fixtures.path("libjpeg-turbo-testimages", "testorig.jpg"),
                                               options: DecodeOptions()).bitmap
        var sizes: [Int32: Int] = [:]
        for level: Int32 in [0, 1, 6, 9, -4, 42] {
            let path = directory + "/level\(level).png"
            try PNGWriter.write(original, to: path, compressionLevel: level)
            #expect(Self.samePixels(try ImageDecoder.decode(path: path, options: DecodeOptions()).bitmap, original),
                    "level \(level)")
            sizes[level] = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        }
        #expect(sizes[9]! < sizes[1]! && sizes[1]! < sizes[0]!)
    }

    @Test func replacesAtomicallyAndLeavesNoTemporaryFiles() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/frame-00000000.png"
        try Data("old contents".utf8).write(to: URL(fileURLWithPath: path))
        let image = Self.pattern(width: 16, height: 16, alpha: false)
        try PNGWriter.write(image, to: path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["frame-00000000.png"])
        #expect(Self.samePixels(try ImageDecoder.decode(path: path, options: DecodeOptions()).bitmap, image))
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o644)
    }

    @Test func failureNamesTheStepAndLeavesNothingBehind() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/no-such-dir/frame.png"
        do {
            try PNGWriter.write(Self.pattern(width: 4, height: 4, alpha: false), to: path)
            Issue.record("write into a missing directory succeeded")
        } catch {
            guard case .writeFailed(let errorPath, let reason) = error else { Issue.record("got \(error)"); return }
            #expect(errorPath == path)
            #expect(reason.hasPrefix("open \(directory)/no-such-dir/.tmp-frame.png-")
                    && reason.hasSuffix(": No such file or directory (errno 2)"), "\(reason)")
            #expect(error.description.hasPrefix("\(path): cannot write PNG: "))
        }
        // Renaming onto a directory fails after the data is written: the temporary file goes.
        let target = directory + "/occupied.png"
        try FileManager.default.createDirectory(atPath: target + "/inner", withIntermediateDirectories: true)
        do {
            try PNGWriter.write(Self.pattern(width: 4, height: 4, alpha: false), to: target)
            Issue.record("rename onto a non-empty directory succeeded")
        } catch {
            guard case .writeFailed(_, let reason) = error else { Issue.record("got \(error)"); return }
            #expect(reason.hasPrefix("rename ") && reason.contains("errno"), "\(reason)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["occupied.png"])
    }
}
