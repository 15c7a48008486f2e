// SPDX-License-Identifier: Apache-2.0
import Glibc
import CLibDRM
import KioskCore
import KioskSystem

/// Whether something is plugged into a connector (`drmModeConnection`: DRM_MODE_CONNECTED = 1,
/// DRM_MODE_DISCONNECTED = 2, DRM_MODE_UNKNOWNCONNECTION = 3, xf86drmMode.h).
public enum DRMConnectorStatus: String, Sendable {
    case connected, disconnected, unknown
}

/// One KMS connector of a DRM device, as discovery found it.
public struct DRMConnectorInfo: Sendable, CustomStringConvertible {
    /// The connector's object ID.
    public var id: UInt32
    /// The kernel's name: type and per-type index, e.g. `HDMI-A-1`, `eDP-1`, `Virtual-1`
    /// (the names in /sys/class/drm/card0-*, from drmModeGetConnectorTypeName).
    public var name: String
    /// Connection status.
    public var status: DRMConnectorStatus
    /// Modes the connector offers, in the kernel's order (the preferred one usually first).
    public var modes: [DRMMode]

    /// `HDMI-A-1: connected, 12 modes`.
    public var description: String { "\(name): \(status.rawValue), \(counted(modes.count, "mode"))" }
    /// Connected (or status unknown) and offering at least one mode.
    public var isUsable: Bool { status != .disconnected && !modes.isEmpty }
}

/// An open DRM device node (`/dev/dri/cardN`) and the KMS discovery on it: connectors,
/// their modes, and a CRTC that an encoder of the connector can drive. The shape of
/// kmscube's drm-common: find connector, then encoder, then CRTC.
///
/// Ownership: owns the file descriptor (closed on deinit). Every failure is a
/// ``DisplayError`` carrying the device path and the call that failed.
final class DRMDevice {
    /// The device node path, e.g. `/dev/dri/card0`.
    let path: String
    /// The open device (O_RDWR).
    let fd: FileDescriptor
    /// CRTC object IDs, in the order the `possible_crtcs` bit masks of encoders refer to.
    let crtcIDs: [UInt32]
    /// Connector object IDs.
    let connectorIDs: [UInt32]
    /// The kernel driver's name (`drmGetVersion`), e.g. `bochs-drm`, `virtio_gpu`, `i915`.
    let driverName: String
    /// The CRTCs the ``DRMDisplay``s on this device drive now: each output of a card gets a CRTC
    /// of its own (docs/displays.md "Several outputs").
    var crtcsInUse: Set<UInt32> = []
    /// Set when a display on this device found it gone (ENODEV, its node removed): ``open(_:)``
    /// opens the node again instead of handing this one out.
    var isGone = false

    /// The devices open now, by path, held weakly: a card has one DRM master, so the outputs of
    /// one card share one open device (``open(_:)``). Only the frame loop's thread opens displays.
    nonisolated(unsafe) private static var openDevices: [String: WeakDevice] = [:]
    private struct WeakDevice { weak var device: DRMDevice? }

    /// A connector with what ``DRMDisplay`` needs beyond ``DRMConnectorInfo``.
    struct Connector {
        var info: DRMConnectorInfo
        /// The modes as the kernel gave them (passed back to drmModeSetCrtc), parallel to `info.modes`.
        var rawModes: [drmModeModeInfo]
        /// The encoder currently attached, or 0.
        var currentEncoderID: UInt32
        /// Every encoder that can feed this connector.
        var encoderIDs: [UInt32]
    }

    private init(path: String, fd: FileDescriptor, crtcIDs: [UInt32], connectorIDs: [UInt32], driverName: String) {
        self.path = path; self.fd = fd; self.crtcIDs = crtcIDs; self.connectorIDs = connectorIDs
        self.driverName = driverName
    }

    /// The DRM primary nodes present: `/dev/dri/card0`, `/dev/dri/card1` ... in numeric order.
    static func cardPaths(directory: String = "/dev/dri") -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var numbers: [Int] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix("card"), let n = Int(name.dropFirst(4)) { numbers.append(n) }
        }
        return numbers.sorted().map { "\(directory)/card\($0)" }
    }

    /// Opens `path` read-write, reads its KMS resources and makes sure this process is DRM master.
    ///
    /// - Throws: ``DisplayError/system(_:advice:)`` when open fails (for EACCES/EPERM the message
    ///   names the group that owns the node: on Debian `video`); ``DisplayError/notKMS(device:driver:error:)``
    ///   when the node is not a KMS device (no modesetting: a render-only GPU),
    ///   ``DisplayError/notMaster(device:error:)`` when another program (a compositor, a display
    ///   manager) holds DRM master.
    static func open(_ path: String) throws(DisplayError) -> DRMDevice {
        if let shared = openDevices[path]?.device, !shared.isGone { return shared }
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path, O_RDWR)
        } catch {
            throw openError(error, path: path)
        }
        var driver: String?
        if let version = drmGetVersion(fd.rawValue) {
            if let name = version.pointee.name { driver = String(cString: name) }
            drmFreeVersion(version)
        }
        guard let res = drmModeGetResources(fd.rawValue) else {
            let e = SystemError(operation: "drmModeGetResources", path: path, errno: Glibc.errno)
            throw .notKMS(device: path, driver: driver, error: e)
        }
        defer { drmModeFreeResources(res) }
        let crtcs = Array(UnsafeBufferPointer(start: res.pointee.crtcs, count: Int(res.pointee.count_crtcs)))
        let connectors = Array(UnsafeBufferPointer(start: res.pointee.connectors,
                                                   count: Int(res.pointee.count_connectors)))
        let device = DRMDevice(path: path, fd: fd, crtcIDs: crtcs, connectorIDs: connectors,
                               driverName: driver ?? "unknown driver")
        try device.becomeMaster()
        openDevices = openDevices.filter { $0.value.device != nil }
        openDevices[path] = WeakDevice(device: device)
        return device
    }

    /// The DisplayError for a failed open: EACCES/EPERM say which group the user needs.
    static func openError(_ error: SystemError, path: String) -> DisplayError {
        switch error.errno {
        case EACCES, EPERM:
            let group = owningGroup(of: path) ?? "video"
            return .system(error, advice: "the user needs to be in the '\(group)' group, which owns \(path) "
                + "(usermod -aG \(group) USER, then log in again), or the service needs SupplementaryGroups=\(group)")
        default:
            return .system(error)
        }
    }

    /// The name of the group owning `path` (Debian: `video` for /dev/dri/card*, /dev/fb*), or nil.
    static func owningGroup(of path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0, let gr = getgrgid(st.st_gid), let name = gr.pointee.gr_name else { return nil }
        return String(cString: name)
    }

    /// Only the DRM master may set CRTCs and flip. The first process to open a card becomes
    /// master by itself; otherwise try drmSetMaster once.
    private func becomeMaster() throws(DisplayError) {
        if drmIsMaster(fd.rawValue) != 0 { return }
        let r = drmSetMaster(fd.rawValue)
        if r == 0 { return }
        let e = SystemError(operation: "drmSetMaster", path: path, errno: r < -1 ? -r : Glibc.errno)
        throw .notMaster(device: path, error: e)
    }

    /// Gives DRM master up (drmDropMaster), e.g. when the VT is switched away, so that the
    /// console (the kernel's fbdev emulation) or another session can set its mode. Since Linux 5.8
    /// the process that was master may do this (and take it back) without CAP_SYS_ADMIN.
    func dropMaster() throws(SystemError) {
        let fd = fd.rawValue
        try negativeErrnoCall("drmDropMaster", path: path, minusOneSetsErrno: true) { drmDropMaster(fd) }
    }

    /// Takes DRM master back (drmSetMaster), e.g. when the VT is switched back to.
    /// EINVAL or EBUSY: another process is master now.
    func setMaster() throws(SystemError) {
        if drmIsMaster(fd.rawValue) != 0 { return }
        let fd = fd.rawValue
        try negativeErrnoCall("drmSetMaster", path: path, minusOneSetsErrno: true) { drmSetMaster(fd) }
    }

    /// The ID of the property named `name` (e.g. `DPMS`) of the KMS object `objectID` of type
    /// `objectType` (DRM_MODE_OBJECT_CONNECTOR ...), looked up by name as the IDs differ by
    /// driver; nil when the object has no such property.
    func propertyID(named name: String, object objectID: UInt32, type objectType: UInt32) -> UInt32? {
        guard let props = drmModeObjectGetProperties(fd.rawValue, objectID, objectType) else { return nil }
        defer { drmModeFreeObjectProperties(props) }
        for i in 0..<Int(props.pointee.count_props) {
            let id = props.pointee.props[i]
            guard let prop = drmModeGetProperty(fd.rawValue, id) else { continue }
            let propName = withUnsafeBytes(of: prop.pointee.name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            drmModeFreeProperty(prop)
            if propName == name { return id }
        }
        return nil
    }

    /// The current value of property `propertyID` on object `objectID`, or nil.
    func propertyValue(_ propertyID: UInt32, object objectID: UInt32, type objectType: UInt32) -> UInt64? {
        guard let props = drmModeObjectGetProperties(fd.rawValue, objectID, objectType) else { return nil }
        defer { drmModeFreeObjectProperties(props) }
        for i in 0..<Int(props.pointee.count_props) where props.pointee.props[i] == propertyID {
            return props.pointee.prop_values[i]
        }
        return nil
    }

    /// Every connector with its status and modes (drmModeGetConnector probes outputs, as
    /// kmscube does; on real hardware this can take tens of milliseconds per connector).
    /// `probe` false: as the kernel last probed them (drmModeGetConnectorCurrent, no DDC read).
    func connectors(probe: Bool = true) throws(DisplayError) -> [Connector] {
        var out: [Connector] = []
        for id in connectorIDs {
            guard let c = probe ? drmModeGetConnector(fd.rawValue, id)
                                : drmModeGetConnectorCurrent(fd.rawValue, id) else {
                throw .system(SystemError(operation: "drmModeGetConnector \(id)", path: path, errno: Glibc.errno))
            }
            defer { drmModeFreeConnector(c) }
            let raw = Array(UnsafeBufferPointer(start: c.pointee.modes, count: Int(c.pointee.count_modes)))
            let typeName = drmModeGetConnectorTypeName(c.pointee.connector_type).map { String(cString: $0) }
                ?? "Unknown"
            let status: DRMConnectorStatus
            switch c.pointee.connection {
            case DRM_MODE_CONNECTED: status = .connected
            case DRM_MODE_DISCONNECTED: status = .disconnected
            default: status = .unknown
            }
            let info = DRMConnectorInfo(id: id, name: "\(typeName)-\(c.pointee.connector_type_id)",
                                        status: status, modes: raw.map(Self.mode))
            let encoders = Array(UnsafeBufferPointer(start: c.pointee.encoders, count: Int(c.pointee.count_encoders)))
            out.append(Connector(info: info, rawModes: raw, currentEncoderID: c.pointee.encoder_id,
                                 encoderIDs: encoders))
        }
        return out
    }

    /// Picks the connector: the one named (case-insensitive), or the first connected one with modes.
    ///
    /// - Throws: ``DisplayError/noConnectedConnector(device:connectors:)``,
    ///   ``DisplayError/noSuchConnector(device:name:connectors:)`` or
    ///   ``DisplayError/connectorUnusable(device:connector:connectors:)``, each with every
    ///   connector and its status.
    func connector(named name: String?) throws(DisplayError) -> Connector {
        let all = try connectors()
        let infos = all.map(\.info)
        if let name {
            guard let c = all.first(where: { $0.info.name.lowercased() == name.lowercased() }) else {
                throw .noSuchConnector(device: path, name: name, connectors: infos)
            }
            guard c.info.isUsable else { throw .connectorUnusable(device: path, connector: c.info, connectors: infos) }
            return c
        }
        guard let c = all.first(where: { $0.info.isUsable }) else {
            throw .noConnectedConnector(device: path, connectors: infos)
        }
        return c
    }

    /// A CRTC to drive `connector`: the one its current encoder already drives, otherwise the
    /// first CRTC in the `possible_crtcs` mask of one of its encoders (kmscube's find_crtc_for_connector);
    /// never one in ``crtcsInUse`` (another output of the card drives it).
    func crtc(for connector: Connector) throws(DisplayError) -> UInt32 {
        if connector.currentEncoderID != 0, let enc = drmModeGetEncoder(fd.rawValue, connector.currentEncoderID) {
            let crtc = enc.pointee.crtc_id
            drmModeFreeEncoder(enc)
            if crtc != 0, !crtcsInUse.contains(crtc) { return crtc }
        }
        for encoderID in connector.encoderIDs {
            guard let enc = drmModeGetEncoder(fd.rawValue, encoderID) else { continue }
            let possible = enc.pointee.possible_crtcs
            drmModeFreeEncoder(enc)
            for (i, crtc) in crtcIDs.enumerated() where i < 32 && possible & (1 << UInt32(i)) != 0 {
                if crtcsInUse.contains(crtc) { continue }
                return crtc
            }
        }
        throw .noCRTC(device: path, connector: connector.info.name)
    }

    /// The value mirror of a kernel mode.
    static func mode(_ m: drmModeModeInfo) -> DRMMode {
        let name = withUnsafeBytes(of: m.name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return DRMMode(width: Int(m.hdisplay), height: Int(m.vdisplay), refresh: Int(m.vrefresh),
                       type: m.type, flags: m.flags, name: name)
    }
}
