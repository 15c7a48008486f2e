// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
@testable import KioskImaging
import Testing

/// R, G, B of a pixel.
private func rgb(_ p: UInt32) -> [Int] { [Int((p >> 16) & 0xFF), Int((p >> 8) & 0xFF), Int(p & 0xFF)] }

/// The largest difference of one channel between `a` and `b`.
private func distance(_ a: [Int], _ b: [Int]) -> Int { zip(a, b).map { abs($0 - $1) }.max() ?? 0 }

/// The colour files of Tests/Fixtures/cases (see its README), made outside this project from
/// reports of phone photos shown dull and HDR photos shown grey, with the values they must show
/// computed there: a Display P3 PNG with its iCCP profile, and one scene as a 10-bit PQ AVIF and
/// as an sRGB AVIF.
@Suite struct ColourReportTests {
    /// display-p3-patches.expected.json: the six patches' stored values and their sRGB values
    /// (Little CMS, perceptual intent), in the order of the 3 x 2 grid of 64x48 patches.
    private static func displayP3Patches() throws -> [(stored: [Int], expected: [Int])] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Cases.fixture("display-p3-patches.expected.json")))
        let table = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let patches = try #require(table?["display_p3"] as? [[String: [Int]]])
        return try patches.map { (try #require($0["stored"]), try #require($0["expected_srgb"])) }
    }

    /// The centre of patch `i` of the 3 x 2 grid.
    private static func centre(_ i: Int) -> (x: Int, y: Int) { (32 + 64 * (i % 3), 24 + 48 * (i / 3)) }

    /// Each patch of the Display P3 PNG shows the file's expected sRGB value, decoded whole and
    /// streamed into a frame; unconverted, it shows the stored numbers.
    @Test func displayP3PatchesShowTheirSRGBValues() throws {
        let path = Cases.fixture("display-p3-patches.png")
        let patches = try Self.displayP3Patches()
        #expect(patches.count == 6)
        let whole = try ImageDecoder.decode(path: path)
        #expect(whole.warnings.isEmpty, "\(whole.warnings)")
        let frame = Bitmap(width: 192, height: 96)
        _ = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fill,
                                          background: RGBColor(red: 0, green: 0, blue: 0))
        let off = try ImageDecoder.decode(path: path, options: DecodeOptions(colour: .off)).bitmap
        for (i, patch) in patches.enumerated() {
            let (x, y) = Self.centre(i)
            #expect(distance(rgb(whole.bitmap[x, y]), patch.expected) <= 1,
                    "patch \(i) decoded whole: \(rgb(whole.bitmap[x, y])), expected \(patch.expected)")
            #expect(distance(rgb(frame[x, y]), patch.expected) <= 1,
                    "patch \(i) in a frame: \(rgb(frame[x, y])), expected \(patch.expected)")
            #expect(rgb(off[x, y]) == patch.stored, "patch \(i) unconverted: \(rgb(off[x, y]))")
        }
    }

    /// The PQ AVIF (BT.2020 primaries, 10 bits, the scene's white at 203 cd/m²) looks like its
    /// sRGB twin: the red, green, blue and white quarters within 16 levels (the white, at about
    /// 170 cd/m², is past the tone map's knee and so a little darker: 220 for 235); unconverted,
    /// the white is the grey of its code value. Its gray ramp climbs without a step clipped, and
    /// its 1000 cd/m² highlight is the brightest thing in the picture.
    @Test func aPQPictureLooksLikeItsSDRTwin() throws {
        let hdr = try ImageDecoder.decode(path: Cases.fixture("hdr-pq-bt2020-10bit.avif"))
        #expect(hdr.warnings.isEmpty, "\(hdr.warnings)")
        let twin = try ImageDecoder.decode(path: Cases.fixture("hdr-pq-bt2020-10bit.sdr-twin.avif")).bitmap
        let off = try ImageDecoder.decode(path: Cases.fixture("hdr-pq-bt2020-10bit.avif"),
                                          options: DecodeOptions(colour: .off)).bitmap
        #expect(hdr.bitmap.width == 128 && hdr.bitmap.height == 80 && twin.width == 128 && twin.height == 80)
        for (x, y) in [(32, 24), (96, 24), (32, 60), (80, 60)] {
            let mapped = rgb(hdr.bitmap[x, y]), sdr = rgb(twin[x, y])
            #expect(distance(mapped, sdr) <= 16, "(\(x),\(y)): HDR \(mapped), SDR twin \(sdr)")
        }
        #expect(distance(rgb(off[80, 60]), rgb(twin[80, 60])) > 60, "unconverted white: \(rgb(off[80, 60]))")
        let ramp = stride(from: 0, to: 128, by: 4).map { rgb(hdr.bitmap[$0, 2])[0] }
        #expect(zip(ramp, ramp.dropFirst()).allSatisfy { $0 < $1 }, "rolled off, not clipped: \(ramp)")
        let highlight = rgb(hdr.bitmap[120, 76])
        #expect(highlight[0] > ramp.last! && highlight[0] > rgb(hdr.bitmap[80, 60])[0], "\(highlight)")
    }
}
