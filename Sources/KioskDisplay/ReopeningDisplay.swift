// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskSystem

/// A DRM display that outlives its card: when the card goes away (its driver unbound through
/// sysfs, a GPU reset, simpledrm handing over to the real driver at boot) the show keeps
/// running without drawing, and as soon as a `/dev/dri/card*` with a usable connector appears
/// again it is opened, its connector, CRTC and mode chosen again, new dumb buffers made and the
/// mode set, and the frame loop redraws the scene it was showing (docs/deployment.md "Check").
///
/// Loss is noticed two ways: a KMS call of ``present(_:showTime:)`` failing with ENODEV or
/// ENXIO (drm_ioctl answers ENODEV for an unplugged device, drm_drv.c), or the card's node
/// removed from `/dev/dri` (inotify(7), IN_DELETE; the whole directory going, IN_DELETE_SELF,
/// since devtmpfs removes a directory left empty). While lost, nothing is drawn anywhere and
/// the loop sleeps: it is woken by inotify when a node appears in `/dev/dri` or changes its
/// owner or mode (udev gives it the group `video` after devtmpfs made it; IN_CREATE,
/// IN_ATTRIB), or `/dev/dri` itself appears in `/dev`, and tries again every
/// ``retryInterval`` besides (a card whose connector reports nothing connected yet sends no
/// inotify event when it connects; a uevent would, but the unit's sandbox allows no netlink
/// socket).
///
/// While a card is open its connector's status is looked at every ``connectorCheckInterval``
/// (the hotplug uevent would say it sooner, but needs netlink), as the kernel last probed it: a
/// connector reporting nothing connected counts as lost too (nothing drawn), and is then probed
/// every ``connectorCheckInterval``; when it is connected again its mode is chosen again
/// (``DRMDisplay/withModeChosenAgain(_:)``), or the same mode set again
/// (``DRMDisplay/setModeAgain()``), and the caller redraws. A connected connector whose modes
/// changed since (probed by someone: a sysfs `detect`) has its mode chosen again too.
///
/// A card that appears, or a connector that comes back, has its connector, CRTC and mode chosen
/// as at start: the mode `--display` asks for when the connector offers it, else its preferred
/// one. That may be another size (another monitor, simpledrm's firmware framebuffer handing
/// over to the real driver): ``width`` and ``height`` then change with it, and the caller
/// (which sees them differ from what it draws) lays the show out again at the new size.
///
/// Ownership: owns the open ``DRMDisplay`` (``current``) and a ``DRMCardWatch``.
public final class ReopeningDRMDisplay: ReconnectingDisplay, PixelDimmable {
    /// What ``service(now:)`` found.
    public typealias Change = DisplayChange

    /// Logical width in pixels: the open card's (the last one's while lost).
    public private(set) var width: Int
    /// Logical height in pixels.
    public private(set) var height: Int
    /// The panel width in pixels (the mode's, before `--rotate`).
    public private(set) var panelWidth: Int
    /// The panel height in pixels.
    public private(set) var panelHeight: Int
    /// Page flips pace the frames (as ``DRMDisplay``); while lost nothing is drawn.
    public var pacesFrames: Bool { true }
    /// The open card's summary, or what was lost.
    public var summary: String { current?.summary ?? "DRM (lost: \(lossReason ?? "no card"))" }
    /// The card in use; nil while lost.
    public private(set) var current: DRMDisplay?
    /// Splits the scanout conversion by rows across cores (given to each card opened); nil: the caller's thread.
    public var rows: RowSplitter? { didSet { current?.rows = rows } }
    /// The pixels dimmed in the copy to the card (given to each card opened; docs/power.md).
    public var pixelBrightness: PixelBrightness = .full { didSet { current?.pixelBrightness = pixelBrightness } }
    /// True from the loss of a card until a card is opened again, and while its connector
    /// reports nothing connected.
    public var isLost: Bool { current == nil || disconnected }
    /// How often the connector's status is looked at while a card is open: 2 s. A connector
    /// that went away (a monitor unplugged, a virtual output disabled) stops the drawing; when it
    /// is back the mode is set again and the caller redraws.
    public var connectorCheckInterval: Duration = .seconds(2)
    private var disconnected = false
    private var nextConnectorCheck: Duration?
    /// Why the last card was lost (for the log and the summary).
    public private(set) var lossReason: String?
    /// How often a reopen is tried while lost besides inotify's wake-ups: 2 s.
    public var retryInterval: Duration = .seconds(2)
    /// When ``service(now:)`` next tries to reopen (the caller's clock); nil unless lost, and
    /// while the VT is switched away.
    public var retryAt: Duration? { released ? nil : current == nil ? nextTry : nextConnectorCheck }
    private var nextTry: Duration?
    /// Readable (POLLIN) when something changed in `/dev/dri` (or `/dev`, while `/dev/dri` is
    /// gone): the caller polls it and then calls ``service(now:)``. Nil when inotify could not
    /// be set up (the loss is then noticed by the next failing frame, the reopen by the timer).
    public var wakeDescriptor: Int32? { cards.descriptor }

    /// The directory the card nodes are in (`/dev/dri`, drm_sysfs.c's devnode).
    public var cardDirectory: String { cards.cardDirectory }
    private let cards = DRMCardWatch()
    private let device: String?
    private let connector: String?
    private let mode: ModeRequest?
    private let options: DRMOptions
    private let rotation: Rotation
    private var released = false
    private var poweredOff = false
    private var pending: [Change] = []
    private var wakeWaiting = false

    /// Wraps an open card. `device`, `connector` and `mode` are what `--display` asked for
    /// (nil: any card, its first usable connector, the preferred mode): a reopen asks for the
    /// same, the connector's preferred mode standing in for a `mode` it does not offer.
    public init(_ display: DRMDisplay, device: String?, connector: String?, mode: ModeRequest?) {
        options = display.options
        current = display
        width = display.width; height = display.height
        panelWidth = display.panelWidth; panelHeight = display.panelHeight
        rotation = display.rotation
        self.device = device; self.connector = connector; self.mode = mode
    }

    deinit { restore() }

    /// Copies `frame` to the card (``DRMDisplay/present(_:showTime:)``). While lost it draws
    /// nothing; a call that fails because the card is gone (ENODEV, ENXIO) makes it lost (the
    /// next ``service(now:)`` reports it) instead of throwing. Other errors are thrown.
    public func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        guard let display = current, !disconnected else { return }
        do {
            try display.present(frame, showTime: showTime)
        } catch {
            guard Self.meansGone(error) else { throw error }
            lose(reason: error.description, gone: true)
        }
    }

    /// ``DRMDisplay/queue(_:showTime:)`` on the card in use, lost as ``present(_:showTime:)`` is.
    func queue(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        guard let display = current, !disconnected else { return }
        do {
            try display.queue(frame, showTime: showTime)
        } catch {
            guard Self.meansGone(error) else { throw error }
            lose(reason: error.description, gone: true)
        }
    }

    /// ``DRMDisplay/waitForQueuedFlip()`` on the card in use.
    func waitForQueuedFlip() throws(DisplayError) {
        guard let display = current else { return }
        do {
            try display.waitForQueuedFlip()
        } catch {
            guard Self.meansGone(error) else { throw error }
            lose(reason: error.description, gone: true)
        }
    }

    /// The connector `--display` named, or the one in use (nil while lost without a name).
    public var connectorName: String? { connector ?? current?.connectorName }

    /// True for a failure that means the card is no longer there (ENODEV, ENXIO).
    public static func meansGone(_ error: DisplayError) -> Bool {
        if case .system(let e, _) = error { return e.errno == ENODEV || e.errno == ENXIO }
        return false
    }

    /// Reads what inotify reported and acts on it: the card's node removed makes it lost; while
    /// lost (and not switched away: the VT's owner has the screen) a card is tried when a node
    /// appeared, changed, or ``retryAt`` is due. Returns the changes since the last call, in order.
    /// Throws ``DisplayError/unsupportedFormat(device:reason:)`` when the card that appeared cannot
    /// scan out XRGB8888 (drmModeAddFB2 refuses the format): the show cannot go on on it.
    public func service(now: Duration) throws(DisplayError) -> [Change] {
        let changes = cards.take()
        let woken = wakeWaiting || changes.worthALook
        wakeWaiting = false
        if let current, changes.removed.contains(current.devicePath) {
            lose(reason: "\(current.devicePath) was removed", gone: true)
        } else if changes.directoryRemoved, current != nil {
            lose(reason: "\(cardDirectory) was removed", gone: true)
        }
        if current == nil, !released {
            if nextTry == nil { nextTry = now + retryInterval }
            if woken || now >= nextTry! { try reopen(now: now) }
        } else if let display = current, !released {
            if nextConnectorCheck == nil || now >= nextConnectorCheck! {
                nextConnectorCheck = now + connectorCheckInterval
                checkConnector(display)
            }
        }
        defer { pending = [] }
        return pending
    }

    /// A connector gone is a loss (nothing is drawn); one back has its mode set again.
    private func checkConnector(_ display: DRMDisplay) {
        // Probed only while disconnected: the kernel may not probe again by itself (virtio-gpu),
        // and a probe of a connected monitor costs a DDC read every time.
        guard let status = display.connectorStatus(probe: disconnected) else { return }
        if status == .disconnected, !disconnected {
            disconnected = true
            lossReason = "connector \(display.connectorName) of \(display.devicePath) disconnected"
            pending.append(.lost(reason: lossReason!))
        } else if status != .disconnected, !disconnected, display.choosesAnotherMode(mode) {
            // Connected all along, but its modes changed (probed since: a monitor swapped
            // between two looks, a virtual output given another size).
            do {
                if let next = try display.withModeChosenAgain(mode) {
                    adopt(next)
                    pending.append(.reopened(summary: "\(next.summary); connector \(next.connectorName) offers other "
                                             + "modes, mode chosen again"))
                }
            } catch {
                lose(reason: "setting a new mode on \(display.connectorName) failed: \(error)")
            }
        } else if status != .disconnected, disconnected {
            disconnected = false
            lossReason = nil
            do {
                // Chosen again as at start: a monitor plugged in may be another one.
                if let next = try display.withModeChosenAgain(mode) {
                    adopt(next)
                    pending.append(.reopened(summary: "\(next.summary); connector \(next.connectorName) connected "
                                             + "again, mode chosen again"))
                } else {
                    try display.setModeAgain()
                    pending.append(.reopened(summary: "\(display.summary); connector \(display.connectorName) "
                                             + "connected again, mode set again"))
                }
            } catch {
                lose(reason: "setting the mode again on \(display.connectorName) failed: \(error)")
            }
        }
    }

    /// `gone`: the card itself went away (the outputs sharing it open it again, ``DRMDevice/isGone``).
    private func lose(reason: String, gone: Bool = false) {
        guard let display = current else { return }
        if gone { display.device.isGone = true }
        display.restore()   // its calls fail on a gone card; the buffers are unmapped, the fd closed with it
        current = nil
        disconnected = false
        nextConnectorCheck = nil
        lossReason = reason
        nextTry = nil
        wakeWaiting = true  // look at once: the new card may be there already
        pending.append(.lost(reason: reason))
    }

    private func reopen(now: Duration) throws(DisplayError) {
        let opened: DRMDisplay
        do {
            opened = try DRMDisplay.open(device: device, connector: connector, mode: mode, rotation: rotation,
                                         preferredIfMissing: true, options: options)
        } catch {
            if case .scanoutFormatRefused(let format, let e) = error {
                throw .unsupportedFormat(device: e.path, reason: "the display that appeared cannot scan out "
                                         + "\(format) (\(e)): the show cannot draw on it")
            }
            nextTry = now + retryInterval
            return
        }
        adopt(opened)
        nextTry = nil
        lossReason = nil
        pending.append(.reopened(summary: opened.summary))
    }

    /// Makes `display` the card in use, its size the show's; a screen switched off stays off.
    private func adopt(_ display: DRMDisplay) {
        current = display
        display.rows = rows
        display.pixelBrightness = pixelBrightness
        width = display.width; height = display.height
        panelWidth = display.panelWidth; panelHeight = display.panelHeight
        if poweredOff { try? display.setPower(on: false) }
    }

    /// Puts the card's previous CRTC back (``DRMDisplay/restore()``). Safe to call more than once.
    public func restore() { current?.restore() }

    /// ``DRMDisplay/release()``; while lost it only records that the VT is switched away (no
    /// reopen until ``acquire()``).
    public func release() throws(DisplayError) {
        released = true
        try current?.release()
    }

    /// ``DRMDisplay/acquire()``; while lost, only allows reopening again.
    public func acquire() throws(DisplayError) {
        try current?.acquire()
        released = false
    }

    /// ``DRMDisplay/setPower(on:)``; while lost it is remembered for the next card.
    public func setPower(on: Bool) throws(DisplayError) {
        poweredOff = !on
        try current?.setPower(on: on)
    }

    /// The connector's DPMS state (``DRMDisplay/powerState``); nil while lost.
    public var powerState: DisplayPowerState? { current?.powerState }
    /// A screen on a VT, as the card in use says (its planes); while lost, one of no planes.
    public var abilities: DisplayAbilities { current?.abilities ?? .consoleScreen }

    /// ``DRMDisplay/screenImage()``; throws ``DisplayError/nothingToReadBack(device:reason:)`` while lost.
    public func screenImage() throws(DisplayError) -> Bitmap {
        guard let current else {
            throw .nothingToReadBack(device: summary, reason: "the display is lost; waiting for one")
        }
        return try current.screenImage()
    }
}

/// What a ``ReconnectingDisplay`` reports from ``ReconnectingDisplay/service(now:)``.
public enum DisplayChange: Equatable, Sendable {
    /// The card or its connector went away; the reason is for the log (the failed call, the
    /// node removed, the connector disconnected).
    case lost(reason: String)
    /// A card was opened, or the connector is back, and its mode set: the caller redraws, at
    /// the display's ``Display/width`` x ``Display/height``, which may differ from before. The
    /// summary is for the log.
    case reopened(summary: String)
}

/// A display whose device can go away and come back, maybe at another size
/// (``ReopeningDRMDisplay``; a test's own display). The frame loop polls ``wakeDescriptor``,
/// calls ``service(now:)`` every turn and at ``retryAt``, draws nothing while ``isLost``, and
/// after a ``DisplayChange/reopened(summary:)`` compares ``Display/width`` x
/// ``Display/height`` with what it draws.
public protocol ReconnectingDisplay: Display {
    /// Readable when something changed that ``service(now:)`` should look at; nil: none.
    var wakeDescriptor: Int32? { get }
    /// When ``service(now:)`` must be called next (the caller's clock); nil: only when woken.
    var retryAt: Duration? { get }
    /// True while there is nothing to draw on.
    var isLost: Bool { get }
    /// What changed since the last call, in order. `now` is the caller's clock.
    /// Throws ``DisplayError`` when the display that came back cannot carry the show on.
    func service(now: Duration) throws(DisplayError) -> [DisplayChange]
}

public extension ReconnectingDisplay {
    /// It reconnects: itself.
    var reconnection: (any ReconnectingDisplay)? { self }
}

/// Layers go to the card in use (``DRMDisplay``'s planes); while lost nothing is shown and the
/// call says it was done, as ``ReopeningDRMDisplay/present(_:showTime:)`` does.
extension ReopeningDRMDisplay {
    public var presentsLayers: Bool { !isLost && current?.presentsLayers == true }

    public func present(layers: [FrameLayer], background: RGBColor, showTime: Int64) throws(DisplayError) -> Bool {
        guard let display = current, !isLost else { return true }
        do {
            return try display.present(layers: layers, background: background, showTime: showTime)
        } catch {
            guard Self.meansGone(error) else { throw error }
            lose(reason: error.description, gone: true)
            return true
        }
    }

    public func prepareLayer(_ bitmap: Bitmap) { if !isLost { current?.prepareLayer(bitmap) } }

    /// Given to the card in use and to each card opened after it.
    public func convertRows(with splitter: RowSplitter) { rows = splitter }
}
