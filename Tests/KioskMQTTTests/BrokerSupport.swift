// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskSystem
import Testing

// A real mosquitto broker on loopback for the tests, the command-line clients that ship with it
// (mosquitto_sub, mosquitto_pub; Debian's mosquitto and mosquitto-clients) as independent
// subscribers and publishers, and kiosk-carousel processes.

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Seconds on the monotonic clock.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Waits until `condition` holds or `timeout` seconds pass; returns whether it held.
@discardableResult
func waitFor(_ timeout: Double, _ condition: () -> Bool) -> Bool {
    let end = now() + timeout
    while now() < end {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A free TCP port on 127.0.0.1 (bound, read back, closed).
func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
    _ = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
    }
    return Int(UInt16(bigEndian: addr.sin_port))
}

func canConnect(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    } == 0
}

/// An executable built beside the test bundle.
func builtExecutable(_ name: String) -> String {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path), dir.path != "/" {
        dir.deleteLastPathComponent()
    }
    return dir.appendingPathComponent(name).path
}

/// The repository's `deploy/samples` photos (five 1920x1200 JPEGs).
let samples: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("deploy/samples").path

/// Lines read from a child's output (a pipe's read end, closed at its end) on a thread of
/// their own (not libdispatch's: a blocking read must not hold one of its few workers).
final class LineCollector: @unchecked Sendable {
    private let lines = Locked<[String]>([])
    private let done = DispatchSemaphore(value: 0)

    init(_ fd: Int32) {
        Thread { [self] in
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &chunk, chunk.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                buffer += chunk[0..<n]
                while let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    lines.withLock { $0.append(line) }
                }
            }
            close(fd)
            if !buffer.isEmpty { lines.withLock { $0.append(String(decoding: buffer, as: UTF8.self)) } }
            done.signal()
        }.start()
    }

    private let ended = Locked(false)

    var all: [String] { lines.withLock { $0 } }
    /// Waits for the end of the output (the child closed it); at once when it was seen before.
    func waitForEnd(timeout: Double = 10) {
        guard !ended.withLock({ $0 }) else { return }
        if done.wait(timeout: .now() + timeout) == .success { ended.withLock { $0 = true } }
    }
}

/// pipe2(2), which Swift's Glibc does not show: both ends close-on-exec from the start, so no
/// child started meanwhile by another test inherits them (and keeps a pipe from ending).
@_silgen_name("pipe2") func systemPipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

/// A child process started with every signal unblocked and at its default (the test runner's
/// threads block some signals, and a child inheriting that mask would ignore SIGTERM), stdin
/// from /dev/null, stdout and stderr read line by line (or to /dev/null).
final class Child {
    let pid: pid_t
    let stdout: LineCollector?
    let stderr: LineCollector?
    private var status: Int32?

    init(_ path: String, _ arguments: [String], environment: [String: String] = [:], capture: Bool = true) throws {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(); sigemptyset(&empty)
        var all = sigset_t(); sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        if capture {
            guard systemPipe2(&out, O_CLOEXEC) == 0, systemPipe2(&err, O_CLOEXEC) == 0 else {
                throw Failure("pipe: \(errno)")
            }
            posix_spawn_file_actions_adddup2(&actions, out[1], 1)
            posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in envp { free(e) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        if capture { close(out[1]); close(err[1]) }
        guard rc == 0 else {
            if capture { close(out[0]); close(err[0]) }
            throw Failure("posix_spawn \(path): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        stdout = capture ? LineCollector(out[0]) : nil
        stderr = capture ? LineCollector(err[0]) : nil
    }

    deinit { terminate() }

    var isRunning: Bool {
        if status != nil { return false }
        var st: Int32 = 0
        if waitpid(pid, &st, WNOHANG) == pid { status = st; return false }
        return true
    }

    func signal(_ signal: Int32) { if isRunning { kill(pid, signal) } }

    /// Waits for the end; its wait status.
    @discardableResult
    func wait() -> Int32 {
        if let status { return status }
        var st: Int32 = 0
        while waitpid(pid, &st, 0) < 0 && errno == EINTR {}
        status = st
        return st
    }

    /// SIGTERM, then SIGKILL after `timeout` seconds; waits for the end and the output's.
    func terminate(timeout: Double = 10) {
        if isRunning {
            kill(pid, SIGTERM)
            if !waitFor(timeout, { !isRunning }) { kill(pid, SIGKILL) }
            wait()
        }
        stdout?.waitForEnd()
        stderr?.waitForEnd()
    }

    /// SIGKILL; waits for the end.
    func killNow() {
        if isRunning { kill(pid, SIGKILL); wait() }
        stdout?.waitForEnd()
        stderr?.waitForEnd()
    }
}

/// mosquitto (Debian's /usr/sbin/mosquitto) on a free loopback port, with its own folder, in
/// the foreground. `configuration` is added to the listener and log lines; `persistence`
/// keeps its database in the folder (saved at SIGTERM and SIGUSR1), so a restart keeps the
/// sessions of persistent subscribers.
final class Broker {
    let directory: String
    let port: Int
    let extra: String
    let persistence: Bool
    private(set) var process: Child?

    init(port: Int? = nil, persistence: Bool = false, configuration: String = "allow_anonymous true\n") throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
        else {
            throw Failure(
                "mosquitto is not installed: apt-get install mosquitto mosquitto-clients (deploy/apt-deps.sh --tests)")
        }
        directory = makeTempDirectory("broker")
        // Started as root, mosquitto drops to its own user (Debian's default `user mosquitto`),
        // which must be able to write its log and database here.
        chmod(directory, 0o777)
        self.port = port ?? freePort()
        self.persistence = persistence
        extra = configuration
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts it (again, on the same port and database).
    func start() throws {
        var conf = "listener \(port) 127.0.0.1\nlog_dest file \(directory)/broker.log\nlog_type all\n"
        conf +=
            persistence
            ? "persistence true\npersistence_location \(directory)/\nautosave_interval 0\n" : "persistence false\n"
        conf += extra
        try Data(conf.utf8).write(to: URL(fileURLWithPath: directory + "/mosquitto.conf"))
        process = try Child("/usr/sbin/mosquitto", ["-c", directory + "/mosquitto.conf"], capture: false)
        guard waitFor(10, { canConnect(port) }) else { throw Failure("mosquitto did not listen on \(port): \(log)") }
    }

    /// SIGTERM (the database is saved), and waits for the end.
    func stop() {
        process?.terminate()
        process = nil
    }

    /// SIGKILL: nothing is saved.
    func kill() {
        process?.killNow()
        process = nil
    }

    func signal(_ signal: Int32) { process?.signal(signal) }

    /// Writes the database now (SIGUSR1) and waits for the file.
    func save() {
        let path = directory + "/mosquitto.db"
        let before = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? nil
        signal(SIGUSR1)
        waitFor(5) {
            let after = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? nil
            return after != nil && after != before
        }
        usleep(200_000)
    }

    var log: String { (try? String(contentsOfFile: directory + "/broker.log", encoding: .utf8)) ?? "" }
    var url: String { "mqtt://127.0.0.1:\(port)" }
}

/// One message as mosquitto_sub printed it.
struct Message: Equatable {
    var topic: String
    var payload: String
    var retained: Bool
}

/// mosquitto_sub on `topics` (`-F '%r %t %p'`: the retain flag, the topic, the payload; our
/// payloads hold no newline). `session`: a persistent session of that client ID (`-c`,
/// QoS 1), whose messages the broker keeps while it is away.
final class Subscriber {
    private let process: Child

    init(
        _ broker: Broker, topics: [String], session: String? = nil, retainedOnly: Bool = false, extra: [String] = []
    ) throws {
        var arguments = ["-h", "127.0.0.1", "-p", String(broker.port), "-F", "%r %t %p", "-q", "1"]
        for t in topics { arguments += ["-t", t] }
        let id = session ?? "sub-\(UInt32.random(in: 0...UInt32.max))"
        arguments += session != nil ? ["-c", "-i", id] : ["-i", id]
        if retainedOnly { arguments += ["--retained-only"] }
        process = try Child("/usr/bin/mosquitto_sub", arguments + extra)
        // Subscribed once the broker's log says so.
        waitFor(5) { broker.log.contains("Sending SUBACK to \(id)") }
    }

    deinit { stop() }

    func stop() { process.terminate() }

    var messages: [Message] {
        process.stdout!.all.compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2 else { return nil }
            return Message(
                topic: String(parts[1]), payload: parts.count > 2 ? String(parts[2]) : "", retained: parts[0] == "1")
        }
    }

    /// The retained messages (a `--retained-only` read): what came within a second, or as soon
    /// as `until` holds for them. (Not mosquitto_sub's -W: its alarm may never ring in a child
    /// of a process that blocks SIGALRM.)
    func finish(until: (([Message]) -> Bool)? = nil) -> [Message] {
        waitFor(until == nil ? 1 : 5) { until?(messages) ?? false }
        stop()
        return messages
    }
}

/// mosquitto_pub of one message.
func publish(_ broker: Broker, _ topic: String, _ payload: String?, retain: Bool = false) throws {
    let p = try Child("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", topic]
                      + (payload.map { ["-m", $0] } ?? ["-n"]) + (retain ? ["-r"] : []), capture: false)
    let status = p.wait()
    if status != 0 { throw Failure("mosquitto_pub -t \(topic) failed: \(status)") }
}

/// A kiosk-carousel process showing `sources` offscreen on the real clock, its stdout (the
/// event lines) and stderr (the log) collected.
final class Kiosk {
    let process: Child
    var events: LineCollector { process.stdout! }
    var log: LineCollector { process.stderr! }
    let frames: String

    init(_ arguments: [String], sources: [String] = [samples], environment: [String: String] = [:]) throws {
        frames = makeTempDirectory("kiosk-frames")
        process = try Child(
            builtExecutable("kiosk-carousel"),
            [
                "--display", "offscreen:" + frames, "--size", "32x20", "--clock", "real", "--input", "none",
                "--control", "none", "--fade", "0",
            ] + arguments + sources, environment: environment)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: frames)
    }

    /// SIGTERM and wait (SIGKILL after 10 s).
    func stop() { process.terminate() }

    func kill() { process.killNow() }

    /// The event lines so far, parsed.
    var eventObjects: [[String: JSONValue]] {
        events.all.compactMap { line in
            guard case .object(let fields)? = try? JSONValue.parse(Array(line.utf8)) else { return nil }
            return fields
        }
    }

    var shown: [Int] {
        eventObjects.compactMap {
            $0["event"] == .string("shown")
                ? $0["index"].flatMap { if case .int(let i) = $0 { return Int(i) } else { return nil } } : nil
        }
    }

    var logText: String { log.all.joined(separator: "\n") }
}

/// The `seq` of an event payload, nil when it has none.
func seq(of payload: String) -> Int? {
    guard case .object(let fields)? = try? JSONValue.parse(Array(payload.utf8)), case .int(let s)? = fields["seq"]
    else { return nil }
    return Int(s)
}

/// An event payload without its `seq`, as the kiosk wrote it to stdout.
func withoutSeq(_ payload: String) -> String? {
    guard let range = payload.range(of: ",\"seq\":", options: .backwards) else { return nil }
    return String(payload[..<range.lowerBound]) + "}"
}
