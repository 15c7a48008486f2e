// SPDX-License-Identifier: Apache-2.0
// The colour-management fuzz target: any bytes as an ICC profile, through Little CMS the ways the
// program hands it one (docs/colour.md).
import KioskCore
@testable import KioskImaging

/// `data` as an ICC profile: embedded in pictures of each pixel layout (RGB with and without
/// alpha, gray, CMYK plain and Adobe-inverted), then as the screen's profile (checked as
/// `--screen-profile` checks it, then used for an untagged picture). Invariants: the conversion
/// holds no more than the budget it was given; a profile that cannot be used gives a warning
/// naming the file, never a crash; converting rows of every 8-bit value keeps an opaque pixel
/// opaque and alpha as it was; the same profile gives the same pixels from the cache.
func fuzzICC(_ data: [UInt8]) {
    ColourConversion.forgetCached()
    let budget = data.count % 2 == 0 ? fuzzDecodeOptions.maxDecoderBytes : 256 << 10
    // Every value of each channel, alpha varying (a ramp that is not all opaque).
    let width = 256
    func row() -> [UInt32] {
        (0..<width).map { i in
            let v = UInt32(i)
            return (v << 24 | 0x80_0000) | (v << 16) | ((255 - v) << 8) | ((v * 7) & 0xFF)
        }
    }
    for layout in [PixelLayout.bgra, .gray, .cmyk, .cmykInverted] {
        for alpha in layout == .bgra ? [false, true] : [false] {
            let name = "fuzz-\(layout)-\(alpha)"
            let made = ColourConversion.make(.icc(data), layout: layout, alpha: alpha, target: .sRGB, name: name,
                                             budget: budget)
            if let warning = made.warning, warning.isEmpty { fuzzFailure("an empty warning", data) }
            guard let conversion = made.conversion else { continue }
            guard conversion.bytes <= budget else {
                fuzzFailure("\(layout): the conversion holds \(conversion.bytes) bytes, budget \(budget)", data)
            }
            var pixels = row()
            let before = pixels
            pixels.withUnsafeMutableBufferPointer { conversion.convert($0.baseAddress!, count: width) }
            if layout == .bgra {
                for i in 0..<width where alpha ? pixels[i] >> 24 != before[i] >> 24 : false {
                    fuzzFailure("\(layout): alpha of pixel \(i) changed", data)
                }
            }
            // Again, from the cache: the same pixels.
            let again = ColourConversion.make(.icc(data), layout: layout, alpha: alpha, target: .sRGB, name: name,
                                              budget: budget)
            guard let second = again.conversion else { fuzzFailure("\(layout): the cached conversion is gone", data) }
            var repeated = row()
            repeated.withUnsafeMutableBufferPointer { second.convert($0.baseAddress!, count: width) }
            guard repeated == pixels else { fuzzFailure("\(layout): a second conversion differs", data) }
        }
    }
    // As the screen's profile.
    let probe = ColourConversion.probe(screen: data)
    guard probe.problem == nil else { return }
    let target = ColourTarget(screenProfile: ScreenProfile(bytes: data, name: "fuzz screen"))
    let made = ColourConversion.make(.sRGB, alpha: false, target: target, name: "fuzz-screen", budget: budget)
    guard let conversion = made.conversion else { return }
    guard conversion.bytes <= budget else {
        fuzzFailure("screen: the conversion holds \(conversion.bytes) bytes, budget \(budget)", data)
    }
    var pixels = row().map { $0 | 0xFF00_0000 }
    pixels.withUnsafeMutableBufferPointer { conversion.convert($0.baseAddress!, count: width) }
    for i in 0..<width where pixels[i] >> 24 != 0xFF {
        fuzzFailure("screen: pixel \(i) no longer opaque: \(String(pixels[i], radix: 16))", data)
    }
}
