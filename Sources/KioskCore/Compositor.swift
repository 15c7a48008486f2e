// SPDX-License-Identifier: Apache-2.0
/// Puts pictures into screen frames: placing an image with its fit mode, flattening alpha,
/// cross-fading two frames, page dots, and the placeholder text screen.
///
/// All bitmaps here are 32-bit `0xAARRGGBB` pixels (bytes B, G, R, A in memory, see
/// ``Bitmap``); every frame written is XRGB8888 with the top byte set to 0xFF. Everything is
/// integer arithmetic on the caller's bitmaps; nothing is allocated per pixel.
public enum Compositor {
    // MARK: - Alpha

    /// Composites an ARGB8888 straight-alpha `image` over the opaque `background`, in place,
    /// and clears its ``Bitmap/hasAlpha``. Per channel:
    /// `out = (a × src + (255 − a) × bg + 127) / 255` (integer division, so alpha 0 gives
    /// exactly the background and 255 exactly the source). The top byte becomes 0xFF.
    /// An image without alpha is left as it is.
    public static func flattenAlpha(_ image: Bitmap, over background: RGBColor) {
        guard image.hasAlpha else { return }
        flattenAlpha(image.pixels, count: image.pixelCount, over: background)
        image.hasAlpha = false
    }

    /// ``flattenAlpha(_:over:)`` for `count` ARGB8888 pixels at `pixels` (one row, say, for a
    /// decoder that hands rows to the resampler as it decodes them): the same formula, so the
    /// same bytes. The top byte of each pixel becomes 0xFF.
    public static func flattenAlpha(_ pixels: UnsafeMutablePointer<UInt32>, count: Int, over background: RGBColor) {
        let bgR = UInt32(background.red), bgG = UInt32(background.green), bgB = UInt32(background.blue)
        let p = pixels
        for i in 0..<count {
            let v = p[i]
            let a = v &>> 24, na = 255 &- a
            let r = (((v &>> 16) & 0xFF) &* a &+ bgR &* na &+ 127) / 255
            let g = (((v &>> 8) & 0xFF) &* a &+ bgG &* na &+ 127) / 255
            let b = ((v & 0xFF) &* a &+ bgB &* na &+ 127) / 255
            p[i] = 0xFF00_0000 | r &<< 16 | g &<< 8 | b
        }
    }

    // MARK: - Placing

    /// Draws `image` into the whole of `frame` as `fit` says (docs/images.md): the frame is
    /// filled with `background` wherever the image does not cover it (letterbox or pillarbox
    /// bars for `fit`; for `blur` they are then filled by ``fillLetterboxBlurred(_:imageRect:)``),
    /// and the image is resampled (``Resampler``) into
    /// ``FitMode/placement(imageWidth:imageHeight:frameWidth:frameHeight:)``.
    ///
    /// Ownership: an image with alpha is **consumed**: it is flattened over `background` in
    /// place (``flattenAlpha(_:over:)``), which clears its `hasAlpha`. Placing it again with the
    /// same background gives the same frame. `image` and `frame` must be different bitmaps.
    ///
    /// This is ``place(_:into:background:rows:)`` with the rows of `image`: a decoder that
    /// streams the same rows gets the same frame.
    public static func place(_ image: Bitmap, into frame: Bitmap, fit: FitMode, background: RGBColor) {
        precondition(image !== frame, "Compositor.place: image and frame must be different bitmaps")
        flattenAlpha(image, over: background)
        let plan = placement(imageWidth: image.width, imageHeight: image.height, into: frame, fit: fit)
        place(plan, into: frame, background: background) { first, count, rows in
            for k in 0..<count { rows[k] = UnsafePointer(image.row(first + k)) }
        }
        if fit == .blur { fillLetterboxBlurred(frame, imageRect: plan.rect) }
    }

    /// The resampling plan of placing an opaque `imageWidth` x `imageHeight` image (pixels)
    /// into `frame` as `fit` says: its rectangle is
    /// ``FitMode/placement(imageWidth:imageHeight:frameWidth:frameHeight:)``. Its
    /// ``Resampler/Plan/sourceRows`` are the image rows the frame shows (all of them for
    /// `fit` and `stretch`, the centre band for a `fill` that crops top and bottom).
    public static func placement(imageWidth: Int, imageHeight: Int, into frame: Bitmap, fit: FitMode) -> Resampler.Plan {
        let rect = fit.placement(imageWidth: imageWidth, imageHeight: imageHeight,
                                 frameWidth: frame.width, frameHeight: frame.height)
        return Resampler.Plan(sourceWidth: imageWidth, sourceHeight: imageHeight, rect: rect,
                              destWidth: frame.width, destHeight: frame.height)
    }

    /// Places an opaque image whose rows come from `rows` (see
    /// ``Resampler/Plan/draw(into:rows:)`` for what the provider is asked and must return)
    /// into the whole of `frame` by `plan` (from ``placement(imageWidth:imageHeight:into:fit:)``):
    /// `frame` is first filled with `background` unless the plan covers it, then the image is
    /// resampled into it row by row. The top bytes of the image are ignored.
    ///
    /// - Throws: whatever `rows` throws. `frame` is then partly drawn: do not show it.
    public static func place<Failure: Error>(
        _ plan: Resampler.Plan, into frame: Bitmap, background: RGBColor,
        rows: (_ first: Int, _ count: Int, _ pointers: UnsafeMutablePointer<UnsafePointer<UInt32>>) throws(Failure) -> Void
    ) throws(Failure) {
        if !plan.coversDestination { frame.fill(background.xrgb) }
        try plan.draw(into: frame, rows: rows)
    }

    // MARK: - Cross-fade

    /// Cross-fades two frames: per channel `out = (a × (256 − weight) + b × weight + 128) >> 8`,
    /// so weight 0 gives exactly `a`, 256 exactly `b`, and 128 the rounded-up midpoint
    /// `(a + b + 1) / 2`. `weight` is clamped to 0...256 (see ``Easing``). The top byte of
    /// every output pixel is 0xFF; the top bytes of `a` and `b` are ignored.
    ///
    /// All three bitmaps must have the same size. `out` may be `a` or `b` (in-place blending,
    /// just as fast), or a third bitmap.
    ///
    /// Algorithm: a loop over the bytes of the pixels (B, G, R, X, each widened to 16 bits,
    /// where `255 × 256 + 128` fits), which the compiler turns into 16-byte vector
    /// instructions, so each channel is computed on its own and no carry crosses channels. It
    /// runs in chunks of 256 pixels; after each chunk, while it is still in L1 cache, the X
    /// bytes are set to 0xFF. A 1920x1080 frame takes about 0.6 ms (release build), the speed
    /// of the same loop in C compiled with `gcc -O3`.
    public static func blend(_ a: Bitmap, _ b: Bitmap, weight: Int, into out: Bitmap) {
        blend(a, b, weight: weight, into: out, rows: nil)
    }

    /// ``blend(_:_:weight:into:)`` split by rows across the threads of `rows` (the same bytes: each
    /// pixel's formula does not depend on its neighbours). Nil: the caller's thread alone.
    public static func blend(_ a: Bitmap, _ b: Bitmap, weight: Int, into out: Bitmap, rows splitter: RowSplitter?) {
        precondition(a.width == b.width && a.height == b.height && a.width == out.width && a.height == out.height,
                     "Compositor.blend: sizes differ (\(a.width)x\(a.height), \(b.width)x\(b.height), \(out.width)x\(out.height))")
        let wb = UInt16(min(256, max(0, weight))), wa = 256 &- wb
        let w = out.width
        let o = out.pixels, pa = UnsafePointer(a.pixels), pb = UnsafePointer(b.pixels)
        // Separate kernels per aliasing case: when `out` is the very pointer an input is read
        // through, the compiler sees that and still vectorises; two unrelated pointers get a
        // runtime overlap check, which an in-place call would fail (falling back to scalar code).
        let inPlaceA = out === a, inPlaceB = out === b
        forEachBand(out.height, splitter) { band in
            var p = band.lowerBound * w
            let n = band.upperBound * w
            while p < n {
                let m = min(blendChunk, n - p)
                if inPlaceA {
                    mixBytesInPlace(UnsafeMutableRawPointer(o + p), other: UnsafeRawPointer(pb + p), wSelf: wa, wOther: wb, count: m * 4)
                } else if inPlaceB {
                    mixBytesInPlace(UnsafeMutableRawPointer(o + p), other: UnsafeRawPointer(pa + p), wSelf: wb, wOther: wa, count: m * 4)
                } else {
                    mixBytes(UnsafeMutableRawPointer(o + p), UnsafeRawPointer(pa + p), UnsafeRawPointer(pb + p),
                             wa: wa, wb: wb, count: m * 4)
                }
                setOpaque(o + p, count: m)
                p += m
            }
        }
    }

    /// Pixels per chunk of ``blend(_:_:weight:into:)``: 1 KiB of each bitmap.
    static let blendChunk = 256

    /// `out[i] = (a[i] × wa + b[i] × wb + 128) >> 8` over `n` bytes (`wa + wb == 256`).
    @inline(__always)
    static func mixBytes(_ out: UnsafeMutableRawPointer, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer,
                         wa: UInt16, wb: UInt16, count n: Int) {
        for i in 0..<n {
            let x = UInt16(a.load(fromByteOffset: i, as: UInt8.self))
            let y = UInt16(b.load(fromByteOffset: i, as: UInt8.self))
            out.storeBytes(of: UInt8(truncatingIfNeeded: (x &* wa &+ y &* wb &+ 128) &>> 8), toByteOffset: i, as: UInt8.self)
        }
    }

    /// `p[i] = (p[i] × wSelf + other[i] × wOther + 128) >> 8` over `n` bytes.
    @inline(__always)
    static func mixBytesInPlace(_ p: UnsafeMutableRawPointer, other: UnsafeRawPointer,
                                wSelf: UInt16, wOther: UInt16, count n: Int) {
        for i in 0..<n {
            let x = UInt16(p.load(fromByteOffset: i, as: UInt8.self))
            let y = UInt16(other.load(fromByteOffset: i, as: UInt8.self))
            p.storeBytes(of: UInt8(truncatingIfNeeded: (x &* wSelf &+ y &* wOther &+ 128) &>> 8), toByteOffset: i, as: UInt8.self)
        }
    }

    @inline(__always)
    static func setOpaque(_ p: UnsafeMutablePointer<UInt32>, count n: Int) {
        for i in 0..<n { p[i] |= 0xFF00_0000 }
    }

    /// Draws `picture` shifted sideways by `offset` pixels with `neighbour` sliding in beside it
    /// (the drag and settle frames of docs/touch.md): for offset < 0 the picture moves left and
    /// the neighbour's left part shows at the right edge; for offset > 0 the picture moves right
    /// and the neighbour's right part shows at the left edge. `offset` is clamped to
    /// -width ... width. All three bitmaps are XRGB8888 of the same size; `out` must be neither
    /// input (rows are copied, not shifted in place).
    public static func slide(_ picture: Bitmap, neighbour: Bitmap, offset: Int, into out: Bitmap) {
        slide(picture, neighbour: neighbour, offset: offset, into: out, rows: nil)
    }

    /// ``slide(_:neighbour:offset:into:)`` split by rows across the threads of `rows`. Nil: the
    /// caller's thread alone.
    public static func slide(_ picture: Bitmap, neighbour: Bitmap, offset: Int, into out: Bitmap, rows splitter: RowSplitter?) {
        precondition(picture.width == out.width && picture.height == out.height
                     && neighbour.width == out.width && neighbour.height == out.height,
                     "Compositor.slide: sizes differ (\(picture.width)x\(picture.height), \(neighbour.width)x\(neighbour.height), \(out.width)x\(out.height))")
        precondition(out !== picture && out !== neighbour, "Compositor.slide: out must not be an input")
        let w = out.width, o = min(w, max(-w, offset)), shift = abs(o), keep = w - shift
        forEachBand(out.height, splitter) { band in
            for y in band {
                let dst = out.pixels + y * w, pic = picture.pixels + y * w, nb = neighbour.pixels + y * w
                if o <= 0 {
                    if keep > 0 { dst.update(from: pic + shift, count: keep) }
                    if shift > 0 { (dst + keep).update(from: nb, count: shift) }
                } else {
                    if shift > 0 { dst.update(from: nb + keep, count: shift) }
                    if keep > 0 { (dst + shift).update(from: pic, count: keep) }
                }
            }
        }
    }

    /// One pixel of the blend formula, two channels per multiply (red and blue under mask
    /// 0x00FF00FF, then green; each 16-bit lane holds at most 255 × 256 + 128, so no carry
    /// crosses channels). For single pixels (page dots); frames use the byte kernels.
    @inline(__always)
    static func blendPixel(_ a: UInt32, _ b: UInt32, _ wa: UInt32, _ wb: UInt32) -> UInt32 {
        let rb = ((a & 0x00FF_00FF) &* wa &+ (b & 0x00FF_00FF) &* wb &+ 0x0080_0080) &>> 8
        let g = ((a & 0x0000_FF00) &* wa &+ (b & 0x0000_FF00) &* wb &+ 0x0000_8000) &>> 8
        return 0xFF00_0000 | (rb & 0x00FF_00FF) | (g & 0x0000_FF00)
    }

    // MARK: - Page dots

    /// Where ``drawPageDots(into:count:current:)`` puts its dots in a frame of
    /// `frameWidth` x `frameHeight` pixels: the dot diameter in pixels and, for each dot, the
    /// centre in continuous pixel coordinates (pixel (x, y) spans x...x+1, y...y+1).
    ///
    /// Diameter `d = max(6, frameHeight / 60)`, dots `2d` apart centre to centre, the row
    /// centred horizontally with its bottom `d` above the bottom edge. When the row would be
    /// wider than the frame less one `d` each side, `d` shrinks (down to 2) so that it fits.
    public static func pageDotLayout(frameWidth: Int, frameHeight: Int, count: Int)
        -> (diameter: Int, centres: [(x: Double, y: Double)]) {
        guard count > 0 else { return (0, []) }
        var d = max(6, frameHeight / 60)
        if (2 * count + 1) * d > frameWidth { d = max(2, frameWidth / (2 * count + 1)) }
        let rowWidth = (2 * count - 1) * d
        let left = (frameWidth - rowWidth) / 2
        let cy = Double(frameHeight - 2 * d) + Double(d) / 2
        let centres = (0..<count).map { i in (x: Double(left + 2 * d * i) + Double(d) / 2, y: cy) }
        return (d, centres)
    }

    /// Draws a row of `count` page dots near the bottom edge of `frame`
    /// (geometry: ``pageDotLayout(frameWidth:frameHeight:count:)``): dot `current` opaque
    /// white, the others white at 40 % opacity, each over a black halo at 30 % opacity that
    /// reaches `max(1, d/6)` pixels further out (so the dots stay visible on bright photos),
    /// blended over what is already there with anti-aliased edges (coverage
    /// `clamp(r + 0.5 − distance, 0, 1)` from the pixel centre). `current` is taken modulo
    /// `count`. Draws nothing if `count <= 1`.
    public static func drawPageDots(into frame: Bitmap, count: Int, current: Int) {
        guard count > 1 else { return }
        let layout = pageDotLayout(frameWidth: frame.width, frameHeight: frame.height, count: count)
        let r = Double(layout.diameter) / 2
        let halo = Double(max(1, layout.diameter / 6))
        let highlighted = ((current % count) + count) % count
        for (i, c) in layout.centres.enumerated() {
            drawDisc(into: frame, x: c.x, y: c.y, radius: r + halo, color: 0xFF00_0000, opacity: 0.3)
            drawDisc(into: frame, x: c.x, y: c.y, radius: r, color: 0xFFFF_FFFF, opacity: i == highlighted ? 1.0 : 0.4)
        }
    }

    /// The page dots of ``drawPageDots(into:count:current:)`` for a `frameWidth` x `frameHeight`
    /// frame as a layer of their own: a premultiplied ARGB8888 strip just covering the dots and
    /// their halos, transparent elsewhere, each disc composed "over" the ones before it with the
    /// same coverage and opacities (so the strip over a picture gives that picture with the dots,
    /// within rounding). Nil when `count <= 1`.
    public static func pageDotStrip(frameWidth: Int, frameHeight: Int, count: Int, current: Int) -> FrameLayer? {
        guard count > 1 else { return nil }
        let layout = pageDotLayout(frameWidth: frameWidth, frameHeight: frameHeight, count: count)
        let r = Double(layout.diameter) / 2, halo = Double(max(1, layout.diameter / 6))
        let reach = r + halo + 1
        guard let first = layout.centres.first, let last = layout.centres.last else { return nil }
        let x0 = max(0, Int((first.x - reach).rounded(.down))), x1 = min(frameWidth, Int((last.x + reach).rounded(.up)))
        let y0 = max(0, Int((first.y - reach).rounded(.down))), y1 = min(frameHeight, Int((first.y + reach).rounded(.up)))
        guard x0 < x1, y0 < y1 else { return nil }
        let strip = Bitmap(width: x1 - x0, height: y1 - y0, hasAlpha: true, fill: 0)
        for (i, c) in layout.centres.enumerated() {
            drawDiscPremultiplied(into: strip, x: c.x - Double(x0), y: c.y - Double(y0), radius: r + halo, color: 0xFF00_0000, opacity: 0.3)
            drawDiscPremultiplied(into: strip, x: c.x - Double(x0), y: c.y - Double(y0), radius: r, color: 0xFFFF_FFFF,
                                  opacity: i == current ? 1.0 : 0.4)
        }
        return FrameLayer(bitmap: strip, x: x0, y: y0, premultiplied: true)
    }

    /// ``drawDisc(into:x:y:radius:color:opacity:)`` "over" a premultiplied ARGB8888 bitmap: each
    /// channel, alpha included, becomes `src × a + dst × (256 − a)` over 256 with the disc's
    /// coverage weight `a` (0...256) and `src` the colour's channel (alpha 255).
    static func drawDiscPremultiplied(into frame: Bitmap, x cx: Double, y cy: Double, radius r: Double, color: UInt32,
                                      opacity: Double) {
        let source = 0xFF00_0000 | color
        forEachDiscPixel(in: frame, x: cx, y: cy, radius: r, opacity: opacity) { row, x, alpha in
            let d = row[x]
            var v: UInt32 = 0
            for shift in stride(from: UInt32(0), through: 24, by: 8) {
                let s = (source >> shift) & 0xFF, t = (d >> shift) & 0xFF
                v |= min(255, (s &* alpha &+ t &* (256 &- alpha) &+ 128) >> 8) << shift
            }
            row[x] = v
        }
    }

    /// Blends an anti-aliased disc of `color` (XRGB8888) at `opacity` (0...1) centred at
    /// (`x`, `y`) in continuous pixel coordinates, `radius` pixels, over `frame`.
    static func drawDisc(into frame: Bitmap, x cx: Double, y cy: Double, radius r: Double, color: UInt32, opacity: Double) {
        forEachDiscPixel(in: frame, x: cx, y: cy, radius: r, opacity: opacity) { row, x, alpha in
            row[x] = blendPixel(row[x], color, 256 - alpha, alpha)
        }
    }

    /// Calls `blend` for each pixel of `frame` an anti-aliased disc centred at (`x`, `y`) (continuous
    /// pixel coordinates), `radius` pixels, covers: with the row, the column and the coverage weight
    /// 1...256 (the distance of the pixel's centre from the edge, clamped to one pixel, times `opacity`).
    private static func forEachDiscPixel(in frame: Bitmap, x cx: Double, y cy: Double, radius r: Double,
                                         opacity: Double, _ blend: (UnsafeMutablePointer<UInt32>, Int, UInt32) -> Void) {
        let xa = max(0, Int((cx - r - 1).rounded(.down))), xb = min(frame.width, Int((cx + r + 1).rounded(.up)))
        let ya = max(0, Int((cy - r - 1).rounded(.down))), yb = min(frame.height, Int((cy + r + 1).rounded(.up)))
        guard xa < xb, ya < yb else { return }
        for y in ya..<yb {
            let row = frame.row(y)
            for x in xa..<xb {
                let dx = Double(x) + 0.5 - cx, dy = Double(y) + 0.5 - cy
                let coverage = min(1, max(0, r + 0.5 - (dx * dx + dy * dy).squareRoot()))
                let alpha = UInt32((coverage * opacity * 256).rounded())
                if alpha == 0 { continue }
                blend(row, x, alpha)
            }
        }
    }

    // MARK: - Placeholder text

    /// The text colour of ``drawMessage(into:_:background:painter:)``: light grey (0xD0D0D0) on a dark
    /// background, dark grey (0x303030) on a light one (Rec. 601 luma above 160).
    public static func messageColor(on background: RGBColor) -> RGBColor {
        let luma = (299 * Int(background.red) + 587 * Int(background.green) + 114 * Int(background.blue)) / 1000
        return luma > 160 ? RGBColor(red: 0x30, green: 0x30, blue: 0x30) : RGBColor(red: 0xD0, green: 0xD0, blue: 0xD0)
    }

    /// The placeholder screen: fills `frame` with `background` and, when there is a `painter`,
    /// has it draw `text` centred in ``messageColor(on:)`` (lines split at "\n"). Without
    /// one the screen is the plain background.
    public static func drawMessage(into frame: Bitmap, _ text: String, background: RGBColor, painter: (any TextPainter)?) {
        frame.fill(background.xrgb)
        painter?.drawMessage(text, into: frame, color: messageColor(on: background))
    }
}

extension Compositor {
    /// Copies the whole of `image` into `frame` with its top-left corner at (`x`, `y`) (pixels;
    /// XRGB8888 copied as it is). The part outside `frame` is left out.
    public static func copy(_ image: Bitmap, into frame: Bitmap, x: Int, y: Int) {
        let left = max(0, -x), top = max(0, -y)
        let w = min(image.width, frame.width - x) - left
        guard w > 0 else { return }
        for row in top..<max(top, min(image.height, frame.height - y)) {
            (frame.row(y + row) + x + left).update(from: image.row(row) + left, count: w)
        }
    }
}
