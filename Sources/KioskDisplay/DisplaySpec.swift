// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskSystem

/// Which display to use, as given to `--display`:
/// `auto | fbdev[:PATH] | drm[:DEVICE][,connector=NAME][,mode=WxH[@HZ]][,planes=off][,atomic=off] | offscreen:DIR`.
public enum DisplaySpec: Equatable, Sendable, CustomStringConvertible {
    /// DRM/KMS if a `/dev/dri/card*` has a connected connector, otherwise fbdev (`/dev/fb0`).
    case auto
    /// The Linux framebuffer; nil = `/dev/fb0`.
    case fbdev(path: String?)
    /// DRM/KMS; nil fields = the first card with a connected connector, that connector, its preferred mode.
    /// `options`: `planes=off` composes every frame on the CPU, `atomic=off` keeps the legacy
    /// calls (docs/planes.md).
    case drm(device: String?, connector: String?, mode: ModeRequest?, options: DRMOptions = DRMOptions())
    /// PNG files `DIR/frame-TTTTTTTT.png` (TTTTTTTT = show time in ms).
    case offscreen(directory: String)

    /// The accepted forms, for messages and `--help`.
    public static let syntax = "auto | fbdev[:PATH] | drm[:DEVICE][,connector=NAME][,mode=WxH[@HZ]][,planes=off]"
        + "[,atomic=off] | offscreen:DIR"

    /// Parses a `--display` value.
    ///
    /// `fbdev:fb1` means `/dev/fb1` and `drm:card1` means `/dev/dri/card1`; a value with a `/`
    /// is taken as a path. Keywords are case-insensitive; paths and connector names are kept as given.
    /// - Throws: ``DisplaySpecError``, naming the part that is wrong.
    public static func parse(_ text: String) throws(DisplaySpecError) -> DisplaySpec {
        let (head, argument) = split(text, at: ":")
        switch head.lowercased() {
        case "auto":
            guard argument == nil else { throw .unexpectedArgument(backend: "auto", argument: argument!) }
            return .auto
        case "fbdev":
            guard let argument else { return .fbdev(path: nil) }
            guard !argument.isEmpty else {
                throw .missingArgument(backend: "fbdev", what: "a device path after 'fbdev:', e.g. fbdev:/dev/fb1")
            }
            return .fbdev(path: argument.contains("/") ? argument : "/dev/\(argument)")
        case "offscreen":
            guard let argument, !argument.isEmpty else {
                throw .missingArgument(backend: "offscreen", what: "a directory for the frames: offscreen:DIR")
            }
            return .offscreen(directory: argument)
        case "drm":
            return try parseDRM(argument)
        default:
            // "drm,mode=..." without a device: the keyword ends at the first comma
            let (keyword, _) = split(text, at: ",")
            if keyword.lowercased() == "drm" {
                return try parseDRM(nil, options: String(text.dropFirst(keyword.count + 1)))
            }
            throw .unknownBackend(head.isEmpty ? text : head)
        }
    }

    private static func parseDRM(_ argument: String?,
                                 options given: String? = nil) throws(DisplaySpecError) -> DisplaySpec {
        var device: String?
        var optionText = given
        if let argument {
            let (dev, rest) = split(argument, at: ",")
            guard !dev.isEmpty else {
                throw .missingArgument(backend: "drm",
                                       what: "a device after 'drm:', e.g. drm:/dev/dri/card1 or drm:card1")
            }
            device = dev.contains("/") ? dev : "/dev/dri/\(dev)"
            optionText = rest
        }
        var connector: String?, mode: ModeRequest?
        var atomic: Bool?, planes: Bool?
        if let optionText {
            for option in optionText.split(separator: ",", omittingEmptySubsequences: false) {
                let (key, value) = split(String(option), at: "=")
                switch key.lowercased() {
                case "connector":
                    guard let value, !value.isEmpty else {
                        throw .missingArgument(backend: "drm",
                                               what: "a name after 'connector=', e.g. connector=HDMI-A-1")
                    }
                    guard connector == nil else { throw .duplicateOption(String(option)) }
                    connector = value
                case "mode":
                    guard let value, !value.isEmpty else {
                        throw .missingArgument(backend: "drm",
                                               what: "a mode after 'mode=', e.g. mode=1920x1080 or mode=800x480@60")
                    }
                    guard mode == nil else { throw .duplicateOption(String(option)) }
                    guard let m = ModeRequest(parsing: value) else { throw .badMode(value) }
                    mode = m
                case "planes", "atomic":
                    let on: Bool
                    switch value?.lowercased() {
                    case "on", "auto": on = true
                    case "off": on = false
                    default: throw .badSwitch(key.lowercased(), value ?? "")
                    }
                    if key.lowercased() == "planes" {
                        guard planes == nil else { throw .duplicateOption(String(option)) }
                        planes = on
                    } else {
                        guard atomic == nil else { throw .duplicateOption(String(option)) }
                        atomic = on
                    }
                default:
                    throw .unknownOption(String(option))
                }
            }
        }
        return .drm(device: device, connector: connector, mode: mode,
                    options: DRMOptions(atomic: atomic ?? true, planes: planes ?? true))
    }

    /// `text` before the first `separator`, and what follows it (nil when there is no separator).
    private static func split(_ text: String, at separator: Character) -> (String, String?) {
        guard let i = text.firstIndex(of: separator) else { return (text, nil) }
        return (String(text[..<i]), String(text[text.index(after: i)...]))
    }

    /// The canonical `--display` text (parses back to the same value).
    public var description: String {
        switch self {
        case .auto: return "auto"
        case .fbdev(let path): return path.map { "fbdev:\($0)" } ?? "fbdev"
        case .offscreen(let dir): return "offscreen:\(dir)"
        case .drm(let device, let connector, let mode, let options):
            return "drm" + (device.map { ":\($0)" } ?? "") + (connector.map { ",connector=\($0)" } ?? "")
                + (mode.map { ",mode=\($0)" } ?? "") + (options.atomic && !options.planes ? ",planes=off" : "")
                + (options.atomic ? "" : ",atomic=off")
        }
    }
}

/// A `--display` value that does not parse. The description names the bad part and what was expected.
public enum DisplaySpecError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The backend keyword is not one of auto, fbdev, drm, offscreen.
    case unknownBackend(String)
    /// The backend needs an argument that is missing or empty.
    case missingArgument(backend: String, what: String)
    /// The backend takes no argument (`auto:x`).
    case unexpectedArgument(backend: String, argument: String)
    /// A `drm` option other than `connector=` / `mode=`.
    case unknownOption(String)
    /// The same `drm` option twice.
    case duplicateOption(String)
    /// `mode=` is not `WxH` or `WxH@HZ`.
    case badMode(String)
    /// `planes=` or `atomic=` is not `on`, `auto` or `off`: the option and the value.
    case badSwitch(String, String)

    public var description: String {
        switch self {
        case .unknownBackend(let s):
            return "unknown display '\(s)'; expected \(DisplaySpec.syntax)"
        case .missingArgument(let backend, let what):
            return "\(backend) needs \(what)"
        case .unexpectedArgument(let backend, let argument):
            return "'\(backend)' takes no argument, got '\(argument)'"
        case .unknownOption(let s):
            return "unknown drm option '\(s)'; known: connector=NAME, mode=WxH[@HZ], planes=off, atomic=off"
        case .duplicateOption(let s):
            return "drm option given twice: '\(s)'"
        case .badSwitch(let option, let value):
            return "bad value '\(value)' for drm option \(option)=: expected off (or on, auto, the default)"
        case .badMode(let s):
            return "bad mode '\(s)': expected WxH or WxH@HZ, e.g. 1920x1080 or 800x480@60"
        }
    }
}

/// Opens the display that `spec` names.
///
/// `auto` tries DRM/KMS first (the first `/dev/dri/card*` with a connected connector, its
/// preferred mode), then fbdev (`/dev/fb0`). When neither is there it throws
/// ``DisplayError/noDisplay(drm:fbdev:)`` saying what was tried, e.g. `no display: DRM: no /dev/dri/card*
/// device (...); fbdev: open /dev/fb0: No such file or directory (errno 2)`; the caller may then
/// fall back to offscreen frames. When a device exists but cannot be used because of a failed
/// call (permission denied, an ioctl error) it throws ``DisplayError/unusable(drm:fbdev:)`` with both
/// reasons instead, so that a fixable problem is not hidden behind a fallback.
///
/// - Parameters:
///   - rotation: clockwise rotation of the picture (DRM and fbdev; offscreen draws the logical size
///     and only reports the panel it stands in for).
///   - swapRedBlue: exchange red and blue (fbdev panels wired BGR; DRM XRGB8888 is defined by the format).
///   - offscreenSize: frame size in pixels for `offscreen:DIR`.
///   - reconnecting: a DRM card comes wrapped so that the show outlives it
///     (``ReopeningDRMDisplay``: its driver unbound and bound again, a card reset); a reopen asks
///     for what `spec` asked for.
/// - Throws: ``DisplayError``.
public func openDisplay(_ spec: DisplaySpec, rotation: Rotation, swapRedBlue: Bool,
                        offscreenSize: (width: Int, height: Int),
                        reconnecting: Bool = false) throws(DisplayError) -> any Display {
    func outliving(_ drm: DRMDisplay, device: String?, connector: String?, mode: ModeRequest?) -> any Display {
        guard connector == nil else {
            return reconnecting ? ReopeningDRMDisplay(drm, device: device, connector: connector, mode: mode) : drm
        }
        return mirrored(drm, device: device, mode: mode, reconnecting: reconnecting)
    }
    switch spec {
    case .drm(let device, let connector, let mode, let options):
        return outliving(try DRMDisplay.open(device: device, connector: connector, mode: mode, rotation: rotation,
                                             options: options),
                         device: device, connector: connector, mode: mode)
    case .fbdev(let path):
        return try FramebufferDisplay.open(path: path ?? "/dev/fb0", rotation: rotation, swapRedBlue: swapRedBlue)
    case .offscreen(let directory):
        return try OffscreenDisplay(directory: directory, width: offscreenSize.width, height: offscreenSize.height,
                                    rotation: rotation)
    case .auto:
        let drmFailure: DisplayError, fbdevFailure: DisplayError
        do {
            return outliving(try DRMDisplay.open(device: nil, connector: nil, mode: nil, rotation: rotation),
                             device: nil, connector: nil, mode: nil)
        } catch {
            drmFailure = error
        }
        do {
            return try FramebufferDisplay.open(path: "/dev/fb0", rotation: rotation, swapRedBlue: swapRedBlue)
        } catch {
            fbdevFailure = error
        }
        if drmFailure.isFailedCall || fbdevFailure.isFailedCall {
            throw .unusable(drm: drmFailure, fbdev: fbdevFailure)
        }
        throw .noDisplay(drm: drmFailure, fbdev: fbdevFailure)
    }
}

/// Every usable connector of `first`'s card, `first` and the others (docs/displays.md "Several
/// outputs"): `first` alone when it has no other and none is looked for (`reconnecting` false),
/// else a ``MirroredDisplay``. `reconnecting`: each output a ``ReopeningDRMDisplay`` of its
/// connector on `device`, and connectors connected later taken up.
func mirrored(_ first: DRMDisplay, device: String?, mode: ModeRequest?, reconnecting: Bool) -> any Display {
    let others = DRMDisplay.otherOutputs(of: first, taken: [], mode: mode)
    guard reconnecting || !others.isEmpty else { return first }
    /// A reopen of the first output takes any usable connector (simpledrm's `Unknown-1` handing
    /// over to the real driver's `HDMI-A-1`); the others ask for their own connector again.
    func wrap(_ drm: DRMDisplay) -> any Display {
        guard reconnecting else { return drm }
        return ReopeningDRMDisplay(drm, device: device, connector: drm === first ? nil : drm.connectorName, mode: mode)
    }
    let outputs = [first] + others
    if outputs.count > 1 {
        Log.info("outputs mirrored", detail: outputs.map { "\($0.connectorName) \($0.mode)" }.joined(separator: ", "))
    }
    let set = MirroredDisplay(outputs: outputs.map(wrap))
    guard reconnecting else { return set }
    set.discover = { [weak set] taken in
        // Any output's card that is open now: connectors there not yet in use.
        guard let set else { return [] }
        let open = set.outputs.lazy.compactMap { ($0 as? ReopeningDRMDisplay)?.current }.first
        guard let open else { return [] }
        let found = DRMDisplay.otherOutputs(of: open, taken: taken, mode: mode)
        for drm in found { Log.info("output connected", detail: drm.summary) }
        return found.map(wrap)
    }
    return set
}
