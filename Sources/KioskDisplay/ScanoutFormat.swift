// SPDX-License-Identifier: Apache-2.0
import CKioskSys

/// The pixel layout of scanout memory, described the way fbdev describes it: bits per pixel and
/// one bitfield (offset, length) per channel, as in `struct fb_var_screeninfo` (linux/fb.h).
///
/// A pixel is a little-endian integer of ``bitsPerPixel`` bits (16, 24 or 32); a channel of
/// length *n* at offset *o* holds the top *n* bits of the 8-bit sample in bits `o ..< o + n`.
/// So RGB565 (red 11/5, green 5/6, blue 0/5) is one `UInt16` per pixel, and RGB888 at 24 bits
/// per pixel (red at offset 16) is the bytes B, G, R in memory.
///
/// ``transp`` is the alpha (or "X") field; when its length is 0 the format has no alpha.
/// Each colour channel may be 1 to 8 bits long; longer fields (10-bit formats) are refused by
/// ``validate(device:)``.
public struct ScanoutFormat: Equatable, Sendable, CustomStringConvertible {
    /// One channel's place in the pixel: `struct fb_bitfield` without `msb_right` (which must be 0).
    public struct Bitfield: Equatable, Sendable {
        /// Bit offset of the channel's least significant bit in the pixel value.
        public var offset: Int
        /// Number of bits; 0 means the channel is absent (only allowed for ``ScanoutFormat/transp``).
        public var length: Int

        public init(offset: Int, length: Int) { self.offset = offset; self.length = length }

        /// The mask of the channel's bits in the pixel value (0 for a zero-length field).
        public var mask: UInt32 {
            length <= 0 ? 0 : UInt32(truncatingIfNeeded: ((1 << length) - 1) << offset)
        }
    }

    /// Bits per pixel: 16, 24 or 32 (`bits_per_pixel`).
    public var bitsPerPixel: Int
    /// Where red, green, blue and alpha ("transp") live in the pixel value.
    public var red: Bitfield, green: Bitfield, blue: Bitfield, transp: Bitfield

    /// A format with the given fields, not checked; see ``validate(device:)``.
    public init(bitsPerPixel: Int, red: Bitfield, green: Bitfield, blue: Bitfield,
                transp: Bitfield = Bitfield(offset: 0, length: 0)) {
        self.bitsPerPixel = bitsPerPixel
        self.red = red; self.green = green; self.blue = blue; self.transp = transp
    }

    /// The format an fbdev driver reports in `struct fb_var_screeninfo` (from FBIOGET_VSCREENINFO),
    /// validated. `device` names the device in errors.
    /// - Throws: ``DisplayError/unsupportedFormat(device:reason:)`` for a bit depth other than 16, 24 or
    ///   32, `msb_right` bitfields, or bitfields that overlap, leave the pixel or exceed 8 bits.
    public init(_ info: fb_var_screeninfo, device: String) throws(DisplayError) {
        for field in [info.red, info.green, info.blue, info.transp] where field.msb_right != 0 {
            throw .unsupportedFormat(device: device, reason: "colour bitfields with msb_right set are not supported")
        }
        func bitfield(_ f: fb_bitfield) -> Bitfield { Bitfield(offset: Int(f.offset), length: Int(f.length)) }
        self.init(bitsPerPixel: Int(info.bits_per_pixel), red: bitfield(info.red), green: bitfield(info.green),
                  blue: bitfield(info.blue), transp: bitfield(info.transp))
        try validate(device: device)
    }

    /// Bytes per pixel: 2, 3 or 4.
    public var bytesPerPixel: Int { bitsPerPixel / 8 }

    /// True when the format has an alpha field (``transp`` length > 0), which the writer fills with ones.
    public var hasAlpha: Bool { transp.length > 0 }

    /// The same format with the red and blue fields exchanged (a panel wired BGR).
    public var swappingRedBlue: ScanoutFormat {
        var f = self
        swap(&f.red, &f.blue)
        return f
    }

    /// Checks that the writer can produce this format.
    /// - Throws: ``DisplayError/unsupportedFormat(device:reason:)`` naming the bad value: bits per pixel
    ///   other than 16, 24, 32; a colour field of length 0 or more than 8 bits; a field outside the
    ///   pixel; fields that overlap.
    public func validate(device: String) throws(DisplayError) {
        guard bitsPerPixel == 16 || bitsPerPixel == 24 || bitsPerPixel == 32 else {
            throw .unsupportedFormat(device: device,
                               reason: "\(bitsPerPixel) bits per pixel is not supported (16, 24 and 32 are)")
        }
        let fields = [("red", red), ("green", green), ("blue", blue), ("transp", transp)]
        for (index, (name, field)) in fields.enumerated() {
            if name == "transp" && field.length == 0 { continue }
            guard (1...8).contains(field.length), field.offset >= 0, field.offset + field.length <= bitsPerPixel else {
                throw .unsupportedFormat(device: device, reason: "\(name) bitfield offset \(field.offset) "
                                   + "length \(field.length) does not fit a \(bitsPerPixel)-bit pixel with 1 to 8 bits"
                                   + " per channel")
            }
            if let (other, earlier) = fields[..<index].first(where: { $0.1.mask & field.mask != 0 }) {
                throw .unsupportedFormat(device: device, reason: "\(name) bitfield offset \(field.offset) "
                                   + "length \(field.length) overlaps \(other) "
                                   + "(offset \(earlier.offset) length \(earlier.length))")
            }
        }
    }

    /// A DRM-fourcc-like name built from the fields, most significant first, with `X` for bits that
    /// belong to no channel: "RGB565", "BGR565", "XRGB8888", "ARGB8888", "RGB888", "XRGB1555".
    public var name: String {
        var fields: [(letter: Character, field: Bitfield)] = [("R", red), ("G", green), ("B", blue)]
        if transp.length > 0 { fields.append(("A", transp)) }
        fields.sort { $0.field.offset > $1.field.offset }
        var letters = "", lengths = ""
        var top = bitsPerPixel
        for (letter, field) in fields {
            let end = field.offset + field.length
            if end < top { letters.append("X"); lengths += String(top - end) }
            letters.append(letter); lengths += String(field.length)
            top = field.offset
        }
        if top > 0 { letters.append("X"); lengths += String(top) }
        return letters + lengths
    }

    /// ``name`` and the bit depth, e.g. `RGB565 (16 bpp)`.
    public var description: String { "\(name) (\(bitsPerPixel) bpp)" }

    // MARK: Common layouts (offsets as fbdev drivers report them, little-endian pixel values)

    /// 32 bpp, bytes B, G, R, X in memory; no alpha (transp length 0). Same layout as ``Bitmap``.
    public static let xrgb8888 = ScanoutFormat(bitsPerPixel: 32, red: .init(offset: 16, length: 8),
                                               green: .init(offset: 8, length: 8), blue: .init(offset: 0, length: 8))
    /// 32 bpp, bytes R, G, B, X in memory; no alpha.
    public static let xbgr8888 = ScanoutFormat(bitsPerPixel: 32, red: .init(offset: 0, length: 8),
                                               green: .init(offset: 8, length: 8), blue: .init(offset: 16, length: 8))
    /// 32 bpp, bytes B, G, R, A in memory; alpha (transp offset 24, length 8) is written as 0xFF.
    public static let argb8888 = ScanoutFormat(bitsPerPixel: 32, red: .init(offset: 16, length: 8),
                                               green: .init(offset: 8, length: 8), blue: .init(offset: 0, length: 8),
                                               transp: .init(offset: 24, length: 8))
    /// 16 bpp, `UInt16` RRRRRGGGGGGBBBBB (red 11/5, green 5/6, blue 0/5).
    public static let rgb565 = ScanoutFormat(bitsPerPixel: 16, red: .init(offset: 11, length: 5),
                                             green: .init(offset: 5, length: 6), blue: .init(offset: 0, length: 5))
    /// 16 bpp, `UInt16` BBBBBGGGGGGRRRRR (blue 11/5, green 5/6, red 0/5).
    public static let bgr565 = ScanoutFormat(bitsPerPixel: 16, red: .init(offset: 0, length: 5),
                                             green: .init(offset: 5, length: 6), blue: .init(offset: 11, length: 5))
    /// 24 bpp, bytes B, G, R in memory (fbdev reports red offset 16, blue offset 0).
    public static let rgb888 = ScanoutFormat(bitsPerPixel: 24, red: .init(offset: 16, length: 8),
                                             green: .init(offset: 8, length: 8), blue: .init(offset: 0, length: 8))
    /// 24 bpp, bytes R, G, B in memory (red offset 0, blue offset 16).
    public static let bgr888 = ScanoutFormat(bitsPerPixel: 24, red: .init(offset: 0, length: 8),
                                             green: .init(offset: 8, length: 8), blue: .init(offset: 16, length: 8))
}
