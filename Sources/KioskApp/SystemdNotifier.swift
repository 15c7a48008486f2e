import Glibc

/// Talks to systemd for a `Type=notify` service with `WatchdogSec=` (sd_notify(3) protocol:
/// datagrams like `READY=1` or `WATCHDOG=1` sent to the AF_UNIX socket named by
/// `$NOTIFY_SOCKET`; a leading `@` means the abstract namespace). Does nothing when the
/// program is not started by systemd.
public final class SystemdNotifier {
    private let socketPath: String?
    private let fd: Int32
    /// Half of `$WATCHDOG_USEC`: how often ``watchdog()`` must be called, or nil without a watchdog.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = SystemdNotifier.processEnvironment()) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketPath = path
        fd = path == nil ? -1 : socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if let usec = environment["WATCHDOG_USEC"].flatMap({ Int64($0) }), usec > 0,
           environment["WATCHDOG_PID"].flatMap({ Int32($0) }).map({ $0 == getpid() }) ?? true {
            // Fed at least every 50 ms and at most every 30 minutes, whatever the variable says.
            watchdogInterval = .microseconds(min(max(usec, 100_000), 3_600_000_000) / 2)
        } else {
            watchdogInterval = nil
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// True when `$NOTIFY_SOCKET` was set.
    public var isActive: Bool { fd >= 0 }

    /// `READY=1` with a status line.
    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    /// `WATCHDOG=1`: the frame loop is alive.
    public func watchdog() { send("WATCHDOG=1") }
    /// `STOPPING=1`.
    public func stopping() { send("STOPPING=1") }

    /// Sends one datagram; failures are ignored (systemd may be gone during shutdown).
    public func send(_ message: String) {
        guard fd >= 0, let path = socketPath else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        _ = message.withCString { text in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, text, strlen(text), Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
    }

    /// The process environment as a dictionary.
    public static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { result[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return result
    }
}
