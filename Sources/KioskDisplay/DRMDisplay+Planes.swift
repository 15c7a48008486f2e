// SPDX-License-Identifier: Apache-2.0
import Glibc
import CLibDRM
import CKioskDRM
import KioskCore
import KioskSystem

/// What `--display drm[...]` allows the DRM backend (docs/planes.md): `atomic=off` keeps the
/// legacy calls (drmModeSetCrtc, drmModePageFlip) even where the driver has atomic modesetting;
/// `planes=off` composes every frame on the CPU (for comparison, and for drivers that accept a
/// plane configuration they then show wrongly).
public struct DRMOptions: Equatable, Sendable {
    /// Atomic commits where the driver offers DRM_CLIENT_CAP_ATOMIC.
    public var atomic: Bool
    /// Layers on planes where an atomic driver's TEST_ONLY commit accepts them.
    public var planes: Bool
    public init(atomic: Bool = true, planes: Bool = true) {
        self.atomic = atomic
        self.planes = planes && atomic
    }
}

// Frames as layers on KMS planes instead of composed bitmaps (docs/planes.md): the display
// controller stacks and blends them, no pixel of the frame is touched by the CPU
// (``Display/present(layers:background:showTime:)``).

extension DRMDisplay {
    /// `, 9 planes (8 overlays, 8 with alpha), writeback` or nothing for the legacy path.
    var planeSummary: String {
        guard let atomic else { return "" }
        let withAlpha = atomic.overlays.filter { $0.info.alphaRange != nil }.count
        return ", \(counted(atomic.overlays.count + 1, "plane")) (\(counted(atomic.overlays.count, "overlay"))"
            + (withAlpha > 0 ? ", \(withAlpha) with alpha" : "") + ")" + (atomic.writeback == nil ? "" : ", writeback")
            + (options.planes ? "" : ", planes off")
    }

    /// The planes the driver offers this display's CRTC (the primary first, then the overlays
    /// bottom to top); empty on the legacy path.
    public var planes: [DRMPlaneInfo] {
        guard let atomic else { return [] }
        return [atomic.primary.info] + atomic.overlays.map(\.info)
    }

    /// Whether the driver has a writeback connector for this CRTC (``screenImage()`` reads the
    /// composed planes through it).
    public var hasWriteback: Bool { atomic?.writeback != nil }

    public var presentsLayers: Bool {
        atomic != nil && options.planes && rotation == .none && !isReleased && !isPoweredOff && !buffers.isEmpty
    }

    /// A buffer on the whole CRTC.
    func fullScreen(_ buffer: DumbBuffer) -> DRMAtomicOutput.PlaneState {
        .init(fbID: buffer.fbID, srcWidth: mode.width, srcHeight: mode.height, x: 0, y: 0,
              width: mode.width, height: mode.height, alpha: nil, zpos: nil)
    }

    /// One atomic commit (NONBLOCK + PAGE_FLIP_EVENT) and the wait for its event: `primary` on
    /// the primary plane, `overlays[i]` on overlay i, the other overlays switched off (all of
    /// them on a modeset). EBUSY (the last commit still pending) gets one more wait.
    func atomicShow(primary: DRMAtomicOutput.PlaneState, overlays: [DRMAtomicOutput.PlaneState?], modeset: Bool,
                    extras: DRMAtomicOutput.Extras = .init()) throws(SystemError) {
        guard let atomic else { return }
        let used = Set(overlays.indices.filter { overlays[$0] != nil })
        let off = (modeset ? Set(atomic.overlays.indices) : enabledOverlays).subtracting(used)
        var more = extras
        more.modeset = modeset
        do {
            try atomic.commit(primary: primary, overlays: overlays, switchOff: off, extras: more, test: false,
                              event: flipDone)
        } catch where error.errno == EBUSY {
            flipPending = true
            try waitForFlipOrCount()
            try atomic.commit(primary: primary, overlays: overlays, switchOff: off, extras: more, test: false,
                              event: flipDone)
        }
        enabledOverlays = used
        if modeset { crtcSet = true; layersOnScreen = nil }
        flipPending = true
        if !defersFlipWait { try waitForFlipOrCount() }
    }

    /// The first atomic modeset was refused: the legacy calls from now on (logged by the caller
    /// through ``summary``).
    func atomicRefused(_ error: SystemError) {
        atomic = nil
        enabledOverlays = []
        atomicRefusal = error.description
    }

    /// Switches off the overlay planes this display enabled (drmModeSetPlane with no
    /// framebuffer), before the CRTC is handed back or to another display.
    func switchOverlaysOff() {
        guard let atomic else { return }
        if flipPending {
            _ = kc_drm_wait_page_flip(device.fd.rawValue, Self.flipTimeoutMilliseconds, flipDone); flipPending = false
        }
        for i in enabledOverlays where i < atomic.overlays.count {
            _ = drmModeSetPlane(device.fd.rawValue, atomic.overlays[i].info.id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        }
        enabledOverlays = []
    }

    public func prepareLayer(_ bitmap: Bitmap) {
        guard presentsLayers else { return }
        _ = try? layerBuffers.framebuffer(for: bitmap, device: device)
    }

    public func present(layers: [FrameLayer], background: RGBColor, showTime: Int64) throws(DisplayError) -> Bool {
        guard presentsLayers, let atomic, !layers.isEmpty else { return false }
        if flipPending { try waitForFlipLogged() }
        /// A framebuffer for a layer's bitmap, or nil (recorded) when none can be made (ENOMEM:
        /// a driver's contiguous memory pool is full).
        func framebuffer(_ bitmap: Bitmap) -> UInt32? {
            do { return try layerBuffers.framebuffer(for: bitmap, device: device) } catch {
                layerBufferFailure = error.description
                return nil
            }
        }
        // The bottom layer goes on the primary plane when it is the whole screen; otherwise a
        // dumb buffer filled with the background does (the primary must cover the CRTC on many
        // drivers), the layers above it.
        var stack = layers[...]
        var primary: DRMAtomicOutput.PlaneState
        var backdrop: Int?
        var keep: [ObjectIdentifier] = []
        if let first = stack.first, first.coversFrame(width: mode.width, height: mode.height) {
            guard let fb = framebuffer(first.bitmap) else { planeRefusals += 1; return false }
            primary = .init(fbID: fb, srcWidth: first.bitmap.width, srcHeight: first.bitmap.height, x: 0, y: 0,
                            width: mode.width, height: mode.height, alpha: nil, zpos: nil)
            keep.append(ObjectIdentifier(first.bitmap))
            stack = stack.dropFirst()
        } else {
            let index = 1 - front
            if backdropColour[index] != background.xrgb {
                let b = buffers[index]
                for y in 0..<mode.height {
                    (b.map + y * b.pitch).assumingMemoryBound(to: UInt32.self)
                        .update(repeating: background.xrgb, count: mode.width)
                }
                backdropColour[index] = background.xrgb
            }
            backdrop = index
            primary = fullScreen(buffers[index])
        }
        guard stack.count <= atomic.overlays.count else { return false }
        var states: [DRMAtomicOutput.PlaneState?] = []
        var shape = "p:\(backdrop == nil ? "layer" : "backdrop")"
        for (i, layer) in zip(atomic.overlays.indices, stack) {
            let plane = atomic.overlays[i].info
            if layer.premultiplied ? !plane.takesARGB8888 : !plane.takesXRGB8888 { return false }
            if layer.alpha != FrameLayer.opaque && plane.alphaRange == nil { return false }
            guard let fb = framebuffer(layer.bitmap) else { planeRefusals += 1; return false }
            keep.append(ObjectIdentifier(layer.bitmap))
            states.append(.init(fbID: fb, srcWidth: layer.bitmap.width, srcHeight: layer.bitmap.height,
                                x: layer.x, y: layer.y, width: layer.width, height: layer.height,
                                alpha: plane.alphaRange.map { Self.planeAlpha(layer.alpha, range: $0) },
                                zpos: plane.zposMutable ? UInt64(i + 1) : nil))
            let inside = layer.x >= 0 && layer.y >= 0 && layer.x + layer.width <= mode.width
                && layer.y + layer.height <= mode.height
            shape += "|\(i):\(layer.premultiplied ? "A" : "X")\(layer.bitmap.width)x\(layer.bitmap.height)"
                + "->\(layer.width)x\(layer.height)\(inside ? "" : "~")\(layer.alpha == FrameLayer.opaque ? "" : "a")"
        }
        let off = Set(atomic.overlays.indices).subtracting(states.indices)
        let refused: Set<Int32> = [EINVAL, ERANGE, ENOSPC, EOPNOTSUPP]
        if atomic.testedShapes[shape] == nil {
            do {
                try atomic.commit(primary: primary, overlays: states, switchOff: off,
                                  extras: .init(modeset: !crtcSet), test: true, event: nil)
                atomic.testedShapes[shape] = true
            } catch where refused.contains(error.errno) {
                atomic.testedShapes[shape] = false
            } catch {
                throw .system(error)
            }
        }
        guard atomic.testedShapes[shape] == true else { planeRefusals += 1; return false }
        do {
            try atomicShow(primary: primary, overlays: states, modeset: !crtcSet)
        } catch where refused.contains(error.errno) {
            atomic.testedShapes[shape] = false   // accepted by TEST_ONLY at another position, refused here
            planeRefusals += 1
            return false
        } catch {
            throw .system(error)
        }
        if let backdrop { front = backdrop }
        layersOnScreen = layers
        layerBuffers.release(keeping: keep, device: device)
        return true
    }

    /// A layer's alpha (0...0xFFFF) on a plane whose "alpha" property has `range` (0...0xFFFF
    /// for drm_plane_create_alpha_property; scaled for a driver with another top).
    static func planeAlpha(_ alpha: UInt16, range: ClosedRange<UInt64>) -> UInt16 {
        range.upperBound == 0xFFFF ? alpha : UInt16(clamping: UInt64(alpha) * range.upperBound / 0xFFFF)
    }

    private func waitForFlipLogged() throws(DisplayError) {
        do { try waitForFlipOrCount() } catch { throw .system(error) }
    }

    /// What the screen shows while layers are on planes: the frame composed by the display
    /// controller, read through the writeback connector where the driver has one for this CRTC
    /// (an atomic commit of the same planes with WRITEBACK_FB_ID and WRITEBACK_OUT_FENCE_PTR,
    /// the out-fence waited for); else the layers composed on the
    /// CPU (``KioskCore/LayerComposer``) over the backdrop. The first capture attaches the
    /// writeback connector to the CRTC (a modeset); it stays attached, so later captures are not.
    func planeScreenImage(_ layers: [FrameLayer]) throws(DisplayError) -> Bitmap {
        if let atomic, atomic.writeback != nil {
            do { return try writebackImage() } catch {
                if writebackFailure != error.description {
                    Log.warning("writeback failed", path: devicePath,
                                reason: "\(error); the layers are composed for the screenshot")
                }
                writebackFailure = error.description
            }
        }
        let frame = Bitmap(width: mode.width, height: mode.height)
        LayerComposer.compose(layers, background: RGBColor(xrgb: backdropColour[front] ?? 0xFF00_0000), into: frame)
        return frame
    }

    /// One writeback capture of the planes as last committed (DRM writeback, drm_writeback.c).
    private func writebackImage() throws(SystemError) -> Bitmap {
        guard let atomic, let layers = layersOnScreen else {
            throw SystemError(operation: "writeback", path: devicePath, errno: ENODEV)
        }
        let target: DumbBuffer
        do { target = try DumbBuffer(device: device, width: mode.width, height: mode.height) } catch {
            throw SystemError(operation: "writeback buffer", path: devicePath, errno: ENOMEM)
        }
        defer { target.destroy(device: device) }
        if flipPending { try waitForFlipOrCount() }
        // The same state as on screen: rebuild it from the layers shown.
        var primary = fullScreen(buffers[front])
        var states: [DRMAtomicOutput.PlaneState?] = []
        var stack = layers[...]
        if let first = stack.first, first.coversFrame(width: mode.width, height: mode.height),
           let fb = layerBuffers.existingFramebuffer(for: first.bitmap) {
            primary.fbID = fb
            primary.srcWidth = first.bitmap.width; primary.srcHeight = first.bitmap.height
            stack = stack.dropFirst()
        }
        for (i, layer) in zip(atomic.overlays.indices, stack) {
            guard let fb = layerBuffers.existingFramebuffer(for: layer.bitmap) else { continue }
            let plane = atomic.overlays[i].info
            states.append(.init(fbID: fb, srcWidth: layer.bitmap.width, srcHeight: layer.bitmap.height,
                                x: layer.x, y: layer.y, width: layer.width, height: layer.height,
                                alpha: plane.alphaRange.map { Self.planeAlpha(layer.alpha, range: $0) },
                                zpos: plane.zposMutable ? UInt64(i + 1) : nil))
        }
        let fence = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        fence.initialize(to: -1)
        defer { if fence.pointee >= 0 { close(fence.pointee) }; fence.deallocate() }
        try atomicShow(primary: primary, overlays: states, modeset: false,
                       extras: .init(writebackFB: target.fbID, writebackFence: fence))
        var p = pollfd(fd: fence.pointee, events: Int16(POLLIN), revents: 0)
        let ready = try syscall("poll (writeback out-fence)", path: devicePath) {
            poll(&p, 1, Int32(Self.flipTimeoutMilliseconds))
        }
        // The writeback connector stays on the CRTC, without a framebuffer (it costs nothing
        // then): detaching it would be one more modeset per screenshot. restore()'s
        // drmModeSetCrtc with our connector alone takes it off.
        guard ready == 1 else {
            throw SystemError(operation: "writeback out-fence", path: devicePath, errno: ETIMEDOUT)
        }
        return ScanoutReader.read(from: UnsafeRawPointer(target.map), stride: target.pitch, format: .xrgb8888,
                                  width: mode.width, height: mode.height)
    }
}

/// The framebuffers of the layers' bitmaps: a dumb buffer per bitmap (XRGB8888, or ARGB8888 for
/// a premultiplied one), its pixels copied in once, kept while the bitmap is on screen or was
/// used lately, keyed by the bitmap's identity (a layer's bitmap is never written again: see
/// ``KioskCore/FrameLayer``). Holds at most ``budgetFrames`` whole-screen frames' worth besides
/// those on screen: the plane path's memory beyond the two scanout buffers (docs/planes.md).
struct LayerFramebuffers {
    /// Bytes of framebuffers kept besides those on screen, in whole frames of the largest bitmap
    /// seen: 5 (three slots, the placeholder, one spare).
    static let budgetFrames = 5

    private struct Entry {
        weak var bitmap: Bitmap?
        let id: ObjectIdentifier
        let buffer: DumbBuffer
        var lastUse: Int
    }
    private var entries: [Entry] = []
    private var clock = 0
    private var largestFrame = 0
    /// Bytes held in framebuffers now.
    private(set) var bytes = 0
    /// How many bitmaps were copied into framebuffers so far.
    private(set) var uploads = 0

    /// The framebuffer of `bitmap`, made (and its pixels copied) on first use. Throws
    /// ``DisplayError`` when the dumb buffer cannot be made.
    mutating func framebuffer(for bitmap: Bitmap, device: DRMDevice) throws(DisplayError) -> UInt32 {
        clock += 1
        let id = ObjectIdentifier(bitmap)
        if let i = entries.firstIndex(where: { $0.id == id && $0.bitmap === bitmap }) {
            entries[i].lastUse = clock
            return entries[i].buffer.fbID
        }
        let format = bitmap.hasAlpha ? kc_drm_format_argb8888 : kc_drm_format_xrgb8888
        let buffer = try DumbBuffer(device: device, width: bitmap.width, height: bitmap.height, format: format)
        let rowBytes = bitmap.width * 4
        for y in 0..<bitmap.height {
            (buffer.map + y * buffer.pitch).copyMemory(from: UnsafeRawPointer(bitmap.row(y)), byteCount: rowBytes)
        }
        entries.append(Entry(bitmap: bitmap, id: id, buffer: buffer, lastUse: clock))
        bytes += buffer.size
        uploads += 1
        largestFrame = max(largestFrame, buffer.size)
        return buffer.fbID
    }

    /// The framebuffer already made for `bitmap`, or nil.
    func existingFramebuffer(for bitmap: Bitmap) -> UInt32? {
        entries.first { $0.id == ObjectIdentifier(bitmap) && $0.bitmap === bitmap }?.buffer.fbID
    }

    /// Destroys the framebuffers of bitmaps that are gone, then the least recently used beyond the
    /// budget, never those in `keeping` (on screen); `all`: every one (the display closes).
    mutating func release(keeping: [ObjectIdentifier], device: DRMDevice, all: Bool = false) {
        var kept: [Entry] = []
        for e in entries.sorted(by: { $0.lastUse > $1.lastUse }) {
            let onScreen = keeping.contains(e.id)
            let budget = Self.budgetFrames * largestFrame
            let heldBesides = kept.filter { !keeping.contains($0.id) }.reduce(0) { $0 + $1.buffer.size }
            if !all && (onScreen || (e.bitmap != nil && heldBesides + e.buffer.size <= budget)) {
                kept.append(e)
            } else {
                bytes -= e.buffer.size
                e.buffer.destroy(device: device)
            }
        }
        entries = kept
    }
}
