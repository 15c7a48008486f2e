// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskImaging
import Testing

/// A TIFF structure (little-endian) whose IFD0 holds `entries` (tag, type, bytes), values
/// stored after the IFD.
private func tiff(_ entries: [(tag: UInt16, type: UInt16, value: [UInt8])]) -> [UInt8] {
    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
    var out: [UInt8] = [0x49, 0x49, 42, 0] + le32(8) + le16(entries.count)
    var data: [UInt8] = []
    let dataAt = 8 + 2 + 12 * entries.count + 4
    for e in entries {
        out += le16(Int(e.tag)) + le16(Int(e.type)) + le32(e.value.count)
        if e.value.count <= 4 { out += e.value + [UInt8](repeating: 0, count: 4 - e.value.count) } else {
            out += le32(dataAt + data.count); data += e.value
        }
    }
    return out + le32(0) + data
}

/// `jpeg` with `segment` (marker, payload) inserted after SOI.
private func inserting(_ marker: UInt8, _ payload: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
    let n = payload.count + 2
    return Array(jpeg[0..<2]) + [0xFF, marker, UInt8(n >> 8), UInt8(n & 0xFF)] + payload + Array(jpeg[2...])
}

@Suite struct ImageDescriptionTests {
    let jpeg: [UInt8]
    init() throws { jpeg = try Fixtures.bytes("exif-orientation", "test_1.jpg") }

    @Test func exifImageDescriptionOfARealJPEGThatStillDecodes() throws {
        let exif = Array("Exif\0\0".utf8) + tiff([(0x010E, 2, Array("  Harbour at dusk\0".utf8))])
        let file = inserting(0xE1, exif, into: jpeg)
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/described.jpg"
        try Data(file).write(to: URL(fileURLWithPath: path))
        #expect(ImageDescription.read(path: path) == "Harbour at dusk")
        // libjpeg reads it as before
        _ = try ImageDecoder.decode(path: path, options: DecodeOptions(maxPixels: 1 << 26))
        #expect(ImageDescription.read(path: Fixtures.path("exif-orientation", "test_1.jpg")) == nil)
        #expect(ImageDescription.read(path: dir + "/missing.jpg") == nil)
    }

    /// A PNG tEXt "Description" is Latin-1 (PNG specification 11.3.4.3): "Café crème" from the
    /// bytes E9 and E8, not two replacement characters. An EXIF string ends at its first NUL.
    @Test func pngTextIsLatin1AndExifStringsEndAtTheirNUL() {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let n = data.count
            return [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
                + Array(type.utf8) + data + [0, 0, 0, 0]  // the CRC is not read
        }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0])
            + chunk("tEXt", Array("Description".utf8) + [0]
                        + [0x43, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65])
            + chunk("IEND", [])
        #expect(ImageDescription.parse(png) == "Café crème")
        let exif = inserting(0xE1, Array("Exif\0\0".utf8) + tiff([(0x010E, 2, Array("Hello\0garbage here\0".utf8))]),
                             into: jpeg)
        #expect(ImageDescription.parse(exif) == "Hello")
    }

    @Test func xpCommentWhenThereIsNoDescription() {
        let utf16: [UInt8] = Array("港口 at night".utf16).flatMap { u -> [UInt8] in [UInt8(u & 0xFF), UInt8(u >> 8)] }
            + [0, 0]
        let file = inserting(0xE1, Array("Exif\0\0".utf8) + tiff([(0x9C9C, 1, utf16)]), into: jpeg)
        #expect(ImageDescription.parse(file) == "港口 at night")
        // A blank description falls through to the comment.
        let both = inserting(0xE1, Array("Exif\0\0".utf8)
                                 + tiff([(0x010E, 2, Array("   \0".utf8)), (0x9C9C, 1, utf16)]), into: jpeg)
        #expect(ImageDescription.parse(both) == "港口 at night")
    }

    @Test func iptcCaptionInPhotoshopResources() {
        let caption = Array("Ferry coming in".utf8)
        let iim: [UInt8] = [0x1C, 2, 0, 0, 2, 0, 4] + [0x1C, 2, 120, 0, UInt8(caption.count)] + caption
        var resource: [UInt8] = Array("8BIM".utf8) + [0x04, 0x04, 0, 0]
        resource += [0, 0, UInt8(iim.count >> 8), UInt8(iim.count & 0xFF)] + iim
        if iim.count % 2 == 1 { resource.append(0) }
        let file = inserting(0xED, Array("Photoshop 3.0\0".utf8) + resource, into: jpeg)
        #expect(ImageDescription.parse(file) == "Ferry coming in")
    }

    @Test func truncatedOrLyingMetadataIsIgnored() {
        let exif = Array("Exif\0\0".utf8) + tiff([(0x010E, 2, Array("A long description here\0".utf8))])
        let file = inserting(0xE1, exif, into: jpeg)
        for cut in stride(from: 0, to: 80, by: 3) { _ = ImageDescription.parse(Array(file[0..<cut])) }
        var lying = file
        // SOI, APP1 header, "Exif\0\0", TIFF header, entry count, tag and type: the count's top byte
        lying[2 + 4 + 6 + 8 + 2 + 4 + 3] = 0x7F
        #expect(ImageDescription.parse(lying) == nil)
    }
}
