// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// Reads scanout memory back into a ``Bitmap``: the inverse of ``ScanoutWriter``'s pixel-format
/// conversion, for the control socket's `screenshot` (what the panel shows, after `--rotate`).
public enum ScanoutReader {
    /// Copies `width` x `height` pixels of scanout memory at `base` (rows `stride` bytes apart,
    /// pixels in `format`: 16, 24 or 32 bits, little-endian values with fbdev bitfields) into a
    /// new XRGB8888 bitmap (bytes B, G, R, X; X = 0xFF). A channel of n < 8 bits is widened by
    /// repeating its bits (`v << (8 − n) | v >> (2n − 8)` for n ≥ 4), so 5-bit 31 gives 255 and
    /// 0 gives 0, as pixman widens RGB565. The memory is only read, during the call.
    public static func read(from base: UnsafeRawPointer, stride: Int, format: ScanoutFormat,
                            width: Int, height: Int) -> Bitmap {
        let out = Bitmap(uninitializedWidth: width, height: height)
        if format == .xrgb8888 || format == .argb8888 {
            for y in 0..<height {
                let src = (base + y * stride).assumingMemoryBound(to: UInt32.self), dst = out.row(y)
                for x in 0..<width { dst[x] = src[x] | 0xFF00_0000 }
            }
            return out
        }
        let widen = [format.red, format.green, format.blue].map { field in
            (0..<(1 << field.length)).map { v -> UInt32 in
                var wide = 0, bits = 0
                while bits < 8 { wide = wide << field.length | v; bits += field.length }
                return UInt32(wide >> (bits - 8))
            }
        }
        let bytes = format.bytesPerPixel
        for y in 0..<height {
            let row = base + y * stride, dst = out.row(y)
            for x in 0..<width {
                let p = row + x * bytes
                var v = UInt32(p.load(as: UInt8.self)) | UInt32(p.load(fromByteOffset: 1, as: UInt8.self)) << 8
                if bytes > 2 { v |= UInt32(p.load(fromByteOffset: 2, as: UInt8.self)) << 16 }
                if bytes > 3 { v |= UInt32(p.load(fromByteOffset: 3, as: UInt8.self)) << 24 }
                let r = widen[0][Int((v >> UInt32(format.red.offset)) & ((1 << UInt32(format.red.length)) - 1))]
                let g = widen[1][Int((v >> UInt32(format.green.offset)) & ((1 << UInt32(format.green.length)) - 1))]
                let b = widen[2][Int((v >> UInt32(format.blue.offset)) & ((1 << UInt32(format.blue.length)) - 1))]
                dst[x] = 0xFF00_0000 | r << 16 | g << 8 | b
            }
        }
        return out
    }
}
