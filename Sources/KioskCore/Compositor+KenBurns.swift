// SPDX-License-Identifier: Apache-2.0
extension Compositor {
    /// Resamples `window` of `source` (XRGB8888, any size) into the whole of `out` (XRGB8888)
    /// by bilinear interpolation: the Ken Burns frame (``KenBurns``). Output pixel (x, y) takes
    /// the source at `window.x + (x + 0.5) × window.width / out.width − 0.5` (and the same for y;
    /// pixel centres, as OpenGL's `GL_LINEAR` samples), clamped to the source's pixel centres, so
    /// no pixel outside `source` is ever read; the weights are 8-bit fractions (1/256 pixel steps),
    /// blended two channels per multiply as ``blend(_:_:weight:into:)`` does, vertical first (the
    /// source columns the window covers, once per row), then horizontal.
    ///
    /// For a window of about the output's size (the Ken Burns zoom is at most 1.15) bilinear
    /// interpolation is the right filter: every source pixel lands within one output pixel
    /// (no aliasing to prefilter), and it moves with sub-pixel smoothness. Split by rows across
    /// the threads of `rows` (nil: the caller's thread). `out` must not be `source`.
    public static func resampleBilinear(_ source: Bitmap, window: KenBurns.Window, into out: Bitmap,
                                        rows splitter: RowSplitter?) {
        precondition(source !== out, "Compositor.resampleBilinear: out must not be the source")
        let sw = source.width, sh = source.height, ow = out.width, oh = out.height
        guard sw > 0, sh > 0, ow > 0, oh > 0 else { return }
        let sx = window.width / Double(ow), sy = window.height / Double(oh)
        // Column tables, shared by every row: the left tap (relative to the first column read)
        // and its right weight.
        let maxX = Double(sw - 1), maxY = Double(sh - 1)
        func tap(_ i: Int, _ origin: Double, _ scale: Double, _ limit: Double) -> (Int, UInt32) {
            let c = min(limit, max(0, origin + (Double(i) + 0.5) * scale - 0.5))
            let base = Int(c)
            return (base, UInt32(((c - Double(base)) * 256).rounded(.down)))
        }
        let columns = UnsafeMutablePointer<Int32>.allocate(capacity: ow)
        let columnWeights = UnsafeMutablePointer<UInt32>.allocate(capacity: ow)
        defer { columns.deallocate(); columnWeights.deallocate() }
        var first = Int.max, last = 0
        for x in 0..<ow {
            let (base, f) = tap(x, window.x, sx, maxX)
            columns[x] = Int32(base)
            columnWeights[x] = f
            first = min(first, base)
            last = max(last, min(sw - 1, base + 1))
        }
        let span = last - first + 1
        for x in 0..<ow { columns[x] -= Int32(first) }
        let src = source.pixels, dst = out.pixels
        forEachBand(oh, splitter) { band in
            // One row of the vertical pass: columns first ... last of the two source rows.
            let line = UnsafeMutablePointer<UInt32>.allocate(capacity: span + 1)
            defer { line.deallocate() }
            for y in band {
                let (top, fy) = tap(y, window.y, sy, maxY)
                let bottom = min(sh - 1, top + 1)
                let a = src + top * sw + first, b = src + bottom * sw + first
                let wb = fy, wa = 256 &- fy
                if fy == 0 {
                    line.update(from: a, count: span)
                } else {
                    for i in 0..<span { line[i] = lerp(a[i], b[i], wa, wb) }
                }
                line[span] = line[span - 1]
                let row = dst + y * ow
                for x in 0..<ow {
                    let c = Int(columns[x]), f = columnWeights[x]
                    row[x] = lerp(line[c], line[c + 1], 256 &- f, f)
                }
            }
        }
    }

    /// `(a × wa + b × wb + 128) / 256` per channel, `wa + wb = 256`, two channels per multiply
    /// (``blendPixel(_:_:_:_:)``'s lanes); the top byte 0xFF.
    @inline(__always)
    static func lerp(_ a: UInt32, _ b: UInt32, _ wa: UInt32, _ wb: UInt32) -> UInt32 {
        let rb = ((a & 0x00FF_00FF) &* wa &+ (b & 0x00FF_00FF) &* wb &+ 0x0080_0080) &>> 8
        let g = ((a & 0x0000_FF00) &* wa &+ (b & 0x0000_FF00) &* wb &+ 0x0000_8000) &>> 8
        return 0xFF00_0000 | (rb & 0x00FF_00FF) | (g & 0x0000_FF00)
    }
}
