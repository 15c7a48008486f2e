// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// Something the show tells the world (docs/events-and-logs.md).
public enum ShowEvent: Equatable, Sendable {
    /// Playlist item `index` (of `playlistLength`, as given) with `source` is whole on a lit
    /// screen since show time `at`.
    case shown(index: Int, source: String, at: Duration, playlistLength: Int)
    /// A tap at (`x`, `y`) logical pixels on item `index` at the touch's time `at`. `half`: on
    /// a pair (`--pair-portraits`) the half tapped, `left`, `right`, `top` or `bottom`, whose
    /// picture `index` names; nil on a picture alone. `output`: with several outputs, the one
    /// touched (its pixels are `x`, `y`) when it is not the first (nil: the first).
    case tap(index: Int, source: String, at: Duration, x: Int, y: Int, half: String? = nil, output: String? = nil)
    /// The screen went dark or was lit (`reason`: `schedule`, `vt`, `control`, `touch`, `device`).
    case display(on: Bool, reason: String, at: Duration)
}

/// Where ``ShowOutput`` hands each ``ShowEvent``: stdout's JSON lines, the control socket's
/// clients, systemd's STATUS=, `--on-tap`; another publisher subscribes the same way
/// (``ShowOutput/subscribe(_:)``). Called on the frame loop's thread; must not block it.
public protocol ShowEventSink: AnyObject {
    /// One event, in the order they happen.
    func publish(_ event: ShowEvent)
    /// Once a turn of the loop (a child process to reap). Default: nothing.
    func service()
}

public extension ShowEventSink {
    func service() {}
}

/// What the show tells the world (docs/frame-loop.md): its events to every sink, in the order
/// subscribed (stdout first, then the control socket's clients, systemd's STATUS=, `--on-tap`),
/// and systemd's READY=1 (once the screen shows what the show is about), STATUS= lines and
/// watchdog (WATCHDOG=1 every half of its interval, from the loop: a hung loop starves it).
public final class ShowOutput {
    /// stdout's event lines (the first sink).
    public let events: EventWriter
    /// systemd's notify socket, when the show runs under it.
    public let notifier: SystemdNotifier?
    /// The start-up trace's `first frame` line is written at the first `shown` (real time only).
    let startupTrace: StartupTrace?
    private var sinks: [ShowEventSink] = []

    /// `control`: the control socket, whose clients get every event line; `tapCommand`:
    /// `--on-tap`, run for every tap.
    init(events: EventWriter, notifier: SystemdNotifier?, control: ControlServer?, tapCommand: TapCommand?,
         startupTrace: StartupTrace?) {
        self.events = events
        self.notifier = notifier
        self.startupTrace = startupTrace
        sinks = [events]
        if let control { sinks.append(ControlEventSink(server: control, lines: events)) }
        if let notifier { sinks.append(SystemdStatusSink(notifier: notifier)) }
        if let tapCommand { sinks.append(tapCommand) }
    }

    /// Adds a publisher: it gets every event from now on, after those subscribed before.
    public func subscribe(_ sink: ShowEventSink) { sinks.append(sink) }

    /// Hands `event` to every sink.
    public func publish(_ event: ShowEvent) {
        for sink in sinks { sink.publish(event) }
    }

    /// Once a turn: each sink's own duty.
    func service() {
        for sink in sinks { sink.service() }
    }

    /// The first `shown` of the show: the start-up trace's line.
    func firstShown() { startupTrace?.reportFirstShown() }

    /// systemd's STATUS= (`systemctl status`).
    func status(_ text: String) { notifier?.status(text) }

    /// READY=1 once the screen shows what the show is about, so that the unit becomes active
    /// with its first photo on screen (README, "Run it on a device"): the first presented frame
    /// with no placeholder in it, the frame of the first `shown` event (`scene` nil: a `shown`
    /// event is being written); or, when there is nothing to show, the screen that says so (no
    /// images, or "Loading..." while the first manifest is awaited with nothing stored), since
    /// that may last. A placeholder for an image still being decoded or downloaded waits.
    func readyIfShowing(_ scene: Scene?, loading: Bool, on display: String, playlistLength: Int) {
        guard let notifier, !notifier.readySent else { return }
        if let scene {
            let layers = [scene.base, scene.overlay, scene.offset != 0 ? scene.neighbour : nil].compactMap { $0 }
            if loading {
                notifier.ready(status: "waiting for the manifest on \(display); nothing stored yet")
                return
            }
            if layers.contains(.placeholder) { return }
            if scene.base == .noImages {
                notifier.ready(status: "no images to show on \(display)")
                return
            }
        }
        notifier.ready(status: "first photo on \(display); playlist of \(counted(playlistLength, "item"))")
    }

    /// The loop runs but must not draw (started inside a `--display-off` period, or on a VT that
    /// is switched away): READY=1 all the same, or systemd would kill a healthy show at its start
    /// timeout and restart it all night.
    func readyWithoutFrame(powerOn: Bool) {
        guard let notifier, !notifier.readySent else { return }
        let screen = powerOn ? "released (VT switched away)" : "off"
        notifier.ready(status: "running with the screen \(screen); nothing drawn yet")
    }

    /// Feeds systemd's watchdog every half of its interval (and at the first frame, which may
    /// have taken long), setting the `watchdog` deadline; nothing without a watchdog, or on
    /// virtual time (``LoopDriver/worldDeadline(_:)``).
    func feedWatchdog(at now: Duration, deadlines: inout Deadlines<LoopDuty>, firstFrame: Bool, driver: LoopDriver) {
        guard let notifier, let period = notifier.watchdogInterval, let next = driver.worldDeadline(now + period / 2)
        else { return }
        if deadlines.isDue(.watchdog, at: now) || deadlines[.watchdog] == nil || firstFrame {
            notifier.watchdog()
            deadlines[.watchdog] = next
        }
    }
}

/// stdout's JSON lines (docs/events-and-logs.md).
extension EventWriter: ShowEventSink {
    public func publish(_ event: ShowEvent) {
        enqueue(line(for: event) + "\n")
    }
}

/// The control socket's clients get each event as the line stdout gets, byte for byte.
final class ControlEventSink: ShowEventSink {
    let server: ControlServer
    let lines: EventWriter
    init(server: ControlServer, lines: EventWriter) { self.server = server; self.lines = lines }

    func publish(_ event: ShowEvent) {
        server.publish(eventLine: lines.line(for: event))
    }
}

/// A `shown` image becomes systemd's STATUS= line: `showing 2 of 5: /photos/b.jpg`.
final class SystemdStatusSink: ShowEventSink {
    let notifier: SystemdNotifier
    init(notifier: SystemdNotifier) { self.notifier = notifier }

    func publish(_ event: ShowEvent) {
        guard case .shown(let index, let source, _, let length) = event else { return }
        notifier.status("showing \(index + 1) of \(length): \(Log.hidingPasswords(source))")
    }
}

/// `--on-tap` runs for each tap; a finished run is reaped every turn.
extension TapCommand: ShowEventSink {
    public func publish(_ event: ShowEvent) {
        if case .tap(let index, let source, _, _, _, _, _) = event { run(index: index, source: source) }
    }
    public func service() { reap() }
}
