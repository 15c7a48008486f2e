// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskImaging

/// Test data under Tests/Fixtures (a sibling of this folder), found from this source file's path
/// so the tests run from any working directory.
enum Fixtures {
    /// Absolute path of Tests/Fixtures.
    static let root: String = {
        let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return testsFolder.appendingPathComponent("Fixtures").path
    }()

    /// Tests/Fixtures/<folder>/<name>.
    static func path(_ folder: String, _ name: String) -> String { "\(root)/\(folder)/\(name)" }

    /// The bytes of a fixture file.
    static func bytes(_ folder: String, _ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(folder, name))))
    }

    /// File names in a fixture folder, sorted.
    static func files(_ folder: String, suffix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "\(root)/\(folder)").filter { $0.hasSuffix(suffix) }
            .sorted()
    }

    /// A fresh temporary directory, removed by the caller with `removeDirectory`.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "kc-imaging-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// What Pillow decodes for one file (see pil_reference.py): the lowest and highest acceptable
/// value of every R,G,B,A sample, and whether a gamma correction applies.
struct PillowReference {
    var width: Int, height: Int
    var gammaCorrected: Bool
    var low: [UInt8], high: [UInt8]
}

/// Running pil_reference.py with Debian's /usr/bin/python3 (which has python3-pil).
enum Pillow {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let python = "/usr/bin/python3"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("pil_reference.py").path

    /// References for `paths`, in order; a file Pillow cannot read gives a `Result.failure`
    /// with its message. Throws (naming python3-pil) when Python or Pillow is missing.
    static func references(_ paths: [String]) throws -> [Result<PillowReference, Failure>] {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "\(python) is missing: the reference decoder needs Debian's python3 and "
                              + "python3-pil (apt-get install python3-pil)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script] + paths
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "pil_reference.py exited with \(process.terminationStatus): \(errText) "
                              + "(the reference decoder is Pillow, Debian package python3-pil)")
        }
        var results: [Result<PillowReference, Failure>] = []
        var at = 0
        while at < data.count {
            guard let newline = data[at...].firstIndex(of: 0x0A) else {
                throw Failure(description: "pil_reference.py: unterminated line")
            }
            let line = String(decoding: data[at..<newline], as: UTF8.self)
            at = newline + 1
            let fields = line.split(separator: " ", maxSplits: 2).map(String.init)
            if fields.first == "ERR" {
                results.append(.failure(Failure(description: fields.count > 2 ? fields[2] : line)))
                continue
            }
            let numbers = line.split(separator: " ").dropFirst().compactMap { Int($0) }
            guard fields.first == "OK", numbers.count == 4 else {
                throw Failure(description: "pil_reference.py: bad line \(line)")
            }
            let (w, h) = (numbers[1], numbers[2])
            let n = w * h * 4
            guard at + 2 * n <= data.count else { throw Failure(description: "pil_reference.py: short output") }
            results.append(.success(PillowReference(width: w, height: h, gammaCorrected: numbers[3] == 1,
                                                    low: Array(data[at..<at + n]),
                                                    high: Array(data[at + n..<at + 2 * n]))))
            at += 2 * n
        }
        guard results.count == paths.count else {
            throw Failure(description: "pil_reference.py answered for \(results.count) of \(paths.count) files")
        }
        return results
    }

    /// The reference for one file; throws when Pillow cannot read it.
    static func reference(_ path: String) throws -> PillowReference {
        try references([path])[0].get()
    }
}

/// The R, G, B, A bytes of an XRGB8888 / ARGB8888 pixel (A is 0xFF for opaque bitmaps).
func channels(_ pixel: UInt32) -> [Int] {
    [Int((pixel >> 16) & 0xFF), Int((pixel >> 8) & 0xFF), Int(pixel & 0xFF), Int(pixel >> 24)]
}

/// nil when every sample of `bitmap` lies within the reference's bounds widened by `tolerance`;
/// otherwise the first difference and how many pixels differ.
func mismatch(_ bitmap: Bitmap, _ reference: PillowReference, tolerance: Int) -> String? {
    guard bitmap.width == reference.width, bitmap.height == reference.height else {
        return "size \(bitmap.width)x\(bitmap.height), Pillow \(reference.width)x\(reference.height)"
    }
    var first: String?
    var count = 0
    for y in 0..<bitmap.height {
        for x in 0..<bitmap.width {
            let got = channels(bitmap[x, y])
            let i = (y * bitmap.width + x) * 4
            let ok = (0..<4).allSatisfy {
                got[$0] >= Int(reference.low[i + $0]) - tolerance && got[$0] <= Int(reference.high[i + $0]) + tolerance
            }
            if !ok {
                count += 1
                if first == nil {
                    first = "(\(x),\(y)) RGBA \(got), Pillow \(Array(reference.low[i..<i + 4]))"
                        + "...\(Array(reference.high[i..<i + 4]))"
                }
            }
        }
    }
    return first.map { "\(count) pixels differ, first at \($0)" }
}

/// The largest per-channel difference between two same-sized bitmaps (R, G, B only).
func maxDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
    precondition(a.width == b.width && a.height == b.height)
    var worst = 0
    for i in 0..<a.pixelCount {
        let p = channels(a.pixels[i]), q = channels(b.pixels[i])
        for c in 0..<3 { worst = max(worst, abs(p[c] - q[c])) }
    }
    return worst
}

/// The mean per-channel difference between two same-sized bitmaps (R, G, B only).
func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
    precondition(a.width == b.width && a.height == b.height)
    var total = 0
    for i in 0..<a.pixelCount {
        let p = channels(a.pixels[i]), q = channels(b.pixels[i])
        for c in 0..<3 { total += abs(p[c] - q[c]) }
    }
    return Double(total) / Double(a.pixelCount * 3)
}

/// CRC-32 (ISO 3309, as PNG chunks use it; PNG specification section 5.5).
func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
    }
    return ~crc
}

/// A PNG chunk: length, type, data, CRC.
func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    let typeBytes = Array(type.utf8)
    let length = UInt32(data.count)
    let crc = crc32(typeBytes + data)
    return [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
        + typeBytes + data
        + [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
}

/// PNG files changed at test time: chunks rewritten with their CRCs fixed up.
enum PNGFiles {
    /// `png` with its IHDR width and height replaced (the IDAT no longer matches, which only
    /// matters past the header).
    static func withSize(width: UInt32, height: UInt32, _ png: [UInt8]) -> [UInt8] {
        var bytes = png
        // IHDR data starts at 16: width, height (big-endian), then depth, colour type...
        bytes.replaceSubrange(16..<20, with: bigEndian(width))
        bytes.replaceSubrange(20..<24, with: bigEndian(height))
        bytes.replaceSubrange(29..<33, with: bigEndian(crc32(bytes[12..<29])))
        return bytes
    }

    /// `png` with an eXIf chunk right after IHDR whose TIFF IFD0 holds Orientation = `value`.
    static func withOrientation(_ value: UInt16, _ png: [UInt8]) -> [UInt8] {
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8,       // "MM", 42, IFD0 at 8
                             0, 1,                                     // one entry
                             0x01, 0x12, 0, 3, 0, 0, 0, 1,             // Orientation, SHORT, 1 value
                             UInt8(value >> 8), UInt8(value & 0xFF), 0, 0,
                             0, 0, 0, 0]                               // no IFD1
        return Array(png[0..<33]) + pngChunk("eXIf", tiff) + Array(png[33...])
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}

/// JPEG files taken apart at test time: the segments of a JPEG up to its EOI.
enum JPEGFiles {
    /// The byte ranges of the scans (each SOS marker segment with its entropy-coded data) and
    /// the offset of the EOI marker.
    static func scans(_ d: [UInt8]) -> (scans: [Range<Int>], eoi: Int) {
        var i = 2, scans: [Range<Int>] = []
        while i + 1 < d.count {
            precondition(d[i] == 0xFF, "JPEGFiles.scans: no marker at \(i)")
            let marker = d[i + 1]
            if marker == 0xD9 { return (scans, i) }
            guard i + 3 < d.count else { break }
            let length = Int(d[i + 2]) << 8 | Int(d[i + 3])
            if marker == 0xDA {
                var j = i + 2 + length
                while !(d[j] == 0xFF && d[j + 1] != 0 && !(0xD0...0xD7).contains(d[j + 1])) { j += 1 }
                scans.append(i..<j)
                i = j
            } else {
                i += 2 + length
            }
        }
        return (scans, d.count)
    }

    /// `jpeg` with its last scan repeated `times` more times before the EOI.
    static func repeatingLastScan(_ jpeg: [UInt8], times: Int) -> [UInt8] {
        let (scans, eoi) = Self.scans(jpeg)
        let last = Array(jpeg[scans.last!])
        var out = Array(jpeg[..<eoi])
        out.reserveCapacity(jpeg.count + last.count * times)
        for _ in 0..<times { out += last }
        return out + jpeg[eoi...]
    }

    /// `jpeg` with the frame size in its SOF marker (baseline, extended or progressive
    /// Huffman) replaced.
    static func withSize(width: Int, height: Int, _ jpeg: [UInt8]) -> [UInt8] {
        var bytes = jpeg
        let sof = (0..<bytes.count - 9).first { bytes[$0] == 0xFF && [0xC0, 0xC1, 0xC2].contains(bytes[$0 + 1]) }!
        // Length (2), precision (1), height (2), width (2).
        bytes.replaceSubrange(sof + 5..<sof + 9, with: [UInt8(height >> 8), UInt8(height & 0xFF),
                                                        UInt8(width >> 8), UInt8(width & 0xFF)])
        return bytes
    }
}

extension Result {
    /// The error, or nil on success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
