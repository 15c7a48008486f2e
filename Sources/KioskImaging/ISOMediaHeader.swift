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
    /// Whether the `ftyp` box (the first box) names the AVIF image sequence brand `avis` as its
    /// major or a compatible brand (AV1 Image File Format, section 7.2).
    static func isImageSequence(_ b: UnsafeRawBufferPointer) -> Bool {
        guard b.count >= 16, b[4] == 0x66, b[5] == 0x74, b[6] == 0x79, b[7] == 0x70 else { return false }
        let size = min(b.count, Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3]))
        let avis: [UInt8] = Array("avis".utf8)
        for at in Swift.stride(from: 8, to: size - 3, by: 4) where at != 12 {
            if b[at] == avis[0], b[at + 1] == avis[1], b[at + 2] == avis[2], b[at + 3] == avis[3] { return true }
        }
        return false
    }

    /// The primary image's `ispe` size in pixels (before `irot`), or nil.
    static func primaryImageSize(_ b: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        primaryItem(b).flatMap { imageSize(b, item: $0) }
    }

    /// The primary item's ID (`pitm`), or nil.
    static func primaryItem(_ b: UnsafeRawBufferPointer) -> Int? {
        guard let meta = child("meta", in: 0..<b.count, of: b), meta.count >= 4,
              let pitm = child("pitm", in: (meta.lowerBound + 4)..<meta.upperBound, of: b), pitm.count >= 6 else { return nil }
        let at = pitm.lowerBound
        return b[at] == 0 ? Int(b[at + 4]) << 8 | Int(b[at + 5])
            : pitm.count >= 8 ? Int(b[at + 4]) << 24 | Int(b[at + 5]) << 16 | Int(b[at + 6]) << 8 | Int(b[at + 7]) : nil
    }

    /// The `ispe` size in pixels of item `item` (any item's ID), or nil.
    static func imageSize(_ b: UnsafeRawBufferPointer, item: Int) -> (width: Int, height: Int)? {
        imageSizes(b)[item]
    }

    /// The `ispe` size in pixels of every item that has one (its first), in one walk of `ipma`;
    /// what was read before a malformed entry is kept.
    static func imageSizes(_ b: UnsafeRawBufferPointer) -> [Int: (width: Int, height: Int)] {
        func u32(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= b.count else { return nil }
            return Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
        }
        var sizes: [Int: (width: Int, height: Int)] = [:]
        guard let map = associations(b) else { return sizes }
        for (item, indices) in map.items {
            for index in indices where sizes[item] == nil && index >= 1 && index <= map.properties.count {
                let (type, payload) = map.properties[index - 1]
                if type == "ispe", let w = u32(payload.lowerBound + 4), let h = u32(payload.lowerBound + 8) {
                    sizes[item] = (w, h)
                }
            }
        }
        return sizes
    }

    /// Whether libheif will copy a decoded image to apply a transform property (ISO/IEC
    /// 23008-12 section 6.5.10-12): an `irot` turning by a non-zero angle (libheif 1.15's
    /// `HeifPixelImage::rotate_ccw` makes a turned copy) or a `clap` (its `crop` makes a
    /// cropped copy), associated with any item (libheif applies each item's own transforms as
    /// it decodes it: the primary image, a grid's tiles). `imir` mirrors in place, no copy.
    /// True as well when the associations cannot all be read, or point past the properties
    /// read: the copy is then counted.
    static func hasCopyingTransform(_ b: UnsafeRawBufferPointer) -> Bool {
        guard let map = associations(b), map.complete else { return true }
        for (_, indices) in map.items {
            for index in indices {
                guard index >= 1, index <= map.properties.count else { return true }
                let (type, payload) = map.properties[index - 1]
                if type == "clap" { return true }
                // irot: one byte, the angle in its low 2 bits (x 90 degrees anticlockwise).
                if type == "irot" && (payload.isEmpty || b[payload.lowerBound] & 3 != 0) { return true }
            }
        }
        return false
    }

    /// The item property associations (meta/iprp/ipma over meta/iprp/ipco): the property boxes
    /// (type, payload) and, entry by entry, an item ID with the 1-based property indices
    /// associated with it (their `essential` bit removed). `complete` is false when an entry
    /// ran past the `ipma` box (what was read before it is kept). Nil without those boxes.
    static func associations(_ b: UnsafeRawBufferPointer)
        -> (properties: [(String, Range<Int>)], items: [(item: Int, indices: [Int])], complete: Bool)? {
        guard let meta = child("meta", in: 0..<b.count, of: b), meta.count >= 4 else { return nil }
        let metaChildren = (meta.lowerBound + 4)..<meta.upperBound
        guard let iprp = child("iprp", in: metaChildren, of: b),
              let ipco = child("ipco", in: iprp, of: b), let ipma = child("ipma", in: iprp, of: b) else { return nil }
        // Reads within ipma only.
        func u8(_ at: Int) -> Int? { at >= ipma.lowerBound && at < ipma.upperBound ? Int(b[at]) : nil }
        func u16(_ at: Int) -> Int? { guard let h = u8(at), let l = u8(at + 1) else { return nil }; return h << 8 | l }
        func u32(_ at: Int) -> Int? { guard let h = u16(at), let l = u16(at + 2) else { return nil }; return h << 16 | l }
        let properties = boxes(ipco, of: b)
        guard let ipmaVersion = u8(ipma.lowerBound), let ipmaFlags = u8(ipma.lowerBound + 3),
              let entries = u32(ipma.lowerBound + 4) else { return (properties, [], false) }
        var items: [(item: Int, indices: [Int])] = []
        var at = ipma.lowerBound + 8
        for _ in 0..<min(entries, 100_000) {
            guard let item = ipmaVersion < 1 ? u16(at) : u32(at) else { return (properties, items, false) }
            at += ipmaVersion < 1 ? 2 : 4
            guard let count = u8(at) else { return (properties, items, false) }
            at += 1
            var indices: [Int] = []
            for _ in 0..<count {
                if ipmaFlags & 1 != 0 {
                    guard let v = u16(at) else { items.append((item, indices)); return (properties, items, false) }
                    indices.append(v & 0x7FFF)
                    at += 2
                } else {
                    guard let v = u8(at) else { items.append((item, indices)); return (properties, items, false) }
                    indices.append(v & 0x7F)
                    at += 1
                }
            }
            items.append((item, indices))
        }
        return (properties, items, entries <= 100_000)
    }

    /// The boxes in `range` of `b`: (type, payload range), at most 65,536.
    static func boxes(_ range: Range<Int>, of b: UnsafeRawBufferPointer) -> [(String, Range<Int>)] {
        func u32(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= b.count else { return nil }
            return Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
        }
        var result: [(String, Range<Int>)] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound, result.count < 65_536 {
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

    /// The payload range of the first box of `type` in `range` of `b`.
    static func child(_ type: String, in range: Range<Int>, of b: UnsafeRawBufferPointer) -> Range<Int>? {
        boxes(range, of: b).first { $0.0 == type }?.1
    }

    /// The item property boxes (meta/iprp/ipco, ISO/IEC 23008-12 section 9.3): (type, payload),
    /// at most 65,536 of them (ipma indexes them with 15 bits).
    static func properties(_ b: UnsafeRawBufferPointer) -> [(String, Range<Int>)] {
        guard let meta = child("meta", in: 0..<b.count, of: b), meta.count >= 4 else { return [] }
        let children = (meta.lowerBound + 4)..<meta.upperBound
        guard let iprp = child("iprp", in: children, of: b), let ipco = child("ipco", in: iprp, of: b) else { return [] }
        return boxes(ipco, of: b)
    }

    /// The NAL unit length size in bytes (`lengthSizeMinusOne` + 1) of the file's first `hvcC`.
    static func hevcNALLengthSize(_ b: UnsafeRawBufferPointer) -> Int? {
        guard let hvcC = properties(b).first(where: { $0.0 == "hvcC" })?.1, hvcC.count >= 22 else { return nil }
        return Int(b[hvcC.lowerBound + 21] & 3) + 1
    }

    /// The largest picture size any HEVC decoder configuration (`hvcC` property, ISO/IEC
    /// 14496-15 section 8.3.3) of the file codes, from the `pic_width_in_luma_samples` and
    /// `pic_height_in_luma_samples` of its sequence parameter sets (ITU-T H.265 section 7.3.2.2),
    /// or nil when there is none to read. libheif 1.15 decodes the coded size without comparing
    /// it with `ispe`, so this is what the decode will really allocate for.
    static func largestCodedHEVCSize(_ b: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        func u8(_ at: Int) -> Int? { at >= 0 && at < b.count ? Int(b[at]) : nil }
        func u16(_ at: Int) -> Int? { guard let h = u8(at), let l = u8(at + 1) else { return nil }; return h << 8 | l }
        func u32(_ at: Int) -> Int? { guard let h = u16(at), let l = u16(at + 2) else { return nil }; return h << 16 | l }
        var largest: (width: Int, height: Int)? = nil
        // Every hvcC property of the item properties (meta/iprp/ipco, where libheif reads them).
        for (type, payload) in properties(b) where type == "hvcC" && payload.count >= 23 {
            let end = payload.upperBound
            var p = payload.lowerBound + 22  // past the fixed part of the configuration record
            guard let arrays = u8(p) else { continue }
            p += 1
            for _ in 0..<arrays {
                guard u8(p) != nil, let count = u16(p + 1) else { break }
                p += 3
                for _ in 0..<count {
                    guard let length = u16(p), p + 2 + length <= end else { p = end; break }
                    // The NAL unit's own header says what it is (H.265 section 7.3.1.2), as the
                    // decoder reads it; the array's NAL_unit_type is not trusted.
                    if length > 2, (b[p + 2] >> 1) & 0x3F == 33, let sps = spsSize(b, from: p + 2, count: length) {
                        // In Double: each side is up to 2^32 - 2 (ue(v) of 32 bits), the product past Int.
                        if largest == nil || Double(sps.width) * Double(sps.height) > Double(largest!.width) * Double(largest!.height) { largest = sps }
                    }
                    p += 2 + length
                }
            }
        }
        return largest
    }

    /// pic_width/height_in_luma_samples of an SPS NAL unit (2-byte NAL header first), with the
    /// emulation prevention bytes (00 00 03) taken out; nil when it is cut short.
    static func spsSize(_ b: UnsafeRawBufferPointer, from start: Int, count: Int) -> (width: Int, height: Int)? {
        guard count > 2, start >= 0, start + count <= b.count else { return nil }  // no more than the NAL header (or less)
        var rbsp: [UInt8] = []
        rbsp.reserveCapacity(min(count, 256))
        var zeros = 0
        for i in (start + 2)..<(start + count) {
            let byte = b[i]
            if zeros >= 2 && byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            rbsp.append(byte)
            if rbsp.count >= 256 { break }  // the sizes come within the first bytes
        }
        var reader = BitReader(rbsp)
        func read(_ n: Int) -> Int? { reader.read(n) }
        func ue() -> Int? { reader.exponentialGolomb() }
        guard read(4) != nil, let maxSubLayersMinus1 = read(3), read(1) != nil else { return nil }
        // profile_tier_level(1, sps_max_sub_layers_minus1) (H.265 section 7.3.3)
        guard read(88) != nil, read(8) != nil else { return nil }
        var profilePresent: [Bool] = [], levelPresent: [Bool] = []
        for _ in 0..<maxSubLayersMinus1 {
            guard let p = read(1), let l = read(1) else { return nil }
            profilePresent.append(p == 1); levelPresent.append(l == 1)
        }
        if maxSubLayersMinus1 > 0 { for _ in maxSubLayersMinus1..<8 { guard read(2) != nil else { return nil } } }
        for i in 0..<maxSubLayersMinus1 {
            if profilePresent[i] { guard read(88) != nil else { return nil } }
            if levelPresent[i] { guard read(8) != nil else { return nil } }
        }
        guard ue() != nil, let chroma = ue() else { return nil }
        if chroma == 3 { guard read(1) != nil else { return nil } }
        guard let width = ue(), let height = ue() else { return nil }
        return (width, height)
    }
}

/// Reads a bit string most significant bit first (H.265 section 7.2, AV1 section 4.10.2).
struct BitReader {
    let bytes: [UInt8]
    /// Bits read so far.
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next `n` bits as an unsigned number (bits past 63 shift out), or nil past the end.
    mutating func read(_ n: Int) -> Int? {
        var v = 0
        for _ in 0..<max(0, n) {
            guard position / 8 < bytes.count else { return nil }
            v = v << 1 | Int((bytes[position / 8] >> (7 - UInt8(position % 8))) & 1)
            position += 1
        }
        return v
    }

    /// ue(v): an unsigned Exp-Golomb code (H.265 section 9.2), at most 31 leading zeros.
    mutating func exponentialGolomb() -> Int? {
        var leading = 0
        while let b = read(1), b == 0 { leading += 1; if leading > 31 { return nil } }
        guard let rest = read(leading) else { return nil }
        return (1 << leading) - 1 + rest
    }
}
