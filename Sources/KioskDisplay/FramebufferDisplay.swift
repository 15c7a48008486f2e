// SPDX-License-Identifier: Apache-2.0
import CKioskSys
import Glibc
import KioskCore
import KioskSystem

/// The Linux framebuffer (`/dev/fb*`, docs/displays.md): the geometry the driver reports, the
/// framebuffer memory mapped, frames converted into it by ``ScanoutWriter``.
///
/// **Whole frames only.** When the virtual screen holds two pages (`yres_virtual >= 2 * yres`,
/// see ``FramebufferGeometry/allowsPageFlip``) each frame is written into the hidden page and then
/// shown with FBIOPAN_DISPLAY. Otherwise, or once a pan has failed, the frame (already composed
/// off screen by the caller, so it is the shadow buffer) is converted into the visible page in one
/// pass; nothing is ever drawn there piecemeal.
///
/// **Files standing in for devices.** ``open(path:geometry:rotation:swapRedBlue:dither:)`` drives a
/// regular file with a given geometry through the same present path; since a file cannot pan, the
/// pan ioctl is skipped and ``visibleYOffset`` records the page that would be on screen, so
/// consecutive frames alternate between the two pages exactly as on a device.
///
/// **Ownership.** The display owns the descriptor and the mapping (`mmap` of the framebuffer
/// memory, `MAP_SHARED`) until ``restore()`` or deinit, which pans back to the original `yoffset`,
/// unmaps and closes. Frames are borrowed for the duration of ``present(_:showTime:)`` only.
public final class FramebufferDisplay: Display, PixelDimmable {
    /// Logical width in pixels (the panel's height for 90 and 270).
    public let width: Int
    /// Logical height in pixels.
    public let height: Int
    /// The panel: `xres` in pixels.
    public var panelWidth: Int { geometry.xres }
    /// The panel: `yres` in pixels.
    public var panelHeight: Int { geometry.yres }
    /// The device or file path.
    public let path: String
    /// The geometry as reported (or given) at open time.
    public let geometry: FramebufferGeometry
    /// The scanout pixel format, as the driver reports it (before any red/blue swap).
    public let format: ScanoutFormat
    /// Clockwise rotation applied while copying (see ``ScanoutWriter``).
    public let rotation: Rotation
    /// Splits the scanout conversion by rows across cores; nil: this thread alone.
    public var rows: RowSplitter?
    /// The pixels dimmed in the copy to the framebuffer (``PixelDimmable``, docs/power.md).
    public var pixelBrightness: PixelBrightness = .full
    /// True when red and blue are exchanged for a panel wired BGR.
    public let swapRedBlue: Bool
    /// True when channels of fewer than 8 bits are ordered-dithered.
    public let dither: Bool
    /// fbdev has no vertical-blank pacing here: the frame loop paces fades itself.
    public var pacesFrames: Bool { false }
    /// A screen on a VT with FBIOBLANK, one page shown at a time.
    public var abilities: DisplayAbilities { .consoleScreen }

    public func convertRows(with splitter: RowSplitter) { rows = splitter }

    /// True while frames go to the hidden page and are shown by panning.
    public private(set) var isPageFlipping: Bool
    /// The `yoffset` (in rows of the virtual screen) of the page on screen: after a pan, the
    /// page it showed; on a regular file, the page a device would show.
    public private(set) var visibleYOffset: Int
    /// Why page flipping was given up (the failed FBIOPAN_DISPLAY), for the log; nil otherwise.
    public private(set) var panFailure: DisplayError?
    /// True between ``release()`` and ``acquire()``: the VT is switched away and the console
    /// draws into the same memory, so nothing is written.
    public private(set) var isReleased = false
    /// True while the screen is blanked (``setPower(on:)``).
    public private(set) var isPoweredOff = false

    private let fd: FileDescriptor
    private let isCharacterDevice: Bool
    /// The start of the mapping and its length in bytes (nil once unmapped).
    private var mapping: UnsafeMutableRawPointer?
    private let mappingLength: Int
    /// Framebuffer memory: the mapping plus the sub-page offset of `smem_start`.
    private let memory: UnsafeMutableRawPointer
    private let originalYOffset: Int
    /// The variable screen info passed to FBIOPAN_DISPLAY (read from the device on first use).
    private var panInfo: fb_var_screeninfo?

    /// Opens an fbdev device: reads FBIOGET_VSCREENINFO and FBIOGET_FSCREENINFO, checks the layout,
    /// maps `smem_len` bytes (or `line_length * yres_virtual`) and prepares page flipping when
    /// `yres_virtual` allows it.
    /// - Parameters:
    ///   - path: the device, `/dev/fb0` by default.
    ///   - rotation: clockwise rotation; ``width``/``height`` are the rotated (logical) size.
    ///   - swapRedBlue: exchange red and blue (panels wired BGR).
    ///   - dither: ordered dithering for channels under 8 bits (RGB565).
    /// - Throws: ``DisplayError/noFramebuffer(_:)`` when the device does not exist
    ///   (`open /dev/fb0: No such file or directory (errno 2)`); ``DisplayError/system(_:advice:)`` for a
    ///   failed open (permission denied names the group to join, normally `video`), ioctl or mmap;
    ///   ``DisplayError/unsupportedFormat(device:reason:)`` for a layout that cannot be drawn (bits per
    ///   pixel other than 16/24/32 with the value, a visual other than TRUECOLOR, FOURCC modes).
    public static func open(path: String = "/dev/fb0", rotation: Rotation, swapRedBlue: Bool,
                            dither: Bool = true) throws(DisplayError) -> FramebufferDisplay {
        let fd = try openFile(path)
        var variable = fb_var_screeninfo(), fixed = fb_fix_screeninfo()
        do {
            try fd.ioctl("FBIOGET_VSCREENINFO", UInt(kc_FBIOGET_VSCREENINFO), &variable)
            try fd.ioctl("FBIOGET_FSCREENINFO", UInt(kc_FBIOGET_FSCREENINFO), &fixed)
        } catch {
            throw .system(error)
        }
        guard fixed.type == FB_TYPE_PACKED_PIXELS else {
            throw .unsupportedFormat(device: path, reason: "framebuffer type \(fixed.type) is not packed pixels")
        }
        guard variable.grayscale == 0 else {
            throw .unsupportedFormat(device: path, reason: variable.grayscale == 1
                               ? "grayscale framebuffers are not supported"
                               : "FOURCC framebuffer modes are not supported")
        }
        guard fixed.visual == FB_VISUAL_TRUECOLOR else {
            let name = [0: "MONO01", 1: "MONO10", 3: "PSEUDOCOLOR", 4: "DIRECTCOLOR", 5: "STATIC_PSEUDOCOLOR",
                        6: "FOURCC"][Int(fixed.visual)] ?? String(fixed.visual)
            throw .unsupportedFormat(device: path, reason: "visual \(name) at \(variable.bits_per_pixel) bits per pixel"
                               + " is not supported (TRUECOLOR is)")
        }
        let geometry = FramebufferGeometry(variable: variable, fixed: fixed)
        // Like fbi: smem_start need not be page-aligned; the mapping starts at the page below it.
        let pageOffset = Int(fixed.smem_start) & (Int(sysconf(Int32(_SC_PAGESIZE))) - 1)
        return try FramebufferDisplay(fd: fd, geometry: geometry, isCharacterDevice: true, pageOffset: pageOffset,
                                      panInfo: variable, rotation: rotation, swapRedBlue: swapRedBlue, dither: dither)
    }

    /// Opens a memory-mappable file (a regular file standing in for `/dev/fb0` in tests, or a
    /// device whose reported geometry is wrong) with the given geometry. Presenting goes through
    /// exactly the same code as a device opened by ``open(path:rotation:swapRedBlue:dither:)``;
    /// only the FBIOPAN_DISPLAY ioctl is skipped when the descriptor is not a character device.
    /// - Throws: ``DisplayError/noFramebuffer(_:)`` when `path` does not exist, ``DisplayError/system(_:advice:)``
    ///   for a failed open, stat or mmap, ``DisplayError/badGeometry(device:reason:)`` (or
    ///   ``DisplayError/unsupportedFormat(device:reason:)``) for an invalid geometry, and for a
    ///   regular file shorter than ``FramebufferGeometry/memoryLength``.
    public static func open(path: String, geometry: FramebufferGeometry, rotation: Rotation, swapRedBlue: Bool,
                            dither: Bool) throws(DisplayError) -> FramebufferDisplay {
        let fd = try openFile(path)
        var info = stat()
        do {
            try syscall("fstat", path: path) { fstat(fd.rawValue, &info) }
        } catch {
            throw .system(error)
        }
        let isCharacterDevice = (info.st_mode & S_IFMT) == S_IFCHR
        if (info.st_mode & S_IFMT) == S_IFREG && Int(info.st_size) < geometry.memoryLength {
            throw .badGeometry(device: path, reason: "file is \(info.st_size) bytes, the geometry needs"
                               + " \(geometry.memoryLength)")
        }
        return try FramebufferDisplay(fd: fd, geometry: geometry, isCharacterDevice: isCharacterDevice, pageOffset: 0,
                                      panInfo: nil, rotation: rotation, swapRedBlue: swapRedBlue, dither: dither)
    }

    private init(fd: FileDescriptor, geometry: FramebufferGeometry, isCharacterDevice: Bool, pageOffset: Int,
                 panInfo: fb_var_screeninfo?, rotation: Rotation, swapRedBlue: Bool,
                 dither: Bool) throws(DisplayError) {
        try geometry.validate(device: fd.path)
        let length = pageOffset + geometry.memoryLength
        let address: Int
        do {
            address = try syscall("mmap", path: fd.path) {
                Int(bitPattern: mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd.rawValue, 0))
            }
        } catch {
            throw .system(error)
        }
        mapping = UnsafeMutableRawPointer(bitPattern: address)
        mappingLength = length
        memory = UnsafeMutableRawPointer(bitPattern: address)! + pageOffset
        self.fd = fd
        self.path = fd.path
        self.geometry = geometry
        self.format = geometry.format
        self.isCharacterDevice = isCharacterDevice
        self.panInfo = panInfo
        self.rotation = rotation
        self.swapRedBlue = swapRedBlue
        self.dither = dither
        (width, height) = rotation.logicalSize(panelWidth: geometry.xres, panelHeight: geometry.yres)
        originalYOffset = geometry.yoffset
        visibleYOffset = geometry.yoffset
        // Two pages at rows 0 and yres; flipping starts from whichever of them is on screen.
        isPageFlipping = geometry.allowsPageFlip && (geometry.yoffset == 0 || geometry.yoffset == geometry.yres)
    }

    deinit { restore() }

    /// `fbdev PATH: 1366x768 RGB565 (16 bpp), line_length 2752, page flipping, rotation 90 -> 768x1366, dithered`.
    public var summary: String {
        var s = "fbdev \(path): \(geometry.xres)x\(geometry.yres) \(format), line_length \(geometry.lineLength)"
        s += isPageFlipping ? ", page flipping (yres_virtual \(geometry.yresVirtual))" : ", single page"
        if rotation != .none { s += ", rotation \(rotation.rawValue) -> \(width)x\(height)" }
        if dither && [format.red, format.green, format.blue].contains(where: { $0.length < 8 }) { s += ", dithered" }
        if swapRedBlue { s += ", red/blue swapped" }
        return s
    }

    /// Converts `frame` into the hidden page and pans to it, or (single page) into the visible page.
    /// A failed pan ends page flipping for good: the frame is written to the visible page at once
    /// and ``panFailure`` keeps the reason.
    /// - Precondition: `frame` is ``width`` x ``height`` and the display has not been restored.
    /// - Throws: nothing at present (a failed pan falls back); declared for the protocol.
    public func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        precondition(frame.width == width && frame.height == height,
                     "frame \(frame.width)x\(frame.height) does not match the display's \(width)x\(height)")
        precondition(mapping != nil, "present after restore")
        if isReleased || isPoweredOff { return }
        guard isPageFlipping else {
            write(frame, page: visibleYOffset)
            return
        }
        let hidden = visibleYOffset == 0 ? geometry.yres : 0
        write(frame, page: hidden)
        do {
            try pan(to: hidden)
        } catch {
            panFailure = error
            isPageFlipping = false
            write(frame, page: visibleYOffset)
        }
    }

    /// Pans back to the `yoffset` found at open, unmaps the framebuffer and closes the device.
    /// Safe to call more than once.
    public func restore() {
        guard let start = mapping else { return }
        if isPoweredOff { try? blank(false) }
        if visibleYOffset != originalYOffset { try? pan(to: originalYOffset) }
        munmap(start, mappingLength)
        mapping = nil
        fd.close()
    }

    /// VT switched away: stops writing (the console draws into the same framebuffer now).
    public func release() throws(DisplayError) {
        guard mapping != nil else { return }
        isReleased = true
    }

    /// VT switched back: pans to this display's page again (the console may have panned), so
    /// that the next ``present(_:showTime:)``, which the caller makes at once, is seen whole.
    /// A failed pan ends page flipping as in ``present(_:showTime:)``; it does not throw.
    public func acquire() throws(DisplayError) {
        guard mapping != nil, isReleased else { return }
        isReleased = false
        if isPageFlipping {
            do { try pan(to: visibleYOffset) } catch { panFailure = error; isPageFlipping = false }
        }
    }

    /// Blanks the screen with FBIOBLANK FB_BLANK_POWERDOWN (4; the display is powered down, as
    /// DPMS off) or unblanks it with FB_BLANK_UNBLANK (0). The state is recorded even when the
    /// ioctl fails, so that the show still pauses and draws nothing while "off".
    /// Throws ``DisplayError/system(_:advice:)`` when FBIOBLANK fails: `ioctl FBIOBLANK PATH:
    /// Inappropriate ioctl for device (errno 25)` on a regular file (a warning for the log, not fatal).
    public func setPower(on: Bool) throws(DisplayError) {
        guard mapping != nil else { return }
        isPoweredOff = !on
        try blank(!on)
    }

    /// FBIOBLANK with FB_BLANK_POWERDOWN (`true`) or FB_BLANK_UNBLANK (`false`).
    private func blank(_ off: Bool) throws(DisplayError) {
        do {
            try fd.ioctl(off ? "FBIOBLANK FB_BLANK_POWERDOWN" : "FBIOBLANK FB_BLANK_UNBLANK", UInt(kc_FBIOBLANK),
                         value: off ? 4 : 0)
        } catch {
            throw .system(error)
        }
    }

    /// The visible page read back (``panelWidth`` x ``panelHeight``, after `--rotate`), converted
    /// from the framebuffer's pixel format to XRGB8888 (with `--swap-rb` undone, so the colours are
    /// the picture's). Throws ``DisplayError/nothingToReadBack(device:reason:)`` while released, blanked
    /// or after ``restore()``.
    public func screenImage() throws(DisplayError) -> Bitmap {
        if isReleased {
            throw .nothingToReadBack(device: path, reason: "the VT is switched away: nothing of ours is on the screen")
        }
        if isPoweredOff { throw .nothingToReadBack(device: path, reason: "the screen is off") }
        guard mapping != nil else { throw .nothingToReadBack(device: path, reason: "the framebuffer was given back") }
        let base = memory + visibleYOffset * geometry.lineLength + geometry.xoffset * (geometry.bitsPerPixel / 8)
        return ScanoutReader.read(from: UnsafeRawPointer(base), stride: geometry.lineLength,
                                  format: swapRedBlue ? format.swappingRedBlue : format,
                                  width: geometry.xres, height: geometry.yres)
    }

    /// Converts `frame` into the page whose top row is virtual row `y`, at the visible `xoffset`.
    private func write(_ frame: Bitmap, page y: Int) {
        let base = memory + y * geometry.lineLength + geometry.xoffset * (geometry.bitsPerPixel / 8)
        ScanoutWriter.copy(frame, to: base, stride: geometry.lineLength, format: format, rotation: rotation,
                           dither: dither, swapRedBlue: swapRedBlue, rows: rows, brightness: pixelBrightness)
    }

    /// Shows the page at virtual row `y` (FBIOPAN_DISPLAY on a device; bookkeeping only on a file).
    private func pan(to y: Int) throws(DisplayError) {
        if isCharacterDevice {
            do {
                var info: fb_var_screeninfo
                if let known = panInfo {
                    info = known
                } else {
                    info = fb_var_screeninfo()
                    try fd.ioctl("FBIOGET_VSCREENINFO", UInt(kc_FBIOGET_VSCREENINFO), &info)
                }
                info.xoffset = UInt32(geometry.xoffset)
                info.yoffset = UInt32(y)
                try fd.ioctl("FBIOPAN_DISPLAY", UInt(kc_FBIOPAN_DISPLAY), &info)
                panInfo = info
            } catch {
                throw .system(error)
            }
        }
        visibleYOffset = y
    }

    /// `open(path, O_RDWR)` with the errors a person can act on.
    private static func openFile(_ path: String) throws(DisplayError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(path, O_RDWR)
        } catch {
            throw openError(error)
        }
    }

    /// The ``DisplayError`` for a failed open: a missing device is ``DisplayError/noFramebuffer(_:)``;
    /// permission denied adds the group that owns the device (`video` on Debian) and how to join it.
    static func openError(_ error: SystemError) -> DisplayError {
        switch error.errno {
        case ENOENT, ENODEV, ENXIO:
            return .noFramebuffer(error)
        case EACCES, EPERM:
            let group = owningGroup(of: error.path) ?? "video"
            return .system(error, advice: "the user needs to be in the `\(group)` group that owns"
                           + " \(error.path) (usermod -aG \(group) USER, then log in again)")
        default:
            return .system(error)
        }
    }

    /// The name of the group that owns `path`, nil when it cannot be found.
    private static func owningGroup(of path: String) -> String? {
        var info = stat()
        guard (try? syscall("stat", path: path, { stat(path, &info) })) != nil else { return nil }
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getgrgid_r(info.st_gid, &entry, &buffer, buffer.count, &result) == 0, let found = result else {
            return nil
        }
        return String(cString: found.pointee.gr_name)
    }
}
