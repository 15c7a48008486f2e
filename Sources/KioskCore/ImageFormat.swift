// SPDX-License-Identifier: Apache-2.0

/// One row of the format table (``ImageFormat/table``, docs/formats.md): an image format as the
/// program knows it, recognised from the first bytes of the data (never the file name). The
/// formats shown (``isShown``) each have a row of KioskImaging's codec table (`ImageCodec`: the
/// library and how to decode); the others are recognised only to name them when a file is
/// skipped ("a BMP image (not shown: ...)").
///
/// A row says what the format is everywhere it matters: its magic bytes (``FileFormat/identify(_:)``,
/// the fetcher's check of a download's first bytes), the file name extensions a directory lists
/// it by (the directory watch), and the names messages give it (`--help`, the "no images"
/// screen, the "not shown" error). Rows compare by ``name``.
public struct ImageFormat: Hashable, Sendable, CustomStringConvertible {
    /// The identifier in code, logs and fuzz targets: `jpeg`, `heif`, `jpegXL`.
    public let name: String
    /// The format's name in messages: `JPEG`, `HEIF`, `JPEG XL`.
    public let title: String
    /// The format in a sentence, for the log: `a JPEG image`, `an ICO icon`, `a PDF document`.
    public let phrase: String
    /// The name its files usually go by, when it is not ``title`` (`HEIC` for HEIF: what phones
    /// write); nil for most.
    public let alias: String?
    /// What `--help` says after its name; nil for most (all, now that GIF animations play).
    public let note: String?
    /// The signatures, any of which makes data this format. Checked in table order, so a row
    /// whose signature could also match a later row's comes first.
    public let magic: [MagicBytes]
    /// Whether the show decodes it (a row of KioskImaging's codec table).
    public let isShown: Bool
    /// File name extensions (lower case, without the dot; compared in any case) by which a
    /// directory's files are taken as this format's images; empty for a format not shown.
    public let extensions: [String]

    public init(name: String, title: String, phrase: String, alias: String? = nil, note: String? = nil,
                magic: [MagicBytes], isShown: Bool, extensions: [String] = []) {
        self.name = name; self.title = title; self.phrase = phrase; self.alias = alias; self.note = note
        self.magic = magic; self.isShown = isShown; self.extensions = extensions
    }

    public static func == (a: ImageFormat, b: ImageFormat) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// ``name``.
    public var description: String { name }
}

/// How a format is recognised from the first bytes of the data (at most
/// ``FileFormat/sniffLength``).
public enum MagicBytes: Sendable {
    /// `bytes` at byte `offset`.
    case bytes([UInt8], at: Int = 0)
    /// Text (ASCII) at byte `offset`.
    case text(String, at: Int = 0)
    /// All of these.
    case all([MagicBytes])
    /// An ISO BMFF file (ISO/IEC 14496-12: an `ftyp` box first) whose major brand or one of
    /// whose compatible brands is one of `brands`, and none of them one of `unless` (a HEIF
    /// file that also names an AVIF brand is AVIF: AVIF files often list `mif1` too). With
    /// `reported`, ``FileFormat/brand`` says which brand matched: the major brand if it is one
    /// of `brands`, else the first compatible one that is.
    case isoBrands(Set<String>, unless: Set<String> = [], reported: Bool = false)
    /// A test of the first bytes, for a signature that is not fixed bytes (reserved fields that
    /// must be zero, a count that must not be, XML text).
    case test(@Sendable ([UInt8]) -> Bool)

    /// Whether `b` (the first bytes) has this signature, and the ISO BMFF brand that gave it.
    func match(_ b: [UInt8]) -> (matched: Bool, brand: String?) {
        switch self {
        case .bytes(let bytes, let offset):
            return (b.count >= offset + bytes.count && b[offset..<(offset + bytes.count)].elementsEqual(bytes), nil)
        case .text(let text, let offset):
            return MagicBytes.bytes(Array(text.utf8), at: offset).match(b)
        case .all(let parts):
            return (parts.allSatisfy { $0.match(b).matched }, nil)
        case .isoBrands(let brands, let unless, let reported):
            guard let (major, compatible) = isoMediaBrands(b) else { return (false, nil) }
            let named = [major] + compatible
            guard !named.contains(where: unless.contains), let brand = named.first(where: brands.contains) else {
                return (false, nil)
            }
            return (true, reported ? brand : nil)
        case .test(let test):
            return (test(b), nil)
        }
    }
}

extension ImageFormat {
    /// The format table, in the order the signatures are checked: the formats shown first
    /// (the order messages list them in), then those only named. A new format is a row here,
    /// and, when shown, a row of KioskImaging's codec table (docs/formats.md).
    ///
    /// Signatures: JPEG `FF D8` (the SOI marker, ITU T.81 B.2.1); PNG its 8-byte signature (PNG
    /// specification 5.2); WebP `RIFF`, a 4-byte size, `WEBP` (RFC 9649, section 2); HEIF and
    /// AVIF an ISO BMFF `ftyp` box whose major or compatible brands name them (ISO/IEC 23008-12,
    /// AV1 Image File Format section 6); GIF `GIF87a` or `GIF89a` (GIF89a specification); BMP
    /// `BM` with its reserved fields zero (BITMAPFILEHEADER); TIFF `II*\0` or `MM\0*` (and
    /// BigTIFF `II+\0`/`MM\0+`); JPEG XL the codestream `FF 0A` or its container box `00 00 00 0C
    /// 4A 58 4C 20 0D 0A 87 0A` (ISO/IEC 18181-2); JPEG 2000 the JP2 signature box `00 00 00 0C
    /// 6A 50 20 20 0D 0A 87 0A` or a raw codestream `FF 4F FF 51` (ISO/IEC 15444-1); ICO/CUR
    /// `00 00 01 00`/`00 00 02 00` with at least one image; PDF `%PDF-`; SVG XML text with an
    /// `<svg` element in its first bytes.
    public static let table: [ImageFormat] = [
        .jpeg, .png, .webp, .heif, .avif, .gif,
        .bmp, .tiff, .jpegXL, .jpeg2000, .ico, .pdf, .svg,
    ]

    /// The formats the show decodes, in table order.
    public static let shown: [ImageFormat] = table.filter(\.isShown)

    /// Every extension of the formats shown (lower case): a directory's images are its files
    /// named so, in any case.
    public static let imageExtensions: Set<String> = Set(shown.flatMap(\.extensions))

    /// The format shown whose extensions include that of `name` (any case), or nil: `IMG_1.HEIC`
    /// is HEIF, `notes.txt` nothing.
    public static func shown(byFileName name: String) -> ImageFormat? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        let ext = name[name.index(after: dot)...].lowercased()
        return shown.first { $0.extensions.contains(ext) }
    }

    /// `words` as a sentence lists them: `A`, `A or B`, `A, B and C` (`conjunction` "and" or "or").
    public static func listed(_ words: [String], _ conjunction: String) -> String {
        guard words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " \(conjunction) " + words.last!
    }

    /// JPEG (libjpeg-turbo).
    public static let jpeg = ImageFormat(
        name: "jpeg", title: "JPEG", phrase: "a JPEG image",
        magic: [.bytes([0xFF, 0xD8])], isShown: true, extensions: ["jpg", "jpeg", "jpe"])
    /// PNG (libpng).
    public static let png = ImageFormat(
        name: "png", title: "PNG", phrase: "a PNG image",
        magic: [.bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])], isShown: true, extensions: ["png"])
    /// WebP (libwebp).
    public static let webp = ImageFormat(
        name: "webp", title: "WebP", phrase: "a WebP image",
        magic: [.all([.text("RIFF"), .text("WEBP", at: 8)])], isShown: true, extensions: ["webp"])
    /// HEIF, HEVC-coded (libheif with libde265); its files are usually `.heic`.
    public static let heif = ImageFormat(
        name: "heif", title: "HEIF", phrase: "a HEIF image", alias: "HEIC",
        magic: [.isoBrands(["heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1"],
                           unless: avifBrands, reported: true)],
        isShown: true, extensions: ["heic", "heif"])
    /// AVIF, AV1-coded HEIF (libheif with dav1d).
    public static let avif = ImageFormat(
        name: "avif", title: "AVIF", phrase: "an AVIF image",
        magic: [.isoBrands(avifBrands)], isShown: true, extensions: ["avif"])
    /// GIF (giflib): animations are played.
    public static let gif = ImageFormat(
        name: "gif", title: "GIF", phrase: "a GIF image",
        magic: [.text("GIF87a"), .text("GIF89a")], isShown: true, extensions: ["gif"])

    /// The `ftyp` brands of AVIF (AV1 Image File Format, section 6: still image and sequence).
    static let avifBrands: Set<String> = ["avif", "avis"]

    /// BMP (not shown).
    public static let bmp = ImageFormat(
        name: "bmp", title: "BMP", phrase: "a BMP image",
        magic: [.test { b in b.starts(with: [0x42, 0x4D]) && b.count >= 14 && b[6..<10].allSatisfy { $0 == 0 } }],
        isShown: false)
    /// TIFF (not shown).
    public static let tiff = ImageFormat(
        name: "tiff", title: "TIFF", phrase: "a TIFF image",
        magic: [.bytes([0x49, 0x49, 0x2A, 0x00]), .bytes([0x4D, 0x4D, 0x00, 0x2A]),
                .bytes([0x49, 0x49, 0x2B, 0x00]), .bytes([0x4D, 0x4D, 0x00, 0x2B])],
        isShown: false)
    /// JPEG XL (not shown).
    public static let jpegXL = ImageFormat(
        name: "jpegXL", title: "JPEG XL", phrase: "a JPEG XL image",
        magic: [.bytes([0xFF, 0x0A]), .bytes([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A])],
        isShown: false)
    /// JPEG 2000 (not shown).
    public static let jpeg2000 = ImageFormat(
        name: "jpeg2000", title: "JPEG 2000", phrase: "a JPEG 2000 image",
        magic: [.bytes([0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]),
                .bytes([0xFF, 0x4F, 0xFF, 0x51])],
        isShown: false)
    /// ICO and CUR icons (not shown).
    public static let ico = ImageFormat(
        name: "ico", title: "ICO", phrase: "an ICO icon",
        magic: [.test { b in
            (b.starts(with: [0, 0, 1, 0]) || b.starts(with: [0, 0, 2, 0])) && b.count >= 6 && (b[4] != 0 || b[5] != 0)
        }],
        isShown: false)
    /// PDF (not shown).
    public static let pdf = ImageFormat(
        name: "pdf", title: "PDF", phrase: "a PDF document", magic: [.text("%PDF-")], isShown: false)
    /// SVG (not shown).
    public static let svg = ImageFormat(
        name: "svg", title: "SVG", phrase: "an SVG image", magic: [.test { isSVG($0) }], isShown: false)
}

/// What a file is, from its magic bytes: a row of the format table (``ImageFormat/table``),
/// shown or only named when a file is skipped, or unknown (with its first bytes). Only the
/// first ``FileFormat/sniffLength`` bytes are looked at; the file name never is.
public struct FileFormat: Equatable, Sendable, CustomStringConvertible {
    /// The format, nil when none of the table's signatures matched.
    public let format: ImageFormat?
    /// The ISO BMFF brand that said so, for HEIF (`heic`, `heix`, `mif1`...); nil otherwise.
    public let brand: String?
    /// For an unknown format: the first bytes of the file (at most 8).
    public let firstBytes: [UInt8]

    /// A file of `format` (`brand`: the ISO BMFF brand that named it, for HEIF).
    public init(_ format: ImageFormat, brand: String? = nil) {
        self.format = format; self.brand = brand; self.firstBytes = []
    }

    private init(unknown firstBytes: [UInt8]) { format = nil; brand = nil; self.firstBytes = firstBytes }

    /// None of the table's formats; the first bytes of the file (at most 8).
    public static func unknown(firstBytes: [UInt8]) -> FileFormat { FileFormat(unknown: Array(firstBytes.prefix(8))) }

    /// A HEIF file named so by `brand`.
    public static func heif(brand: String) -> FileFormat { FileFormat(.heif, brand: brand) }

    /// How many bytes ``identify(_:)`` looks at, at most: enough for an SVG's XML declaration
    /// and a comment or doctype before its `<svg` element.
    public static let sniffLength = 512

    /// The format shown for it, or nil for a format that is not shown.
    public var decodable: ImageFormat? { format.flatMap { $0.isShown ? $0 : nil } }

    /// For the log: `a GIF image`, `a HEIF image (brand heic)`, `an unknown format (first bytes
    /// 3C 68 74 6D 6C 3E 6E 6F)`.
    public var description: String {
        guard let format else {
            return firstBytes.isEmpty ? "an empty file" : "an unknown format (first bytes \(hex(firstBytes)))"
        }
        return brand.map { "\(format.phrase) (brand \($0))" } ?? format.phrase
    }

    /// The format of data starting with `header` (its first ``sniffLength`` bytes are looked
    /// at): the first row of ``ImageFormat/table`` one of whose signatures matches.
    public static func identify(_ header: some Collection<UInt8>) -> FileFormat {
        let b = Array(header.prefix(sniffLength))
        for format in ImageFormat.table {
            for signature in format.magic {
                let (matched, brand) = signature.match(b)
                if matched { return FileFormat(format, brand: brand) }
            }
        }
        return .unknown(firstBytes: b)
    }
}

/// The major and compatible brands of an ISO BMFF file's `ftyp` box (ISO/IEC 14496-12, 4.3:
/// size, `ftyp`, major brand, minor version, compatible brands to the end of the box), or nil
/// when the data does not start with one.
private func isoMediaBrands(_ b: [UInt8]) -> (major: String, compatible: [String])? {
    guard b.count >= 12, b[4..<8].elementsEqual("ftyp".utf8) else { return nil }
    let boxSize = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
    func brand(at offset: Int) -> String { String(decoding: b[offset..<(offset + 4)], as: UTF8.self) }
    var compatible: [String] = []
    var offset = 16
    while offset + 4 <= min(boxSize, b.count) {
        compatible.append(brand(at: offset))
        offset += 4
    }
    return (brand(at: 8), compatible)
}

/// XML text (after an optional UTF-8 byte-order mark and white space) with an `<svg` element
/// among the bytes looked at.
private func isSVG(_ b: [UInt8]) -> Bool {
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

/// `3C 68 74 6D`: bytes as two-digit upper-case hex, space separated.
func hex(_ bytes: some Collection<UInt8>) -> String {
    bytes.map { byte in
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count < 2 ? "0" + digits : digits
    }.joined(separator: " ")
}
