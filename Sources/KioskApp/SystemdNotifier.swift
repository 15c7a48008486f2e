// SPDX-License-Identifier: Apache-2.0
import CLibSystemd
import Glibc

/// Talks to systemd for a `Type=notify` service with `WatchdogSec=`, through libsystemd's
/// `sd_notify(3)` and `sd_watchdog_enabled(3)` (datagrams such as `READY=1` or `WATCHDOG=1` to
/// the socket named by `$NOTIFY_SOCKET`). Does nothing at all when `$NOTIFY_SOCKET` is unset
/// or empty (the program was not started by systemd).
///
/// Who sends what (README "Check"):
/// - `READY=1`: the ``FrameLoop``, with the first photo on screen (the frame of the first `shown`
///   event), or the screen saying there is nothing to show (``KioskApp`` sends STATUS=,
///   EXTEND_TIMEOUT_USEC= and WATCHDOG=1 while it waits for a display to appear, no READY=1);
/// - `WATCHDOG=1`: the ``FrameLoop`` itself, every half of ``watchdogInterval`` (so a loop that
///   hangs stops feeding it and systemd restarts the service; no helper thread feeds it);
/// - `STATUS=`: the image on screen, on every `shown` event;
/// - `STOPPING=1`: at exit.
public final class SystemdNotifier: @unchecked Sendable {
    /// Half of `$WATCHDOG_USEC` (when `$WATCHDOG_PID` is unset or names this process, as
    /// `sd_watchdog_enabled` checks), or nil without a watchdog; clamped to 50 ms...15 min
    /// whatever the variable says. The frame loop feeds the watchdog every half of this.
    public let watchdogInterval: Duration?
    /// True when `$NOTIFY_SOCKET` is set and not empty.
    public let isActive: Bool

    public init() {
        isActive = getenv("NOTIFY_SOCKET").map { $0.pointee != 0 } ?? false
        var usec: UInt64 = 0
        if isActive, sd_watchdog_enabled(0, &usec) > 0, usec > 0 {
            watchdogInterval = .microseconds(Int64(min(max(usec, 100_000), 1_800_000_000)) / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether `READY=1` went out (it is sent once).
    public private(set) var readySent = false
    /// `READY=1` with a status line, the first time only (call it from one thread: the loop).
    public func ready(status: String) {
        guard !readySent else { return }
        readySent = true
        send("READY=1\nSTATUS=\(Self.oneLine(status))")
    }
    /// `WATCHDOG=1`: the frame loop is alive.
    public func watchdog() { send("WATCHDOG=1") }
    /// `STATUS=…`: shown by `systemctl status`.
    public func status(_ text: String) { send("STATUS=\(Self.oneLine(text))") }
    /// `STOPPING=1`.
    public func stopping() { send("STOPPING=1") }

    /// Sends one notification (newline-separated `KEY=VALUE` assignments); failures are
    /// ignored (systemd may be gone during shutdown).
    public func send(_ message: String) {
        guard isActive else { return }
        _ = sd_notify(0, message)
    }

    /// A value must not contain a newline (it would start another assignment): control
    /// characters become spaces.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}
