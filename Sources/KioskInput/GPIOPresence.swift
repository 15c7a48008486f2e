// SPDX-License-Identifier: Apache-2.0
import Glibc
import CKioskGpio
import KioskCore
import KioskSystem

/// `--presence gpio:CHIP:LINE[,active-low][,debounce=MS][,pull-up|pull-down|bias-disable]`
/// (docs/power.md): a motion sensor's output on a GPIO line.
public struct PresenceSensorSpec: Equatable, Sendable, CustomStringConvertible {
    /// The GPIO chip: its name (`gpiochip0`), path (`/dev/gpiochip0`), label (`pinctrl-bcm2711`)
    /// or number (`0`), as libgpiod 1.6's `gpiod_chip_open_lookup` takes them (with 2.x too).
    public var chip: String
    /// The line: its offset on the chip (`17`) or its name (`GPIO17`).
    public var line: String
    /// The sensor's output is active (motion) when low.
    public var activeLow = false
    /// How long a level must hold to count (``KioskCore/EdgeDebouncer``); 50 ms unless given.
    public var debounce: Duration = .milliseconds(50)
    /// The line's bias (`pull-up`, `pull-down`, `bias-disable`), nil: as it is.
    public var bias: Bias?

    public enum Bias: String, Sendable { case pullUp = "pull-up", pullDown = "pull-down", disable = "bias-disable" }

    public init(chip: String, line: String) { self.chip = chip; self.line = line }

    /// The value as it parses back: `gpio:gpiochip0:17,active-low,debounce=50`.
    public var description: String {
        "gpio:\(chip):\(line)" + (activeLow ? ",active-low" : "") + ",debounce=\(debounce.wholeMilliseconds)"
            + (bias.map { ",\($0.rawValue)" } ?? "")
    }

    /// Parses the option's value.
    /// - Throws: ``InputError/invalidPresence(value:reason:)`` naming what is wrong.
    public static func parse(_ text: String) throws(InputError) -> PresenceSensorSpec {
        func fail(_ reason: String) -> InputError { .invalidPresence(value: text, reason: reason) }
        let options = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let parts = options[0].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, parts[0] == "gpio" else { throw fail("expected gpio:CHIP:LINE") }
        guard !parts[1].isEmpty else { throw fail("no CHIP (gpiochip0, /dev/gpiochip0, a label or a number)") }
        guard !parts[2].isEmpty else { throw fail("no LINE (an offset such as 17, or a line name)") }
        var spec = PresenceSensorSpec(chip: parts[1], line: parts[2])
        var given: Set<String> = []
        for option in options.dropFirst() {
            // Each option once, and one bias: `pull-up,pull-down` would leave the line's bias to
            // whichever came last.
            let key = option.hasPrefix("debounce=") ? "debounce" : Bias(rawValue: option) != nil ? "bias" : option
            if given.contains(key) {
                throw fail(key == "bias"
                    ? "'\(option)' after '\(spec.bias?.rawValue ?? "")': one bias at most"
                    : "'\(key)' given twice")
            }
            given.insert(key)
            if option == "active-low" {
                spec.activeLow = true
            } else if option.hasPrefix("debounce=") {
                guard let ms = Int(option.dropFirst("debounce=".count)), (0...10_000).contains(ms) else {
                    throw fail("'\(option)': expected debounce=MS with whole milliseconds 0 ... 10000")
                }
                spec.debounce = .milliseconds(ms)
            } else if let bias = Bias(rawValue: option) {
                spec.bias = bias
            } else {
                throw fail("unknown option '\(option)' (active-low, debounce=MS, pull-up, pull-down, bias-disable)")
            }
        }
        return spec
    }
}

/// What ``GPIOPresenceInput`` reports to the app.
public enum PresenceInputEvent: Equatable, Sendable {
    /// The line was requested for edge events: a description (`gpiochip0 [gpio-sim.0-node0] line 17 "pir"`)
    /// and its level then (true: active, motion), at show time `time`.
    case attached(summary: String, active: Bool, time: Duration)
    /// An edge: the line became active (motion) or inactive, at show time `time` (the kernel's
    /// CLOCK_MONOTONIC timestamp of the event, made relative to the show's start).
    case edge(active: Bool, time: Duration)
    /// The line could not be requested, or reading it failed: it is tried again every
    /// ``GPIOPresenceInput/retryInterval``. The same reason is reported once.
    case unavailable(reason: String)
}

/// A motion sensor on a GPIO line, read through the GPIO character device with libgpiod (its 2.x
/// API, libgpiod.so.3, or its 1.6 API, libgpiod.so.2: CKioskGpio opens whichever is there) on a
/// thread of its own: the line is requested for both edges (active-low and bias as asked) and the
/// thread sleeps in `poll(2)` on the event descriptor: no polling of the level. Each edge goes to
/// ``events`` with its kernel timestamp (debounced by the app, ``KioskCore/EdgeDebouncer``). A
/// chip that goes away (a driver unbound, an expander unplugged) is reported and looked for again
/// every ``retryInterval``.
public final class GPIOPresenceInput: @unchecked Sendable {
    /// How often a line that could not be requested is tried again: 5 s.
    public static let retryInterval: Duration = .seconds(5)
    /// The consumer name the kernel shows for the line (`gpioinfo`).
    public static let consumer = "kiosk-carousel"

    public let spec: PresenceSensorSpec
    /// What the thread found, for the frame loop (poll ``Mailbox/wakeDescriptor``).
    public let events: Mailbox<PresenceInputEvent>
    /// Raw CLOCK_MONOTONIC at the show's start: event times are made relative to it.
    public let showStart: Duration
    private let worker: WorkerThread

    /// Prepares the reader; requests nothing yet (``start()``). Throws ``SystemError`` (`pipe`).
    public init(spec: PresenceSensorSpec, showStart: Duration) throws(SystemError) {
        self.spec = spec
        self.showStart = showStart
        events = try Mailbox(bound: 4096)
        worker = try WorkerThread(name: "GPIO \(spec.chip):\(spec.line)")
    }

    deinit { worker.stop() }

    /// Starts the thread. Throws ``SystemError`` (`pthread_create`).
    public func start() throws(SystemError) { try worker.start { [self] in run() } }

    /// Ends the thread and gives the line back.
    public func stop() { worker.stop() }

    private func run() {
        var lastReason: String?
        while !worker.isStopRequested {
            do throws(InputError) {
                let line = try RequestedLine(spec)
                lastReason = nil
                events.post(
                    .attached(summary: line.summary, active: try line.value(), time: Self.monotonic() - showStart))
                try follow(line)
                return  // stopped
            } catch {
                if lastReason != error.description {
                    lastReason = error.description
                    events.post(.unavailable(reason: error.description))
                }
            }
            var fd = pollfd(fd: worker.stopDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&fd, 1, pollTimeout(Self.retryInterval))
        }
    }

    /// Sleeps in poll(2) on the line's event descriptor and the stop pipe; posts each edge.
    /// Returns when stopped; throws when the line fails (the chip went away: ENODEV).
    private func follow(_ line: RequestedLine) throws(InputError) {
        let what = "\(spec.chip):\(spec.line)"
        while true {
            var fds = [pollfd(fd: line.eventDescriptor, events: Int16(POLLIN | POLLPRI), revents: 0),
                       pollfd(fd: worker.stopDescriptor, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 2, -1)
            if n < 0 && errno == EINTR { continue }
            if fds[1].revents != 0 { return }
            if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && fds[0].revents & Int16(POLLIN) == 0 {
                throw .system(SystemError(operation: "poll (the line's events)", path: what, errno: ENODEV))
            }
            for edge in try line.readEdges() {
                events.post(.edge(active: edge.active, time: edge.time - showStart))
            }
        }
    }

    static func monotonic() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
    }
}

/// A chip opened and one of its lines requested for edge events (given back on deinit), through
/// CKioskGpio: libgpiod's 2.x API (libgpiod.so.3) or its 1.6 API (libgpiod.so.2), whichever
/// this system has.
final class RequestedLine {
    let chip: OpaquePointer
    let line: OpaquePointer
    let summary: String
    let eventDescriptor: Int32
    private let spec: PresenceSensorSpec

    /// Opens `spec.chip` (by name, path, label or number, as libgpiod 1.6's gpiod_chip_open_lookup),
    /// finds the line (by offset, else by name) and requests it for both edges with the flags asked for.
    /// - Throws: ``InputError/system(_:)`` with the call and the chip (ENOENT: no such chip or
    ///   line; EBUSY: another program holds the line; EACCES: the user needs access to the chip;
    ///   ELIBACC: neither libgpiod.so.3 nor libgpiod.so.2 could be loaded, the operation says why).
    init(_ spec: PresenceSensorSpec) throws(InputError) {
        self.spec = spec
        let what = spec.chip
        if let reason = kc_gpio_load_error() {
            throw .system(SystemError(operation: "dlopen libgpiod (\(String(cString: reason)))", path: what,
                                      errno: ELIBACC))
        }
        guard let chip = kc_gpio_chip_open(spec.chip) else {
            let e = errno
            throw .system(
                SystemError(
                    operation: "gpiod_chip_open_lookup (no GPIO chip of that name, path, label or number?)",
                                      path: what, errno: e))
        }
        let chipName = String(cString: kc_gpio_chip_name(chip)), label = String(cString: kc_gpio_chip_label(chip))
        let lines = kc_gpio_chip_num_lines(chip)
        let offset: UInt32
        if let number = UInt32(spec.line) {
            guard number < lines else {
                kc_gpio_chip_close(chip)
                throw .invalidPresence(value: spec.description,
                    reason: "\(chipName) [\(label)] has lines 0 ... \(Int(lines) - 1), not \(number)")
            }
            offset = number
        } else {
            let found = kc_gpio_chip_find_line(chip, spec.line)
            guard found >= 0 else {
                let e = errno
                kc_gpio_chip_close(chip)
                throw .system(
                    SystemError(
                        operation: "gpiod_chip_find_line \(spec.line)", path: "\(chipName) [\(label)]",
                        errno: e == 0 ? ENOENT : e))
            }
            offset = UInt32(found)
        }
        let bias: kc_gpio_bias
        switch spec.bias {
        case .pullUp: bias = KC_GPIO_BIAS_PULL_UP
        case .pullDown: bias = KC_GPIO_BIAS_PULL_DOWN
        case .disable: bias = KC_GPIO_BIAS_DISABLE
        case nil: bias = KC_GPIO_BIAS_AS_IS
        }
        guard let line = kc_gpio_line_request(chip, offset, GPIOPresenceInput.consumer, spec.activeLow ? 1 : 0, bias)
        else {
            let e = errno
            kc_gpio_chip_close(chip)
            throw .system(SystemError(operation: "gpiod_line_request_both_edges_events (line \(spec.line))",
                                      path: "\(chipName) [\(label)]", errno: e))
        }
        self.chip = chip
        self.line = line
        eventDescriptor = kc_gpio_line_fd(line)
        let name = kc_gpio_line_name(line).map { " \"\(String(cString: $0))\"" } ?? ""
        summary =
            "\(chipName) [\(label)] line \(kc_gpio_line_offset(line))\(name)" + (spec.activeLow ? ", active-low" : "")
            + (spec.bias.map { ", \($0.rawValue)" } ?? "") + ", debounce \(spec.debounce.wholeMilliseconds) ms"
    }

    deinit {
        kc_gpio_line_release(line)
        kc_gpio_chip_close(chip)
    }

    /// The line's level now (active, motion: true), as the flags say.
    func value() throws(InputError) -> Bool {
        let v = kc_gpio_line_value(line)
        guard v >= 0 else {
            throw .system(SystemError(operation: "gpiod_line_get_value", path: spec.chip, errno: errno))
        }
        return v == 1
    }

    /// The edge events waiting (never blocks): rising is active (motion), falling inactive, each
    /// at its CLOCK_MONOTONIC timestamp.
    func readEdges() throws(InputError) -> [(active: Bool, time: Duration)] {
        var out: [(active: Bool, time: Duration)] = []
        var buffer = [kc_gpio_edge](repeating: kc_gpio_edge(), count: 16)
        while true {
            let n = kc_gpio_line_read_edges(line, &buffer, UInt32(buffer.count))
            if n < 0 {
                throw .system(SystemError(operation: "gpiod_line_event_read", path: spec.chip, errno: errno))
            }
            for e in buffer.prefix(Int(n)) {
                out.append((e.rising != 0, .nanoseconds(Int64(e.timestamp_ns))))
            }
            if Int(n) < buffer.count { return out }
        }
    }
}
