// SPDX-License-Identifier: Apache-2.0
import Glibc
import CLibDRM
import CKioskDRM
import CKioskSys
import KioskCore
import KioskSystem

/// DRM/KMS output with two XRGB8888 dumb buffers and page flips on vertical blank
/// (kmscube's drm-legacy: drmModeSetCrtc for the first frame, then drmModePageFlip).
///
/// Each ``present(_:showTime:)`` copies the frame into the hidden (back) buffer, rotating it on
/// the way (``ScanoutWriter``), marks it dirty (drmModeDirtyFB: virtio-gpu and other drivers
/// that scan out a shadow copy need it), queues a page flip with DRM_MODE_PAGE_FLIP_EVENT and
/// waits for the flip event (poll + drmHandleEvent), so a frame is never seen half drawn and a
/// fade runs at the display's refresh rate (``pacesFrames`` is true). A flip that does not
/// complete within ``flipTimeoutMilliseconds`` is counted in ``flipTimeouts`` and the next frame
/// is put up with drmModeSetCrtc instead, so a hung flip cannot freeze the show.
///
/// Pixel format: DRM_FORMAT_XRGB8888 (drm_fourcc.h), bytes B, G, R, X in memory, the same
/// layout as ``Bitmap``. Scanout size = the mode; ``width`` x ``height`` = the logical size
/// (swapped for 90/270).
///
/// Ownership and restore: the CRTC's previous state (drmModeGetCrtc) is saved when the display
/// opens and put back by ``restore()``, which also removes the framebuffers, unmaps and destroys
/// the dumb buffers. ``restore()`` is idempotent and also runs on deinit; the app calls it on
/// every exit path. If the process dies without it, closing the device lets the kernel's
/// fbdev emulation take the screen back (drm_fb_helper_lastclose).
public final class DRMDisplay: Display, PixelDimmable {
    /// Logical width in pixels (what the compositor draws).
    public let width: Int
    /// Logical height in pixels.
    public let height: Int
    /// The mode in use (scanout size = `mode.width` x `mode.height`).
    public let mode: DRMMode
    /// The panel: the mode's width in pixels.
    public var panelWidth: Int { mode.width }
    /// The mode's height in pixels.
    public var panelHeight: Int { mode.height }
    /// The connector in use, e.g. `HDMI-A-1`.
    public let connectorName: String
    /// The device node, e.g. `/dev/dri/card0`.
    public let devicePath: String
    /// Rotation applied while copying to scanout.
    public let rotation: Rotation
    /// The display waits for vertical blank in ``present(_:showTime:)``.
    public var pacesFrames: Bool { true }
    /// `DRM /dev/dri/card0 (bochs-drm) Virtual-1 1280x800@60 XRGB8888, 2 dumb buffers, page flips`.
    public var summary: String {
        "DRM \(devicePath) (\(device.driverName)) \(connectorName) \(mode) XRGB8888, "
            + "pitch \(buffers.first?.pitch ?? 0) bytes, "
            + "2 dumb buffers, " + (atomic == nil ? "page flips" : "atomic commits") + planeSummary
            + (rotation == .none ? "" : ", rotated \(rotation.rawValue)°")
    }
    /// Time the last ``present(_:showTime:)`` spent copying (and rotating) the frame into the
    /// back buffer, in nanoseconds (CLOCK_MONOTONIC); nil before the first frame. For the benchmark.
    public private(set) var lastComposeCopyNanoseconds: UInt64?
    /// How many page flips did not complete within ``flipTimeoutMilliseconds``.
    public private(set) var flipTimeouts = 0
    /// What went wrong while putting the previous CRTC back, if anything (for the log).
    public private(set) var restoreError: String?
    /// True between ``release()`` and ``acquire()``: the VT is switched away, DRM master dropped.
    public private(set) var isReleased = false
    /// True while the screen is switched off (``setPower(on:)``, the connector's DPMS property).
    public private(set) var isPoweredOff = false

    /// How long ``present(_:showTime:)`` waits for a flip event: 1000 ms, some 60 refresh
    /// periods at 60 Hz, so only a hung driver (never a slow frame) hits it.
    public static let flipTimeoutMilliseconds: Int32 = 1000

    /// What `--display drm,...` allows: atomic commits, layers on planes (docs/planes.md).
    public let options: DRMOptions

    let device: DRMDevice
    let connectorID: UInt32
    let crtcID: UInt32
    private var rawMode: drmModeModeInfo
    private var savedCrtc: UnsafeMutablePointer<drmModeCrtc>?
    var buffers: [DumbBuffer]
    var front = 0
    var crtcSet = false
    var flipPending = false
    /// The atomic side (DRM_CLIENT_CAP_ATOMIC and the property IDs); nil: the legacy calls
    /// (drmModeSetCrtc, drmModePageFlip), for a driver without atomic modesetting or `atomic=off`.
    var atomic: DRMAtomicOutput?
    /// The overlay planes (indices into `atomic.overlays`) last committed with a framebuffer.
    var enabledOverlays: Set<Int> = []
    /// The layers on screen when the last frame went out on planes; nil: the last frame was a
    /// composed bitmap in a dumb buffer (DRMDisplay+Planes.swift).
    var layersOnScreen: [FrameLayer]?
    /// The background colour the dumb buffer at each index holds as a backdrop, nil when it
    /// holds a frame.
    var backdropColour: [UInt32?] = [nil, nil]
    /// Framebuffers made from the layers' bitmaps (DRMDisplay+Planes.swift).
    var layerBuffers = LayerFramebuffers()
    /// Splits the scanout conversion by rows across cores; nil: this thread alone.
    public var rows: RowSplitter?
    /// The pixels dimmed in the copy to the dumb buffer (``PixelDimmable``, docs/power.md).
    public var pixelBrightness: PixelBrightness = .full
    /// Why the driver's first atomic modeset was refused (the legacy calls are used since), if it was.
    public internal(set) var atomicRefusal: String?
    /// How many frames the planes could not show (a TEST_ONLY or a commit refused them, or a
    /// layer's framebuffer could not be made): each was composed on the CPU instead.
    public internal(set) var planeRefusals = 0
    /// Why the last layer framebuffer could not be made, if one could not.
    public internal(set) var layerBufferFailure: String?
    /// Why the last writeback capture failed (``screenImage()`` then composed the layers itself).
    public internal(set) var writebackFailure: String?
    /// While true a page flip is queued and not waited for (``queue(_:showTime:)``): the
    /// outputs of a card flip in step (``MirroredDisplay``).
    var defersFlipWait = false
    private var dirtySupported = true
    private(set) var restored = false
    /// The connector's "DPMS" property ID, looked up on first use (0: not looked up yet).
    private var dpmsPropertyID: UInt32 = 0
    /// Set to 1 by the page-flip event handler (kc_drm.c); outlives every wait.
    let flipDone: UnsafeMutablePointer<Int32>

    /// Opens a DRM device and prepares the output.
    ///
    /// - Parameters:
    ///   - device: the device node (`/dev/dri/card1`); nil = the first `/dev/dri/card*` with a
    ///     connected connector.
    ///   - connector: the connector's name (`HDMI-A-1`, case-insensitive); nil = the first connected one.
    ///   - mode: the mode to use; nil = the connector's preferred mode (``DRMModeChoice``).
    ///   - rotation: clockwise rotation of the picture on the panel.
    ///   - preferredIfMissing: true when a `mode` the connector does not offer gives its
    ///     preferred mode instead of an error (a card or monitor that came back may be another
    ///     one: the show goes on at whatever size it has).
    /// - Throws: ``DisplayError/noCard(directory:)`` when there is no `/dev/dri/card*`;
    ///   ``DisplayError/system(_:advice:)`` when a call fails (permission denied names the group the
    ///   user needs, `video` on Debian); ``DisplayError/noConnectedConnector(device:connectors:)``
    ///   (every connector is listed with its status), ``DisplayError/modeNotAvailable(connector:requested:available:)``
    ///   (the available ones are listed), ``DisplayError/notKMS(device:driver:error:)`` or
    ///   ``DisplayError/notMaster(device:error:)``.
    ///   Nothing is left behind when opening fails.
    ///   - options: atomic commits and planes where the driver has them (the default), or not.
    public static func open(device path: String?, connector name: String?, mode request: ModeRequest?,
                            rotation: Rotation, preferredIfMissing: Bool = false,
                            options: DRMOptions = DRMOptions()) throws(DisplayError) -> DRMDisplay {
        let (device, connector) = try findOutput(device: path, connector: name)
        let index = try chooseMode(request, of: connector, on: device, preferredIfMissing: preferredIfMissing)
        let crtcID = try device.crtc(for: connector)
        return try DRMDisplay(device: device, connector: connector, modeIndex: index, crtcID: crtcID,
                              rotation: rotation, options: options)
    }

    /// Every other usable connector of `display`'s card (connected, with modes, not named in
    /// `taken`) opened as a display of its own on the same open device: a CRTC of its own
    /// (none that another output drives), its mode chosen as `request` says (the preferred mode
    /// where it does not offer it), its own dumb buffers (docs/displays.md "Several outputs").
    /// `probe`: the connectors are probed (drmModeGetConnector) rather than read as last probed.
    /// A connector that cannot be opened (no CRTC left, buffers refused) is logged and passed over.
    public static func otherOutputs(of display: DRMDisplay, taken: [String], mode request: ModeRequest?,
                                    probe: Bool = true) -> [DRMDisplay] {
        let device = display.device
        guard !display.restored, !device.isGone, let connectors = try? device.connectors(probe: probe) else {
            return []
        }
        let takenNames = Set(taken.map { $0.lowercased() } + [display.connectorName.lowercased()])
        var opened: [DRMDisplay] = []
        for connector in connectors
        where connector.info.isUsable && !takenNames.contains(connector.info.name.lowercased()) {
            do {
                let index = try chooseMode(request, of: connector, on: device, preferredIfMissing: true)
                let crtcID = try device.crtc(for: connector)
                opened.append(try DRMDisplay(device: device, connector: connector, modeIndex: index, crtcID: crtcID,
                                             rotation: display.rotation, options: display.options))
            } catch {
                Log.warning("output passed over", path: device.path,
                            reason: "connector \(connector.info.name): \(error)")
            }
        }
        return opened
    }

    /// The index of the mode to use among `connector`'s: `request` (``DRMModeChoice``), or with
    /// `preferredIfMissing` the preferred one when the connector does not offer it.
    static func chooseMode(_ request: ModeRequest?, of connector: DRMDevice.Connector, on device: DRMDevice,
                           preferredIfMissing: Bool) throws(DisplayError) -> Int {
        let label = "\(device.path) \(connector.info.name)"
        if preferredIfMissing {
            return try DRMModeChoice.chooseOnReturn(request, from: connector.info.modes, connector: label)
        }
        return try DRMModeChoice.choose(request, from: connector.info.modes, connector: label)
    }

    /// The device and connector to use: the named device, or the first card in `cardDirectory`
    /// that has a usable connector. Cards passed over on the way (a render-only GPU, a card with
    /// nothing plugged in) are logged, each with the reason, once one is found.
    static func findOutput(device path: String?, connector name: String?, cardDirectory: String = "/dev/dri")
        throws(DisplayError) -> (DRMDevice, DRMDevice.Connector) {
        if let path {
            let device = try DRMDevice.open(path)
            return (device, try device.connector(named: name))
        }
        let cards = DRMDevice.cardPaths(directory: cardDirectory)
        guard !cards.isEmpty else {
            throw .noCard(directory: cardDirectory)
        }
        var failures: [DisplayError] = []
        for card in cards {
            do {
                let device = try DRMDevice.open(card)
                let output = (device, try device.connector(named: name))
                for failure in failures { Log.info("DRM card passed over", detail: failure.description) }
                return output
            } catch {
                failures.append(error)
            }
        }
        if failures.count == 1 { throw failures[0] }
        throw .noUsableCard(failures)
    }

    /// `inheritedCrtc`: the CRTC state to put back on ``restore()`` when a display on the same
    /// card hands over to this one (``withModeChosenAgain(_:)``); nil: read now (drmModeGetCrtc).
    private init(device: DRMDevice, connector: DRMDevice.Connector, modeIndex: Int, crtcID: UInt32,
                 rotation: Rotation, options: DRMOptions,
                 inheritedCrtc: UnsafeMutablePointer<drmModeCrtc>? = nil) throws(DisplayError) {
        self.options = options
        self.device = device
        self.devicePath = device.path
        self.connectorID = connector.info.id
        self.connectorName = connector.info.name
        self.crtcID = crtcID
        self.rawMode = connector.rawModes[modeIndex]
        self.mode = connector.info.modes[modeIndex]
        self.rotation = rotation
        (width, height) = rotation.logicalSize(panelWidth: mode.width, panelHeight: mode.height)
        flipDone = .allocate(capacity: 1)
        flipDone.initialize(to: 0)
        device.crtcsInUse.insert(crtcID)
        savedCrtc = inheritedCrtc ?? drmModeGetCrtc(device.fd.rawValue, crtcID)   // nil is fine: nothing to put back
        buffers = []
        do {
            for _ in 0..<2 {
                buffers.append(try DumbBuffer(device: device, width: mode.width, height: mode.height))
            }
        } catch {
            if inheritedCrtc != nil { savedCrtc = nil }   // still the handing display's
            restore()   // roll back at once: the buffers made so far, the saved CRTC
            throw error
        }
        if options.atomic, let crtcIndex = device.crtcIDs.firstIndex(of: crtcID) {
            atomic = DRMAtomicOutput(device: device, connectorID: connectorID, crtcID: crtcID, crtcIndex: crtcIndex,
                                     mode: rawMode)
        }
    }

    deinit {
        restore()
        flipDone.deallocate()
    }

    /// Copies `frame` to the back buffer and shows it on the next vertical blank.
    /// `frame` must be ``width`` x ``height`` XRGB8888; it is only read during the call.
    /// Throws ``DisplayError/system(_:advice:)`` when setting the CRTC or queueing the flip fails
    /// (e.g. `drmModeSetCrtc /dev/dri/card0: Permission denied` when another program took DRM master).
    public func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        guard !restored else { throw .presentAfterRestore(device: devicePath) }
        // Switched away (not master: every KMS call would fail with EACCES) or powered off
        // (an inactive CRTC refuses page flips): nothing is drawn.
        if isReleased || isPoweredOff { return }
        precondition(frame.width == width && frame.height == height,
                     "frame is \(frame.width)x\(frame.height), the display \(width)x\(height)")
        if flipPending { try waitForFlip() }
        let back = buffers[1 - front]
        let start = Self.monotonicNanoseconds()
        ScanoutWriter.copy(frame, to: back.map, stride: back.pitch, format: .xrgb8888, rotation: rotation,
                           dither: false, swapRedBlue: false, rows: rows, brightness: pixelBrightness)
        backdropColour[1 - front] = nil
        lastComposeCopyNanoseconds = Self.monotonicNanoseconds() &- start
        try markDirty(back)
        do {
            if !crtcSet || flipPending {
                try setCrtc(back)
            } else {
                try flip(to: back)
            }
        } catch {
            throw .system(error)
        }
        front = 1 - front
        layersOnScreen = nil
        layerBuffers.release(keeping: [], device: device)
    }

    /// The dumb buffer last presented (on screen, or flipped to at the next vertical blank),
    /// copied out: ``panelWidth`` x ``panelHeight`` XRGB8888, as scanned out (after `--rotate`).
    /// A dumb buffer may be mapped write-combined (uncached) by the driver: reading it back is then
    /// slower than reading RAM (docs/limits.md). Throws ``DisplayError/nothingToReadBack(device:reason:)``
    /// while released, powered off or before the first frame.
    public func screenImage() throws(DisplayError) -> Bitmap {
        if isReleased {
            throw .nothingToReadBack(device: devicePath,
                                     reason: "the VT is switched away: nothing of ours is on the screen")
        }
        if isPoweredOff { throw .nothingToReadBack(device: devicePath, reason: "the screen is off") }
        guard crtcSet, !restored else {
            throw .nothingToReadBack(device: devicePath, reason: "no frame was presented yet")
        }
        if let layers = layersOnScreen { return try planeScreenImage(layers) }
        let shown = buffers[front]
        return ScanoutReader.read(from: UnsafeRawPointer(shown.map), stride: shown.pitch, format: .xrgb8888,
                                  width: mode.width, height: mode.height)
    }

    /// drmModeSetCrtc: a blocking modeset that shows `buffer` now (first frame, or after a flip timed out).
    func setCrtc(_ buffer: DumbBuffer) throws(SystemError) {
        if atomic != nil {
            do {
                try atomicShow(primary: fullScreen(buffer), overlays: [], modeset: true)
                return
            } catch where !crtcSet && [EINVAL, ERANGE, ENOSPC, EOPNOTSUPP].contains(error.errno) {
                // The driver refused the very first atomic modeset: legacy calls from now on.
                atomicRefused(error)
            }
        }
        var connector = connectorID
        var m = rawMode
        let fd = device.fd.rawValue, crtc = crtcID, fb = buffer.fbID
        try negativeErrnoCall("drmModeSetCrtc", path: devicePath, minusOneSetsErrno: true) {
            drmModeSetCrtc(fd, crtc, fb, 0, 0, &connector, 1, &m)
        }
        crtcSet = true
        flipPending = false
    }

    /// drmModePageFlip with an event, then wait for the event. EBUSY (a flip still pending)
    /// gets one more wait; if the flip still does not go through, fall back to drmModeSetCrtc.
    private func flip(to buffer: DumbBuffer) throws(SystemError) {
        if atomic != nil { return try atomicShow(primary: fullScreen(buffer), overlays: [], modeset: false) }
        let fd = device.fd.rawValue, crtc = crtcID, fb = buffer.fbID, done = flipDone
        do {
            try syscall("drmModePageFlip", path: devicePath) { kc_drm_page_flip(fd, crtc, fb, done) }
        } catch where error.errno == EBUSY {
            flipPending = true
            try waitForFlipOrCount()
            if flipPending { return try setCrtc(buffer) }
            try syscall("drmModePageFlip", path: devicePath) { kc_drm_page_flip(fd, crtc, fb, done) }
        }
        flipPending = true
        if !defersFlipWait { try waitForFlipOrCount() }
    }

    private func waitForFlip() throws(DisplayError) {
        do { try waitForFlipOrCount() } catch { throw .system(error) }
    }

    /// Copies `frame` to the back buffer and queues its flip without waiting for it (the rest
    /// as ``present(_:showTime:)``); ``waitForQueuedFlip()`` waits. The outputs of a card queue
    /// their flips one after the other and then wait, so that they show the frame at their
    /// next vertical blanks, not one after another's (``MirroredDisplay``).
    /// Throws as ``present(_:showTime:)``.
    func queue(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        defersFlipWait = true
        defer { defersFlipWait = false }
        try present(frame, showTime: showTime)
    }

    /// Waits for the flip ``queue(_:showTime:)`` queued, if it is still pending.
    /// Throws ``DisplayError/system(_:advice:)`` when waiting fails.
    func waitForQueuedFlip() throws(DisplayError) {
        if flipPending, !restored { try waitForFlip() }
    }

    /// Waits up to ``flipTimeoutMilliseconds`` for the pending flip's event; on timeout it stays pending.
    func waitForFlipOrCount() throws(SystemError) {
        let fd = device.fd.rawValue, done = flipDone
        let r = try syscall("poll/drmHandleEvent (page flip)", path: devicePath) {
            kc_drm_wait_page_flip(fd, Self.flipTimeoutMilliseconds, done)
        }
        if r == 1 { flipPending = false } else { flipTimeouts += 1 }
    }

    /// drmModeDirtyFB for the whole buffer. Drivers without a dirty callback answer ENOSYS
    /// (or EINVAL/EOPNOTSUPP); after that it is not called again.
    private func markDirty(_ buffer: DumbBuffer) throws(DisplayError) {
        guard dirtySupported else { return }
        let fd = device.fd.rawValue, fb = buffer.fbID
        do {
            try negativeErrnoCall("drmModeDirtyFB", path: devicePath, minusOneSetsErrno: true) {
                drmModeDirtyFB(fd, fb, nil, 0)
            }
        } catch where [ENOSYS, EINVAL, EOPNOTSUPP].contains(error.errno) {
            dirtySupported = false
        } catch {
            throw .system(error)
        }
    }

    /// Puts the saved CRTC back (mode, framebuffer, position; or switches the CRTC off if
    /// nothing was on it), then removes both framebuffers and destroys the dumb buffers.
    /// Idempotent; errors are kept in ``restoreError``.
    public func restore() {
        guard !restored else { return }
        restored = true
        let fd = device.fd.rawValue
        if flipPending { _ = kc_drm_wait_page_flip(fd, Self.flipTimeoutMilliseconds, flipDone); flipPending = false }
        if isPoweredOff && !isReleased {
            do { try setDPMS(on: true) } catch { restoreError = error.description }
        }
        if !isReleased { switchOverlaysOff() }
        // Switched away: the CRTC belongs to whoever is on the screen now; leave it.
        if crtcSet && !isReleased {
            var connector = connectorID
            do {
                if let saved = savedCrtc?.pointee, saved.mode_valid != 0, saved.buffer_id != 0 {
                    var m = saved.mode
                    try negativeErrnoCall("drmModeSetCrtc (restore)", path: devicePath, minusOneSetsErrno: true) {
                        drmModeSetCrtc(fd, saved.crtc_id, saved.buffer_id, saved.x, saved.y, &connector, 1, &m)
                    }
                } else {
                    let crtc = crtcID
                    try negativeErrnoCall("drmModeSetCrtc (off)", path: devicePath, minusOneSetsErrno: true) {
                        drmModeSetCrtc(fd, crtc, 0, 0, 0, nil, 0, nil)
                    }
                }
            } catch {
                restoreError = error.description
            }
            crtcSet = false
        }
        if let saved = savedCrtc { drmModeFreeCrtc(saved); savedCrtc = nil }
        device.crtcsInUse.remove(crtcID)
        for b in buffers { b.destroy(device: device) }
        buffers = []
        layerBuffers.release(keeping: [], device: device, all: true)
        layersOnScreen = nil
        atomic = nil
    }

    /// VT switched away: finishes a pending flip, then drops DRM master; ``present(_:showTime:)``
    /// draws nothing until ``acquire()``. The CRTC keeps scanning out the last frame until the
    /// console (the kernel's fbdev emulation) sets its own mode.
    /// Throws ``DisplayError/system(_:advice:)`` when drmDropMaster fails (the display is released anyway).
    public func release() throws(DisplayError) {
        guard !restored, !isReleased else { return }
        if flipPending {
            _ = kc_drm_wait_page_flip(device.fd.rawValue, Self.flipTimeoutMilliseconds, flipDone)
            flipPending = false
        }
        isReleased = true
        do { try device.dropMaster() } catch { throw .system(error) }
    }

    /// VT switched back: takes DRM master again and sets the CRTC (drmModeSetCrtc: mode,
    /// connector and the buffer last shown), since the console changed it meanwhile; a screen that
    /// was switched off is switched off again (a modeset turns it on).
    /// Throws ``DisplayError/system(_:advice:)`` when drmSetMaster or drmModeSetCrtc fails; the display
    /// then stays released and a later ``acquire()`` may try again.
    public func acquire() throws(DisplayError) {
        guard !restored, isReleased else { return }
        do {
            try device.setMaster()
            isReleased = false
            // Only a buffer already presented is shown again (before the first frame there is
            // none: the first present sets the CRTC).
            if crtcSet, !buffers.isEmpty { try setCrtc(buffers[front]) }
            if isPoweredOff { try setDPMS(on: false) }
        } catch {
            isReleased = true
            if drmIsMaster(device.fd.rawValue) != 0 { try? device.dropMaster() }
            throw .system(error)
        }
    }

    /// Switches the screen off or on through the connector's "DPMS" property
    /// (drmModeConnectorSetProperty, DRM_MODE_DPMS_OFF = 3 / DRM_MODE_DPMS_ON = 0; the property ID
    /// is looked up by name). While released it only records the wish: ``acquire()`` applies it.
    /// Throws ``DisplayError/system(_:advice:)`` when the connector has no DPMS property (ENOTSUP)
    /// or setting it fails.
    public func setPower(on: Bool) throws(DisplayError) {
        guard !restored else { return }
        if isReleased { isPoweredOff = !on; return }
        if on == !isPoweredOff { return }
        if flipPending {
            _ = kc_drm_wait_page_flip(device.fd.rawValue, Self.flipTimeoutMilliseconds, flipDone)
            flipPending = false
        }
        do {
            try setDPMS(on: on)
        } catch {
            throw .system(error)
        }
        isPoweredOff = !on
        // A modeset with the buffer on screen when switching on: some drivers come back dark
        // from DPMS without it, and it is one call.
        if on && crtcSet && !buffers.isEmpty { try? setCrtc(buffers[front]) }
    }

    /// The connector as probed now (drmModeGetConnector), its mode chosen again as at start:
    /// `request` when the connector offers it, else its preferred mode. Nil when that is the
    /// mode in use (or the connector cannot be read: the caller sets the mode again); otherwise
    /// a new display on the same card, connector and CRTC at the new mode, with new dumb buffers,
    /// that takes this one's saved CRTC over (its ``restore()`` puts back what was there before
    /// the show). This display is then finished: its framebuffers removed (the CRTC goes dark
    /// until the new display's first ``present(_:showTime:)`` sets the mode) and its buffers
    /// destroyed, without putting the saved CRTC back.
    /// Throws ``DisplayError`` when the new buffers cannot be made; this display is then left as it was.
    public func withModeChosenAgain(_ request: ModeRequest?) throws(DisplayError) -> DRMDisplay? {
        guard !restored, let connector = (try? device.connectors())?.first(where: { $0.info.id == connectorID }),
              connector.info.isUsable else { return nil }
        let index = try Self.chooseMode(request, of: connector, on: device, preferredIfMissing: true)
        let chosen = connector.rawModes[index]
        if chosen.hdisplay == rawMode.hdisplay, chosen.vdisplay == rawMode.vdisplay,
           chosen.vrefresh == rawMode.vrefresh, chosen.flags == rawMode.flags { return nil }
        if flipPending {
            _ = kc_drm_wait_page_flip(device.fd.rawValue, Self.flipTimeoutMilliseconds, flipDone); flipPending = false
        }
        switchOverlaysOff()
        let next = try DRMDisplay(device: device, connector: connector, modeIndex: index, crtcID: crtcID,
                                  rotation: rotation, options: options, inheritedCrtc: savedCrtc)
        next.dpmsPropertyID = dpmsPropertyID
        next.rows = rows
        savedCrtc = nil
        restored = true
        crtcSet = false
        for b in buffers { b.destroy(device: device) }
        buffers = []
        layerBuffers.release(keeping: [], device: device, all: true)
        layersOnScreen = nil
        atomic = nil
        return next
    }

    /// True when the connector's modes as the kernel last probed them (drmModeGetConnectorCurrent:
    /// no probe, no DDC read) would choose another mode than the one in use: `request` when
    /// offered, else the preferred one (a monitor swapped, a virtual output given another size,
    /// and probed since). False when the connector cannot be read or offers no modes.
    public func choosesAnotherMode(_ request: ModeRequest?) -> Bool {
        guard !restored, let c = drmModeGetConnectorCurrent(device.fd.rawValue, connectorID) else { return false }
        defer { drmModeFreeConnector(c) }
        let raw = Array(UnsafeBufferPointer(start: c.pointee.modes, count: Int(c.pointee.count_modes)))
        let modes = raw.map(DRMDevice.mode)
        let label = "\(devicePath) \(connectorName)"
        guard let index = try? DRMModeChoice.chooseOnReturn(request, from: modes, connector: label) else {
            return false
        }
        let m = raw[index]
        return m.hdisplay != rawMode.hdisplay || m.vdisplay != rawMode.vdisplay || m.vrefresh != rawMode.vrefresh
            || m.flags != rawMode.flags
    }

    /// The connector's status: as the kernel last probed it (`probe` false:
    /// drmModeGetConnectorCurrent; a hotplug interrupt makes the driver probe and update it), or
    /// probed now (drmModeGetConnector: on real hardware a DDC read of tens of milliseconds; for
    /// a connector that is not connected, or a virtual one whose driver does not probe again on
    /// its own display event, as virtio-gpu in Linux 6.1). Nil when it cannot be read.
    public func connectorStatus(probe: Bool) -> DRMConnectorStatus? {
        let fd = device.fd.rawValue
        guard !restored,
              let c = probe ? drmModeGetConnector(fd, connectorID) : drmModeGetConnectorCurrent(fd, connectorID) else {
            return nil
        }
        defer { drmModeFreeConnector(c) }
        switch c.pointee.connection {
        case DRM_MODE_CONNECTED: return .connected
        case DRM_MODE_DISCONNECTED: return .disconnected
        default: return .unknown
        }
    }

    /// Sets the mode again (drmModeSetCrtc: the mode, the connector and the buffer on screen),
    /// as after the connector came back: the sink may have lost it meanwhile. Does nothing
    /// before the first frame, while released or powered off.
    /// Throws ``DisplayError/system(_:advice:)`` when drmModeSetCrtc fails.
    public func setModeAgain() throws(DisplayError) {
        guard !restored, !isReleased, !isPoweredOff, crtcSet, !buffers.isEmpty else { return }
        if flipPending {
            _ = kc_drm_wait_page_flip(device.fd.rawValue, Self.flipTimeoutMilliseconds, flipDone)
            flipPending = false
        }
        do { try setCrtc(buffers[front]) } catch { throw .system(error) }
    }

    /// The connector's DPMS property value now (DRM_MODE_DPMS_ON = 0 ... OFF = 3), nil when unknown.
    public var powerState: DisplayPowerState? {
        guard let id = try? dpmsProperty(),
              let value = device.propertyValue(id, object: connectorID, type: UInt32(DRM_MODE_OBJECT_CONNECTOR)) else {
            return nil
        }
        return DisplayPowerState(rawValue: min(value, 3))
    }

    /// A screen on a VT with DPMS and one connector; the planes its layers may go on (the
    /// primary and the overlays of its CRTC with atomic commits and planes allowed, no rotation;
    /// else the primary alone).
    public var abilities: DisplayAbilities {
        var abilities = DisplayAbilities.consoleScreen
        if atomic != nil, options.planes, rotation == .none { abilities.planes = planes.count }
        return abilities
    }

    public func convertRows(with splitter: RowSplitter) { rows = splitter }

    private func dpmsProperty() throws(SystemError) -> UInt32 {
        if dpmsPropertyID == 0 {
            guard let id = device.propertyID(named: "DPMS", object: connectorID,
                                             type: UInt32(DRM_MODE_OBJECT_CONNECTOR)) else {
                throw SystemError(operation: "connector \(connectorName) has no DPMS property", path: devicePath,
                                  errno: ENOTSUP)
            }
            dpmsPropertyID = id
        }
        return dpmsPropertyID
    }

    private func setDPMS(on: Bool) throws(SystemError) {
        let id = try dpmsProperty()
        let fd = device.fd.rawValue, connector = connectorID
        let value = UInt64(on ? DRM_MODE_DPMS_ON : DRM_MODE_DPMS_OFF)
        try negativeErrnoCall("drmModeConnectorSetProperty DPMS \(on ? "On" : "Off")", path: devicePath,
                              minusOneSetsErrno: true) {
            drmModeConnectorSetProperty(fd, connector, id, value)
        }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// One dumb buffer (DRM_IOCTL_MODE_CREATE_DUMB, 32 bits per pixel) registered as an
/// XRGB8888 (or ARGB8888) framebuffer (drmModeAddFB2) and mapped into this process (MAP_DUMB + mmap).
struct DumbBuffer {
    /// GEM handle of the buffer.
    let handle: UInt32
    /// Framebuffer object ID for SetCrtc / PageFlip.
    let fbID: UInt32
    /// Bytes from one row to the next (the driver may pad beyond width * 4).
    let pitch: Int
    /// Bytes mapped.
    let size: Int
    /// The mapping (MAP_SHARED), valid until ``destroy(device:)``.
    let map: UnsafeMutableRawPointer

    /// Creates, registers and maps a `width` x `height` buffer; undoes the steps already done
    /// when a later one fails. Its pixels are not cleared: nothing scans a buffer out before
    /// ``DRMDisplay/present(_:showTime:)`` has written every visible pixel of it (clearing
    /// both at open wrote and faulted in two whole buffers for nothing: 6 MiB at 1024x768,
    /// 66 MiB at 3840x2160, before the first frame).
    init(device: DRMDevice, width: Int, height: Int, format: UInt32 = kc_drm_format_xrgb8888) throws(DisplayError) {
        let fd = device.fd.rawValue, path = device.path
        var handle: UInt32 = 0, pitch: UInt32 = 0, size: UInt64 = 0
        do {
            try negativeErrnoCall("DRM_IOCTL_MODE_CREATE_DUMB \(width)x\(height)x32", path: path,
                                  minusOneSetsErrno: true) {
                drmModeCreateDumbBuffer(fd, UInt32(width), UInt32(height), 32, 0, &handle, &pitch, &size)
            }
        } catch { throw .system(error) }
        var fbID: UInt32 = 0, added = false
        let name = format == kc_drm_format_argb8888 ? "ARGB8888" : "XRGB8888"
        do {
            var handles: [UInt32] = [handle, 0, 0, 0]
            var pitches: [UInt32] = [pitch, 0, 0, 0]
            var offsets: [UInt32] = [0, 0, 0, 0]
            try negativeErrnoCall("drmModeAddFB2 \(name) \(width)x\(height)", path: path, minusOneSetsErrno: true) {
                drmModeAddFB2(fd, UInt32(width), UInt32(height), format, &handles, &pitches, &offsets, &fbID, 0)
            }
            added = true
            var offset: UInt64 = 0
            try negativeErrnoCall("DRM_IOCTL_MODE_MAP_DUMB", path: path, minusOneSetsErrno: true) {
                drmModeMapDumbBuffer(fd, handle, &offset)
            }
            let address = try syscall("mmap dumb buffer", path: path) {
                Int(bitPattern: mmap(nil, Int(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                                     off_t(Int64(bitPattern: offset))))
            }
            map = UnsafeMutableRawPointer(bitPattern: address)!
        } catch {
            if fbID != 0 { _ = drmModeRmFB(fd, fbID) }
            _ = drmModeDestroyDumbBuffer(fd, handle)
            if !added, error.errno == EINVAL { throw .scanoutFormatRefused(format: name, error: error) }
            throw .system(error)
        }
        self.handle = handle; self.fbID = fbID; self.pitch = Int(pitch); self.size = Int(size)
    }

    /// Unmaps, removes the framebuffer, destroys the buffer (best effort: nothing to report to).
    func destroy(device: DRMDevice) {
        munmap(map, size)
        _ = drmModeRmFB(device.fd.rawValue, fbID)
        _ = drmModeDestroyDumbBuffer(device.fd.rawValue, handle)
    }
}
