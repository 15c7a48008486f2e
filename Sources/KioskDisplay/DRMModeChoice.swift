// SPDX-License-Identifier: Apache-2.0
/// One display mode a DRM connector offers: a value mirror of libdrm's `drmModeModeInfo`
/// (`struct drm_mode_modeinfo` in drm_mode.h) with the fields mode choice needs.
public struct DRMMode: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Visible width in pixels (`hdisplay`).
    public var width: Int
    /// Visible height in pixels (`vdisplay`).
    public var height: Int
    /// Vertical refresh in Hz as the kernel rounds it (`vrefresh`).
    public var refresh: Int
    /// `type` bits: DRM_MODE_TYPE_PREFERRED = 1 << 3, DRM_MODE_TYPE_DRIVER = 1 << 6 ... (drm_mode.h).
    public var type: UInt32
    /// `flags` bits: DRM_MODE_FLAG_INTERLACE = 1 << 4 ... (drm_mode.h).
    public var flags: UInt32
    /// The kernel's name for the mode, e.g. `1920x1080` (`name`, at most 31 bytes).
    public var name: String

    /// DRM_MODE_TYPE_PREFERRED from drm_mode.h: the mode the monitor (EDID) or driver prefers.
    public static let typePreferred: UInt32 = 1 << 3
    /// DRM_MODE_FLAG_INTERLACE from drm_mode.h.
    public static let flagInterlace: UInt32 = 1 << 4

    public init(width: Int, height: Int, refresh: Int, type: UInt32 = 0, flags: UInt32 = 0, name: String? = nil) {
        self.width = width; self.height = height; self.refresh = refresh
        self.type = type; self.flags = flags
        self.name = name ?? "\(width)x\(height)"
    }

    /// True when the connector marks this mode as preferred.
    public var isPreferred: Bool { type & Self.typePreferred != 0 }
    /// True for an interlaced mode.
    public var isInterlaced: Bool { flags & Self.flagInterlace != 0 }

    /// `WxH@HZ`, with `i` for interlaced, e.g. `1920x1080@60`, `1920x1080i@30`.
    public var description: String { "\(width)x\(height)\(isInterlaced ? "i" : "")@\(refresh)" }
}

/// A mode asked for on the command line: `WxH` or `WxH@HZ` (`--display drm,mode=800x480@60`).
public struct ModeRequest: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Vertical refresh in Hz, or nil for "the highest the connector offers at this size".
    public var refresh: Int?

    public init(width: Int, height: Int, refresh: Int? = nil) {
        self.width = width; self.height = height; self.refresh = refresh
    }

    /// Parses `WxH` or `WxH@HZ` (decimal, positive; `x` or `X`). Returns nil for anything else.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let size = parts[0].split(omittingEmptySubsequences: false) { $0 == "x" || $0 == "X" }
        guard size.count == 2, let w = Self.positive(size[0]), let h = Self.positive(size[1]) else { return nil }
        var hz: Int?
        if parts.count == 2 {
            guard let r = Self.positive(parts[1]) else { return nil }
            hz = r
        }
        self.init(width: w, height: h, refresh: hz)
    }

    private static func positive(_ s: some StringProtocol) -> Int? {
        guard !s.isEmpty, s.count <= 6, s.allSatisfy({ $0.isASCII && $0.isNumber }), let v = Int(s), v > 0 else {
            return nil
        }
        return v
    }

    /// `WxH` or `WxH@HZ`.
    public var description: String { "\(width)x\(height)" + (refresh.map { "@\($0)" } ?? "") }
}

/// Choosing a connector's mode: a pure function of the mode list and the request.
public enum DRMModeChoice {
    /// The index in `modes` of the mode to use.
    ///
    /// - No request: the first mode marked preferred (DRM_MODE_TYPE_PREFERRED); when none is,
    ///   the largest (by pixel count), then progressive before interlaced, then the highest refresh.
    /// - `WxH`: among the modes of exactly that size, progressive before interlaced (an
    ///   interlaced mode flickers on still pictures), then the highest refresh, then the
    ///   preferred one, then the first listed.
    /// - `WxH@HZ`: as `WxH`, but only modes whose refresh is exactly `HZ`.
    ///
    /// - Parameter connector: the connector's name (e.g. `HDMI-A-1`), only for the message.
    /// - Throws: ``DisplayError/noModes(connector:)`` when the connector reports no modes,
    ///   ``DisplayError/modeNotAvailable(connector:requested:available:)`` when the requested one
    ///   is not among them; its description lists the available modes, e.g. `mode 1024x768 is not
    ///   available; available: 1920x1080@60 (preferred), 1280x720@60`.
    public static func choose(_ request: ModeRequest?, from modes: [DRMMode],
                              connector: String) throws(DisplayError) -> Int {
        guard !modes.isEmpty else {
            throw .noModes(connector: connector)
        }
        let indices = Array(modes.indices)
        guard let request else {
            if let p = indices.first(where: { modes[$0].isPreferred }) { return p }
            return indices.min { better(modes[$0], $0, than: modes[$1], $1, bySize: true) }!
        }
        let candidates = indices.filter {
            modes[$0].width == request.width && modes[$0].height == request.height
                && (request.refresh == nil || modes[$0].refresh == request.refresh)
        }
        guard let best = candidates.min(by: { better(modes[$0], $0, than: modes[$1], $1, bySize: false) }) else {
            throw .modeNotAvailable(connector: connector, requested: request, available: modes)
        }
        return best
    }

    /// The index in `modes` of the mode for a display that came back (a card reopened, a
    /// connector connected again, maybe another monitor): `request` when the connector offers
    /// it (as ``choose(_:from:connector:)``), else the mode chosen with no request (the
    /// preferred one): the show goes on at whatever size the display has.
    /// - Throws: ``DisplayError/noModes(connector:)`` when the connector reports no modes.
    public static func chooseOnReturn(_ request: ModeRequest?, from modes: [DRMMode],
                                      connector: String) throws(DisplayError) -> Int {
        if let request, let i = try? choose(request, from: modes, connector: connector) { return i }
        return try choose(nil, from: modes, connector: connector)
    }

    /// The modes as `WxH@HZ` in the connector's order, duplicates dropped, the preferred
    /// one marked: `1920x1080@60 (preferred), 1280x720@60`.
    public static func availableList(_ modes: [DRMMode]) -> String {
        var seen = Set<String>()
        var out: [String] = []
        for m in modes {
            let text = m.description + (m.isPreferred ? " (preferred)" : "")
            if seen.insert(m.description).inserted { out.append(text) }
        }
        return out.joined(separator: ", ")
    }

    /// Strict ordering: true when `a` (at index `i`) should be chosen over `b` (at index `j`).
    private static func better(_ a: DRMMode, _ i: Int, than b: DRMMode, _ j: Int, bySize: Bool) -> Bool {
        if bySize, a.width * a.height != b.width * b.height { return a.width * a.height > b.width * b.height }
        if a.isInterlaced != b.isInterlaced { return !a.isInterlaced }
        if a.refresh != b.refresh { return a.refresh > b.refresh }
        if a.isPreferred != b.isPreferred { return a.isPreferred }
        return i < j
    }
}
