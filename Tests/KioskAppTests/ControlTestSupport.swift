// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskSystem

// Helpers for the end-to-end tests of the control socket, sd_notify and the signals: the real
// `kiosk-carousel` executable in a child process, a client of its control socket, and a
// datagram socket standing in for systemd's notify socket.

let controlTestSamples = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("deploy/samples")

/// The five sample photos, in the order a directory source lists them.
let controlTestPhotos = ["colorfulcups-1920x1200.jpg", "eveningglow-1920x1200.jpg", "fallenleaf-1920x1200.jpg",
                         "grey-1920x1200.jpg", "path-1920x1200.jpg"]
    .map { controlTestSamples.appendingPathComponent($0).path }

struct ControlTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A fresh directory under /tmp (short: socket paths must fit in 107 bytes).
func controlTestDirectory() -> String {
    var template = Array("/tmp/kc-ctl-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

/// The executable built beside the test bundle.
func kioskExecutable() -> String {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("kiosk-carousel").path), dir.path != "/" {
        dir.deleteLastPathComponent()
    }
    return dir.appendingPathComponent("kiosk-carousel").path
}

/// Seconds on the wall clock (CLOCK_REALTIME, the clock file times are stamped with).
func wallNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Polls `condition` every 10 ms until it holds or `timeout` seconds pass.
@discardableResult
func waitFor(_ timeout: Double, _ condition: () -> Bool) -> Bool {
    let end = wallNow() + timeout
    while wallNow() < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Reads a descriptor to its end on a thread of its own, keeping the lines with their arrival time.
final class LineCollector: @unchecked Sendable {
    private let state = Locked<(lines: [(text: String, at: Double)], partial: [UInt8], done: Bool)>(([], [], false))
    private let fd: Int32

    init(fd: Int32, startNow: Bool = true) {
        self.fd = fd
        if startNow { start() }
    }

    func start() {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                let now = wallNow()
                state.withLock { s in
                    s.partial += buffer[0..<n]
                    while let nl = s.partial.firstIndex(of: UInt8(ascii: "\n")) {
                        s.lines.append((String(decoding: s.partial[..<nl], as: UTF8.self), now))
                        s.partial.removeSubrange(...nl)
                    }
                }
            }
            state.withLock { $0.done = true }
        }
    }

    var lines: [(text: String, at: Double)] { state.withLock { $0.lines } }
    var text: String { lines.map(\.text).joined(separator: "\n") }
    var finished: Bool { state.withLock { $0.done } }
}

/// `kiosk-carousel` running in a child process with stdout and stderr on pipes.
final class KioskChild {
    let process = Process()
    let stdout: LineCollector
    let stderr: LineCollector
    /// The write end of the stderr pipe (to shrink it) and the read end (read by ``stderr``).
    let stderrPipe = Pipe()

    /// Starts `kiosk-carousel ARGUMENTS` with `environment` added. With `watchdogPidOfChild`,
    /// `WATCHDOG_PID` is set to the child's own pid as systemd does (through `sh -c 'exec'`, which
    /// keeps the pid). With `readStderr` false, stderr is not read until ``startReadingStderr()``.
    /// With `umask` (octal digits such as "027"), the child runs with that umask, as under the unit.
    /// With `asUser` and the tests run as root, the child runs as that user and group (through
    /// setpriv(1)), so file permissions hold for it (root passes them all).
    init(_ arguments: [String], environment: [String: String] = [:], watchdogPidOfChild: Bool = false,
         readStderr: Bool = true, stderrPipeSize: Int32? = nil, currentDirectory: String? = nil,
         umask: String? = nil, asUser: uid_t? = nil) throws {
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "RUNTIME_DIRECTORY"] { env[key] = nil }
        for (k, v) in environment { env[k] = v }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        if watchdogPidOfChild {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "WATCHDOG_PID=$$; export WATCHDOG_PID; exec \"$0\" \"$@\"", kioskExecutable()]
                + arguments
        } else if let umask {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "umask \(umask) && exec \"$0\" \"$@\"", kioskExecutable()] + arguments
        } else if let user = asUser, getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", kioskExecutable()] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: kioskExecutable())
            process.arguments = arguments
        }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = stderrPipe
        if let size = stderrPipeSize {
            _ = fcntl(stderrPipe.fileHandleForWriting.fileDescriptor, 1031 /* F_SETPIPE_SZ */, size)
        }
        stdout = LineCollector(fd: out.fileHandleForReading.fileDescriptor)
        stderr = LineCollector(fd: stderrPipe.fileHandleForReading.fileDescriptor, startNow: readStderr)
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    func startReadingStderr() { stderr.start() }

    /// The `shown` events on stdout: (index, src, arrival time).
    var shown: [(index: Int, src: String, at: Double)] {
        stdout.lines.compactMap { line in
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any],
                  obj["event"] as? String == "shown", let i = obj["index"] as? Int, let s = obj["src"] as? String else {
                return nil
            }
            return (i, s, line.at)
        }
    }

    /// Sends `signal`, then waits up to `timeout` seconds for the exit; returns the exit status
    /// (nil if it did not exit, after which it is killed).
    func stop(_ signal: Int32 = SIGTERM, timeout: Double = 10) -> Int32? {
        if process.isRunning { kill(pid, signal) }
        let exited = waitFor(timeout) { !process.isRunning }
        if !exited {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL); process.waitUntilExit() }
    }
}

/// A client of the control socket: JSON lines out, JSON lines in (replies and events).
final class ControlClient {
    let fd: Int32
    private var pending: [UInt8] = []
    /// Event lines received while waiting for replies.
    private(set) var events: [[String: Any]] = []
    /// Raw event lines, as received.
    private(set) var eventLines: [String] = []

    init(path: String, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlTestFailure("socket: errno \(errno)") }
        if var size = receiveBuffer {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw ControlTestFailure("connect \(path): errno \(e)")
        }
    }

    deinit { close(fd) }

    /// Writes `text` and a newline (blocking).
    func send(_ text: String) {
        var bytes = Array(text.utf8) + [UInt8(ascii: "\n")]
        while !bytes.isEmpty {
            let n = Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL))
            if n <= 0 { return }
            bytes.removeFirst(n)
        }
    }

    /// The next line within `timeout` seconds, or nil (nil also at the end of the stream).
    func readLine(timeout: Double) -> String? {
        let end = wallNow() + timeout
        while true {
            if let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            let left = end - wallNow()
            if left <= 0 { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(left * 1000) + 1) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return nil }
            pending += buffer[0..<n]
        }
    }

    /// Whether the server closed the connection within `timeout` seconds (whatever it sent first
    /// is read and thrown away).
    func closedByServer(timeout: Double) -> Bool {
        let end = wallNow() + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while wallNow() < end {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) { return true }
        }
        return false
    }

    /// Sends one request and returns its reply (the first line with an "error" member); events
    /// arriving meanwhile are kept in ``events``.
    func request(_ text: String, timeout: Double = 5) throws -> [String: Any] {
        send(text)
        return try reply(timeout: timeout)
    }

    /// The next reply line; events before it are kept.
    func reply(timeout: Double = 5) throws -> [String: Any] {
        let end = wallNow() + timeout
        while let line = readLine(timeout: max(0, end - wallNow())) {
            guard let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw ControlTestFailure("not a JSON object: \(line)")
            }
            if obj["error"] != nil { return obj }
            events.append(obj)
            eventLines.append(line)
        }
        throw ControlTestFailure("no reply within \(timeout) s")
    }

    /// Waits for a `shown` event with `index` (among those already received, then new lines).
    func waitForShown(_ index: Int, timeout: Double = 5) -> Bool {
        if events.contains(where: { $0["event"] as? String == "shown" && $0["index"] as? Int == index }) { return true }
        let end = wallNow() + timeout
        while let line = readLine(timeout: max(0, end - wallNow())) {
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if obj["event"] != nil { events.append(obj); eventLines.append(line) }
            if obj["event"] as? String == "shown" && obj["index"] as? Int == index { return true }
        }
        return false
    }

    /// Forgets the events received so far.
    func clearEvents() { events.removeAll(); eventLines.removeAll() }
}
