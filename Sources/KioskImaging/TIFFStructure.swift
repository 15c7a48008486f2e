// SPDX-License-Identifier: Apache-2.0
/// A TIFF structure, as EXIF metadata holds one (TIFF 6.0 section 2: the byte order `II`
/// little-endian or `MM` big-endian, the number 42, the offset of IFD0; each IFD a 2-byte entry
/// count, 12-byte entries tag, type, count, value or offset, then the next IFD's offset). The one
/// reader of EXIF's TIFF for ``EXIFOrientation``, ``ImageDescription`` and ``EXIFDateTime``.
/// Every read is bounds-checked: offsets or counts pointing outside the bytes give nil or skip
/// the entry, never a read out of bounds.
struct TIFFStructure {
    /// One IFD entry (TIFF 6.0 section 2, "IFD Entry").
    struct Entry {
        var tag: Int
        /// The field type: 1 BYTE, 2 ASCII, 3 SHORT, 4 LONG, 5 RATIONAL, 7 UNDEFINED, ...
        var type: Int
        var count: Int
        /// Where the entry starts in the structure (its value field is at `at + 8`).
        var at: Int
    }

    let bytes: [UInt8]
    let littleEndian: Bool
    /// The offset of IFD0 (at least 8: after the header).
    let ifd0: Int

    /// Nil when `bytes` has no TIFF header (byte order mark, 42, an IFD0 offset past the header).
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return nil }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true   // "II"
        case (0x4D, 0x4D): little = false  // "MM"
        default: return nil
        }
        let header = TIFFStructure(bytes: bytes, littleEndian: little, ifd0: 8)
        guard header.u16(2) == 42, let offset = header.u32(4), offset >= 8 else { return nil }
        self.init(bytes: bytes, littleEndian: little, ifd0: offset)
    }

    private init(bytes: [UInt8], littleEndian: Bool, ifd0: Int) {
        self.bytes = bytes
        self.littleEndian = littleEndian
        self.ifd0 = ifd0
    }

    /// The 16-bit unsigned integer at `offset` in the structure's byte order; nil outside.
    func u16(_ offset: Int) -> Int? {
        guard offset >= 0, offset <= bytes.count - 2 else { return nil }
        let a = Int(bytes[offset]), b = Int(bytes[offset + 1])
        return littleEndian ? a | b << 8 : a << 8 | b
    }

    /// The 32-bit unsigned integer at `offset`; nil outside.
    func u32(_ offset: Int) -> Int? {
        guard let first = u16(offset), let second = u16(offset + 2) else { return nil }
        return littleEndian ? first | second << 16 : first << 16 | second
    }

    /// The entries of the IFD at `offset` that lie wholly inside the structure (a directory cut
    /// short ends at its last whole entry); none when the offset is outside.
    func entries(ofIFDAt offset: Int) -> [Entry] {
        guard let count = u16(offset) else { return [] }
        var out: [Entry] = []
        for index in 0..<count {
            let at = offset + 2 + index * 12
            guard at <= bytes.count - 12, let tag = u16(at), let type = u16(at + 2), let n = u32(at + 4) else { break }
            out.append(Entry(tag: tag, type: type, count: n, at: at))
        }
        return out
    }

    /// The first entry tagged `tag` in the IFD at `offset`.
    func entry(_ tag: Int, inIFDAt offset: Int) -> Entry? { entries(ofIFDAt: offset).first { $0.tag == tag } }

    /// The value bytes of a 1-byte-per-item entry (BYTE, ASCII, UNDEFINED: `count` bytes, in the
    /// value field when they fit in 4, else at the offset it holds); nil when empty, larger than
    /// the structure, or outside it.
    func bytes(of entry: Entry) -> [UInt8]? {
        let n = entry.count
        guard n > 0, n < bytes.count else { return nil }
        guard let start = n <= 4 ? entry.at + 8 : u32(entry.at + 8), start >= 0, start <= bytes.count - n else {
            return nil
        }
        return Array(bytes[start..<(start + n)])
    }

    /// The first value of a SHORT (3) or LONG (4) entry; nil for other types.
    func integer(of entry: Entry) -> Int? {
        switch entry.type {
        case 3: return u16(entry.at + 8)  // SHORT: left-justified in the 4-byte value field
        case 4: return u32(entry.at + 8)  // LONG
        default: return nil
        }
    }
}
