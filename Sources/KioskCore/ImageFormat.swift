// SPDX-License-Identifier: Apache-2.0
/// The image formats decoded here, recognised from the first bytes of the data (never the
/// file name).
public enum ImageFormat: String, Sendable {
    /// JPEG: starts with `FF D8` (SOI marker).
    case jpeg
    /// PNG: starts with the 8-byte signature `89 50 4E 47 0D 0A 1A 0A`.
    case png
    /// WebP (libwebp): `RIFF`, a 4-byte size, `WEBP` (RFC 9649, section 2).
    case webp
    /// HEIF, HEVC-coded (libheif with libde265): an ISO BMFF `ftyp` box naming a HEIF brand.
    case heif
    /// AVIF, AV1-coded HEIF (libheif with dav1d): an `ftyp` box naming `avif` or `avis`.
    case avif
    /// GIF (giflib): `GIF87a` or `GIF89a`; the first frame is shown.
    case gif
}

/// What a file is, from its magic bytes: one of the formats shown (``ImageFormat``), one
/// of the image (or image-like) formats people put beside them and that are named in the log
/// when a file is skipped, or unknown (with its first bytes). Only the first
/// ``FileFormat/sniffLength`` bytes are looked at; the file name never is.
///
/// Signatures: GIF `GIF87a`/`GIF89a` (GIF89a specification); WebP `RIFF` size `WEBP` (RFC
/// 9649, section 2); HEIF and AVIF an ISO BMFF `ftyp` box whose major or compatible brands
/// name them (ISO/IEC 23008-12, AV1 Image File Format section 6); BMP `BM` with its reserved
/// fields zero (BITMAPFILEHEADER); TIFF `II*\0` or `MM\0*` (and BigTIFF `II+\0`/`MM\0+`); JPEG
/// XL the codestream `FF 0A` or its container box `00 00 00 0C 4A 58 4C 20 0D 0A 87 0A`
/// (ISO/IEC 18181-2); JPEG 2000 the JP2 signature box `00 00 00 0C 6A 50 20 20 0D 0A 87 0A` or
/// a raw codestream `FF 4F FF 51` (ISO/IEC 15444-1); SVG XML text with an `<svg` element in
/// its first bytes; ICO/CUR `00 00 01 00`/`00 00 02 00` with at least one image; PDF `%PDF-`.
public enum FileFormat: Equatable, Sendable, CustomStringConvertible {
    case jpeg, png
    case gif, webp
    /// HEIF, with the `ftyp` brand that said so (`heic`, `heix`, `mif1`...).
    case heif(brand: String)
    case avif, bmp, tiff, jpegXL, jpeg2000, svg, ico, pdf
    /// None of the above; the first bytes of the file (at most 8).
    case unknown(firstBytes: [UInt8])

    /// How many bytes ``identify(_:)`` looks at, at most: enough for an SVG's XML declaration
    /// and a comment or doctype before its `<svg` element.
    public static let sniffLength = 512

    /// The format shown for it, or nil for a format that is not shown.
    public var decodable: ImageFormat? {
        switch self {
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        case .heif: return .heif
        case .avif: return .avif
        case .gif: return .gif
        default: return nil
        }
    }

    /// For the log: `a GIF image`, `a HEIF image (brand heic)`, `an unknown format (first bytes
    /// 3C 68 74 6D 6C 3E 6E 6F)`.
    public var description: String {
        switch self {
        case .jpeg: return "a JPEG image"
        case .png: return "a PNG image"
        case .gif: return "a GIF image"
        case .webp: return "a WebP image"
        case .heif(let brand): return "a HEIF image (brand \(brand))"
        case .avif: return "an AVIF image"
        case .bmp: return "a BMP image"
        case .tiff: return "a TIFF image"
        case .jpegXL: return "a JPEG XL image"
        case .jpeg2000: return "a JPEG 2000 image"
        case .svg: return "an SVG image"
        case .ico: return "an ICO icon"
        case .pdf: return "a PDF document"
        case .unknown(let bytes):
            return bytes.isEmpty ? "an empty file" : "an unknown format (first bytes \(hex(bytes)))"
        }
    }

    /// The format of data starting with `header` (its first ``sniffLength`` bytes are looked at).
    public static func identify(_ header: some Collection<UInt8>) -> FileFormat {
        let b = Array(header.prefix(sniffLength))
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + prefix.count && Array(b[offset..<(offset + prefix.count)]) == prefix
        }
        func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

        if starts([0xFF, 0xD8]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(ascii("GIF87a")) || starts(ascii("GIF89a")) { return .gif }
        if starts(ascii("RIFF")) && starts(ascii("WEBP"), at: 8) { return .webp }
        if starts(ascii("ftyp"), at: 4), let format = isoMediaFormat(b) { return format }
        if starts(ascii("BM")) && b.count >= 14 && b[6..<10].allSatisfy({ $0 == 0 }) { return .bmp }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A])
            || starts([0x49, 0x49, 0x2B, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2B]) { return .tiff }
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            return .jpegXL
        }
        if starts([0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) || starts([0xFF, 0x4F, 0xFF, 0x51]) {
            return .jpeg2000
        }
        if (starts([0, 0, 1, 0]) || starts([0, 0, 2, 0])) && b.count >= 6 && (b[4] != 0 || b[5] != 0) { return .ico }
        if starts(ascii("%PDF-")) { return .pdf }
        if isSVG(b) { return .svg }
        return .unknown(firstBytes: Array(b.prefix(8)))
    }

    /// An ISO BMFF file (`ftyp` box first): AVIF or HEIF by its major brand, else by its
    /// compatible brands (AVIF first: an AVIF file often lists `mif1` too), else nil.
    private static func isoMediaFormat(_ b: [UInt8]) -> FileFormat? {
        guard b.count >= 12 else { return nil }
        let boxSize = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        func brand(at offset: Int) -> String { String(decoding: b[offset..<(offset + 4)], as: UTF8.self) }
        let major = brand(at: 8)
        var compatible: [String] = []
        var offset = 16
        while offset + 4 <= min(boxSize, b.count) {
            compatible.append(brand(at: offset))
            offset += 4
        }
        let avif: Set<String> = ["avif", "avis"]
        let heif: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1"]
        if avif.contains(major) { return .avif }
        if heif.contains(major) && !compatible.contains(where: avif.contains) { return .heif(brand: major) }
        if compatible.contains(where: avif.contains) { return .avif }
        if let found = compatible.first(where: heif.contains) { return .heif(brand: found) }
        return nil
    }

    /// XML text (after an optional UTF-8 byte-order mark and white space) with an `<svg`
    /// element among the bytes looked at.
    private static func isSVG(_ b: [UInt8]) -> Bool {
        var start = 0
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < b.count, [0x20, 0x09, 0x0A, 0x0D].contains(b[start]) { start += 1 }
        guard start < b.count, b[start] == UInt8(ascii: "<") else { return false }
        let tag = Array("<svg".utf8)
        guard b.count - start >= tag.count else { return false }
        for i in start...(b.count - tag.count) where Array(b[i..<(i + tag.count)]) == tag {
            let after = i + tag.count
            if after == b.count || [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/")].contains(b[after]) {
                return true
            }
        }
        return false
    }
}

/// `3C 68 74 6D`: bytes as two-digit upper-case hex, space separated.
func hex(_ bytes: some Collection<UInt8>) -> String {
    bytes.map { byte in
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count < 2 ? "0" + digits : digits
    }.joined(separator: " ")
}
