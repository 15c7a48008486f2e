// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskText

/// The fonts every text test draws with, found once (fonts-dejavu-core is a build and test
/// dependency, deploy/apt-deps.sh).
enum Fonts {
    static let library: FontLibrary = try! FontLibrary()
    static func renderer(cacheBytes: Int = 2 << 20, hintedAdvances: Bool = true) throws -> TextRenderer {
        try TextRenderer(library: library, glyphCacheBytes: cacheBytes, hintedAdvances: hintedAdvances)
    }
    /// The file of the first font fontconfig lists for `family`.
    static func file(_ family: String) throws -> String { try FontLibrary(family: family).fonts[0].path }
}

/// Pillow's rendering of a line of text (see pil_text.py), as 8-bit coverage.
enum PillowText {
    struct Failure: Error, CustomStringConvertible { var description: String }
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("pil_text.py").path

    static func render(font: String, size: Int, width: Int, height: Int, x: Int, baseline: Int,
                       layout: String = "basic", text: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, font, "\(size)", "\(width)", "\(height)", "\(x)", "\(baseline)", layout, text]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, data.count == width * height else {
            throw Failure(description: "pil_text.py exited with \(process.terminationStatus), "
                          + "\(data.count) bytes: \(errText) (Debian package python3-pil)")
        }
        return data
    }
}

/// The green channel of each pixel of `frame` (text drawn white on black: its coverage).
func coverage(_ frame: Bitmap) -> [UInt8] { (0..<frame.pixelCount).map { UInt8((frame.pixels[$0] >> 8) & 0xFF) } }

/// The smallest rectangle holding every pixel above 64 in a `width`-wide image, as
/// (minX, minY, maxX, maxY); nil when there is none.
func boundingBox(_ pixels: [UInt8], width: Int) -> (Int, Int, Int, Int)? {
    var box: (Int, Int, Int, Int)?
    for (i, v) in pixels.enumerated() where v > 64 {
        let x = i % width, y = i / width
        if let b = box { box = (min(b.0, x), min(b.1, y), max(b.2, x), max(b.3, y)) } else { box = (x, y, x, y) }
    }
    return box
}

/// Peak signal-to-noise ratio of two equally long 8-bit images, dB (infinity when equal).
func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
    var sum = 0.0
    for i in a.indices { let d = Double(a[i]) - Double(b[i]); sum += d * d }
    let mse = sum / Double(a.count)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}
