// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// The description a photo carries about itself, for `--caption exif`: EXIF/TIFF tag 0x010E
/// ImageDescription (ASCII, TIFF 6.0 section 8), else tag 0x9C9C XPComment (UCS-2
/// little-endian, the Windows Explorer comment), both from IFD0; else the IPTC caption (IIM
/// record 2, dataset 120 "Caption/Abstract", in a JPEG's APP13 Photoshop 3.0 resource 0x0404).
/// JPEG (APP1 "Exif", APP13) and PNG (eXIf, or a tEXt "Description") are read; other formats
/// have none here.
public enum ImageDescription {
    /// How much of the file is read: metadata sits in front of the image data.
    public static let readLimit = 256 << 10

    /// The description in the file at `path`, trimmed; nil when it has none, it is blank, or the
    /// file cannot be read. Never reads past ``readLimit`` bytes nor out of a segment's bounds.
    public static func read(path: String) -> String? { metadata(path: path).description }

    /// ``read(path:)`` for a file's first bytes.
    public static func parse(_ b: [UInt8]) -> String? { metadata(b).description }

    /// What a photo says about itself, from its first bytes (``readLimit``): the description
    /// (``read(path:)``) and EXIF DateTimeOriginal (``EXIFDateTime``).
    public static func metadata(_ b: [UInt8]) -> PhotoMetadata {
        func be16(_ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
        func be32(_ i: Int) -> Int { be16(i) << 16 | be16(i + 2) }
        var out = PhotoMetadata()
        if b.count > 4, b[0] == 0xFF, b[1] == 0xD8 {
            var at = 2, iptc: String?
            while at + 4 <= b.count, b[at] == 0xFF {
                let marker = b[at + 1], length = be16(at + 2)
                if marker == 0xDA || length < 2 { break }  // SOS: the image data
                let body = (at + 4)..<min(b.count, at + 2 + length)
                let payload = Array(b[body])
                if marker == 0xE1, payload.starts(with: Array("Exif\0\0".utf8)) {
                    let structure = TIFFStructure(Array(payload.dropFirst(6)))
                    out.description = out.description ?? structure.flatMap(description)
                    out.dateTimeOriginal = out.dateTimeOriginal ?? structure.flatMap(EXIFDateTime.init(original:))
                }
                if marker == 0xED, iptc == nil { iptc = photoshopCaption(payload) }
                at += 2 + length
            }
            out.description = out.description ?? iptc
            return out
        }
        if b.count > 8, b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            var at = 8, text: String?
            while at + 8 <= b.count {
                let length = be32(at), type = String(decoding: b[(at + 4)..<(at + 8)], as: UTF8.self)
                let end = min(b.count, at + 8 + length)
                let data = Array(b[(at + 8)..<end])
                if type == "eXIf", let structure = TIFFStructure(data) {
                    out.description = out.description ?? description(structure)
                    out.dateTimeOriginal = out.dateTimeOriginal ?? EXIFDateTime(original: structure)
                }
                if type == "tEXt", let nul = data.firstIndex(of: 0),
                   String(decoding: data[..<nul], as: UTF8.self) == "Description" {
                    // The text of tEXt is Latin-1 (ISO 8859-1; PNG specification section 11.3.4.3).
                    text = clean(String(String.UnicodeScalarView(data[(nul + 1)...].map { Unicode.Scalar($0) })))
                }
                if type == "IDAT" || type == "IEND" { break }
                at = end + 4
            }
            out.description = out.description ?? text
            return out
        }
        return out
    }

    /// ``metadata(_:)`` of the file at `path` (its first ``readLimit`` bytes); empty when it
    /// cannot be read.
    public static func metadata(path: String) -> PhotoMetadata {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY) else { return PhotoMetadata() }
        var bytes = [UInt8](repeating: 0, count: readLimit)
        var have = 0
        while have < bytes.count {
            let n = try? syscall("read", path: path) {
                bytes.withUnsafeMutableBytes { Glibc.read(fd.rawValue, $0.baseAddress! + have, $0.count - have) }
            }
            guard let n, n > 0 else { break }
            have += n
        }
        return metadata(Array(bytes[0..<have]))
    }

    /// The text up to its first NUL (TIFF's ASCII and EXIF's strings end there), trimmed;
    /// nil when nothing is left.
    private static func clean(_ s: String) -> String? {
        let t = s.unicodeScalars.prefix { $0.value != 0 }
        let trimmed = String(String.UnicodeScalarView(t)).trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// ImageDescription or XPComment in IFD0 of a TIFF structure.
    static func tiff(_ t: [UInt8]) -> String? { TIFFStructure(t).flatMap(description) }

    /// ImageDescription or XPComment in IFD0 of `structure`.
    static func description(_ structure: TIFFStructure) -> String? {
        var description: String?, comment: String?
        for entry in structure.entries(ofIFDAt: structure.ifd0) {
            guard entry.tag == 0x010E || entry.tag == 0x9C9C, let raw = structure.bytes(of: entry) else { continue }
            if entry.tag == 0x010E {
                description = clean(String(decoding: raw, as: UTF8.self))
            } else {
                let units = stride(from: 0, to: raw.count - 1, by: 2).map { UInt16(raw[$0]) | UInt16(raw[$0 + 1]) << 8 }
                comment = clean(String(decoding: units, as: UTF16.self))
            }
        }
        return description ?? comment
    }

    /// The IPTC Caption/Abstract (2:120) in an APP13 "Photoshop 3.0" payload.
    static func photoshopCaption(_ p: [UInt8]) -> String? {
        let prefix = Array("Photoshop 3.0\0".utf8)
        guard p.starts(with: prefix) else { return nil }
        var at = prefix.count
        while at + 12 <= p.count, p[at..<(at + 4)].elementsEqual("8BIM".utf8) {
            let id = Int(p[at + 4]) << 8 | Int(p[at + 5])
            let nameLength = Int(p[at + 6]), namePadded = (nameLength + 2) & ~1  // Pascal string, even length
            let sizeAt = at + 6 + namePadded
            guard sizeAt + 4 <= p.count else { return nil }
            let size = Int(p[sizeAt]) << 24 | Int(p[sizeAt + 1]) << 16 | Int(p[sizeAt + 2]) << 8 | Int(p[sizeAt + 3])
            let data = (sizeAt + 4)..<min(p.count, sizeAt + 4 + size)
            if id == 0x0404 {
                var i = data.lowerBound
                while i + 5 <= data.upperBound, p[i] == 0x1C {
                    let record = p[i + 1], dataset = p[i + 2], n = Int(p[i + 3]) << 8 | Int(p[i + 4])
                    let end = min(data.upperBound, i + 5 + n)
                    if record == 2, dataset == 120 { return clean(String(decoding: p[(i + 5)..<end], as: UTF8.self)) }
                    i = end
                }
                return nil
            }
            at = sizeAt + 4 + ((size + 1) & ~1)
        }
        return nil
    }
}

extension String {
    /// The string without leading and trailing whitespace (Unicode White_Space).
    func trimmingWhitespace() -> String {
        let s = unicodeScalars
        guard let first = s.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = s.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(s[first...last])
    }
}
