// SPDX-License-Identifier: Apache-2.0
import Glibc
import CLibDRM
import CKioskDRM
import KioskCore
import KioskSystem

/// The KMS properties of one object (connector, CRTC, plane) by name: atomic commits address
/// properties by ID, and the IDs differ by driver, so they are looked up once by their names
/// (`FB_ID`, `CRTC_ID`, `MODE_ID`, `alpha` ...; the names are the kernel's, drm_mode_config.c,
/// drm_blend.c, drm_writeback.c).
struct DRMObjectProperties {
    /// The object's ID.
    let objectID: UInt32
    /// Property IDs by name.
    let ids: [String: UInt32]
    /// Current values by name (as read at lookup).
    let values: [String: UInt64]
    /// The range of each range property by name (`alpha`: 0...0xffff, `zpos`: driver's own).
    let ranges: [String: ClosedRange<UInt64>]
    /// Names of the immutable properties (an immutable `zpos` is the plane's fixed place).
    let immutable: Set<String>

    /// Reads every property of `objectID` (drmModeObjectGetProperties, drmModeGetProperty);
    /// nil when the object cannot be read.
    init?(fd: Int32, objectID: UInt32, type: UInt32) {
        guard let props = drmModeObjectGetProperties(fd, objectID, type) else { return nil }
        defer { drmModeFreeObjectProperties(props) }
        var ids: [String: UInt32] = [:], values: [String: UInt64] = [:]
        var ranges: [String: ClosedRange<UInt64>] = [:], immutable: Set<String> = []
        for i in 0..<Int(props.pointee.count_props) {
            let id = props.pointee.props[i]
            guard let prop = drmModeGetProperty(fd, id) else { continue }
            let name = withUnsafeBytes(of: prop.pointee.name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            ids[name] = id
            values[name] = props.pointee.prop_values[i]
            if prop.pointee.flags & UInt32(DRM_MODE_PROP_IMMUTABLE) != 0 { immutable.insert(name) }
            // DRM_MODE_PROP_SIGNED_RANGE = DRM_MODE_PROP_TYPE(2), drm_mode.h
            let isRange = prop.pointee.flags & UInt32(DRM_MODE_PROP_RANGE) != 0
                || prop.pointee.flags & UInt32(DRM_MODE_PROP_EXTENDED_TYPE) == 0x80
            if isRange, prop.pointee.count_values >= 2 {
                let lo = prop.pointee.values[0], hi = prop.pointee.values[1]
                if lo <= hi { ranges[name] = lo...hi }
            }
            drmModeFreeProperty(prop)
        }
        self.objectID = objectID; self.ids = ids; self.values = values; self.ranges = ranges; self.immutable = immutable
    }

    subscript(_ name: String) -> UInt32? { ids[name] }
}

/// One KMS plane as discovery found it (drmModeGetPlaneResources, drmModeGetPlane and the
/// plane's properties).
public struct DRMPlaneInfo: Sendable, CustomStringConvertible {
    /// Primary (carries the CRTC's picture), overlay, or cursor (DRM_PLANE_TYPE_*, xf86drmMode.h).
    public enum Kind: String, Sendable { case primary, overlay, cursor }
    /// The plane's object ID.
    public var id: UInt32
    /// Its `type` property.
    public var kind: Kind
    /// Pixel formats it scans out (DRM fourcc codes, drm_fourcc.h).
    public var formats: [UInt32]
    /// Bit mask of the CRTCs it can feed (bit i: the i-th CRTC of the resources).
    public var possibleCrtcs: UInt32
    /// The range of its "alpha" property (drm_plane_create_alpha_property: 0 ... 0xffff), nil
    /// when it has none.
    public var alphaRange: ClosedRange<UInt64>?
    /// Its "zpos" (stacking order, higher on top; drm_plane_create_zpos_property), nil when it
    /// has none: planes are then taken to stack in the kernel's plane order, primary lowest.
    public var zpos: UInt64?
    /// Whether "zpos" can be set (a mutable zpos property).
    public var zposMutable: Bool

    /// Scans out XRGB8888 (opaque pictures).
    public var takesXRGB8888: Bool { formats.contains(kc_drm_format_xrgb8888) }
    /// Scans out ARGB8888 (page dots, the clock: premultiplied per-pixel alpha).
    public var takesARGB8888: Bool { formats.contains(kc_drm_format_argb8888) }

    /// `plane 31 overlay, alpha, zpos 2, 5 formats`.
    public var description: String {
        "plane \(id) \(kind.rawValue)" + (alphaRange == nil ? "" : ", alpha")
            + (zpos.map { ", zpos \($0)" + (zposMutable ? "" : " fixed") } ?? "")
            + ", \(counted(formats.count, "format"))"
    }
}

/// The atomic side of a DRM output (DRM_CLIENT_CAP_ATOMIC; kmscube's drm-atomic): the property
/// IDs of its connector, CRTC and planes, the mode blob, and the commits made from them.
///
/// Every commit names the whole state this program controls on the CRTC: the primary plane with
/// its framebuffer, each overlay plane either with a framebuffer or switched off (FB_ID 0,
/// CRTC_ID 0). A commit is first asked for with `DRM_MODE_ATOMIC_TEST_ONLY` whenever its shape
/// (which planes, formats and sizes) was not tried before (``testedShapes``); frames of a shape
/// already accepted (a fade's alpha ramp: only the alpha changes) are committed straight away.
final class DRMAtomicOutput {
    let fd: Int32
    let path: String
    let crtcID: UInt32
    let connectorID: UInt32
    let connector: DRMObjectProperties
    let crtc: DRMObjectProperties
    /// The CRTC's primary plane.
    let primary: (info: DRMPlaneInfo, props: DRMObjectProperties)
    /// The overlay planes that can feed the CRTC, bottom to top (by zpos, else in the kernel's order).
    let overlays: [(info: DRMPlaneInfo, props: DRMObjectProperties)]
    /// The writeback connector that can take this CRTC's composed frame, if the driver has one
    /// (DRM_MODE_CONNECTOR_WRITEBACK, drm_writeback.c), with its properties.
    let writeback: DRMObjectProperties?
    /// The mode's property blob (drmModeCreatePropertyBlob), for the modeset commit's MODE_ID.
    private(set) var modeBlob: UInt32 = 0
    /// The shapes TEST_ONLY accepted (true) or refused (false).
    var testedShapes: [String: Bool] = [:]

    /// Switches the client to atomic (DRM_CLIENT_CAP_ATOMIC, which also exposes every plane) and
    /// looks up what commits need; nil when the driver has no atomic modesetting (the caller keeps
    /// the legacy calls) or a property every atomic driver has is missing.
    init?(device: DRMDevice, connectorID: UInt32, crtcID: UInt32, crtcIndex: Int, mode: drmModeModeInfo) {
        let fd = device.fd.rawValue
        guard drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 1) == 0 else { return nil }
        _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_WRITEBACK_CONNECTORS), 1)
        self.fd = fd
        path = device.path
        self.crtcID = crtcID
        self.connectorID = connectorID
        guard let connector = DRMObjectProperties(fd: fd, objectID: connectorID,
                                                  type: UInt32(DRM_MODE_OBJECT_CONNECTOR)),
              let crtc = DRMObjectProperties(fd: fd, objectID: crtcID, type: UInt32(DRM_MODE_OBJECT_CRTC)),
              connector["CRTC_ID"] != nil, crtc["MODE_ID"] != nil, crtc["ACTIVE"] != nil else {
            _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 0)
            return nil
        }
        self.connector = connector
        self.crtc = crtc
        let planes = Self.planes(fd: fd, crtcIndex: crtcIndex)
        let needed = ["FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H", "CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H"]
        let usable = planes.filter { p in needed.allSatisfy { p.props[$0] != nil } }
        // The primary plane already on this CRTC, else the first primary that can feed it.
        guard let primary
                = usable.first(where: { $0.info.kind == .primary && $0.props.values["CRTC_ID"] == UInt64(crtcID) })
                ?? usable.first(where: { $0.info.kind == .primary }) else {
            _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 0)
            return nil
        }
        self.primary = primary
        // Overlays stack in zpos order where the driver says it, else in the kernel's plane order.
        overlays = usable.enumerated().filter { $0.element.info.kind == .overlay }
            .sorted {
                ($0.element.info.zpos ?? UInt64($0.offset), $0.offset)
                    < ($1.element.info.zpos ?? UInt64($1.offset), $1.offset)
            }
            .map(\.element)
        writeback = Self.writebackConnector(fd: fd, crtcIndex: crtcIndex)
        var m = mode
        var blob: UInt32 = 0
        guard drmModeCreatePropertyBlob(fd, &m, MemoryLayout<drmModeModeInfo>.size, &blob) == 0 else {
            _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 0)
            return nil
        }
        modeBlob = blob
    }

    deinit {
        if modeBlob != 0 { _ = drmModeDestroyPropertyBlob(fd, modeBlob) }
    }

    /// Every plane that can feed the CRTC at `crtcIndex`, with its properties.
    static func planes(fd: Int32, crtcIndex: Int) -> [(info: DRMPlaneInfo, props: DRMObjectProperties)] {
        guard let res = drmModeGetPlaneResources(fd) else { return [] }
        defer { drmModeFreePlaneResources(res) }
        var out: [(info: DRMPlaneInfo, props: DRMObjectProperties)] = []
        for i in 0..<Int(res.pointee.count_planes) {
            let id = res.pointee.planes[i]
            guard let plane = drmModeGetPlane(fd, id) else { continue }
            let formats = Array(UnsafeBufferPointer(start: plane.pointee.formats,
                                                    count: Int(plane.pointee.count_formats)))
            let possible = plane.pointee.possible_crtcs
            drmModeFreePlane(plane)
            guard crtcIndex < 32, possible & (1 << UInt32(crtcIndex)) != 0,
                  let props = DRMObjectProperties(fd: fd, objectID: id, type: UInt32(DRM_MODE_OBJECT_PLANE)) else {
                continue
            }
            let kind: DRMPlaneInfo.Kind
            switch props.values["type"].map(Int32.init(truncatingIfNeeded:)) {
            case DRM_PLANE_TYPE_PRIMARY: kind = .primary
            case DRM_PLANE_TYPE_CURSOR: kind = .cursor
            default: kind = .overlay
            }
            let info = DRMPlaneInfo(id: id, kind: kind, formats: formats, possibleCrtcs: possible,
                                    alphaRange: props.ranges["alpha"], zpos: props.values["zpos"],
                                    zposMutable: props["zpos"] != nil && !props.immutable.contains("zpos"))
            out.append((info, props))
        }
        return out
    }

    /// The first writeback connector whose encoder can take the CRTC at `crtcIndex`.
    static func writebackConnector(fd: Int32, crtcIndex: Int) -> DRMObjectProperties? {
        guard let res = drmModeGetResources(fd) else { return nil }
        defer { drmModeFreeResources(res) }
        for i in 0..<Int(res.pointee.count_connectors) {
            let id = res.pointee.connectors[i]
            guard let c = drmModeGetConnectorCurrent(fd, id) else { continue }
            let isWriteback = c.pointee.connector_type == UInt32(DRM_MODE_CONNECTOR_WRITEBACK)
            let encoders = Array(UnsafeBufferPointer(start: c.pointee.encoders, count: Int(c.pointee.count_encoders)))
            drmModeFreeConnector(c)
            guard isWriteback else { continue }
            let feeds = encoders.contains { e in
                guard let enc = drmModeGetEncoder(fd, e) else { return false }
                defer { drmModeFreeEncoder(enc) }
                return crtcIndex < 32 && enc.pointee.possible_crtcs & (1 << UInt32(crtcIndex)) != 0
            }
            if feeds, let props = DRMObjectProperties(fd: fd, objectID: id, type: UInt32(DRM_MODE_OBJECT_CONNECTOR)),
               props["WRITEBACK_FB_ID"] != nil, props["WRITEBACK_OUT_FENCE_PTR"] != nil, props["CRTC_ID"] != nil {
                return props
            }
        }
        return nil
    }

    /// One plane's part of a commit: the framebuffer, where its source rectangle (whole
    /// framebuffer, `srcWidth` x `srcHeight` pixels) lands on the CRTC (may reach past its edges,
    /// when the driver allows it; scaled when the sizes differ), and the plane alpha (nil: leave
    /// the property alone).
    struct PlaneState {
        var fbID: UInt32
        var srcWidth: Int, srcHeight: Int
        var x: Int, y: Int, width: Int, height: Int
        var alpha: UInt16?
        /// Zpos to set on a plane whose zpos is mutable (nil: leave it).
        var zpos: UInt64?
    }

    /// What one commit does beyond the planes.
    struct Extras {
        /// A full modeset: the connector on the CRTC, MODE_ID and ACTIVE (needs ALLOW_MODESET).
        var modeset = false
        /// Writeback of the composed frame: the writeback connector on the CRTC, its framebuffer
        /// and where to put the out-fence descriptor.
        var writebackFB: UInt32 = 0
        var writebackFence: UnsafeMutablePointer<Int32>?
    }

    /// Builds and sends one atomic commit: `primary` on the primary plane, `overlays[i]` on the
    /// i-th overlay plane of ``overlays``, every other overlay in `switchOff` switched off.
    /// Flags: TEST_ONLY (`test`), else NONBLOCK + PAGE_FLIP_EVENT with `event` as the event's user
    /// data (set to 0 here, to 1 by kc_drm_wait_page_flip when the event comes); ALLOW_MODESET for
    /// a modeset or a writeback capture.
    /// Throws ``SystemError`` (`drmModeAtomicCommit`: EINVAL or ERANGE for a state the driver
    /// refuses, EBUSY while a commit is pending, EACCES without DRM master).
    func commit(primary primaryState: PlaneState, overlays states: [PlaneState?], switchOff: Set<Int>,
                extras: Extras = Extras(), test: Bool, event: UnsafeMutablePointer<Int32>?) throws(SystemError) {
        guard let req = drmModeAtomicAlloc() else {
            throw SystemError(operation: "drmModeAtomicAlloc", path: path, errno: ENOMEM)
        }
        defer { drmModeAtomicFree(req) }
        func add(_ object: DRMObjectProperties, _ name: String, _ value: UInt64) {
            if let id = object[name] { _ = drmModeAtomicAddProperty(req, object.objectID, id, value) }
        }
        func addPlane(_ plane: DRMObjectProperties, _ s: PlaneState?) {
            guard let s else {
                add(plane, "FB_ID", 0); add(plane, "CRTC_ID", 0)
                return
            }
            add(plane, "FB_ID", UInt64(s.fbID)); add(plane, "CRTC_ID", UInt64(crtcID))
            // SRC_* are 16.16 fixed point; CRTC_X/Y are signed (a plane may start left of the screen).
            add(plane, "SRC_X", 0); add(plane, "SRC_Y", 0)
            add(plane, "SRC_W", UInt64(s.srcWidth) << 16); add(plane, "SRC_H", UInt64(s.srcHeight) << 16)
            add(plane, "CRTC_X", UInt64(bitPattern: Int64(s.x))); add(plane, "CRTC_Y", UInt64(bitPattern: Int64(s.y)))
            add(plane, "CRTC_W", UInt64(s.width)); add(plane, "CRTC_H", UInt64(s.height))
            if let alpha = s.alpha, plane["alpha"] != nil { add(plane, "alpha", UInt64(alpha)) }
            if let zpos = s.zpos, plane["zpos"] != nil, !plane.immutable.contains("zpos") { add(plane, "zpos", zpos) }
        }
        var flags: UInt32 = test
            ? UInt32(DRM_MODE_ATOMIC_TEST_ONLY) : UInt32(DRM_MODE_ATOMIC_NONBLOCK) | UInt32(DRM_MODE_PAGE_FLIP_EVENT)
        if extras.modeset {
            add(connector, "CRTC_ID", UInt64(crtcID))
            add(crtc, "MODE_ID", UInt64(modeBlob))
            add(crtc, "ACTIVE", 1)
            flags |= UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET)
        }
        if let wb = writeback {
            if extras.writebackFB != 0, let fence = extras.writebackFence {
                add(wb, "CRTC_ID", UInt64(crtcID))
                add(wb, "WRITEBACK_FB_ID", UInt64(extras.writebackFB))
                add(wb, "WRITEBACK_OUT_FENCE_PTR", UInt64(UInt(bitPattern: fence)))
                flags |= UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET)
            }
        }
        addPlane(primary.props, primaryState)
        for (i, plane) in overlays.enumerated() {
            if i < states.count, let s = states[i] {
                addPlane(plane.props, s)
            } else if switchOff.contains(i) {
                addPlane(plane.props, nil)
            }
        }
        let fd = self.fd
        let userData = test ? nil : UnsafeMutableRawPointer(event)
        if !test { event?.pointee = 0 }   // set to 1 by the flip event of this commit (kc_drm.c)
        try negativeErrnoCall("drmModeAtomicCommit" + (test ? " (TEST_ONLY)" : ""), path: path,
                              minusOneSetsErrno: true) {
            drmModeAtomicCommit(fd, req, flags, userData)
        }
    }
}
