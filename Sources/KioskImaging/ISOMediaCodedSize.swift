// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// The picture size a HEIF or AVIF file's coded streams really ask a decoder for, read from
/// the streams themselves before libheif is asked to decode: libheif 1.15 decodes whatever
/// size the coded stream gives (libde265 for HEVC, dav1d or libaom for AV1) without comparing
/// it with the `ispe` box the limits are checked from, so a file whose `ispe` understates its
/// stream would be decoded past every limit.
///
/// Where a decoder takes its stream parameters from: the decoder configuration property
/// (`hvcC`, ISO/IEC 14496-15 section 8.3.3; `av1C`, AV1 Codec ISO Media File Format Binding
/// section 2.3) and the coded item data itself (in-band parameter sets, which replace those
/// of the configuration), both of which are read here:
/// - items: `iinf` (full box: entry count, 16 bits in version 0 else 32) holds `infe` boxes
///   (ISO/IEC 14496-12 section 8.11.6; version 2 or 3: item ID of 16 or 32 bits, a 16-bit
///   protection index, the four-character item type); `iloc` (section 8.11.3) gives each item's
///   extents (offset and length sizes from its header, construction method 0 = file offsets,
///   1 = offsets into `idat`);
/// - HEVC item data: NAL units each preceded by its length (`lengthSizeMinusOne` + 1 bytes,
///   from `hvcC`); SPS NAL units (type 33) give the size (ITU-T H.265 section 7.3.2.2);
/// - AV1 item data and `av1C`'s configOBUs: OBUs (AV1 specification section 5.3: a header byte
///   with the type in bits 6-3, an extension byte when bit 2 is set, a leb128 size when bit 1 is
///   set); sequence header OBUs (type 1) give `max_frame_width_minus_1` and
///   `max_frame_height_minus_1` (section 5.5.1), which bound every frame of the stream.
///
/// Every read is bounds-checked; a stream that cannot be walked adds nothing (the decoder then
/// judges it), a size that can be read is always counted.
enum ISOMediaCodedSize {
    typealias Size = (width: Int, height: Int)

    /// What the coded streams of a file say: the largest size found (nil: none), how many
    /// coded items of the codec's type the file has, and whether all their data could be read
    /// (false when an item's extents add up to more than the file: it cannot be judged).
    struct Reading {
        var largest: Size?
        var items = 0
        var complete = true
    }

    /// The largest picture any HEVC parameter set of the file codes, in `hvcC` properties or
    /// in the data of `hvc1` items.
    static func largestHEVC(_ b: UnsafeRawBufferPointer) -> Reading {
        var largest = ISOMediaHeader.largestCodedHEVCSize(b)
        let lengthSize = ISOMediaHeader.hevcNALLengthSize(b) ?? 4
        let items = Items(b).data(ofType: "hvc1")
        for data in items.data {
            var at = 0
            while at + lengthSize <= data.count {  // each unit takes at least lengthSize + 2 bytes
                var length = 0
                for i in 0..<lengthSize { length = length << 8 | Int(data[at + i]) }
                at += lengthSize
                guard length >= 2, length <= data.count - at else { break }
                if (data[at] >> 1) & 0x3F == 33,
                   let sps = data.withUnsafeBytes({ ISOMediaHeader.spsSize($0, from: at, count: length) }) {
                    largest = larger(largest, sps)
                }
                at += length
            }
        }
        return Reading(largest: largest, items: items.data.count, complete: items.complete)
    }

    /// The largest frame any AV1 sequence header of the file allows, in `av1C` properties or in
    /// the data of `av01` items.
    static func largestAV1(_ b: UnsafeRawBufferPointer) -> Reading {
        var largest: Size? = nil
        // Every av1C property (meta/iprp/ipco): 4 bytes of fixed fields, then configOBUs.
        for (type, payload) in ISOMediaHeader.properties(b) where type == "av1C" && payload.count > 4 {
            largest = larger(largest, sequenceHeaderSize(Array(b[(payload.lowerBound + 4)..<payload.upperBound])))
        }
        let items = Items(b).data(ofType: "av01")
        for data in items.data { largest = larger(largest, sequenceHeaderSize(data)) }
        return Reading(largest: largest, items: items.data.count, complete: items.complete)
    }

    /// Why the primary image, when it is a grid (ISO/IEC 23008-12 section 6.6.2.3: a
    /// descriptor of version, flags, rows - 1, columns - 1, then the output width and height, 16
    /// bits each or 32 with flag bit 0; its tiles are its `dimg` references, all of one size)
    /// cannot be decoded whole, or nil: tiles that are not HEVC or AV1 images (the grid itself,
    /// another grid), tiles of different sizes, a tile count other than rows x columns, or
    /// tiles that do not cover the output. libheif 1.15 places each tile at its
    /// column and row times the first tile's size and leaves what no tile covers as it was
    /// allocated, so such a file would show whatever the memory held.
    /// An overlay primary (`iovl`, ISO/IEC 23008-12 section 6.6.2.2) is refused too: libheif 1.15
    /// allocates its canvas at the size its descriptor gives, whatever the `ispe` the limits are
    /// checked from says (a 32x32 file asked for a 136 MB canvas); no camera writes one.
    static func gridProblem(_ b: UnsafeRawBufferPointer) -> String? {
        let items = Items(b)
        guard let primary = ISOMediaHeader.primaryItem(b) else { return nil }
        if items.ids(ofType: "iovl").contains(primary) { return "its primary image is an overlay (iovl), not shown" }
        guard items.ids(ofType: "grid").contains(primary) else { return nil }
        guard let d = items.data(ofItem: primary), d.count >= 8 else { return "its grid descriptor cannot be read" }
        let rows = Int(d[2]) + 1, columns = Int(d[3]) + 1
        let wide = d[1] & 1 != 0
        guard d.count >= (wide ? 12 : 8) else { return "its grid descriptor is cut short" }
        func be(_ at: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 << 8 | Int(d[at + $1]) } }
        let width = wide ? be(4, 4) : be(4, 2), height = wide ? be(8, 4) : be(6, 2)
        let tiles = items.references(from: primary, type: "dimg")
        guard tiles.count == rows * columns else {
            return "its grid of \(columns)x\(rows) tiles refers to \(counted(tiles.count, "image"))"
        }
        // Tiles are coded images: a grid among its own tiles (itself, or another grid) made
        // libheif 1.15 decode it again and again until it could start no more threads and the
        // process aborted.
        let coded = items.ids(ofType: "hvc1").union(items.ids(ofType: "av01"))
        guard tiles.allSatisfy({ $0 != primary && coded.contains($0) }) else {
            return "its grid's tiles are not all HEVC or AV1 images"
        }
        let known = ISOMediaHeader.imageSizes(b)  // one walk of ipma for every tile
        let sizes = tiles.map { known[$0] }
        guard let first = sizes.first ?? nil,
              sizes.allSatisfy({ $0?.width == first.width && $0?.height == first.height }) else {
            return "its grid's tiles are not all of one known size"
        }
        guard columns * first.width >= width, rows * first.height >= height else {
            return "its grid's \(columns)x\(rows) tiles of \(first.width)x\(first.height) "
                + "do not cover its \(width)x\(height) image"
        }
        return nil
    }

    /// The item type that codes the primary image: its own (`hvc1`, `av01`, `jpeg`, ...) or,
    /// for a derived image (`grid`, `iovl`, `iden`), that of its first `dimg` input; nil when
    /// the file names no primary item or no type for it.
    static func primaryCoding(_ b: UnsafeRawBufferPointer) -> String? {
        let items = Items(b)
        guard let primary = ISOMediaHeader.primaryItem(b), let type = items.type(ofItem: primary) else { return nil }
        guard ["grid", "iovl", "iden"].contains(type) else { return type }
        return items.references(from: primary, type: "dimg").first.flatMap { items.type(ofItem: $0) }
    }

    private static func larger(_ a: Size?, _ b: Size?) -> Size? {
        guard let b else { return a }
        guard let a else { return b }
        return Double(b.width) * Double(b.height) > Double(a.width) * Double(a.height) ? b : a  // sides up to 2^32
    }

    /// The largest `max_frame_width/height` of the sequence header OBUs among `obus`, or nil.
    static func sequenceHeaderSize(_ obus: [UInt8]) -> Size? {
        var largest: Size? = nil
        var at = 0
        while at < obus.count {  // each OBU takes at least its header byte: the walk ends
            let header = obus[at]
            guard header & 0x80 == 0 else { break }  // obu_forbidden_bit
            let type = Int(header >> 3) & 0x0F
            var p = at + 1 + (header & 0x04 != 0 ? 1 : 0)  // obu_extension_flag
            var size: Int
            if header & 0x02 != 0 {  // obu_has_size_field: leb128 (section 4.10.5), at most 8 bytes
                size = 0
                var i = 0
                while true {
                    guard p < obus.count, i < 8 else { return largest }
                    let byte = Int(obus[p])
                    size |= (byte & 0x7F) << (7 * i)
                    p += 1
                    i += 1
                    if byte & 0x80 == 0 { break }
                }
            } else {
                size = obus.count - p
            }
            guard size >= 0, size <= obus.count - p else { break }
            if type == 1, let s = parseSequenceHeader(obus[p..<(p + size)]) { largest = larger(largest, s) }
            at = p + size
        }
        return largest
    }

    /// max_frame_width_minus_1 + 1 and max_frame_height_minus_1 + 1 of a sequence header OBU's
    /// payload (AV1 specification section 5.5.1), or nil when it is cut short.
    static func parseSequenceHeader(_ payload: ArraySlice<UInt8>) -> Size? {
        var reader = BitReader(Array(payload.prefix(256)))
        func f(_ n: Int) -> Int? { reader.read(n) }
        func uvlc() -> Bool {  // section 4.10.3; only skipped
            var leading = 0
            while true {
                guard let b = f(1) else { return false }
                if b == 1 { break }
                leading += 1
                if leading >= 32 { return true }
            }
            return f(leading) != nil
        }
        guard f(3) != nil, f(1) != nil, let reduced = f(1) else { return nil }  // seq_profile, still_picture
        if reduced == 1 {
            guard f(5) != nil else { return nil }  // seq_level_idx[0]
        } else {
            guard let timing = f(1) else { return nil }
            var decoderModel = 0
            var bufferDelayLength = 0
            if timing == 1 {
                // timing_info(): num_units_in_display_tick, time_scale, equal_picture_interval
                guard f(32) != nil, f(32) != nil, let equal = f(1) else { return nil }
                if equal == 1 { guard uvlc() else { return nil } }
                guard let present = f(1) else { return nil }
                decoderModel = present
                if present == 1 {
                    // decoder_model_info()
                    guard let delay = f(5), f(32) != nil, f(5) != nil, f(5) != nil else { return nil }
                    bufferDelayLength = delay + 1
                }
            }
            guard let initialDelay = f(1), let points = f(5) else { return nil }
            for _ in 0...points {
                guard f(12) != nil, let level = f(5) else { return nil }  // operating_point_idc, seq_level_idx
                if level > 7 { guard f(1) != nil else { return nil } }  // seq_tier
                if decoderModel == 1 {
                    guard let present = f(1) else { return nil }
                    if present == 1 {  // operating_parameters_info()
                        guard f(bufferDelayLength) != nil, f(bufferDelayLength) != nil, f(1) != nil else { return nil }
                    }
                }
                if initialDelay == 1 {
                    guard let present = f(1) else { return nil }
                    if present == 1 { guard f(4) != nil else { return nil } }
                }
            }
        }
        guard let widthBits = f(4), let heightBits = f(4),
              let width = f(widthBits + 1), let height = f(heightBits + 1) else { return nil }
        return (width + 1, height + 1)
    }

    /// The items of the top-level `meta` box: their types (`iinf`) and data (`iloc`).
    struct Items {
        let b: UnsafeRawBufferPointer
        init(_ b: UnsafeRawBufferPointer) { self.b = b }

        func u8(_ at: Int) -> Int? { at >= 0 && at < b.count ? Int(b[at]) : nil }
        func uN(_ at: Int, _ n: Int) -> Int? {
            guard n >= 0, n <= 8, at >= 0, at + n <= b.count else { return nil }
            var v = 0
            for i in 0..<n { v = v << 8 | Int(b[at + i]) }
            return n == 8 && b[at] & 0x80 != 0 ? nil : v
        }

        /// The data of every item whose type is `type` (its extents joined), and whether all
        /// of it was read: all the items' data together is held to the size of the file (so
        /// extents naming the same bytes many times cannot make it large); past that, or past
        /// 4,096 extents an item, `complete` is false.
        func data(ofType type: String) -> (data: [[UInt8]], complete: Bool) {
            guard let meta = ISOMediaHeader.child("meta", in: 0..<b.count, of: b), meta.count >= 4 else {
                return ([], true)
            }
            let children = (meta.lowerBound + 4)..<meta.upperBound
            guard let iinf = ISOMediaHeader.child("iinf", in: children, of: b),
                  let iloc = ISOMediaHeader.child("iloc", in: children, of: b) else { return ([], true) }
            let wanted = itemIDs(ofType: type, iinf: iinf)
            guard !wanted.isEmpty else { return ([], true) }
            let idat = ISOMediaHeader.child("idat", in: children, of: b)
            var total = 0
            var complete = true
            var result: [[UInt8]] = []
            for (id, ranges, whole) in extents(iloc: iloc, idat: idat) where wanted.contains(id) {
                if !whole { complete = false }
                var joined: [UInt8] = []
                for r in ranges {
                    total += r.count
                    guard total <= b.count else { complete = false; break }
                    joined += b[r]
                }
                result.append(joined)
            }
            return (result, complete)
        }

        /// The data of item `id` (its extents joined), nil when it has none to read or it is
        /// larger than the file.
        func data(ofItem id: Int) -> [UInt8]? {
            guard let meta = ISOMediaHeader.child("meta", in: 0..<b.count, of: b), meta.count >= 4 else { return nil }
            let children = (meta.lowerBound + 4)..<meta.upperBound
            guard let iloc = ISOMediaHeader.child("iloc", in: children, of: b) else { return nil }
            let idat = ISOMediaHeader.child("idat", in: children, of: b)
            guard let (_, ranges, whole) = extents(iloc: iloc, idat: idat).first(where: { $0.0 == id }), whole,
                  ranges.reduce(0, { $0 + $1.count }) <= b.count else { return nil }
            return ranges.reduce(into: [UInt8]()) { $0 += b[$1] }
        }

        /// The IDs of the items of type `type` (`iinf`).
        func ids(ofType type: String) -> Set<Int> {
            guard let meta = ISOMediaHeader.child("meta", in: 0..<b.count, of: b), meta.count >= 4,
                  let iinf = ISOMediaHeader.child("iinf", in: (meta.lowerBound + 4)..<meta.upperBound, of: b) else {
                return []
            }
            return itemIDs(ofType: type, iinf: iinf)
        }

        /// The items `from` refers to with references of `type` (`iref`, ISO/IEC 14496-12
        /// section 8.11.12: a full box of boxes named by the reference type, each a from-item ID,
        /// a 16-bit count and the to-item IDs; IDs of 16 bits in version 0, else 32), in order.
        func references(from: Int, type: String) -> [Int] {
            guard let meta = ISOMediaHeader.child("meta", in: 0..<b.count, of: b), meta.count >= 4,
                  let iref = ISOMediaHeader.child("iref", in: (meta.lowerBound + 4)..<meta.upperBound, of: b),
                  iref.count >= 4, let version = u8(iref.lowerBound) else { return [] }
            let idSize = version == 0 ? 2 : 4
            var result: [Int] = []
            for (boxType, box) in ISOMediaHeader.boxes((iref.lowerBound + 4)..<iref.upperBound, of: b)
            where boxType == type {
                guard let id = uN(box.lowerBound, idSize), id == from, let count = uN(box.lowerBound + idSize, 2) else {
                    continue
                }
                for k in 0..<count {
                    let at = box.lowerBound + idSize + 2 + k * idSize
                    guard at + idSize <= box.upperBound, let to = uN(at, idSize) else { break }
                    result.append(to)
                }
            }
            return result
        }

        /// The type of item `id` (`iinf`), nil when no `infe` names it.
        func type(ofItem id: Int) -> String? {
            guard let meta = ISOMediaHeader.child("meta", in: 0..<b.count, of: b), meta.count >= 4,
                  let iinf = ISOMediaHeader.child("iinf", in: (meta.lowerBound + 4)..<meta.upperBound, of: b) else {
                return nil
            }
            return itemTypes(iinf: iinf).first { $0.id == id }?.type
        }

        private func itemIDs(ofType type: String, iinf: Range<Int>) -> Set<Int> {
            Set(itemTypes(iinf: iinf).filter { $0.type == type }.map(\.id))
        }

        /// Every `infe` of version 2 or 3: its item ID and four-character type, in order.
        private func itemTypes(iinf: Range<Int>) -> [(id: Int, type: String)] {
            guard let version = u8(iinf.lowerBound) else { return [] }
            let start = iinf.lowerBound + 4 + (version == 0 ? 2 : 4)
            guard start <= iinf.upperBound else { return [] }
            var result: [(id: Int, type: String)] = []
            for (boxType, infe) in ISOMediaHeader.boxes(start..<iinf.upperBound, of: b) where boxType == "infe" {
                guard let v = u8(infe.lowerBound), v >= 2 else { continue }
                let idSize = v == 2 ? 2 : 4
                guard let id = uN(infe.lowerBound + 4, idSize) else { continue }
                let typeAt = infe.lowerBound + 4 + idSize + 2
                guard typeAt + 4 <= infe.upperBound else { continue }
                result.append((id, String(decoding: b[typeAt..<(typeAt + 4)], as: UTF8.self)))
            }
            return result
        }

        /// (item ID, byte ranges in the file, whether every extent was taken) for every item with
        /// construction method 0 or 1.
        private func extents(iloc: Range<Int>, idat: Range<Int>?) -> [(Int, [Range<Int>], Bool)] {
            var at = iloc.lowerBound
            guard let version = u8(at), version <= 2, let sizes = u8(at + 4), let sizes2 = u8(at + 5) else { return [] }
            let offsetSize = sizes >> 4, lengthSize = sizes & 15, baseSize = sizes2 >> 4
            let indexSize = version >= 1 ? sizes2 & 15 : 0
            at += 6
            guard let count = uN(at, version < 2 ? 2 : 4) else { return [] }
            at += version < 2 ? 2 : 4
            var result: [(Int, [Range<Int>], Bool)] = []
            for _ in 0..<min(count, 10_000) {
                guard let id = uN(at, version < 2 ? 2 : 4) else { break }
                at += version < 2 ? 2 : 4
                var method = 0
                if version >= 1 {
                    guard let m = uN(at, 2) else { break }
                    method = m & 15
                    at += 2
                }
                guard uN(at, 2) != nil, let base = uN(at + 2, baseSize),
                      let extentCount = uN(at + 2 + baseSize, 2) else { break }
                at += 4 + baseSize
                var ranges: [Range<Int>] = []
                var whole = true
                for _ in 0..<extentCount {
                    at += indexSize
                    guard let offset = uN(at, offsetSize), let length = uN(at + offsetSize, lengthSize) else {
                        return result
                    }
                    at += offsetSize + lengthSize
                    let origin: Int
                    let limit: Int
                    switch method {
                    case 0: origin = 0; limit = b.count
                    case 1:
                        guard let idat else { continue }
                        origin = idat.lowerBound; limit = idat.upperBound
                    default: continue
                    }
                    let (start, overflow) = origin.addingReportingOverflow(base &+ offset)
                    guard !overflow, base <= b.count, offset <= b.count, start <= limit else { continue }
                    let end = length == 0 ? limit : min(limit, start + min(length, b.count))
                    if ranges.count < 4096 { ranges.append(start..<end) } else { whole = false }
                }
                guard at <= iloc.upperBound else { break }
                if method <= 1 { result.append((id, ranges, whole)) }
            }
            return result
        }
    }
}
