// SPDX-License-Identifier: Apache-2.0
/// The `blur` fit (docs/images.md): the letterbox of a fitted image filled with the same image
/// scaled to fill the frame, blurred strongly and dimmed, so a portrait photo on a landscape
/// screen fills it with itself. Computed once when a slot is prepared, never per frame.
extension Compositor {
    /// Width in pixels of the reduced copy the blur is computed on (at most the frame's width):
    /// at that size the Gaussian of 1/20 of the frame width has a standard deviation of 6 pixels,
    /// three box passes of 11 to 13 pixels, whatever the screen.
    public static let letterboxBlurWidth = 120
    /// The blur's standard deviation as a fraction of the frame width (1/20: 96 pixels at 1920).
    public static let letterboxBlurSigmaPerWidth = 1.0 / 20
    /// What the blurred letterbox keeps of its brightness, in 1/256: 154, about 60 %.
    public static let letterboxDim = 154

    /// Fills everything of `frame` outside `imageRect` with the picture inside `imageRect`
    /// scaled to fill the frame (centre-cropped, as ``FitMode/fill``), blurred with a Gaussian of
    /// standard deviation ``letterboxBlurSigmaPerWidth`` × the frame width and dimmed to
    /// ``letterboxDim``/256. The pixels inside `imageRect` are not touched, so the image itself
    /// stays exactly as fitted.
    ///
    /// `frame` is XRGB8888 (bytes B, G, R, X; top bytes written 0xFF), `imageRect` in its
    /// pixels (clipped to it); an empty rectangle or one that covers the frame leaves it as it is.
    ///
    /// Algorithm: the fill-scaled picture is area-averaged straight from `imageRect` into a reduced
    /// copy ``letterboxBlurWidth`` pixels wide (height in proportion) of three `Float` planes;
    /// that is blurred by three box passes per axis whose widths approximate the Gaussian
    /// (``gaussianBoxes(sigma:passes:)``, edges clamped), dimmed, then enlarged bilinearly
    /// (fixed point) into the letterbox only.
    /// Temporaries: about 100 KB at any frame size. About 3 ms for a portrait photo on a
    /// 1920x1080 frame (release build; `kiosk-bench --case blur-prepare`).
    public static func fillLetterboxBlurred(_ frame: Bitmap, imageRect: PixelRect) {
        let fw = frame.width, fh = frame.height
        let x0 = max(0, imageRect.x), y0 = max(0, imageRect.y)
        let x1 = min(fw, imageRect.x + imageRect.width), y1 = min(fh, imageRect.y + imageRect.height)
        guard x0 < x1, y0 < y1, !(x0 == 0 && y0 == 0 && x1 == fw && y1 == fh) else { return }
        let iw = x1 - x0, ih = y1 - y0
        let sw = min(fw, letterboxBlurWidth), sh = max(1, min(fh, (fh * sw + fw / 2) / fw))
        let cover = FitMode.fill.placement(imageWidth: iw, imageHeight: ih, frameWidth: fw, frameHeight: fh)

        // 1. Area average: reduced pixel i spans frame columns i*fw/sw ..< (i+1)*fw/sw, which the
        //    fill placement maps onto image columns; likewise for rows.
        func spans(_ n: Int, frame: Int, coverStart: Int, coverSize: Int, image: Int) -> [Range<Int>] {
            func bound(_ i: Int) -> Int {
                let f = Double(i) * Double(frame) / Double(n)
                return min(image, max(0, Int(((f - Double(coverStart)) * Double(image) / Double(coverSize)).rounded())))
            }
            return (0..<n).map { i in
                let a = min(bound(i), image - 1)
                return a..<max(a + 1, bound(i + 1))
            }
        }
        let columns = spans(sw, frame: fw, coverStart: cover.x, coverSize: cover.width, image: iw)
        let rows = spans(sh, frame: fh, coverStart: cover.y, coverSize: cover.height, image: ih)
        var planes = [[Float]](repeating: [Float](repeating: 0, count: sw * sh), count: 3)
        let sums = UnsafeMutablePointer<UInt32>.allocate(capacity: sw * 3)
        defer { sums.deallocate() }
        for j in 0..<sh {
            sums.update(repeating: 0, count: sw * 3)
            for y in rows[j] {
                let row = frame.row(y0 + y) + x0
                for i in 0..<sw {
                    var r: UInt32 = 0, g: UInt32 = 0, b: UInt32 = 0
                    for x in columns[i] {
                        let v = row[x]
                        r &+= (v &>> 16) & 0xFF; g &+= (v &>> 8) & 0xFF; b &+= v & 0xFF
                    }
                    sums[3 * i] &+= r; sums[3 * i + 1] &+= g; sums[3 * i + 2] &+= b
                }
            }
            for i in 0..<sw {
                let n = Float(rows[j].count * columns[i].count)
                for c in 0..<3 { planes[c][j * sw + i] = Float(sums[3 * i + c]) / n }
            }
        }

        // 2. Three box passes per axis (the reduced copy's sigma, per axis).
        let sigma = Double(fw) * letterboxBlurSigmaPerWidth
        let boxesX = gaussianBoxes(sigma: sigma * Double(sw) / Double(fw))
        let boxesY = gaussianBoxes(sigma: sigma * Double(sh) / Double(fh))
        var scratch = [Float](repeating: 0, count: max(sw, sh))
        for c in 0..<3 {
            planes[c].withUnsafeMutableBufferPointer { p in
                scratch.withUnsafeMutableBufferPointer { t in
                    for box in boxesX where box > 1 {
                        for j in 0..<sh {
                            boxPass(p.baseAddress! + j * sw, count: sw, step: 1, width: box, scratch: t.baseAddress!)
                        }
                    }
                    for box in boxesY where box > 1 {
                        for i in 0..<sw {
                            boxPass(p.baseAddress! + i, count: sh, step: sw, width: box, scratch: t.baseAddress!)
                        }
                    }
                }
            }
        }

        // 3. Dim into 8.4 fixed point, then enlarge bilinearly (pixel centres aligned, edges
        //    clamped) into the letterbox only: per frame row the two reduced rows are mixed once
        //    (sw × 3 samples), then each letterbox pixel mixes two of those (8-bit weights; the
        //    values stay within 0...255 × 16 × 256², so nothing needs clamping).
        let dim = Float(letterboxDim) / 256 * 16
        let small = UnsafeMutablePointer<Int32>.allocate(capacity: sw * sh * 3)
        let line = UnsafeMutablePointer<Int32>.allocate(capacity: sw * 3)
        let colA = UnsafeMutablePointer<Int>.allocate(capacity: fw),
            colB = UnsafeMutablePointer<Int>.allocate(capacity: fw)
        let colW = UnsafeMutablePointer<Int32>.allocate(capacity: fw)
        defer { small.deallocate(); line.deallocate(); colA.deallocate(); colB.deallocate(); colW.deallocate() }
        for k in 0..<(sw * sh) {
            for c in 0..<3 { small[3 * k + c] = Int32((planes[c][k] * dim).rounded()) }
        }
        func taps(_ n: Int, _ size: Int) -> [(a: Int, b: Int, w: Int32)] {
            (0..<size).map { d in
                let s = min(Double(n - 1), max(0, (Double(d) + 0.5) * Double(n) / Double(size) - 0.5))
                let a = Int(s)
                return (a, min(a + 1, n - 1), Int32(((s - Double(a)) * 256).rounded()))
            }
        }
        for (x, t) in taps(sw, fw).enumerated() { colA[x] = 3 * t.a; colB[x] = 3 * t.b; colW[x] = t.w }
        let ty = taps(sh, fh)
        for y in 0..<fh {
            let (a, b, w) = ty[y]
            let ra = small + a * sw * 3, rb = small + b * sw * 3, iw = 256 &- w
            for k in 0..<(sw * 3) { line[k] = ra[k] &* iw &+ rb[k] &* w }
            let row = frame.row(y)
            let spans = y < y0 || y >= y1 ? [0..<fw] : [0..<x0, x1..<fw]
            for span in spans {
                for x in span {
                    let pa = line + colA[x], pb = line + colB[x], wx = colW[x], iwx = 256 &- wx
                    let r = (pa[0] &* iwx &+ pb[0] &* wx &+ (1 << 19)) &>> 20
                    let g = (pa[1] &* iwx &+ pb[1] &* wx &+ (1 << 19)) &>> 20
                    let bl = (pa[2] &* iwx &+ pb[2] &* wx &+ (1 << 19)) &>> 20
                    row[x] = 0xFF00_0000 | UInt32(truncatingIfNeeded: r) << 16 | UInt32(truncatingIfNeeded: g) << 8
                        | UInt32(truncatingIfNeeded: bl)
                }
            }
        }
    }

    /// Widths (odd, pixels) of three successive box filters whose combination approximates a
    /// Gaussian of standard deviation `sigma` pixels (the central limit theorem: box after box
    /// tends to a Gaussian). A box of width w has variance `(w² − 1) / 12`; the passes use two
    /// odd widths two apart, as many of the smaller as makes the variances sum closest to σ².
    static func gaussianBoxes(sigma: Double, passes n: Int = 3) -> [Int] {
        let ideal = (12 * sigma * sigma / Double(n) + 1).squareRoot()
        var lower = Int(ideal)
        if lower % 2 == 0 { lower -= 1 }
        lower = max(1, lower)
        let upper = lower + 2
        let m = ((12 * sigma * sigma - Double(n * lower * lower + 4 * n * lower + 3 * n)) / Double(-4 * lower - 4))
            .rounded()
        return (0..<n).map { $0 < Int(m) ? lower : upper }
    }

    /// One box filter of odd `width` over `count` samples `step` apart, in place, edges clamped
    /// (the first and last samples repeat outwards). `scratch` holds `count` samples.
    static func boxPass(_ p: UnsafeMutablePointer<Float>, count: Int, step: Int, width: Int,
                        scratch: UnsafeMutablePointer<Float>) {
        let r = width / 2
        for i in 0..<count { scratch[i] = p[i * step] }
        let last = count - 1
        var sum: Float = 0
        for k in -r...r { sum += scratch[min(last, max(0, k))] }
        let scale = 1 / Float(width)
        for i in 0..<count {
            p[i * step] = sum * scale
            sum += scratch[min(last, i + r + 1)] - scratch[max(0, i - r)]
        }
    }
}
