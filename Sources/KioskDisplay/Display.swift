// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// Where frames go: DRM/KMS, the Linux framebuffer, or files (docs/displays.md "Offscreen").
///
/// The frame loop composes each frame at the display's *logical* size (``width`` x ``height``,
/// already swapped for a 90/270 rotation) as an XRGB8888 ``Bitmap`` and hands it to
/// ``present(_:showTime:)``, which copies it to scanout (converting the pixel format and
/// rotating on the way) so that it appears whole, never half drawn.
public protocol Display: AnyObject {
    /// Logical width in pixels: what the compositor draws.
    var width: Int { get }
    /// Logical height in pixels.
    var height: Int { get }
    /// The panel as mounted, pixels: the scanout size (DRM mode, fbdev `xres` x `yres`), not
    /// turned by `--rotate`; the logical size is this turned by the rotation
    /// (``KioskCore/Rotation/logicalSize(panelWidth:panelHeight:)``). Touch maps onto it.
    var panelWidth: Int { get }
    /// Panel height in pixels.
    var panelHeight: Int { get }
    /// One line for the log: backend, device, mode, pixel format.
    var summary: String { get }
    /// True when ``present(_:showTime:)`` waits for vertical blank (DRM page flips), so the
    /// frame loop needs no timer of its own to pace a fade.
    var pacesFrames: Bool { get }
    /// Copies `frame` (XRGB8888, ``width`` x ``height``; borrowed for the call only) to the screen.
    /// `showTime` is the show time in milliseconds (the offscreen backend names files after it).
    /// Throws ``DisplayError``.
    func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError)
    /// Puts back what opening the display changed (the previous CRTC, the fbdev pan offset).
    /// Safe to call more than once.
    func restore()

    /// Gives the screen up because the VT was switched away (VT_PROCESS release, see
    /// ``ConsoleGuard``): waits for a pending flip, then stops drawing; DRM also drops DRM master
    /// (drmDropMaster) so the console or another session can set its own mode. Until
    /// ``acquire()``, ``present(_:showTime:)`` draws nothing (it returns at once).
    /// Idempotent. The display counts as released even when it throws: the error (e.g. a
    /// failed drmDropMaster) is for the log.
    func release() throws(DisplayError)

    /// Takes the screen back after ``release()`` (the VT was switched back to): DRM becomes
    /// master again (drmSetMaster) and sets the CRTC with the mode and the last frame shown;
    /// fbdev pans back to its page. The caller then presents the current scene at once (the
    /// other VT drew over the screen). Does nothing when not released.
    /// Throws ``DisplayError`` when the screen cannot be taken back; it then stays released.
    func acquire() throws(DisplayError)

    /// Turns the screen's power off (DRM: the connector's "DPMS" property to DRM_MODE_DPMS_OFF;
    /// fbdev: FBIOBLANK FB_BLANK_POWERDOWN) or on again (DPMS ON, FB_BLANK_UNBLANK). While it is
    /// off ``present(_:showTime:)`` draws nothing; after switching it on the caller presents the
    /// current scene again. ``restore()`` switches it back on. Throws ``DisplayError`` when the
    /// device cannot do it (e.g. FBIOBLANK on a regular file: ENOTTY); the display stays usable.
    func setPower(on: Bool) throws(DisplayError)

    /// What the screen shows now, as the panel shows it (docs/control-socket.md, `screenshot`):
    /// a new XRGB8888 bitmap the caller owns, read back from the buffer being scanned out (DRM:
    /// the dumb buffer last presented, on screen or flipped to at the next vertical blank; fbdev:
    /// the visible page, converted from its pixel format), ``panelWidth`` x ``panelHeight``
    /// (after `--rotate`); offscreen: the last frame written, as composed. Runs on the caller's
    /// thread (the frame loop's: it must not race a present).
    /// Throws ``DisplayError/unsupported(device:reason:)`` when nothing is on the screen: it is
    /// off, the VT is switched away, no frame was presented yet, or the backend cannot read back.
    func screenImage() throws(DisplayError) -> Bitmap
}

public extension Display {
    /// Nothing to give up (offscreen, test doubles).
    func release() throws(DisplayError) {}
    /// Nothing to take back.
    func acquire() throws(DisplayError) {}
    /// No screen to switch off.
    func setPower(on: Bool) throws(DisplayError) {}
    /// Nothing to read back (test doubles).
    func screenImage() throws(DisplayError) -> Bitmap {
        throw .unsupported(device: summary, reason: "this display cannot read back what it shows")
    }
}

/// Why a display could not be opened or written. The description is the log line.
public enum DisplayError: Error, CustomStringConvertible, Sendable {
    /// A system call failed (open, ioctl, mmap …), with its path and errno, and advice for the
    /// person reading the log when there is some (the group to join for EACCES).
    case system(SystemError, advice: String? = nil)
    /// The device works but cannot be used as it is (unsupported bits per pixel, no connected connector …).
    case unsupported(device: String, reason: String)
    /// Nothing to show on: no DRM device, no fbdev (the text says what was tried).
    case noDisplay(String)
    /// Neither DRM nor fbdev could be used, at least one because of a failed call (a fixable
    /// problem, not hidden behind a fallback): both reasons.
    indirect case unusable(drm: DisplayError, fbdev: DisplayError)
    /// Writing a frame file failed (offscreen).
    case write(path: String, reason: String)

    public var description: String {
        switch self {
        case .system(let error, let advice?): return "\(error); \(advice)"
        case .system(let error, nil): return error.description
        case .unusable(let drm, let fbdev): return "no usable display: DRM: \(drm); fbdev: \(fbdev)"
        case .unsupported(let device, let reason): return "\(device): \(reason)"
        case .noDisplay(let s): return s
        case .write(let path, let reason): return "write \(path): \(reason)"
        }
    }
}

/// A display whose pixels can be dimmed on their way to the screen, for `--brightness` where
/// no backlight can be set (a TV on HDMI; docs/power.md): DRM and fbdev scale them in the copy
/// to scanout (``ScanoutWriter``), the offscreen backend in the frames it writes. The caller
/// presents the scene again after a change (a frame already on screen is not redrawn here).
/// Frames on KMS planes are not copied, so a dimmed scene is composed on the CPU.
public protocol PixelDimmable: AnyObject {
    /// The level applied to every frame presented from now on; `.full`: none.
    var pixelBrightness: PixelBrightness { get set }
}
