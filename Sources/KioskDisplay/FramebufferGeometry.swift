// SPDX-License-Identifier: Apache-2.0
import CKioskSys

/// What ``FramebufferDisplay`` needs from an fbdev device: the fields of `struct fb_var_screeninfo`
/// (FBIOGET_VSCREENINFO) and `struct fb_fix_screeninfo` (FBIOGET_FSCREENINFO) from linux/fb.h,
/// with the kernel's names in Swift spelling. Sizes and offsets are in pixels unless noted.
///
/// The visible screen is the `xres` x `yres` window at (`xoffset`, `yoffset`) of the
/// `xresVirtual` x `yresVirtual` virtual screen; row *y* of the virtual screen starts
/// `y * lineLength` bytes into the mapped memory.
public struct FramebufferGeometry: Equatable, Sendable {
    /// Visible width (`xres`).
    public var xres: Int
    /// Visible height (`yres`).
    public var yres: Int
    /// Virtual width (`xres_virtual`).
    public var xresVirtual: Int
    /// Virtual height (`yres_virtual`); at least `2 * yres` allows page flipping.
    public var yresVirtual: Int
    /// Left edge of the visible window in the virtual screen (`xoffset`).
    public var xoffset: Int
    /// Top edge of the visible window in the virtual screen (`yoffset`).
    public var yoffset: Int
    /// Bits per pixel (`bits_per_pixel`): 16, 24 or 32 are usable.
    public var bitsPerPixel: Int
    /// Red bitfield (`red`: offset and length in bits of the pixel value).
    public var red: ScanoutFormat.Bitfield
    /// Green bitfield (`green`).
    public var green: ScanoutFormat.Bitfield
    /// Blue bitfield (`blue`).
    public var blue: ScanoutFormat.Bitfield
    /// Alpha bitfield (`transp`); length 0 when there is no alpha.
    public var transp: ScanoutFormat.Bitfield
    /// Bytes per row of the virtual screen (`fb_fix_screeninfo.line_length`); often more than
    /// `xresVirtual * bitsPerPixel / 8`.
    public var lineLength: Int
    /// Length of the framebuffer memory in bytes (`fb_fix_screeninfo.smem_len`); 0 means
    /// `lineLength * yresVirtual`.
    public var smemLength: Int
    /// Rows the driver can pan by (`fb_fix_screeninfo.ypanstep`); 0 when it cannot pan vertically.
    public var ypanstep: Int

    /// A geometry from its parts. Defaults: the virtual screen is the visible one, no offsets,
    /// memory of `lineLength * yresVirtual` bytes, panning by one row.
    public init(xres: Int, yres: Int, xresVirtual: Int? = nil, yresVirtual: Int? = nil,
                xoffset: Int = 0, yoffset: Int = 0, format: ScanoutFormat, lineLength: Int,
                smemLength: Int = 0, ypanstep: Int = 1) {
        self.xres = xres; self.yres = yres
        self.xresVirtual = xresVirtual ?? xres; self.yresVirtual = yresVirtual ?? yres
        self.xoffset = xoffset; self.yoffset = yoffset
        bitsPerPixel = format.bitsPerPixel
        red = format.red; green = format.green; blue = format.blue; transp = format.transp
        self.lineLength = lineLength; self.smemLength = smemLength; self.ypanstep = ypanstep
    }

    /// The geometry a driver reports (FBIOGET_VSCREENINFO and FBIOGET_FSCREENINFO results).
    public init(variable v: fb_var_screeninfo, fixed f: fb_fix_screeninfo) {
        func bitfield(_ b: fb_bitfield) -> ScanoutFormat.Bitfield {
            .init(offset: Int(b.offset), length: Int(b.length))
        }
        xres = Int(v.xres); yres = Int(v.yres)
        xresVirtual = Int(v.xres_virtual); yresVirtual = Int(v.yres_virtual)
        xoffset = Int(v.xoffset); yoffset = Int(v.yoffset)
        bitsPerPixel = Int(v.bits_per_pixel)
        red = bitfield(v.red); green = bitfield(v.green); blue = bitfield(v.blue); transp = bitfield(v.transp)
        lineLength = Int(f.line_length); smemLength = Int(f.smem_len); ypanstep = Int(f.ypanstep)
    }

    /// The pixel format described by ``bitsPerPixel`` and the bitfields (not validated).
    public var format: ScanoutFormat {
        ScanoutFormat(bitsPerPixel: bitsPerPixel, red: red, green: green, blue: blue, transp: transp)
    }

    /// Bytes of framebuffer memory: ``smemLength``, or `lineLength * yresVirtual` when that is 0.
    public var memoryLength: Int { smemLength > 0 ? smemLength : lineLength * yresVirtual }

    /// True when the virtual screen holds two pages (`yresVirtual >= 2 * yres`) that the driver
    /// can pan between (`ypanstep` divides `yres`).
    public var allowsPageFlip: Bool {
        yresVirtual >= 2 * yres && ypanstep > 0 && yres % ypanstep == 0
            && xoffset + xres <= xresVirtual && memoryLength >= 2 * yres * lineLength
    }

    /// Checks that the geometry describes memory the display can draw into.
    /// - Throws: ``DisplayError/badGeometry(device:reason:)`` naming the bad value (or
    ///   ``DisplayError/unsupportedFormat(device:reason:)`` for the pixel format, see
    ///   ``ScanoutFormat/validate(device:)``), an empty screen, a visible window outside the virtual
    ///   screen, a `lineLength` shorter than a row, or memory too small for the rows shown.
    public func validate(device: String) throws(DisplayError) {
        try format.validate(device: device)
        let bpp = bitsPerPixel / 8
        guard xres > 0, yres > 0 else {
            throw .badGeometry(device: device, reason: "empty screen \(xres)x\(yres)")
        }
        guard xoffset >= 0, yoffset >= 0, xoffset + xres <= xresVirtual, yoffset + yres <= yresVirtual else {
            throw .badGeometry(device: device, reason: "visible \(xres)x\(yres) at \(xoffset),\(yoffset)"
                               + " is outside the virtual screen \(xresVirtual)x\(yresVirtual)")
        }
        guard lineLength >= (xoffset + xres) * bpp else {
            throw .badGeometry(device: device, reason: "line_length \(lineLength) bytes is shorter than"
                               + " \(xoffset + xres) pixels of \(bitsPerPixel) bits")
        }
        guard memoryLength >= (yoffset + yres) * lineLength else {
            throw .badGeometry(device: device, reason: "framebuffer memory of \(memoryLength) bytes is smaller than"
                               + " \(yoffset + yres) rows of \(lineLength) bytes")
        }
    }
}
