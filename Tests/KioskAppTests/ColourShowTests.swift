// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskImaging
import Testing

/// `--screen-profile` and `--rendering-intent` on the real executable: a Display P3 picture
/// (a PNG whose cICP chunk says Display P3) reaches the offscreen frame converted to sRGB by
/// default, unconverted with `--screen-profile off`; a profile that cannot be read is a usage
/// error naming the file.
@Suite struct ColourShowTests {
    /// A 64x40 PNG of (200,40,40) with a cICP chunk 12/13/0/1 (Display P3, the sRGB curve).
    private static func displayP3Red(in dir: String) throws -> String {
        let bitmap = Bitmap(width: 64, height: 40, fill: 0xFFC8_2828)
        let plain = dir + "/plain.png"
        try PNGWriter.write(bitmap, to: plain)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        let data: [UInt8] = [12, 13, 0, 1]
        let kind = Array("cICP".utf8)
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in kind + data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        crc ^= 0xFFFF_FFFF
        let crcBytes = [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
        let chunk = [0, 0, 0, 4] + kind + data + crcBytes
        bytes.insert(contentsOf: chunk, at: 33)  // after the signature and IHDR
        let path = dir + "/p3.png"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private static func show(_ arguments: [String],
                             dir: String) throws -> (status: Int32, stderr: String, frame: Bitmap?) {
        let frames = dir + "/frames-\(UUID().uuidString)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: kioskExecutable())
        process.arguments = ["--display", "offscreen:\(frames)", "--size", "64x40", "--run-for", "1"] + arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let written = (try? FileManager.default.contentsOfDirectory(atPath: frames)) ?? []
        let first = written.filter { $0.hasPrefix("frame-") }.sorted().first
        let frame = try first.map { try ImageDecoder.decode(path: frames + "/" + $0).bitmap }
        return (process.terminationStatus, stderr, frame)
    }

    @Test func aDisplayP3PictureIsShownInSRGB() throws {
        let dir = controlTestDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let picture = try Self.displayP3Red(in: dir)
        let converted = try Self.show([picture], dir: dir)
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.frame.map { $0[32, 20] & 0xFF_FFFF } == 0xDA_001A, "(218,0,26): \(converted.stderr)")
        let off = try Self.show(["--screen-profile", "off", picture], dir: dir)
        #expect(off.frame.map { $0[32, 20] & 0xFF_FFFF } == 0xC8_2828)
        #expect(off.stderr.contains("colours converted") && off.stderr.contains("off"), "\(off.stderr)")
        let relative = try Self.show(["--rendering-intent", "relative-colorimetric", picture], dir: dir)
        #expect(relative.frame.map { $0[32, 20] & 0xFF_FFFF } == 0xDA_001A)
    }

    @Test func anUnreadableScreenProfileIsAUsageError() throws {
        let dir = controlTestDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let missing = try Self.show(["--screen-profile", dir + "/none.icc", "x.png"], dir: dir)
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--screen-profile") && missing.stderr.contains(dir + "/none.icc"),
                "\(missing.stderr)")
        let notICC = dir + "/text.icc"
        try Data("not a profile".utf8).write(to: URL(fileURLWithPath: notICC))
        let bad = try Self.show(["--screen-profile", notICC, "x.png"], dir: dir)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains(notICC), "\(bad.stderr)")
        let intent = try Self.show(["--rendering-intent", "saturation", "x.png"], dir: dir)
        #expect(intent.status == 64 && intent.stderr.contains("perceptual or relative-colorimetric"),
                "\(intent.stderr)")
    }
}
