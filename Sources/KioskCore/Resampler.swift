// SPDX-License-Identifier: Apache-2.0
/// Scales a bitmap into a rectangle of another bitmap with a separable fixed-point filter.
///
/// The filter, per axis:
/// - **shrinking** (destination smaller than source): area averaging (a box filter). Each output
///   pixel is the coverage-weighted mean of the source pixels under its footprint, a source
///   pixel that is only partly covered at either end counting by the covered fraction;
/// - **enlarging**: bilinear interpolation (a triangle filter) with pixel centres aligned,
///   `src = (dst + 0.5) * srcSize / dstSize - 0.5`, clamped to the first and last source pixel;
/// - **same size**: each output pixel is its source pixel.
///
/// Arithmetic is integer only. Each output sample on an axis has its taps and weights computed
/// once per call (``AxisFilter``); the weights are 14-bit fixed point and sum to exactly
/// `1 << 14`, so a solid colour stays exactly that colour at any scale. Per output row, the
/// vertical pass runs first, over the bytes of the needed source columns only, two source rows
/// per sweep (32-bit sums), and rounds to an 8.8 fixed-point row (a 16-bit value per channel);
/// the horizontal pass then sums that row's samples in 32 bits and rounds to 8 bits
/// (`(sum + 2^21) >> 22`). Rounding always adds half before shifting; results are within one
/// level of the exact filter. The only temporaries are one row of partial sums and one 8.8 row
/// (24 bytes per needed source column) plus the tap tables, so scaling a large photo costs no
/// frame-sized buffer.
///
/// The vertical pass takes its source rows from a row provider (``Plan/draw(into:rows:)``),
/// one request per output row, top to bottom: ``draw(_:into:rect:)`` hands over the rows of a
/// whole bitmap, a streaming decoder (``Plan``) the few rows it holds in a ring. Both run the
/// same code, so they give the same pixels.
///
/// Speed (release build, one core of the development machine): 2560x1440 to 1920x1080 in about
/// 5.2 ms, 5120x2880 to 1920x1080 in about 13.5 ms, 960x540 to 1920x1080 in about 3.7 ms
/// (`kiosk-bench --case resample W H N`).
public enum Resampler {
    /// Fractional bits of the filter weights: the weights of one output sample sum to `1 << 14`.
    public static let weightBits = 14

    /// Draws `source` scaled to `rect` (in pixels, in `dest`'s coordinates) into `dest`,
    /// clipped to `dest`; pixels of `dest` outside `rect` are not touched. Only the output
    /// pixels that land inside `dest` are computed, so a `fill` placement larger than the frame
    /// costs no more than the visible part.
    ///
    /// The source is treated as opaque: its top byte is ignored and every written pixel has the
    /// top byte 0xFF (XRGB8888). Flatten an image with alpha first
    /// (``Compositor/flattenAlpha(_:over:)``). `source` and `dest` must be different bitmaps.
    /// An empty `rect` draws nothing.
    ///
    /// This is ``Plan/draw(into:rows:)`` with the rows of `source` as the row provider: a
    /// streaming decoder that hands the same rows over a few at a time gets the same pixels.
    public static func draw(_ source: Bitmap, into dest: Bitmap, rect: PixelRect) {
        precondition(source !== dest, "Resampler.draw: source and dest must be different bitmaps")
        let plan = Plan(sourceWidth: source.width, sourceHeight: source.height, rect: rect,
                        destWidth: dest.width, destHeight: dest.height)
        plan.draw(into: dest) { first, count, rows in
            for k in 0..<count { rows[k] = UnsafePointer(source.row(first + k)) }
        }
    }

    /// One resampling of a `sourceWidth` x `sourceHeight` image into `rect` of a
    /// `destWidth` x `destHeight` bitmap, with its filter tables computed: what
    /// ``Resampler/draw(_:into:rect:)`` does, split so that the source rows can come from
    /// somewhere other than a whole bitmap (a decoder handing over rows as it produces them).
    ///
    /// The plan says which source rows and columns are read (``sourceRows``,
    /// ``sourceColumns``: a `fill` placement reads only the part that lands in the frame) and
    /// how many rows one output row needs at most (``maxRowsPerOutputRow``), so a caller can
    /// hold just a ring of rows instead of the whole source. Building a plan allocates the tap
    /// tables (a few integers per visible output row and column); drawing allocates two rows
    /// of temporaries (24 bytes per source column read).
    public struct Plan {
        /// Source size in pixels.
        public let sourceWidth: Int, sourceHeight: Int
        /// Where the scaled source lands, in destination pixels (may extend past it).
        public let rect: PixelRect
        /// Destination size in pixels.
        public let destWidth: Int, destHeight: Int
        /// The destination pixels written: columns `x0..<x1`, rows `y0..<y1` (empty when
        /// `rect` misses the destination).
        let x0: Int, x1: Int, y0: Int, y1: Int
        /// Same size on both axes: output pixels are copied.
        let identity: Bool
        /// Horizontal and vertical taps; nil when nothing is drawn.
        let hf: AxisFilter?, vf: AxisFilter?

        /// Plans drawing a `sourceWidth` x `sourceHeight` image scaled to `rect` into a
        /// `destWidth` x `destHeight` destination (all in pixels).
        /// - Precondition: all four sizes are positive.
        public init(sourceWidth: Int, sourceHeight: Int, rect: PixelRect, destWidth: Int, destHeight: Int) {
            precondition(sourceWidth > 0 && sourceHeight > 0 && destWidth > 0 && destHeight > 0,
                         "Resampler.Plan needs positive sizes")
            self.sourceWidth = sourceWidth
            self.sourceHeight = sourceHeight
            self.rect = rect
            self.destWidth = destWidth
            self.destHeight = destHeight
            x0 = max(0, rect.x); x1 = min(destWidth, rect.x + rect.width)
            y0 = max(0, rect.y); y1 = min(destHeight, rect.y + rect.height)
            identity = sourceWidth == rect.width && sourceHeight == rect.height
            if rect.width > 0, rect.height > 0, x0 < x1, y0 < y1 {
                hf = AxisFilter(sourceSize: sourceWidth, destSize: rect.width, visible: (x0 - rect.x)..<(x1 - rect.x))
                vf = AxisFilter(sourceSize: sourceHeight, destSize: rect.height, visible: (y0 - rect.y)..<(y1 - rect.y))
            } else {
                hf = nil
                vf = nil
            }
        }

        /// True when the plan writes no pixel (empty `rect`, or `rect` outside the destination).
        public var isEmpty: Bool { vf == nil }

        /// True when the written pixels are the whole destination (nothing is left for a
        /// background).
        public var coversDestination: Bool { x0 == 0 && y0 == 0 && x1 == destWidth && y1 == destHeight && !isEmpty }

        /// The source rows read, top to bottom (empty when ``isEmpty``).
        public var sourceRows: Range<Int> { vf.map { $0.firstSource..<$0.sourceEnd } ?? 0..<0 }

        /// The source columns read (empty when ``isEmpty``).
        public var sourceColumns: Range<Int> { hf.map { $0.firstSource..<$0.sourceEnd } ?? 0..<0 }

        /// The most source rows one output row reads (the `count` of the row provider's
        /// largest request; 0 when ``isEmpty``). A ring of this many rows is enough to draw.
        public var maxRowsPerOutputRow: Int { vf.map { Int($0.count.max() ?? 0) } ?? 0 }

        /// Draws the plan into `dest` (which must be `destWidth` x `destHeight`), pulling source
        /// rows from `rows` as they are needed.
        ///
        /// `rows(first, count, pointers)` is called once per written destination row, top to
        /// bottom, before that row is computed. It must store in `pointers[0..<count]` the
        /// addresses of source rows `first ..< first + count`, each pointing at the row's
        /// column 0 and readable for at least `sourceColumns.upperBound` pixels (XRGB8888, the
        /// top byte is ignored). The pointers are used only until the next call. Across calls
        /// `first` and `first + count` never decrease and stay within ``sourceRows``; `count`
        /// is at most ``maxRowsPerOutputRow``. Consecutive requests overlap or touch (rows are
        /// never left out in the middle), so a provider that keeps the last
        /// ``maxRowsPerOutputRow`` rows it read in a ring can serve every request.
        ///
        /// - Throws: whatever `rows` throws; drawing stops there, with the destination rows
        ///   above the failed one already written.
        public func draw<Failure: Error>(
            into dest: Bitmap,
            rows: (_ first: Int, _ count: Int, _ pointers: UnsafeMutablePointer<UnsafePointer<UInt32>>) throws(Failure)
                -> Void
        ) throws(Failure) {
            precondition(dest.width == destWidth && dest.height == destHeight,
                         "Resampler.Plan.draw: destination is \(dest.width)x\(dest.height), "
                            + "planned for \(destWidth)x\(destHeight)")
            guard let hf, let vf else { return }
            let taps = UnsafeMutablePointer<UnsafePointer<UInt32>>.allocate(capacity: max(1, maxRowsPerOutputRow))
            defer { taps.deallocate() }

            if identity {
                // Same size on both axes: copy the visible rows, forcing the top byte to 0xFF.
                let n = x1 - x0
                for y in y0..<y1 {
                    try rows(y - rect.y, 1, taps)
                    let s = taps[0] + (x0 - rect.x)
                    let d = dest.row(y) + x0
                    for i in 0..<n { d[i] = s[i] | 0xFF00_0000 }
                }
                return
            }

            let sx0 = hf.firstSource
            let columns = hf.sourceEnd - sx0
            let acc = UnsafeMutablePointer<UInt32>.allocate(capacity: columns * 4)
            let mid = UnsafeMutablePointer<UInt16>.allocate(capacity: columns * 4)
            defer { acc.deallocate(); mid.deallocate() }

            try vf.withTables { (vStart, vCount, vOffset, vWeight) throws(Failure) in
                try hf.withTables { (hStart, hCount, hOffset, hWeight) throws(Failure) in
                    let n = columns * 4
                    for oy in 0..<(y1 - y0) {
                        // Vertical pass, two source rows per sweep: mid[c] = the weighted sum of
                        // source byte c over the taps, in 8.8 fixed point; acc holds partial
                        // sums when there are more than two taps.
                        let taps0 = Int(vCount[oy]), wBase = Int(vOffset[oy])
                        try rows(Int(vStart[oy]), taps0, taps)
                        @inline(__always) func src(_ k: Int) -> UnsafePointer<UInt8> {
                            UnsafeRawPointer(taps[k] + sx0).assumingMemoryBound(to: UInt8.self)
                        }
                        @inline(__always) func w(_ k: Int) -> UInt16 { UInt16(truncatingIfNeeded: vWeight[wBase + k]) }
                        if taps0 == 1 {
                            rows1(src(0), w(0), into: mid, n)
                        } else if taps0 == 2 {
                            rows2(src(0), src(1), w(0), w(1), into: mid, n)
                        } else {
                            rows2(src(0), src(1), w(0), w(1), accumulate: acc, first: true, n)
                            var k = 2
                            while taps0 - k > 2 {
                                rows2(src(k), src(k + 1), w(k), w(k + 1), accumulate: acc, first: false, n)
                                k += 2
                            }
                            if taps0 - k == 1 {
                                rows2(src(k), src(k), w(k), 0, adding: acc, into: mid, n)
                            } else {
                                rows2(src(k), src(k + 1), w(k), w(k + 1), adding: acc, into: mid, n)
                            }
                        }
                        // Horizontal pass over the 8.8 fixed-point row.
                        horizontal(mid, sx0: sx0, hStart, hCount, hOffset, hWeight,
                                   out: dest.row(y0 + oy) + x0, count: x1 - x0)
                    }
                }
            }
        }
    }

    // MARK: - Kernels

    // The vertical kernels take bytes and 14-bit weights as UInt16 widened to UInt32, so the
    // compiler knows both factors fit in 16 bits and multiplies with pmullw/pmulhuw.

    /// 32-bit sums (up to 255 << 14) to 8.8 fixed point (up to 255 << 8), rounded.
    @inline(__always)
    static func to8dot8(_ sum: UInt32) -> UInt16 {
        UInt16(truncatingIfNeeded: (sum &+ (1 << (UInt32(weightBits) - 9))) &>> (UInt32(weightBits) - 8))
    }

    /// `mid[i] = s0[i] × w0` in 8.8 fixed point.
    @inline(__always)
    static func rows1(_ s0: UnsafePointer<UInt8>, _ w0: UInt16, into mid: UnsafeMutablePointer<UInt16>, _ n: Int) {
        let a = UInt32(w0)
        for i in 0..<n { mid[i] = to8dot8(UInt32(s0[i]) &* a) }
    }

    /// `mid[i] = s0[i] × w0 + s1[i] × w1` in 8.8 fixed point.
    @inline(__always)
    static func rows2(_ s0: UnsafePointer<UInt8>, _ s1: UnsafePointer<UInt8>, _ w0: UInt16, _ w1: UInt16,
                      into mid: UnsafeMutablePointer<UInt16>, _ n: Int) {
        let a = UInt32(w0), b = UInt32(w1)
        for i in 0..<n { mid[i] = to8dot8(UInt32(s0[i]) &* a &+ UInt32(s1[i]) &* b) }
    }

    /// `acc[i] (=|+=) s0[i] × w0 + s1[i] × w1`.
    @inline(__always)
    static func rows2(_ s0: UnsafePointer<UInt8>, _ s1: UnsafePointer<UInt8>, _ w0: UInt16, _ w1: UInt16,
                      accumulate acc: UnsafeMutablePointer<UInt32>, first: Bool, _ n: Int) {
        let a = UInt32(w0), b = UInt32(w1)
        if first {
            for i in 0..<n { acc[i] = UInt32(s0[i]) &* a &+ UInt32(s1[i]) &* b }
        } else {
            for i in 0..<n { acc[i] = acc[i] &+ UInt32(s0[i]) &* a &+ UInt32(s1[i]) &* b }
        }
    }

    /// `mid[i] = acc[i] + s0[i] × w0 + s1[i] × w1` in 8.8 fixed point.
    @inline(__always)
    static func rows2(_ s0: UnsafePointer<UInt8>, _ s1: UnsafePointer<UInt8>, _ w0: UInt16, _ w1: UInt16,
                      adding acc: UnsafeMutablePointer<UInt32>, into mid: UnsafeMutablePointer<UInt16>, _ n: Int) {
        let a = UInt32(w0), b = UInt32(w1)
        for i in 0..<n { mid[i] = to8dot8(acc[i] &+ UInt32(s0[i]) &* a &+ UInt32(s1[i]) &* b) }
    }

    /// One output row from the 8.8 fixed-point row: sums of up to (255 << 8) << 14, which fit
    /// in 32 bits; all four bytes are summed (the X byte is dropped at the end) so the compiler
    /// can keep a pixel's four sums in one vector register.
    @inline(never)  // its own register allocation: the per-pixel loop keeps everything in registers
    static func horizontal(_ mid: UnsafeMutablePointer<UInt16>, sx0: Int,
                           _ start: UnsafeBufferPointer<Int32>, _ count: UnsafeBufferPointer<Int32>,
                           _ offset: UnsafeBufferPointer<Int32>, _ weight: UnsafeBufferPointer<Int32>,
                           out: UnsafeMutablePointer<UInt32>, count n: Int) {
        let shift = UInt32(weightBits + 8)
        let half: UInt32 = 1 << (shift - 1)
        let wp = weight.baseAddress!
        for ox in 0..<n {
            var p = UnsafeRawPointer(mid + (Int(start[ox]) - sx0) * 4)
            var w = wp + Int(offset[ox])
            var sum = SIMD4<UInt32>(repeating: half)
            for _ in 0..<Int(count[ox]) {
                let v = SIMD4<UInt32>(truncatingIfNeeded: p.loadUnaligned(as: SIMD4<UInt16>.self))
                sum &+= v &* SIMD4<UInt32>(repeating: UInt32(UInt16(truncatingIfNeeded: w.pointee)))
                p += 8
                w += 1
            }
            let q = SIMD4<UInt8>(truncatingIfNeeded: sum &>> SIMD4<UInt32>(repeating: shift))
            out[ox] = unsafeBitCast(q, to: UInt32.self) | 0xFF00_0000
        }
    }
}

/// The taps and weights of a one-dimensional resampling filter for the output samples in
/// `visible` (indices into the full scaled size `destSize`), in the layout the kernels read:
/// for visible sample `i`, `count[i]` consecutive source samples starting at `start[i]`, with
/// weights `weights[offset[i] ..< offset[i] + count[i]]` (14-bit fixed point, summing to
/// exactly `1 << 14`). Area averaging when shrinking, bilinear when enlarging, identity at the
/// same size (see ``Resampler``).
struct AxisFilter {
    var start: [Int32] = []
    var count: [Int32] = []
    var offset: [Int32] = []
    var weights: [Int32] = []
    /// Smallest and one past the largest source index any visible sample reads.
    var firstSource = Int.max, sourceEnd = 0

    init(sourceSize s: Int, destSize d: Int, visible: Range<Int>) {
        precondition(s > 0 && d > 0 && visible.lowerBound >= 0 && visible.upperBound <= d)
        let one = 1 << Resampler.weightBits
        start.reserveCapacity(visible.count)
        count.reserveCapacity(visible.count)
        offset.reserveCapacity(visible.count)
        for o in visible {
            offset.append(Int32(weights.count))
            if s == d {
                append(first: o, [one])
            } else if d < s {
                // Output pixel o covers source [o*s/d, (o+1)*s/d). In units of 1/d source pixel
                // that is [o*s, (o+1)*s), and source pixel i covers [i*d, (i+1)*d). Weights come
                // from the rounded cumulative coverage, so they sum to exactly `one`.
                let lo = o * s, hi = lo + s
                let first = lo / d, last = (hi - 1) / d
                var ws: [Int] = []
                ws.reserveCapacity(last - first + 1)
                var previous = 0
                for i in first...last {
                    let covered = min(hi, (i + 1) * d) - lo
                    let cumulative = (covered * one * 2 + s) / (2 * s)
                    ws.append(cumulative - previous)
                    previous = cumulative
                }
                append(first: first, ws)
            } else {
                // Centre of output pixel o in source coordinates, in units of 1/(2d) pixel:
                // (o + 0.5) * s/d - 0.5  ->  (2o + 1) * s - d.
                let pos = (2 * o + 1) * s - d
                if pos <= 0 {
                    append(first: 0, [one])
                } else {
                    let i = pos / (2 * d), frac = pos - i * 2 * d
                    if i >= s - 1 {
                        append(first: s - 1, [one])
                    } else {
                        let w1 = (frac * one + d) / (2 * d)
                        append(first: i, [one - w1, w1])
                    }
                }
            }
        }
    }

    private mutating func append(first: Int, _ ws: [Int]) {
        start.append(Int32(first))
        count.append(Int32(ws.count))
        for w in ws { weights.append(Int32(w)) }
        firstSource = min(firstSource, first)
        sourceEnd = max(sourceEnd, first + ws.count)
    }

    /// Calls `body` with the four tables as buffer pointers (no bounds checks in the kernels).
    @inline(__always)
    func withTables<R, Failure: Error>(
        _ body: (UnsafeBufferPointer<Int32>, UnsafeBufferPointer<Int32>,
                 UnsafeBufferPointer<Int32>, UnsafeBufferPointer<Int32>) throws(Failure) -> R
    ) throws(Failure) -> R {
        // The error comes out as a Result: Swift 6.0's withUnsafeBufferPointer rethrows `any Error`.
        try start.withUnsafeBufferPointer { st in
            count.withUnsafeBufferPointer { ct in
                offset.withUnsafeBufferPointer { of in
                    weights.withUnsafeBufferPointer { wt in
                        Result { () throws(Failure) -> R in try body(st, ct, of, wt) }
                    }
                }
            }
        }.get()
    }
}
