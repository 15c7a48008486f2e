// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// A frame size in logical pixels (``Display/width`` x ``Display/height``).
public struct FrameSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int, height: Int
    public init(width: Int, height: Int) { self.width = width; self.height = height }
    /// `1920x1080`.
    public var description: String { "\(width)x\(height)" }
}

/// A display of several outputs showing one show, each at its own size
/// (``Display/outputSet``; docs/displays.md "Several outputs"). The frame loop composes the
/// scene once per distinct size in ``frameSizes`` and hands the frames over together.
public protocol OutputSet: AnyObject {
    /// The distinct logical sizes of the outputs that show frames, the display's own
    /// (``Display/width`` x ``Display/height``) first.
    var frameSizes: [FrameSize] { get }
    /// The outputs' names (connectors: `HDMI-A-1`), for the events, the status and the log;
    /// those lost for now are left out.
    var outputNames: [String] { get }
    /// Each output showing frames now (lost ones left out), the display's own first: its name
    /// and sizes, for choosing the output a touchscreen is mounted on (docs/touch.md "Several
    /// screens").
    var outputGeometries: [OutputGeometry] { get }
    /// Shows `frames[i]` (XRGB8888, ``frameSizes``[i]; borrowed for the call) on every output of
    /// that size, at the outputs' next vertical blanks together. A frame missing at the end (or
    /// of another size) leaves the outputs of that size as they are. Throws ``DisplayError``.
    func present(frames: [Bitmap], showTime: Int64) throws(DisplayError)
}

/// One output of an ``OutputSet``: its name (a DRM connector's, `HDMI-A-1`, `DSI-1`), its
/// logical size (``Display/width`` x ``Display/height``, pixels, after `--rotate`) and its panel's
/// as mounted (``Display/panelWidth`` x ``Display/panelHeight``, before `--rotate`).
public struct OutputGeometry: Equatable, Sendable {
    public var name: String
    public var width: Int, height: Int
    public var panelWidth: Int, panelHeight: Int
    public init(name: String, width: Int, height: Int, panelWidth: Int, panelHeight: Int) {
        self.name = name
        self.width = width
        self.height = height
        self.panelWidth = panelWidth
        self.panelHeight = panelHeight
    }
}

/// An output that has a name of its own: a DRM connector's (`HDMI-A-1`).
public protocol NamedOutput {
    /// The output's name, for the events, the status and the log.
    var outputName: String { get }
}

extension DRMDisplay: NamedOutput {
    /// The connector's name.
    public var outputName: String { connectorName }
}

extension ReopeningDRMDisplay: NamedOutput {
    /// The connector's name (`DRM` while lost without one asked for).
    public var outputName: String { connectorName ?? "DRM" }
}

public extension Display {
    /// One output: nil.
    var outputSet: (any OutputSet)? { nil }

    /// The DRM output open now: itself (``DRMDisplay``), the card in use (``ReopeningDRMDisplay``),
    /// or the first output's (``MirroredDisplay``); nil for another backend or while lost. For
    /// what belongs to one connector: its backlight, its CEC adapter.
    var drmOutput: DRMDisplay? {
        if let drm = self as? DRMDisplay { return drm }
        if let drm = self as? ReopeningDRMDisplay { return drm.current }
        if let set = self as? MirroredDisplay { return set.outputs.first?.drmOutput }
        return nil
    }
}

/// Several outputs mirroring one show (docs/displays.md "Several outputs"): with `--display drm`
/// or `auto` and no `connector=`, every usable connector of the card is one output, with a CRTC,
/// mode and dumb buffers of its own. The first output is the display's own size (``width`` x
/// ``height``: what the loop lays the show out for, touches map onto, `status` reports); the
/// others are drawn at theirs (``OutputSet``): outputs of the same size share one composed
/// frame, each other size is composed for itself from slot frames of that size.
///
/// Presenting queues every output's flip and then waits for them all (outputs of one card
/// flip at their own vertical blanks together, not one frame period apart). The screen's power,
/// the VT's release and acquire, the pixel brightness and restore go to every output.
/// Frames go on planes only while there is one output (docs/planes.md).
///
/// Outputs come and go on their own (each a ``ReopeningDRMDisplay`` for its connector): one
/// lost leaves the others showing and the show going on; only when every output is lost is the
/// display lost (``isLost``). One that comes back, maybe at another size, is drawn again
/// (``DisplayChange/reopened(summary:)``). ``discover`` takes up connectors connected later.
///
/// Ownership: owns its outputs. Runs on the frame loop's thread.
public final class MirroredDisplay: Display, OutputSet, ReconnectingDisplay, PixelDimmable {
    /// The outputs, the first one's size the display's.
    public private(set) var outputs: [any Display]
    /// Finds outputs not yet shown on (connectors connected since), given the names of those in
    /// use; nil: no discovery. Called every ``discoveryInterval``.
    public var discover: ((_ taken: [String]) -> [any Display])?
    /// How often ``discover`` is asked: 2 s, as a lost connector is probed (docs/displays.md).
    public var discoveryInterval: Duration = .seconds(2)
    private var nextDiscovery: Duration?
    private var rows: RowSplitter?
    private var poweredOff = false, released = false

    /// - Parameters:
    ///   - outputs: at least one; the first gives the display its size.
    ///   - discover: finds connectors connected later (see ``discover``).
    public init(outputs: [any Display], discover: ((_ taken: [String]) -> [any Display])? = nil) {
        precondition(!outputs.isEmpty, "a mirrored display needs an output")
        self.outputs = outputs
        self.discover = discover
    }

    deinit { restore() }

    private var primary: any Display { outputs[0] }

    public var width: Int { primary.width }
    public var height: Int { primary.height }
    public var panelWidth: Int { primary.panelWidth }
    public var panelHeight: Int { primary.panelHeight }
    /// Pacing as the first output does (DRM page flips).
    public var pacesFrames: Bool { primary.pacesFrames }
    /// The first output's summary, with the others' when there are more: `DRM ... Virtual-1 ...;
    /// mirrored on Virtual-2 800x480`.
    public var summary: String {
        guard outputs.count > 1 else { return primary.summary }
        let others = outputs.dropFirst().map {
            Self.name(of: $0) + " \($0.width)x\($0.height)" + (Self.lost($0) ? " (lost)" : "")
        }
        return primary.summary + "; mirrored on " + others.joined(separator: ", ")
    }

    /// The name of an output (``NamedOutput``: a DRM connector's), else its frame directory or summary.
    public static func name(of output: any Display) -> String {
        if let named = output as? NamedOutput { return named.outputName }
        if let files = output.frameFiles { return files.directory }
        return output.summary
    }

    /// Whether `output` is lost for now (its connector disconnected, its card gone).
    public static func lost(_ output: any Display) -> Bool { output.reconnection?.isLost == true }

    public var outputNames: [String] { outputs.filter { !Self.lost($0) }.map(Self.name(of:)) }

    public var outputGeometries: [OutputGeometry] {
        outputs.filter { !Self.lost($0) }.map {
            OutputGeometry(name: Self.name(of: $0), width: $0.width, height: $0.height, panelWidth: $0.panelWidth,
                           panelHeight: $0.panelHeight)
        }
    }

    public var frameSizes: [FrameSize] {
        var sizes = [FrameSize(width: width, height: height)]
        for output in outputs.dropFirst() where !Self.lost(output) {
            let size = FrameSize(width: output.width, height: output.height)
            if !sizes.contains(size) { sizes.append(size) }
        }
        return sizes
    }

    public var outputSet: (any OutputSet)? { self }

    /// Shows `frame` on the outputs of the display's own size (the others keep what they show;
    /// the frame loop presents with ``present(frames:showTime:)``).
    public func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        try present(frames: [frame], showTime: showTime)
    }

    public func present(frames: [Bitmap], showTime: Int64) throws(DisplayError) {
        var queued: [any Display] = []
        var failure: DisplayError?
        for output in outputs {
            guard let frame = frames.first(where: { $0.width == output.width && $0.height == output.height }) else {
                continue
            }
            do {
                if let drm = output as? DRMDisplay {
                    try drm.queue(frame, showTime: showTime)
                    queued.append(output)
                } else if let drm = output as? ReopeningDRMDisplay {
                    try drm.queue(frame, showTime: showTime)
                    queued.append(output)
                } else {
                    try output.present(frame, showTime: showTime)
                }
            } catch {
                failure = failure ?? error
            }
        }
        for output in queued {
            do {
                if let drm = output as? DRMDisplay { try drm.waitForQueuedFlip() }
                if let drm = output as? ReopeningDRMDisplay { try drm.waitForQueuedFlip() }
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }

    /// Every output's ``Display/restore()``.
    public func restore() { for output in outputs { output.restore() } }

    /// Every output's ``Display/release()`` (they share the card's DRM master: the first drops
    /// it); the first error is thrown once all are released.
    public func release() throws(DisplayError) {
        released = true
        var failure: DisplayError?
        for (i, output) in outputs.enumerated() {
            do { try output.release() } catch where i == 0 { failure = error } catch {}
        }
        if let failure { throw failure }
    }

    /// Every output's ``Display/acquire()``; the first error is thrown once all were tried.
    public func acquire() throws(DisplayError) {
        released = false
        var failure: DisplayError?
        for output in outputs {
            do { try output.acquire() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// Every output's power (DPMS); the first error is thrown once all were switched.
    public func setPower(on: Bool) throws(DisplayError) {
        poweredOff = !on
        var failure: DisplayError?
        for output in outputs {
            do { try output.setPower(on: on) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// The first output's screen (`screenshot`), or the first output not lost.
    public func screenImage() throws(DisplayError) -> Bitmap {
        try (outputs.first { !Self.lost($0) } ?? primary).screenImage()
    }

    public var presentsLayers: Bool { outputs.count == 1 && primary.presentsLayers }

    public func present(layers: [FrameLayer], background: RGBColor, showTime: Int64) throws(DisplayError) -> Bool {
        guard outputs.count == 1 else { return false }
        return try primary.present(layers: layers, background: background, showTime: showTime)
    }

    public func prepareLayer(_ bitmap: Bitmap) { if outputs.count == 1 { primary.prepareLayer(bitmap) } }

    public func convertRows(with splitter: RowSplitter) {
        rows = splitter
        for output in outputs { output.convertRows(with: splitter) }
    }

    public var pixelBrightness: PixelBrightness = .full {
        didSet { for case let output as PixelDimmable in outputs { output.pixelBrightness = pixelBrightness } }
    }

    /// The first output's, with the number of outputs.
    public var abilities: DisplayAbilities {
        var abilities = primary.abilities
        abilities.outputs = outputs.count
        if outputs.count > 1 { abilities.planes = 1 }
        return abilities
    }

    public var powerState: DisplayPowerState? { (outputs.first { !Self.lost($0) } ?? primary).powerState }
    public var frameFiles: (any FrameFiles)? { primary.frameFiles }

    /// Itself when an output can come and go or connectors are looked for; nil otherwise.
    public var reconnection: (any ReconnectingDisplay)? {
        discover != nil || outputs.contains { $0.reconnection != nil } ? self : nil
    }

    // MARK: Outputs coming and going

    /// The first output's (they watch the same card directory: one wakes the loop, and
    /// ``service(now:)`` looks at all of them).
    public var wakeDescriptor: Int32? { outputs.lazy.compactMap { $0.reconnection?.wakeDescriptor }.first }

    public var retryAt: Duration? {
        (outputs.compactMap { $0.reconnection?.retryAt }
            + [discover == nil ? nil : nextDiscovery].compactMap { $0 }).min()
    }

    /// Every output lost.
    public var isLost: Bool { outputs.allSatisfy(Self.lost) }

    /// Services every output: one lost while another shows is logged and the show goes on
    /// (``DisplayChange/lost(reason:)`` only when the last one goes); one back is
    /// ``DisplayChange/reopened(summary:)`` (drawn again at once, maybe at another size). Then
    /// asks ``discover`` when due; an output found is added (and drawn at once: `reopened`).
    public func service(now: Duration) throws(DisplayError) -> [DisplayChange] {
        var changes: [DisplayChange] = []
        for output in outputs {
            guard let reconnecting = output.reconnection else { continue }
            for change in try reconnecting.service(now: now) {
                switch change {
                case .lost(let reason):
                    // The display is lost with the last output showing (with one: as it says).
                    let id = ObjectIdentifier(output)
                    if outputs.contains(where: { ObjectIdentifier($0) != id && !Self.lost($0) }) {
                        Log.warning("display output lost", reason: "\(Self.name(of: output)): \(reason);"
                                    + " the other outputs go on")
                    } else {
                        changes.append(.lost(reason: reason))
                    }
                case .reopened(let summary):
                    changes.append(.reopened(summary: summary))
                }
            }
        }
        if let discover, !isLost, !released {
            if nextDiscovery == nil || now >= nextDiscovery! {
                nextDiscovery = now + discoveryInterval
                for output in discover(outputs.map(Self.name(of:))) {
                    if let rows { output.convertRows(with: rows) }
                    if let dimmable = output as? PixelDimmable { dimmable.pixelBrightness = pixelBrightness }
                    if poweredOff { try? output.setPower(on: false) }
                    outputs.append(output)
                    changes.append(.reopened(summary: "output \(Self.name(of: output)) taken up: \(output.summary)"))
                }
            }
        } else if isLost {
            nextDiscovery = nil
        }
        return changes
    }
}
