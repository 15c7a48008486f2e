// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// Where frames go: DRM/KMS, the Linux framebuffer, or files (docs/displays.md "Offscreen").
///
/// The frame loop composes each frame at the display's *logical* size (``width`` x ``height``,
/// already swapped for a 90/270 rotation) as an XRGB8888 ``Bitmap`` and hands it to
/// ``present(_:showTime:)``, which copies it to scanout (converting the pixel format and
/// rotating on the way) so that it appears whole, never half drawn.
///
/// What a display can do beyond that it says itself (``abilities``, ``reconnection``,
/// ``powerState``, ``frameFiles``): the frame loop and the program ask these, never the
/// concrete type, as kmscube's loop never learns which backend it has.
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
    /// Throws ``DisplayError/nothingToReadBack(device:reason:)`` when nothing is on the screen:
    /// it is off, the VT is switched away, no frame was presented yet, or the backend cannot read back.
    func screenImage() throws(DisplayError) -> Bitmap

    /// Whether ``present(layers:background:showTime:)`` may be tried now (DRM: atomic commits,
    /// planes allowed, no rotation, the screen ours and on; docs/planes.md). False (the default)
    /// for a display that only takes composed frames.
    var presentsLayers: Bool { get }
    /// Shows `layers` (bottom to top, logical pixels; see ``KioskCore/FrameLayer``) on the display's
    /// planes at the next vertical blank and waits for it, as ``present(_:showTime:)`` does with a
    /// frame: the display controller stacks and blends them, the CPU touches no pixel of the frame.
    /// Where the bottom layer does not cover the screen, a backdrop of `background` is put under
    /// the layers. Returns false when the display cannot show them so (too few planes, a format,
    /// alpha, a position or a scale the driver refuses: a TEST_ONLY commit said no, or
    /// framebuffers for the layers could not be made; always, by default): nothing changed on
    /// screen, and the caller composes the frame and presents it as a bitmap. Throws
    /// ``DisplayError`` as a present does.
    func present(layers: [FrameLayer], background: RGBColor, showTime: Int64) throws(DisplayError) -> Bool
    /// Makes the framebuffer of `bitmap` (a slot frame; borrowed for the call) ahead of its first
    /// use on a plane (one copy of its pixels), so that the frame that first shows it does not pay
    /// for it. Does nothing where layers are not presented (the default).
    func prepareLayer(_ bitmap: Bitmap)
    /// Splits the copy of each frame to scanout (the pixel format's conversion, the rotation) by
    /// rows across the threads of `splitter` from now on (DRM, fbdev; ``KioskCore/RowSplitter``).
    /// A display that copies nothing ignores it (the default).
    func convertRows(with splitter: RowSplitter)

    /// What this display can do (default: a real screen with no console of its own, no power
    /// states, one plane, one output: a test's display).
    var abilities: DisplayAbilities { get }
    /// Its device can go away and come back, maybe at another size (``ReopeningDRMDisplay``):
    /// the frame loop services it every turn. Nil (the default) for a display that stays.
    var reconnection: (any ReconnectingDisplay)? { get }
    /// The screen's power state as the device reports it now (DRM: the connector's DPMS
    /// property); nil (the default) when it has none or it cannot be read.
    var powerState: DisplayPowerState? { get }
    /// The files its frames were written to (offscreen); nil (the default) for a screen.
    var frameFiles: (any FrameFiles)? { get }
    /// Its outputs when it drives several, each at its own size (``MirroredDisplay``); nil
    /// (the default) for one.
    var outputSet: (any OutputSet)? { get }
}

/// What a display can do, for the frame loop and the program (``Display/abilities``).
/// Later backends fill in more: several outputs.
public struct DisplayAbilities: Equatable, Sendable {
    /// Frames go to files, not to a screen anyone watches (offscreen): a run may follow a
    /// virtual clock, and no touchscreen is looked for unless one is named.
    public var isVirtual: Bool
    /// It draws on the screen of a virtual terminal (DRM, fbdev): the console is switched to
    /// graphics mode for the show and VT switches are followed (``Display/release()``).
    public var ownsConsole: Bool
    /// It can switch the screen's power (``Display/setPower(on:)``: DPMS, FBIOBLANK).
    public var switchesPower: Bool
    /// Hardware planes a scene's layers can be put on (DRM atomic: the primary and the overlays
    /// of its CRTC; ``Display/present(layers:background:showTime:)``). 1: the primary plane
    /// only, every frame is composed on the CPU.
    public var planes: Int
    /// Outputs (connectors) it drives at once.
    public var outputs: Int

    public init(isVirtual: Bool = false, ownsConsole: Bool = false, switchesPower: Bool = false, planes: Int = 1,
                outputs: Int = 1) {
        self.isVirtual = isVirtual; self.ownsConsole = ownsConsole; self.switchesPower = switchesPower
        self.planes = planes; self.outputs = outputs
    }

    /// A screen on a VT with power states, one plane, one output (DRM, fbdev).
    public static let consoleScreen = DisplayAbilities(ownsConsole: true, switchesPower: true)
    /// Frame files (offscreen).
    public static let frameFiles = DisplayAbilities(isVirtual: true)
}

/// A screen's power state: DRM's DPMS levels (DRM_MODE_DPMS_ON = 0, STANDBY = 1, SUSPEND = 2,
/// OFF = 3, drm_mode.h). The description is the log's word: `On`, `Standby`, `Suspend`, `Off`.
public enum DisplayPowerState: UInt64, Sendable, CustomStringConvertible {
    case on = 0, standby = 1, suspend = 2, off = 3

    public var description: String {
        switch self {
        case .on: return "On"
        case .standby: return "Standby"
        case .suspend: return "Suspend"
        case .off: return "Off"
        }
    }
}

/// Frames written to files (``OffscreenDisplay``): where they go and how many there are.
public protocol FrameFiles: AnyObject {
    /// The directory the frames go to.
    var directory: String { get }
    /// How many frames were written so far.
    var framesWritten: Int { get }
    /// Deletes the frame files an earlier run left in ``directory`` (only files named like the
    /// frames written); returns how many were removed.
    func removeOldFrames() -> Int
}

public extension Display {
    var abilities: DisplayAbilities { DisplayAbilities() }
    var reconnection: (any ReconnectingDisplay)? { nil }
    var powerState: DisplayPowerState? { nil }
    var frameFiles: (any FrameFiles)? { nil }
    /// Composed frames only.
    var presentsLayers: Bool { false }
    /// No planes: the caller composes the frame.
    func present(layers: [FrameLayer], background: RGBColor, showTime: Int64) throws(DisplayError) -> Bool { false }
    /// No planes to prepare a framebuffer for.
    func prepareLayer(_ bitmap: Bitmap) {}
    /// No copy to scanout to split.
    func convertRows(with splitter: RowSplitter) {}
    /// Nothing to give up (offscreen, test doubles).
    func release() throws(DisplayError) {}
    /// Nothing to take back.
    func acquire() throws(DisplayError) {}
    /// No screen to switch off.
    func setPower(on: Bool) throws(DisplayError) {}
    /// Nothing to read back (test doubles).
    func screenImage() throws(DisplayError) -> Bitmap {
        throw .nothingToReadBack(device: summary, reason: "this display cannot read back what it shows")
    }
}

/// Why a display could not be opened or written. The description is the log line; callers
/// match the case, never the text.
public enum DisplayError: Error, CustomStringConvertible, Sendable {
    /// A system call failed (open, ioctl, mmap …), with its path and errno, and advice for the
    /// person reading the log when there is some (the group to join for EACCES).
    case system(SystemError, advice: String? = nil)
    /// The node opened, but it is no KMS (modesetting) device: drmModeGetResources failed
    /// (`error`); `driver` is drmGetVersion's name, nil when it names none (no DRM driver
    /// answers on the node: `/dev/null`, a file).
    case notKMS(device: String, driver: String?, error: SystemError)
    /// Another program (a compositor, a display manager) holds DRM master, so this process
    /// cannot set modes: drmSetMaster failed with `error`.
    case notMaster(device: String, error: SystemError)
    /// No connector of `device` is connected with modes; `connectors` are the ones there are.
    case noConnectedConnector(device: String, connectors: [DRMConnectorInfo])
    /// `--display drm,connector=NAME` names no connector of `device`; `connectors` are the ones there are.
    case noSuchConnector(device: String, name: String, connectors: [DRMConnectorInfo])
    /// The connector asked for is disconnected or offers no modes; `connectors` are all of `device`'s.
    case connectorUnusable(device: String, connector: DRMConnectorInfo, connectors: [DRMConnectorInfo])
    /// No CRTC that an encoder of `connector` can feed (its `possible_crtcs` masks).
    case noCRTC(device: String, connector: String)
    /// The connector (`device connector`, e.g. `/dev/dri/card0 HDMI-A-1`) reports no modes.
    case noModes(connector: String)
    /// The mode asked for (`--display drm,mode=`) is not among the connector's `available` ones.
    case modeNotAvailable(connector: String, requested: ModeRequest, available: [DRMMode])
    /// The driver refuses `format` for a scanout buffer (drmModeAddFB2: EINVAL): `error` is the
    /// failed call. A failed call like ``system(_:advice:)``, told apart so that a display that
    /// appears later can be refused by its format (``ReopeningDRMDisplay``).
    case scanoutFormatRefused(format: String, error: SystemError)
    /// A pixel layout the backend cannot draw (an fbdev visual, bits per pixel, bitfields; a
    /// card that cannot scan out XRGB8888): what it is, and what would do.
    case unsupportedFormat(device: String, reason: String)
    /// Sizes that do not add up (fbdev geometry, a memory-mapped file too short, a frame size
    /// that is not positive): the values.
    case badGeometry(device: String, reason: String)
    /// A kernel attribute read back a value that makes no sense (a backlight's `max_brightness`
    /// that is not a positive number): the file and what it held.
    case badValue(path: String, reason: String)
    /// ``Display/screenImage()`` has nothing to read back: the screen is off, the VT switched
    /// away, no frame was presented yet, the display is lost, or it cannot read back at all.
    case nothingToReadBack(device: String, reason: String)
    /// ``Display/present(_:showTime:)`` after ``Display/restore()`` (a programming error).
    case presentAfterRestore(device: String)
    /// There is no `DIRECTORY/card*` node: no DRM/KMS driver is loaded, or `/dev` is not populated.
    case noCard(directory: String)
    /// Every card node failed (at least two; one failure is thrown as it is).
    indirect case noUsableCard([DisplayError])
    /// There is no framebuffer device at the path (open failed with ENOENT, ENODEV or ENXIO).
    case noFramebuffer(SystemError)
    /// `--display auto` found neither a DRM card nor a framebuffer: what each said. Nothing to
    /// show on; the caller may fall back to offscreen frames.
    indirect case noDisplay(drm: DisplayError, fbdev: DisplayError)
    /// Neither DRM nor fbdev could be used, at least one because of a failed call (a fixable
    /// problem, not hidden behind a fallback): both reasons.
    indirect case unusable(drm: DisplayError, fbdev: DisplayError)
    /// Writing a frame file failed (offscreen).
    case write(path: String, reason: String)

    /// True for a failed call that a person can fix (permissions, a busy device, a refused
    /// buffer): ``system(_:advice:)`` and ``scanoutFormatRefused(format:error:)``.
    public var isFailedCall: Bool {
        switch self {
        case .system, .scanoutFormatRefused: return true
        default: return false
        }
    }

    public var description: String {
        func list(_ connectors: [DRMConnectorInfo]) -> String {
            connectors.isEmpty ? "the device has no connectors" : connectors.map(\.description).joined(separator: "; ")
        }
        switch self {
        case .system(let error, let advice?): return "\(error); \(advice)"
        case .system(let error, nil): return error.description
        case .notKMS(let device, let driver, let error):
            guard let driver else {
                return "\(device): not a KMS (modesetting) device: no DRM driver answers on it"
                    + " (a display card is /dev/dri/cardN): \(error)"
            }
            return "\(device): not a KMS (modesetting) device, driver \(driver): \(error)"
        case .notMaster(let device, let error):
            return "\(device): another program (a compositor or display manager) holds DRM master,"
                + " so this process cannot set modes: \(error)"
        case .noConnectedConnector(let device, let connectors):
            return "\(device): no connected connector; connectors: \(list(connectors))"
        case .noSuchConnector(let device, let name, let connectors):
            return "\(device): no connector named '\(name)'; connectors: \(list(connectors))"
        case .connectorUnusable(let device, let connector, let connectors):
            return "\(device): connector \(connector.name) is \(connector.status.rawValue) or offers no modes;"
                + " connectors: \(list(connectors))"
        case .noCRTC(let device, let connector): return "\(device): no CRTC can drive connector \(connector)"
        case .noModes(let connector): return "\(connector): the connector reports no modes"
        case .modeNotAvailable(let connector, let requested, let available):
            return "\(connector): mode \(requested) is not available;"
                + " available: \(DRMModeChoice.availableList(available))"
        case .scanoutFormatRefused(_, let error): return error.description
        case .unsupportedFormat(let device, let reason), .badGeometry(let device, let reason),
             .nothingToReadBack(let device, let reason):
            return "\(device): \(reason)"
        case .badValue(let path, let reason): return "\(path): \(reason)"
        case .presentAfterRestore(let device): return "\(device): present() after restore()"
        case .noCard(let directory):
            return "no \(directory)/card* device (no DRM/KMS driver is loaded, or /dev is not populated)"
        case .noUsableCard(let failures):
            return "no usable DRM device: " + failures.map(\.description).joined(separator: "; ")
        case .noFramebuffer(let error): return error.description
        case .noDisplay(let drm, let fbdev): return "no display: DRM: \(drm); fbdev: \(fbdev)"
        case .unusable(let drm, let fbdev): return "no usable display: DRM: \(drm); fbdev: \(fbdev)"
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
