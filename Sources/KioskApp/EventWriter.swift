// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import KioskSystem

/// Writes events to stdout as JSON lines (docs/events-and-logs.md, docs/touch.md), e.g.
/// `{"event":"shown","index":0,"src":"/photos/a.jpg","t":1234}` and
/// `{"event":"tap","index":0,"src":"/photos/a.jpg","x":512,"y":300,"t":2345}`; `t` is the show
/// time in milliseconds, `x` and `y` the tap's position in logical screen pixels.
///
/// The frame loop never waits for the reader: lines go to a writer thread through a queue of
/// at most ``queueLimit`` lines. A reader that stops reading (a full pipe) blocks only that
/// thread; lines beyond the limit are dropped and counted (one log line says so), and the show
/// goes on.
public final class EventWriter: @unchecked Sendable {
    /// Most lines waiting for the reader before new ones are dropped.
    public static let queueLimit = 256

    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes]
        return e
    }()
    private let queue = DispatchQueue(label: "kiosk-carousel.events")
    private let group = DispatchGroup()
    private struct State { var waiting = 0; var dropped = 0 }
    private let state = Locked(State())
    private let descriptor: Int32

    /// Writes to `descriptor` (default 1, stdout).
    public init(descriptor: Int32 = 1) { self.descriptor = descriptor }

    /// The names of the outputs showing the show now (docs/displays.md "Several outputs"): with
    /// more than one, `shown` lines get `"outputs":["HDMI-A-1","HDMI-A-2"]` and `tap` lines
    /// `"output":"HDMI-A-1"` (the output touched: the tap's own, else the first), before `t`. Nil,
    /// or one name: the lines as ever. Called on the frame loop's thread, which writes the lines.
    public var outputNames: (() -> [String])?

    /// The JSON line for an event (without the newline); `point` (logical pixels) for taps.
    /// Fields in a fixed order: event, index, src, x, y, half, outputs or output (``outputNames``), t.
    /// The strings are escaped by Foundation's JSON encoder (each encoded as a JSON fragment). A
    /// password in `source` (`https://user:secret@host/...`) is written as `***`
    /// (``Log/hidingPasswords(_:)``).
    /// `half`: the half of a pair tapped (`"half":"left"`), when the tap was on a pair; `output`:
    /// the output a tap was on when not the first (docs/touch.md "Several screens").
    public func line(event: String, index: Int, source: String, time: Duration,
                     point: (x: Int, y: Int)? = nil, half: String? = nil, output: String? = nil) -> String {
        var text = "{\"event\":\(json(event)),\"index\":\(index),\"src\":\(json(Log.hidingPasswords(source)))"
        if let point { text += ",\"x\":\(point.x),\"y\":\(point.y)" }
        if let half { text += ",\"half\":\(json(half))" }
        if let names = outputNames?(), names.count > 1 {
            text += point == nil ? ",\"outputs\":[" + names.map(json).joined(separator: ",") + "]"
                : ",\"output\":\(json(output ?? names[0]))"
        }
        return text + ",\"t\":\(time.wholeMilliseconds)}"
    }

    private func json(_ string: String) -> String {
        let data = (try? encoder.encode(string)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Queues one event line for stdout; returns at once.
    public func emit(event: String, index: Int, source: String, time: Duration, point: (x: Int, y: Int)? = nil) {
        enqueue(line(event: event, index: index, source: source, time: time, point: point) + "\n")
    }

    /// The line for the screen going dark or lit (docs/events-and-logs.md):
    /// `{"event":"display","state":"off","reason":"schedule","t":1234}`; `reason` is `schedule`,
    /// `vt`, `control` or `touch`, `t` the show time in milliseconds.
    public func displayLine(on: Bool, reason: String, time: Duration) -> String {
        "{\"event\":\"display\",\"state\":\"\(on ? "on" : "off")\",\"reason\":\(json(reason)),"
            + "\"t\":\(time.wholeMilliseconds)}"
    }

    /// The line of `event` (without the newline): the one home of every event line, so stdout,
    /// the control socket's clients and MQTT's `P/events` get the same bytes.
    public func line(for event: ShowEvent) -> String {
        switch event {
        case .shown(let index, let source, let at, _):
            return line(event: "shown", index: index, source: source, time: at)
        case .tap(let index, let source, let at, let x, let y, let half, let output):
            return line(event: "tap", index: index, source: source, time: at, point: (x, y), half: half,
                        output: output)
        case .display(let on, let reason, let at):
            return displayLine(on: on, reason: reason, time: at)
        }
    }

    /// Queues a ``displayLine(on:reason:time:)``; returns at once.
    public func emitDisplay(on: Bool, reason: String, time: Duration) {
        enqueue(displayLine(on: on, reason: reason, time: time) + "\n")
    }

    func enqueue(_ text: String) {
        let accepted = state.withLock { s -> Bool in
            guard s.waiting < Self.queueLimit else {
                s.dropped += 1
                return false
            }
            s.waiting += 1
            return true
        }
        guard accepted else {
            if state.withLock({ $0.dropped }) == 1 {
                Log.warning("events dropped", reason: "nobody reads stdout: \(Self.queueLimit) event lines are waiting")
            }
            return
        }
        let fd = descriptor
        queue.async(group: group) { [self] in
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                // Closed or broken pipe: the event is lost, the show goes on.
                let n = try? syscall("write") { bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
                guard let n, n > 0 else { break }
                bytes = bytes.dropFirst(n)
            }
            state.withLock { $0.waiting -= 1 }
        }
    }

    /// Number of lines dropped because the reader fell behind.
    public var droppedCount: Int { state.withLock { $0.dropped } }

    /// Waits up to `timeout` for the queued lines to be written (at exit). Returns false when
    /// some are still waiting.
    @discardableResult
    public func flush(timeout: Duration = .seconds(2)) -> Bool {
        group.wait(timeout: .now() + .milliseconds(Int(timeout.wholeMilliseconds))) == .success
    }
}
