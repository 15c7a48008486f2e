// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Talks to systemd for a `Type=notify` service with `WatchdogSec=`: the notification protocol
/// of `sd_notify(3)` (datagrams such as `READY=1` or `WATCHDOG=1` to the `AF_UNIX` socket named
/// by `$NOTIFY_SOCKET`, a leading `@` naming an abstract socket) and `sd_watchdog_enabled(3)`'s
/// reading of `$WATCHDOG_USEC` / `$WATCHDOG_PID`, spoken directly: the man page documents the
/// protocol as stable for programs that do not link libsystemd, and not linking it keeps its
/// seven libraries (libsystemd, libgcrypt, libcap, liblzma, libzstd, liblz4, libgpg-error) out
/// of every start. Does nothing at all when `$NOTIFY_SOCKET` is unset or empty (the program
/// was not started by systemd).
///
/// Who sends what (docs/deployment.md "Check"):
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
        if isActive, let usec = Self.watchdogMicroseconds() {
            watchdogInterval = .microseconds(Int64(min(max(usec, 100_000), 1_800_000_000)) / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// `$WATCHDOG_USEC` when it is a positive decimal number and `$WATCHDOG_PID` is unset or
    /// names this process (what `sd_watchdog_enabled(3)` checks); nil otherwise.
    static func watchdogMicroseconds() -> UInt64? {
        guard let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }),
              let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = getenv("WATCHDOG_PID").map({ String(cString: $0) }), !pid.isEmpty, pid_t(pid) != getpid() {
            return nil
        }
        return usec
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
        guard isActive, let socketName = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }) else { return }
        _ = Self.sendDatagram(message, to: socketName)
    }

    /// One datagram to the `AF_UNIX` socket `name` (a path, or `@name` for an abstract socket;
    /// at most 107 bytes, `sun_path`'s size in <sys/un.h> less its NUL), from a socket made for
    /// it and closed after (as sd_notify does). False when the name is unusable (another address
    /// family, too long) or the send fails.
    static func sendDatagram(_ message: String, to name: String) -> Bool {
        var path = Array(name.utf8)
        guard path.count > 1, path[0] == UInt8(ascii: "/") || path[0] == UInt8(ascii: "@") else { return false }
        if path[0] == UInt8(ascii: "@") { path[0] = 0 }   // abstract namespace: sun_path starts with NUL
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        // The address's length counts the bytes of the name only (an abstract name has no NUL end).
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path[0] == 0 ? 0 : 1))
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, length) }
            }
        }
        return sent == bytes.count
    }

    /// A value must not contain a newline (it would start another assignment): control
    /// characters become spaces.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}
