// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore

/// The copy from a composed XRGB8888 frame to scanout memory: pixel format conversion, rotation,
/// ordered dithering and the red/blue swap in one pass, the only per-frame work a display does
/// besides showing the result.
///
/// **Rotation** (clockwise as the viewer sees it): the frame is drawn at the logical size and
/// turned by the rotation's angle on its way to the panel, walking the frame as
/// ``KioskCore/Rotation/scan(logicalWidth:logicalHeight:)`` says; the exact map (which logical
/// pixel lands on which panel pixel) is ``KioskCore/Rotation``'s.
///
/// **Dithering**: ordered dithering with the 4x4 Bayer matrix (B. E. Bayer, "An optimum method for
/// two-level rendition of continuous-tone pictures", IEEE ICC 1973), indexed by *panel* position,
/// so the pattern stays put on the glass. A channel cut from 8 to `n` bits (`s = 8 - n`) gets
/// `(bayer[py & 3][px & 3] << s) >> 4` added (clamped at 255) before its low `s` bits are dropped;
/// over each 4x4 block the thresholds 0 ..< 2^s appear equally often, so the block's mean level is
/// the true value (for s <= 4), and a value whose low `s` bits are zero is reproduced exactly.
///
/// **Bits other than red, green and blue**: an alpha field (``ScanoutFormat/transp`` length > 0)
/// is written all ones (opaque). Bits that belong to no channel (the X byte of XRGB8888 / XBGR8888
/// when transp length is 0) carry the frame's own top byte, because the XRGB8888 rows are copied
/// with `memcpy`; compositor frames have 0xFF there. In other layouts such bits are written as zero.
///
/// **Brightness** (`--brightness` without a backlight, docs/power.md): below full, each run of
/// pixels goes through ``KioskCore/PixelBrightness``'s table into a buffer on the stack first
/// (256 pixels at a time), then through the conversion, so dimming costs one table look-up per
/// channel and no frame-sized copy.
public enum ScanoutWriter {
    /// Copies `frame` to scanout memory, converting, rotating and dithering on the way.
    ///
    /// - Parameters:
    ///   - frame: XRGB8888 (bytes B, G, R, X) at the *logical* size, i.e. width and height already
    ///     swapped for 90 and 270; borrowed for the call only. Its top byte is not read as alpha;
    ///     it only passes through as the X byte of XRGB8888 / XBGR8888 (see above).
    ///   - base: the panel's top-left pixel in scanout memory (for fbdev: the mapping plus
    ///     `yoffset * line_length + xoffset * bytesPerPixel`). The panel is the frame's size rotated
    ///     back: `frame.height` x `frame.width` pixels for 90 and 270. Not retained.
    ///   - stride: bytes from one panel row to the next (fbdev `line_length`, DRM pitch); at least
    ///     panel width x bytes per pixel.
    ///   - format: the scanout pixel format; must pass ``ScanoutFormat/validate(device:)``.
    ///   - rotation: clockwise rotation, mapped as ``KioskCore/Rotation`` says.
    ///   - dither: ordered dithering for channels of fewer than 8 bits (RGB565 and the like).
    ///   - swapRedBlue: write red where the format says blue and the other way round (panels wired BGR).
    ///   - rows: splits the panel rows across cores (bands of 16 rows when rotating by 90 or 270,
    ///     so that the tiles stay whole); the same bytes either way. Nil: this thread alone.
    ///   - brightness: the pixels scaled in linear light on the way (``KioskCore/PixelBrightness``);
    ///     `.full` (the default) leaves them as they are.
    /// - Precondition: a valid format and a stride that holds a panel row; 16-bit and 32-bit formats
    ///   need `base` and `stride` aligned to the pixel size.
    public static func copy(_ frame: Bitmap, to base: UnsafeMutableRawPointer, stride: Int, format: ScanoutFormat,
                            rotation: Rotation, dither: Bool, swapRedBlue: Bool, rows splitter: RowSplitter? = nil,
                            brightness: PixelBrightness = .full) {
        let target = swapRedBlue ? format.swappingRedBlue : format
        do { try target.validate(device: "scanout") } catch { preconditionFailure("\(error)") }
        let w = frame.width, h = frame.height
        let (panelWidth, panelHeight) = rotation.panelSize(logicalWidth: w, logicalHeight: h)
        precondition(stride >= panelWidth * target.bytesPerPixel,
                     "stride \(stride) is shorter than a \(panelWidth)-pixel row of \(target)")
        let kernel = Kernel(target, dither: dither)
        let dimming = brightness.isFull ? nil : brightness

        // The logical pixel at panel (0, 0) and how far (in pixels) one step right / down on the
        // panel moves in the frame.
        let (origin, stepX, stepY) = rotation.scan(logicalWidth: w, logicalHeight: h)
        let src = UnsafePointer(frame.pixels) + origin
        let bpp = target.bytesPerPixel

        if !rotation.swapsAxes {
            // Panel rows are frame rows (reversed for 180): one run per row.
            forEachRowBand(panelHeight, granularity: 1, splitter) { band in
                for py in band {
                    kernel.run(src + py * stepY, step: stepX, to: base + py * stride, count: panelWidth, x: 0, y: py,
                               dimming: dimming, bytesPerPixel: bpp)
                }
            }
            return
        }
        // 90 / 270: a panel row is a frame column. Work in tiles so that the frame's cache lines
        // (16 pixels) fetched for one panel row are still there for the next 15.
        let tileHeight = 16, tileWidth = 128
        forEachRowBand(panelHeight, granularity: tileHeight, splitter) { band in
            var py0 = band.lowerBound
            while py0 < band.upperBound {
                let py1 = min(py0 + tileHeight, band.upperBound)
                var px0 = 0
                while px0 < panelWidth {
                    let n = min(tileWidth, panelWidth - px0)
                    for py in py0 ..< py1 {
                        kernel.run(src + px0 * stepX + py * stepY, step: stepX,
                                   to: base + py * stride + px0 * bpp, count: n, x: px0, y: py,
                                   dimming: dimming, bytesPerPixel: bpp)
                    }
                    px0 += n
                }
                py0 = py1
            }
        }
    }

    /// `body(0 ..< rows)` here, or split by `splitter` when it has more than one thread.
    @inline(__always)
    private static func forEachRowBand(_ rows: Int, granularity: Int, _ splitter: RowSplitter?,
                                       _ body: @escaping (Range<Int>) -> Void) {
        if let splitter, splitter.parallelism > 1, rows > granularity {
            splitter.splitRows(rows, granularity: granularity, body)
        } else if rows > 0 {
            body(0 ..< rows)
        }
    }
}

/// The 4x4 Bayer ordered-dither matrix (Bayer 1973), values 0...15, row-major.
private let bayer4x4: [UInt32] = [
    0, 8, 2, 10,
    12, 4, 14, 6,
    3, 11, 1, 9,
    15, 7, 13, 5,
]

/// The four dither thresholds of panel row `y`, for panel columns `x`, `x+1`, `x+2`, `x+3` (in that
/// order, so that the run's pixel `i` uses entry `i & 3`), for a channel that drops `shift` bits.
@inline(__always)
private func ditherRow(y: Int, x: Int, shift: Int) -> (UInt32, UInt32, UInt32, UInt32) {
    func t(_ k: Int) -> UInt32 { (bayer4x4[(y & 3) * 4 + ((x + k) & 3)] << UInt32(shift)) >> 4 }
    return (t(0), t(1), t(2), t(3))
}

/// One conversion, chosen once per copy; `run` converts a run of pixels read `step` pixels apart
/// into consecutive scanout pixels. Each case is a loop specialised for its layout; `.generic`
/// handles any validated layout with shifts taken from variables.
private enum Kernel {
    /// 32 bpp, red 16 / green 8 / blue 0, 8 bits each: memcpy (plus OR of the alpha mask).
    case xrgb8888(alpha: UInt32)
    /// 32 bpp, red 0 / green 8 / blue 16: swap bytes 0 and 2 (plus OR of the alpha mask).
    case xbgr8888(alpha: UInt32)
    /// RGB565 (red on top) or BGR565, truncating.
    case rgb565(redHigh: Bool)
    /// RGB565 or BGR565 with ordered dithering.
    case rgb565Dithered(redHigh: Bool)
    /// 24 bpp, 8 bits each at byte offsets: RGB888 (bytes B, G, R) when `redHigh`, else BGR888.
    case rgb888(redHigh: Bool)
    /// Any other layout.
    case generic(GenericLayout)

    init(_ f: ScanoutFormat, dither: Bool) {
        let eight = f.red.length == 8 && f.green.length == 8 && f.blue.length == 8 && f.green.offset == 8
        let rb = (f.red.offset, f.blue.offset)
        if f.bitsPerPixel == 32 && eight && rb == (16, 0) {
            self = .xrgb8888(alpha: f.transp.mask)
        } else if f.bitsPerPixel == 32 && eight && rb == (0, 16) {
            self = .xbgr8888(alpha: f.transp.mask)
        } else if f.bitsPerPixel == 24 && eight && (rb == (16, 0) || rb == (0, 16)) {
            self = .rgb888(redHigh: f.red.offset == 16)
        } else if f == .rgb565 || f == .bgr565 {
            self = dither ? .rgb565Dithered(redHigh: f == .rgb565) : .rgb565(redHigh: f == .rgb565)
        } else {
            self = .generic(GenericLayout(f, dither: dither))
        }
    }

    /// ``run(_:step:to:count:x:y:)`` with the pixels dimmed first when `dimming` is given: 256 at
    /// a time through its table into a stack buffer, converted from there.
    @inline(__always)
    func run(_ src: UnsafePointer<UInt32>, step: Int, to dst: UnsafeMutableRawPointer, count: Int, x: Int, y: Int,
             dimming: PixelBrightness?, bytesPerPixel: Int) {
        guard let dimming else { return run(src, step: step, to: dst, count: count, x: x, y: y) }
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 256) { buffer in
            let scratch = buffer.baseAddress!
            var done = 0
            while done < count {
                let n = min(256, count - done)
                dimming.apply(src + done &* step, step: step, to: scratch, count: n)
                run(UnsafePointer(scratch), step: 1, to: dst + done &* bytesPerPixel, count: n, x: x + done, y: y)
                done += n
            }
        }
    }

    @inline(__always)
    func run(_ src: UnsafePointer<UInt32>, step: Int, to dst: UnsafeMutableRawPointer, count: Int, x: Int, y: Int) {
        switch self {
        case .xrgb8888(let alpha):
            if step == 1 && alpha == 0 {
                dst.copyMemory(from: src, byteCount: count &* 4)
            } else if step == 1 {
                Self.or32(src, step: 1, dst, count, alpha)
            } else {
                Self.or32(src, step: step, dst, count, alpha)
            }
        case .xbgr8888(let alpha):
            if step == 1 {
                Self.swap32(src, step: 1, dst, count, alpha)
            } else {
                Self.swap32(src, step: step, dst, count, alpha)
            }
        case .rgb565(let redHigh):
            switch (redHigh, step == 1) {
            case (true, true): Self.to565(src, step: 1, dst, count, redHigh: true)
            case (true, false): Self.to565(src, step: step, dst, count, redHigh: true)
            case (false, true): Self.to565(src, step: 1, dst, count, redHigh: false)
            case (false, false): Self.to565(src, step: step, dst, count, redHigh: false)
            }
        case .rgb565Dithered(let redHigh):
            switch (redHigh, step == 1) {
            case (true, true): Self.to565Dithered(src, step: 1, dst, count, x: x, y: y, redHigh: true)
            case (true, false): Self.to565Dithered(src, step: step, dst, count, x: x, y: y, redHigh: true)
            case (false, true): Self.to565Dithered(src, step: 1, dst, count, x: x, y: y, redHigh: false)
            case (false, false): Self.to565Dithered(src, step: step, dst, count, x: x, y: y, redHigh: false)
            }
        case .rgb888(let redHigh):
            switch (redHigh, step == 1) {
            case (true, true): Self.to888(src, step: 1, dst, count, redHigh: true)
            case (true, false): Self.to888(src, step: step, dst, count, redHigh: true)
            case (false, true): Self.to888(src, step: 1, dst, count, redHigh: false)
            case (false, false): Self.to888(src, step: step, dst, count, redHigh: false)
            }
        case .generic(let layout):
            layout.run(src, step: step, dst, count, x: x, y: y)
        }
    }

    // The loops below use wrapping arithmetic on raw pointers and are always inlined into a call
    // with a constant `step` / `redHigh`, so that the unit-stride case is vectorised like C -O3.

    @inline(__always)
    static func or32(_ src: UnsafePointer<UInt32>, step: Int, _ dst: UnsafeMutableRawPointer, _ n: Int,
                     _ alpha: UInt32) {
        let d = dst.assumingMemoryBound(to: UInt32.self)
        var i = 0
        while i < n { d[i] = src[i &* step] | alpha; i &+= 1 }
    }

    @inline(__always)
    static func swap32(_ src: UnsafePointer<UInt32>, step: Int, _ dst: UnsafeMutableRawPointer, _ n: Int,
                       _ alpha: UInt32) {
        let d = dst.assumingMemoryBound(to: UInt32.self)
        var i = 0
        while i < n {
            let p = src[i &* step]
            d[i] = (p & 0xFF00_FF00) | ((p &>> 16) & 0xFF) | ((p & 0xFF) &<< 16) | alpha
            i &+= 1
        }
    }

    @inline(__always)
    static func to565(_ src: UnsafePointer<UInt32>, step: Int, _ dst: UnsafeMutableRawPointer, _ n: Int,
                      redHigh: Bool) {
        let d = dst.assumingMemoryBound(to: UInt16.self)
        var i = 0
        while i < n {
            let p = src[i &* step]
            let v: UInt32
            if redHigh {
                v = ((p &>> 8) & 0xF800) | ((p &>> 5) & 0x07E0) | ((p &>> 3) & 0x001F)
            } else {
                v = ((p &<< 8) & 0xF800) | ((p &>> 5) & 0x07E0) | ((p &>> 19) & 0x001F)
            }
            d[i] = UInt16(truncatingIfNeeded: v)
            i &+= 1
        }
    }

    @inline(__always)
    static func to565Dithered(_ src: UnsafePointer<UInt32>, step: Int, _ dst: UnsafeMutableRawPointer, _ n: Int,
                              x: Int, y: Int, redHigh: Bool) {
        let d = dst.assumingMemoryBound(to: UInt16.self)
        // Thresholds for 5-bit channels (3 bits dropped) and the 6-bit green (2 dropped), by i & 3.
        let t5 = ditherRow(y: y, x: x, shift: 3), t6 = ditherRow(y: y, x: x, shift: 2)
        @inline(__always) func pixel(_ p: UInt32, _ d5: UInt32, _ d6: UInt32) -> UInt16 {
            // (sample + threshold) >> dropped bits is at most one past the top level (255 + 7 >> 3
            // is 32, 255 + 3 >> 2 is 64); subtracting the level's top bit clamps it without a compare.
            var r = (((p &>> 16) & 0xFF) &+ d5) &>> 3
            var g = (((p &>> 8) & 0xFF) &+ d6) &>> 2
            var b = ((p & 0xFF) &+ d5) &>> 3
            r &-= r &>> 5
            g &-= g &>> 6
            b &-= b &>> 5
            let v = redHigh ? (r &<< 11) | (g &<< 5) | b : (b &<< 11) | (g &<< 5) | r
            return UInt16(truncatingIfNeeded: v)
        }
        var i = 0
        while i &+ 4 <= n {
            let s = src + i &* step
            d[i] = pixel(s[0], t5.0, t6.0)
            d[i &+ 1] = pixel(s[step], t5.1, t6.1)
            d[i &+ 2] = pixel(s[2 &* step], t5.2, t6.2)
            d[i &+ 3] = pixel(s[3 &* step], t5.3, t6.3)
            i &+= 4
        }
        if i < n { d[i] = pixel(src[i &* step], t5.0, t6.0); i &+= 1 }
        if i < n { d[i] = pixel(src[i &* step], t5.1, t6.1); i &+= 1 }
        if i < n { d[i] = pixel(src[i &* step], t5.2, t6.2) }
    }

    @inline(__always)
    static func to888(_ src: UnsafePointer<UInt32>, step: Int, _ dst: UnsafeMutableRawPointer, _ n: Int,
                      redHigh: Bool) {
        let d = dst.assumingMemoryBound(to: UInt8.self)
        var i = 0
        var o = 0
        while i < n {
            let p = src[i &* step]
            let lo = redHigh ? p : p &>> 16, hi = redHigh ? p &>> 16 : p
            d[o] = UInt8(truncatingIfNeeded: lo)
            d[o &+ 1] = UInt8(truncatingIfNeeded: p &>> 8)
            d[o &+ 2] = UInt8(truncatingIfNeeded: hi)
            i &+= 1
            o &+= 3
        }
    }
}

/// The fallback for layouts without a specialised loop (XRGB1555, 32-bit formats with odd
/// offsets, 24-bit formats with short channels …): per-pixel shifts from variables.
private struct GenericLayout {
    /// Per channel: the source sample's position in XRGB8888, the bits dropped, the destination offset.
    var redOffset: UInt32, greenOffset: UInt32, blueOffset: UInt32
    var redDrop: UInt32, greenDrop: UInt32, blueDrop: UInt32
    var alpha: UInt32
    var bytesPerPixel: Int
    var dither: Bool

    init(_ f: ScanoutFormat, dither: Bool) {
        redOffset = UInt32(f.red.offset); greenOffset = UInt32(f.green.offset); blueOffset = UInt32(f.blue.offset)
        redDrop = UInt32(8 - f.red.length); greenDrop = UInt32(8 - f.green.length); blueDrop = UInt32(8 - f.blue.length)
        alpha = f.transp.mask
        bytesPerPixel = f.bytesPerPixel
        self.dither = dither && (redDrop | greenDrop | blueDrop) != 0
    }

    func run(_ src: UnsafePointer<UInt32>, step: Int, _ dst: UnsafeMutableRawPointer, _ n: Int, x: Int, y: Int) {
        switch bytesPerPixel {
        case 2: convert(src, step: step, dst, n, x: x, y: y) { d, o, v in
            d.storeBytes(of: UInt16(truncatingIfNeeded: v), toByteOffset: o &* 2, as: UInt16.self)
        }
        case 3: convert(src, step: step, dst, n, x: x, y: y) { d, o, v in
            d.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: o &* 3, as: UInt8.self)
            d.storeBytes(of: UInt8(truncatingIfNeeded: v &>> 8), toByteOffset: o &* 3 &+ 1, as: UInt8.self)
            d.storeBytes(of: UInt8(truncatingIfNeeded: v &>> 16), toByteOffset: o &* 3 &+ 2, as: UInt8.self)
        }
        default: convert(src, step: step, dst, n, x: x, y: y) { d, o, v in
            d.storeBytes(of: v, toByteOffset: o &* 4, as: UInt32.self)
        }
        }
    }

    @inline(__always)
    private func convert(_ src: UnsafePointer<UInt32>, step: Int, _ dst: UnsafeMutableRawPointer, _ n: Int,
                         x: Int, y: Int, store: (UnsafeMutableRawPointer, Int, UInt32) -> Void) {
        let none: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        let tr = dither ? ditherRow(y: y, x: x, shift: Int(redDrop)) : none
        let tg = dither ? ditherRow(y: y, x: x, shift: Int(greenDrop)) : none
        let tb = dither ? ditherRow(y: y, x: x, shift: Int(blueDrop)) : none
        @inline(__always) func pixel(_ p: UInt32, _ dr: UInt32, _ dg: UInt32, _ db: UInt32) -> UInt32 {
            let r = min(((p &>> 16) & 0xFF) &+ dr, 255) &>> redDrop
            let g = min(((p &>> 8) & 0xFF) &+ dg, 255) &>> greenDrop
            let b = min((p & 0xFF) &+ db, 255) &>> blueDrop
            return (r &<< redOffset) | (g &<< greenOffset) | (b &<< blueOffset) | alpha
        }
        var i = 0
        while i &+ 4 <= n {
            let s = src + i &* step
            store(dst, i, pixel(s[0], tr.0, tg.0, tb.0))
            store(dst, i &+ 1, pixel(s[step], tr.1, tg.1, tb.1))
            store(dst, i &+ 2, pixel(s[2 &* step], tr.2, tg.2, tb.2))
            store(dst, i &+ 3, pixel(s[3 &* step], tr.3, tg.3, tb.3))
            i &+= 4
        }
        if i < n { store(dst, i, pixel(src[i &* step], tr.0, tg.0, tb.0)); i &+= 1 }
        if i < n { store(dst, i, pixel(src[i &* step], tr.1, tg.1, tb.1)); i &+= 1 }
        if i < n { store(dst, i, pixel(src[i &* step], tr.2, tg.2, tb.2)) }
    }
}
