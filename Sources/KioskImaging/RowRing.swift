// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore

/// A decoder that hands out its rows top to bottom, a few at a time: a started libjpeg
/// decompressor (``JPEGHandle``) or a libpng reader (``PNGHandle``). Rows are XRGB8888 or
/// ARGB8888, `width * 4` bytes.
protocol RowSource: AnyObject {
    /// Decodes the next `count` rows into `rows[0..<count]`.
    func readRows(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) throws(ImageError)
    /// Moves past the next `count` rows from the top of the image; `scratch` is one row the
    /// source may decode them into.
    func skipRows(_ count: Int, scratch: UnsafeMutablePointer<UInt8>) throws(ImageError)
}

/// The row provider of a streamed placement (``Resampler/Plan/draw(into:rows:)``): rows of a
/// ``RowSource`` read on demand into a ring of ``capacity`` rows of ``width`` pixels,
/// `plan.maxRowsPerOutputRow` plus a strip of read-ahead. Rows above the first one the plan
/// reads are skipped (``RowSource/skipRows(_:scratch:)``); rows below the last one it reads
/// are never decoded. An image with alpha is flattened over the background row by row as the
/// rows arrive (``Compositor/flattenAlpha(_:count:over:)``, the formula
/// ``Compositor/place(_:into:fit:background:)`` applies to a whole image), so the resampler
/// sees the same opaque pixels either way. A colour conversion, when given, is applied to each row
/// first (to the columns the plan reads), as the decoders apply it to a whole image.
///
/// Memory: ``byteCount(width:plan:)``, `capacity * width * 4` bytes, allocated fallibly and
/// counted against ``DecodeOptions/maxDecoderBytes`` by the caller; freed on deinit.
final class RowRing {
    let source: any RowSource
    /// Row width in pixels (the decoded image's width).
    let width: Int
    /// Rows the ring holds.
    let capacity: Int
    /// One past the last row the plan reads: nothing from here on is decoded.
    let limit: Int
    /// The columns the plan reads (the only ones flattened).
    private let columns: Range<Int>
    /// The background an image with alpha is flattened over; nil for an opaque image.
    private let background: RGBColor?
    /// The colour conversion applied to each row as it arrives (before it is flattened), nil
    /// for none.
    private let conversion: ColourConversion?
    private let storage: UnsafeMutablePointer<UInt32>
    private let batch: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    /// The next row the source will output; rows `max(firstRead, next - capacity) ..< next`
    /// are in the ring, row `y` in slot `y % capacity`.
    private(set) var next = 0
    private var firstRead: Int?

    /// Rows read ahead of the current request, when the plan still needs them.
    static let strip = 8

    /// The rows of a ring for `plan`.
    static func capacity(for plan: Resampler.Plan) -> Int { max(1, plan.maxRowsPerOutputRow) + strip }

    /// What the ring for `plan` over rows of `width` pixels takes, for the memory check.
    static func memoryUse(width: Int, plan: Resampler.Plan) -> MemoryUse {
        let rows = capacity(for: plan)
        let bytes = MemoryUse.product(rows, width, 4)
        return MemoryUse(what: "a ring of \(counted(rows, "decoded row")) of \(width) pixels (\(byteSize(bytes)))",
                         bytes: bytes)
    }

    /// A ring over `source` for `plan`, whose source is `width` pixels wide.
    /// - Parameter background: flatten each row over this colour (for an image with alpha).
    /// - Parameter conversion: the colour conversion of each row (the plan's columns only),
    ///   applied before flattening.
    /// - Throws: ``ImageError/outOfMemory(path:reason:)`` when the ring cannot be allocated.
    init(_ source: any RowSource, width: Int, plan: Resampler.Plan, flattenOver background: RGBColor?,
         converting conversion: ColourConversion? = nil, name: String) throws(ImageError) {
        let capacity = Self.capacity(for: plan)
        let bytes = MemoryUse.product(capacity, width, 4)
        guard bytes < Int.max, let memory = malloc(bytes) else {
            throw .outOfMemory(path: name, reason: "cannot allocate \(counted(bytes, "byte")) for "
                + "\(counted(capacity, "row")) of \(width) pixels")
        }
        self.source = source
        self.width = width
        self.capacity = capacity
        self.background = background
        self.conversion = conversion
        columns = plan.sourceColumns
        limit = plan.sourceRows.upperBound
        storage = memory.bindMemory(to: UInt32.self, capacity: capacity * width)
        batch = .allocate(capacity: capacity)
    }

    deinit {
        free(storage)
        batch.deallocate()
    }

    /// The rows handed to the resampler (rows above were skipped, rows from the upper bound on
    /// never decoded).
    var readRows: Range<Int> { firstRead.map { $0..<next } ?? 0..<0 }

    /// Serves one request of ``Resampler/Plan/draw(into:rows:)``: rows `first ..< first + count`.
    /// - Throws: the source's ``ImageError`` (corrupt or truncated data).
    func rows(
        _ first: Int, _ count: Int, into pointers: UnsafeMutablePointer<UnsafePointer<UInt32>>
    ) throws(ImageError) {
        let end = first + count
        precondition(count <= capacity && first >= next - capacity && end <= limit,
                     "RowRing: rows \(first)..<\(end) outside the ring "
                        + "(next \(next), capacity \(capacity), limit \(limit))")
        if first > next {
            // Rows nobody reads (above a fill crop). Only ever at the start, while the ring is
            // empty: the plan's requests overlap or touch.
            let scratch = UnsafeMutableRawPointer(storage).assumingMemoryBound(to: UInt8.self)
            try source.skipRows(first - next, scratch: scratch)
            next = first
        }
        if firstRead == nil { firstRead = next }
        if end > next {
            // Fill the ring as far as it goes without overwriting row `first`.
            let target = max(end, min(first + capacity, limit))
            let n = target - next
            for i in 0..<n {
                batch[i] = UnsafeMutableRawPointer(storage + ((next + i) % capacity) * width)
                    .assumingMemoryBound(to: UInt8.self)
            }
            try source.readRows(batch, count: n)
            if let conversion, !columns.isEmpty {
                let first = next, storage = storage, capacity = capacity, width = width
                let start = columns.lowerBound
                conversion.convertRows(target - first, width: columns.count) { k in
                    storage + ((first + k) % capacity) * width + start
                }
            }
            if let background, !columns.isEmpty {
                for y in next..<target {
                    let row = storage + (y % capacity) * width
                    Compositor.flattenAlpha(row + columns.lowerBound, count: columns.count, over: background)
                }
            }
            next = target
        }
        for k in 0..<count {
            pointers[k] = UnsafePointer(storage + ((first + k) % capacity) * width)
        }
    }
}
