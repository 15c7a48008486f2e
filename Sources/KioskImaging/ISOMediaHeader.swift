// SPDX-License-Identifier: Apache-2.0
/// Reads the size of a HEIF or AVIF file's primary image from its boxes, without libheif:
/// so that a file claiming a huge image is refused from its header before libheif (and its
/// codecs) are loaded or asked to parse anything.
///
/// ISO BMFF boxes (ISO/IEC 14496-12 section 4.2): a 32-bit big-endian size (1: a 64-bit size
/// follows the type; 0: to the end), a four-character type, the payload; a "full box" starts
/// its payload with a version byte and 24 bits of flags. The path walked (ISO/IEC 23008-12
/// sections 9.3 and 6.5.3): the top-level `meta` (full box) holds `pitm` (the primary item's
/// ID, 16 bits in version 0, else 32) and `iprp`, which holds `ipco` (the property boxes, 1-based
/// index in order) and `ipma` (full box: a 32-bit entry count; each entry an item ID, 16 or 32
/// bits by version, an 8-bit association count, each association 16 bits with flag bit 0,
/// else 8, the index in its low 15 or 7 bits); the primary item's `ispe` property (full box,
/// 32-bit width and height) is the size. Every read is bounds-checked; anything missing or
/// malformed gives nil (libheif then judges the file).
enum ISOMediaHeader {
    /// The primary image's `ispe` size in pixels (before `irot`), or nil.
    static func primaryImageSize(_ b: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        func u8(_ at: Int) -> Int? { at >= 0 && at < b.count ? Int(b[at]) : nil }
        func u16(_ at: Int) -> Int? { guard let h = u8(at), let l = u8(at + 1) else { return nil }; return h << 8 | l }
        func u32(_ at: Int) -> Int? { guard let h = u16(at), let l = u16(at + 2) else { return nil }; return h << 16 | l }
        /// The child boxes in `range`: (type, payload range).
        func boxes(_ range: Range<Int>) -> [(String, Range<Int>)] {
            var result: [(String, Range<Int>)] = []
            var at = range.lowerBound
            while at + 8 <= range.upperBound, result.count < 10_000 {
                guard var size = u32(at) else { break }
                var header = 8
                if size == 1 {
                    guard let high = u32(at + 8), let low = u32(at + 12), high == 0 else { break }
                    size = low
                    header = 16
                } else if size == 0 {
                    size = range.upperBound - at
                }
                guard size >= header, size <= range.upperBound - at else { break }
                let type = String(decoding: b[(at + 4)..<(at + 8)], as: UTF8.self)
                result.append((type, (at + header)..<(at + size)))
                at += size
            }
            return result
        }
        func child(_ type: String, in range: Range<Int>) -> Range<Int>? { boxes(range).first { $0.0 == type }?.1 }

        guard let meta = child("meta", in: 0..<b.count), meta.count >= 4 else { return nil }
        let metaChildren = (meta.lowerBound + 4)..<meta.upperBound
        guard let pitm = child("pitm", in: metaChildren), let pitmVersion = u8(pitm.lowerBound),
              let primary = pitmVersion == 0 ? u16(pitm.lowerBound + 4) : u32(pitm.lowerBound + 4),
              let iprp = child("iprp", in: metaChildren),
              let ipco = child("ipco", in: iprp), let ipma = child("ipma", in: iprp),
              let ipmaVersion = u8(ipma.lowerBound), let ipmaFlags = u8(ipma.lowerBound + 3),
              let entries = u32(ipma.lowerBound + 4) else { return nil }
        let properties = boxes(ipco)
        var at = ipma.lowerBound + 8
        for _ in 0..<min(entries, 100_000) {
            guard let item = ipmaVersion < 1 ? u16(at) : u32(at) else { return nil }
            at += ipmaVersion < 1 ? 2 : 4
            guard let count = u8(at) else { return nil }
            at += 1
            for _ in 0..<count {
                let index: Int
                if ipmaFlags & 1 != 0 {
                    guard let v = u16(at) else { return nil }
                    index = v & 0x7FFF
                    at += 2
                } else {
                    guard let v = u8(at) else { return nil }
                    index = v & 0x7F
                    at += 1
                }
                guard item == primary, index >= 1, index <= properties.count else { continue }
                let (type, payload) = properties[index - 1]
                if type == "ispe", let w = u32(payload.lowerBound + 4), let h = u32(payload.lowerBound + 8) {
                    return (w, h)
                }
            }
        }
        return nil
    }
}
