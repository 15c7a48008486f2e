// SPDX-License-Identifier: Apache-2.0
import Glibc
import CLibEvdev
import KioskCore
import KioskSystem

/// What ``TouchInput`` reports to the app.
public enum TouchInputEvent: Equatable, Sendable {
    /// A sample of the driving finger (logical pixels, show time).
    case sample(TouchSample)
    /// A touchscreen was opened and is being read (at start, or plugged in later, or back).
    case attached(TouchDeviceInfo)
    /// The touchscreen went away (unplugged: `ENODEV`) or failed; it is looked for again.
    /// A touch in progress has been ended with a `.cancel` sample just before.
    case lost(path: String, reason: String)
    /// Something worth a log line that does not stop touch input (no touchscreen yet, no
    /// permission, grab refused, queue overflow).
    case problem(TouchProblem)
    /// Samples are mapped onto a new panel size from now on (``TouchInput/setPanelSize(width:height:)``);
    /// the touchscreen's logical pixels per millimetre at that size, nil when it reports no resolution.
    case remapped(pixelsPerMillimetre: Double?)
}

/// A log line about touch input in docs/events-and-logs.md's form: a fixed phrase, the device
/// or folder once (`path=`), and the error (`reason`).
public struct TouchProblem: Hashable, Sendable, CustomStringConvertible {
    /// A fixed phrase: `touchscreen not found (--input), waiting for it to appear`.
    public var what: String
    /// The node or folder concerned, when the reason does not name it already (a system
    /// call's error does: `open /dev/input/event3: Permission denied (errno 13)`).
    public var path: String?
    /// Why, when there is more to say (the error's description).
    public var reason: String?
    public init(_ what: String, path: String? = nil, reason: String? = nil) {
        self.what = what; self.path = path; self.reason = reason
    }
    /// `WHAT path=PATH: REASON`, for tests and messages.
    public var description: String { what + (path.map { " path=\($0)" } ?? "") + (reason.map { ": \($0)" } ?? "") }
}

/// The touchscreen being read, for the log and the gesture settings.
public struct TouchDeviceInfo: Equatable, Sendable, CustomStringConvertible {
    /// The node, e.g. `/dev/input/event3`.
    public var path: String
    /// The kernel's device name, e.g. `ELAN Touchscreen`.
    public var name: String
    public var touchProtocol: TouchProtocol
    /// The axes positions are read from, device units.
    public var xAxis: AbsoluteAxis
    public var yAxis: AbsoluteAxis
    /// Logical pixels per millimetre of finger travel, nil when the device reports no resolution.
    public var pixelsPerMillimetre: Double?
    /// Whether `EVIOCGRAB` succeeded (else the console may see the touches too).
    public var grabbed: Bool

    public init(path: String, name: String, touchProtocol: TouchProtocol, xAxis: AbsoluteAxis, yAxis: AbsoluteAxis,
                pixelsPerMillimetre: Double?, grabbed: Bool) {
        self.path = path; self.name = name; self.touchProtocol = touchProtocol; self.xAxis = xAxis; self.yAxis = yAxis
        self.pixelsPerMillimetre = pixelsPerMillimetre; self.grabbed = grabbed
    }

    /// `/dev/input/event3 "ELAN Touchscreen", multitouch protocol B, 10 slots, x 0..3312 (10/mm), y 0..1872 (10/mm)`.
    public var description: String {
        "\(path) \"\(name)\", \(touchProtocol), x \(xAxis), y \(yAxis)" + (grabbed ? "" : ", not grabbed")
    }
}

/// Settings of ``TouchInput``.
public struct TouchInputConfiguration: Sendable {
    /// The device to read (`--input PATH`), or nil to pick the touchscreen under ``directory``.
    public var devicePath: String?
    /// Where evdev nodes live.
    public var directory: String
    /// The panel as mounted (the display mode), pixels.
    public var panelWidth: Int
    public var panelHeight: Int
    /// `--rotate`.
    public var rotation: Rotation
    /// `--touch-calibration`.
    public var calibration: TouchCalibration
    /// Raw `CLOCK_MONOTONIC` time at the show's start: sample times are relative to it.
    public var showStart: Duration
    /// Take the device for this process alone (`EVIOCGRAB`).
    public var grab: Bool

    public init(devicePath: String? = nil, directory: String = "/dev/input", panelWidth: Int, panelHeight: Int,
                rotation: Rotation = .none, calibration: TouchCalibration = .identity, showStart: Duration,
                grab: Bool = true) {
        self.devicePath = devicePath; self.directory = directory
        self.panelWidth = panelWidth; self.panelHeight = panelHeight
        self.rotation = rotation; self.calibration = calibration; self.showStart = showStart; self.grab = grab
    }
}

/// Reads the touchscreen on its own thread and queues ``TouchInputEvent``s for the frame loop,
/// which never blocks on it: poll ``events``' ``Mailbox/wakeDescriptor`` (readable while events
/// wait) and ``Mailbox/take()`` them.
///
/// The thread polls the device and an inotify watch on the device directory (`IN_CREATE`,
/// `IN_ATTRIB` for permissions udev settles after creation, `IN_DELETE`), so a touchscreen plugged
/// in later, or coming back after an unplug, is opened then. Without a touchscreen, or without
/// the directory, it keeps looking (and retries every 2 s while a node could not be opened or the
/// directory could not be watched). Nothing here is fatal once started: trouble becomes
/// ``TouchInputEvent/problem(_:)`` or ``TouchInputEvent/lost(path:reason:)``.
public final class TouchInput: @unchecked Sendable {
    public let configuration: TouchInputConfiguration
    /// Largest number of waiting events; beyond it `.move` samples are dropped (downs, ups and
    /// device events are always kept), with one ``TouchInputEvent/problem(_:)`` saying so.
    public static let queueLimit = 4096
    /// The events for the frame loop, oldest first (bounded by ``queueLimit``; the wake-up byte
    /// is written only when the queue was empty, so the pipe never fills).
    public let events: Mailbox<TouchInputEvent>
    private let worker: WorkerThread

    /// The panel size samples are mapped onto, pixels (``setPanelSize(width:height:)``).
    private let panel: Locked<(width: Int, height: Int)>

    // Worker-thread state.
    private var device: EvdevDevice?
    private var decoder: TouchDecoder?
    /// Problems already reported since the last device was attached: each is posted once, so a
    /// missing device retried every 2 s does not flood the log.
    private var reportedProblems: Set<TouchProblem> = []

    /// Creates the queue and the thread's stop pipe; reads nothing until ``start()``.
    /// - Throws: ``InputError/system(_:)`` when a pipe cannot be made.
    public init(configuration: TouchInputConfiguration) throws(InputError) {
        self.configuration = configuration
        panel = Locked((configuration.panelWidth, configuration.panelHeight))
        do {
            events = try Mailbox(bound: Self.queueLimit, overflow: .dropNew(where: { event in
                if case .sample(let s) = event { return s.phase == .move }
                return false
            }, notice: .problem(TouchProblem("touch events are not being taken: moves dropped"))), wake: .whenEmpty)
            worker = try WorkerThread(name: "touch input")
        } catch { throw .system(error) }
    }

    deinit { stop() }

    /// Starts the reader thread (once; later calls do nothing).
    /// - Throws: ``InputError/system(_:)`` when the thread cannot be created.
    public func start() throws(InputError) {
        do { try worker.start { self.run() } } catch { throw .system(error) }
    }

    /// Stops the reader thread and waits for it; the device is closed (and its grab released).
    public func stop() { worker.stop() }

    /// The display changed size (another monitor, docs/deployment.md "Check"): samples read from now on are
    /// mapped onto a panel of `width` x `height` pixels, as mounted (before `--rotate`), and a
    /// ``TouchInputEvent/remapped(pixelsPerMillimetre:)`` comes before the first of them.
    /// Any thread.
    public func setPanelSize(width: Int, height: Int) { panel.withLock { $0 = (width, height) } }

    private func post(_ events: [TouchInputEvent]) {
        guard !events.isEmpty else { return }
        self.events.post(contentsOf: events)
    }

    /// Posts a problem unless it was already posted since the last attach (no log flooding
    /// while waiting for a device).
    private func problem(_ what: String, path: String? = nil, reason: String? = nil) {
        let problem = TouchProblem(what, path: path, reason: reason)
        guard reportedProblems.insert(problem).inserted else { return }
        post([.problem(problem)])
    }

    // MARK: - The reader thread

    private var watchDirectory: String {
        guard let path = configuration.devicePath else { return configuration.directory }
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private func run() {
        var inotify: InotifyReader?
        do { inotify = try InotifyReader() } catch {
            problem("touchscreens plugged in later are not noticed", reason: error.description)
        }
        var watch: Int32 = -1
        var needScan = true
        var retry = false
        while true {
            if let inotify, watch < 0 {
                do {
                    watch = try inotify.addWatch(watchDirectory,
                                                 mask: UInt32(IN_CREATE | IN_ATTRIB | IN_DELETE | IN_MOVED_TO))
                } catch {
                    problem("touchscreens plugged in later are not noticed", reason: error.description)
                }
            }
            if device == nil && needScan {
                needScan = false
                retry = !attach()
            }
            var set = PollSet(readable: [worker.stopDescriptor, inotify?.descriptor ?? -1])
            if let device { set.add(device.fd.rawValue) }
            let timeout: Int32 = (device == nil && retry) || watch < 0 ? 2000 : -1
            let n: Int
            do {
                n = try set.wait(milliseconds: timeout)
            } catch {
                problem("touch input not read", reason: error.description)
                usleep(100_000)
                continue
            }
            if set.isReady(0) { break }
            if n == 0 { needScan = true; continue }  // retry timer
            if set.isReady(1), let inotify {
                let (changed, lostWatch) = examine(inotify.readEvents())
                if changed { needScan = true }
                if lostWatch { watch = -1; needScan = true }
                // Found by itself on a lesser device (no INPUT_PROP_DIRECT: a tablet, a touch
                // controller's mouse node)? A real touchscreen that appears (comes back after an
                // unplug) takes over.
                if changed, let current = device, configuration.devicePath == nil,
                   !current.capabilities.properties.contains(Evdev.INPUT_PROP_DIRECT),
                   let better = Self.directTouchscreen(in: configuration.directory, excluding: current.path) {
                    detach(reason: "\(better) is a direct touchscreen; switching to it")
                    needScan = true
                }
            }
            if set.count > 2 && set.isReady(2) {
                readDevice()
                // Lost: look again in 2 s, or sooner when inotify sees the node come back.
                if device == nil { retry = true }
            }
        }
        if device != nil { detach(reason: nil) }
    }

    /// Whether the inotify events concern a node we might want, and whether the watch went
    /// away (directory deleted: `IN_IGNORED`).
    private func examine(_ events: [InotifyEvent]) -> (changed: Bool, lostWatch: Bool) {
        var changed = false, lost = false
        let wanted = configuration.devicePath.map { path in path.split(separator: "/").last.map(String.init) ?? path }
        for event in events {
            let name = String(decoding: event.name, as: UTF8.self)
            if event.has(IN_IGNORED) { lost = true }
            if event.has(IN_Q_OVERFLOW) { changed = true }
            if let wanted { if name == wanted { changed = true } } else if name.hasPrefix("event") { changed = true }
        }
        return (changed, lost)
    }

    /// Opens the configured device, or the best touchscreen found; posts `.attached` or a problem.
    /// Returns false when it should be retried on a timer (a node could not be opened).
    private func attach() -> Bool {
        let config = configuration
        var candidate: EvdevDevice?
        var retryLater = false
        if let path = config.devicePath {
            do {
                let opened = try EvdevDevice.open(path)
                if opened.capabilities.touchProtocol == nil {
                    problem("not a touchscreen (--input), touch is off", path: path,
                            reason: "no ABS_X/ABS_Y with BTN_TOUCH or BTN_LEFT, and no ABS_MT_POSITION_X/Y")
                    return true
                }
                candidate = opened
            } catch {
                if case .system(let e) = error, e.errno == ENOENT {
                    problem("touchscreen not found (--input), waiting for it to appear", path: path)
                    return true
                }
                if case .system(let e) = error, e.errno == ENOTTY {
                    // names the path
                    problem("not an evdev input device (--input), touch is off", reason: e.description)
                    return true
                }
                problem("touchscreen not opened (--input), trying again", reason: error.description)
                retryLater = true
                return !retryLater
            }
        } else {
            var failures: [String] = []
            var denied = 0
            var best: EvdevDevice?
            for path in Self.eventNodes(in: config.directory) {
                let opened: EvdevDevice
                do { opened = try EvdevDevice.open(path) } catch {
                    // Not readable by design: under the unit only the touchscreens' group
                    // (deploy/70-kiosk-carousel-touch.rules) is the service's, not keyboards'.
                    if case .system(let e) = error, e.errno == EACCES {
                        denied += 1
                    } else {
                        failures.append(error.description)
                    }
                    continue
                }
                guard opened.capabilities.isTouchscreen, opened.capabilities.touchProtocol != nil else { continue }
                let direct = opened.capabilities.properties.contains(Evdev.INPUT_PROP_DIRECT)
                if best == nil || (direct && !best!.capabilities.properties.contains(Evdev.INPUT_PROP_DIRECT)) {
                    best = opened
                }
                if direct { break }
            }
            guard let best else {
                var reasons = failures
                if denied > 0 {
                    reasons.append("\(denied) event nodes not readable (permission): touchscreens are "
                                   + "the group kiosk-touch's by deploy/70-kiosk-carousel-touch.rules")
                }
                problem("no touchscreen found", path: config.directory,
                        reason: reasons.isEmpty ? nil : reasons.joined(separator: "; "))
                return failures.isEmpty
            }
            candidate = best
        }
        guard let device = candidate, let axes = device.capabilities.positionAxes else { return true }
        do { try device.useMonotonicClock() } catch {
            problem("touchscreen not used, trying again", reason: error.description)
            return false
        }
        var grabbed = false
        if config.grab {
            do { try device.grab(); grabbed = true } catch {
                problem("touchscreen not grabbed, the console may see touches too", reason: error.description)
            }
        }
        let size = panel.withLock { $0 }
        let mapping = TouchMapping(xAxis: axes.x, yAxis: axes.y, calibration: config.calibration,
                                   rotation: config.rotation, panelWidth: size.width, panelHeight: size.height)
        decoder = TouchDecoder(capabilities: device.capabilities, mapping: mapping, showStart: config.showStart,
                               keysDown: device.keysDown(among: [Evdev.BTN_TOUCH, Evdev.BTN_LEFT]),
                               slots: device.slotStates())
        self.device = device
        reportedProblems.removeAll()
        post([.attached(TouchDeviceInfo(path: device.path, name: device.name, touchProtocol: decoder!.touchProtocol,
                                        xAxis: axes.x, yAxis: axes.y, pixelsPerMillimetre: mapping.pixelsPerMillimetre,
                                        grabbed: grabbed))])
        return true
    }

    private func readDevice() {
        guard let device else { return }
        var out: [TouchInputEvent] = []
        let size = panel.withLock { $0 }
        if var mapping = decoder?.mapping, mapping.panelWidth != size.width || mapping.panelHeight != size.height {
            mapping.panelWidth = size.width; mapping.panelHeight = size.height
            decoder?.mapping = mapping
            out.append(.remapped(pixelsPerMillimetre: mapping.pixelsPerMillimetre))
        }
        do {
            try device.readAvailable { event in
                for sample in decoder!.feed(event) { out.append(.sample(sample)) }
            }
            post(out)
        } catch {
            post(out)
            let reason: String
            if case .system(let e) = error, e.errno == ENODEV {
                reason = "device removed"
            } else {
                reason = error.description
            }
            detach(reason: reason)
        }
    }

    /// Closes the device; ends a touch in progress with an `.up`; posts `.lost` when `reason` is given.
    private func detach(reason: String?) {
        guard let device else { return }
        var out: [TouchInputEvent] = []
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let time = Duration.seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
        if var d = decoder { out += d.cancel(at: time).map { .sample($0) } }
        if let reason { out.append(.lost(path: device.path, reason: reason)) }
        post(out)
        self.device = nil
        decoder = nil
    }

    /// The first node under `directory` (other than `excluding`) that is a touchscreen with
    /// INPUT_PROP_DIRECT, or nil.
    static func directTouchscreen(in directory: String, excluding: String) -> String? {
        for path in eventNodes(in: directory) where path != excluding {
            guard let opened = try? EvdevDevice.open(path) else { continue }
            if opened.capabilities.isTouchscreen, opened.capabilities.touchProtocol != nil,
               opened.capabilities.properties.contains(Evdev.INPUT_PROP_DIRECT) { return path }
        }
        return nil
    }

    /// `DIR/eventN` nodes, in numeric order.
    static func eventNodes(in directory: String) -> [String] {
        guard let entries = try? listDirectory(directory) else { return [] }
        let numbers = entries.compactMap { entry -> Int? in
            guard let name = entry.name, name.hasPrefix("event") else { return nil }
            return Int(name.dropFirst(5))
        }
        return numbers.sorted().map { "\(directory)/event\($0)" }
    }
}
