// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskContent
import Testing

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

func makeTempDirectory(_ tag: String = "content") -> String {
    var template = Array("/tmp/kiosk-\(tag)-XXXXXX".utf8CString)
    return String(cString: mkdtemp(&template)!)
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func readFile(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

/// JPEG-looking bytes: FF D8 FF then a pattern (the fetcher only checks the signature).
func jpegBytes(_ count: Int, seed: Int = 0) -> [UInt8] {
    var body = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
    body.replaceSubrange(0..<3, with: [0xFF, 0xD8, 0xFF])
    return body
}

/// The `Tests/Fixtures/content` folder.
let contentFixtures: String = {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/content").path
}()

/// An executable built beside the test bundle.
func builtExecutable(_ name: String) -> String {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path), dir.path != "/" {
        dir.deleteLastPathComponent()
    }
    return dir.appendingPathComponent(name).path
}

/// A free TCP port on 127.0.0.1 (bound, read back, closed).
func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = 0
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
    _ = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
    }
    return Int(UInt16(bigEndian: addr.sin_port))
}

/// True once something accepts TCP connections on 127.0.0.1:`port`.
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

/// nginx from Debian on a free loopback port, with its own prefix directory (config, document
/// root `www/`, pid file, error and access logs), in the foreground (`daemon off`,
/// `master_process off`), as the current user. Stopped with SIGTERM by ``stop()``.
final class Nginx {
    let prefix: String
    let port: Int
    let process: Child
    var root: String { prefix + "/www" }
    let tls: Bool
    var base: String { (tls ? "https" : "http") + "://127.0.0.1:\(port)" }

    /// Starts nginx; with `restarting`, on that server's prefix and port again (after its stop).
    /// With `tls` (PEM paths), it speaks https with that certificate; with `ipv6`, it listens
    /// on `[::1]` too (same port).
    init(restarting previous: Nginx? = nil, tls: (certificate: String, key: String)? = nil, ipv6: Bool = false) throws {
        self.tls = tls != nil
        let binary = "/usr/sbin/nginx"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw Failure("nginx is not installed (\(binary)): run `apt-get install nginx-light` "
                          + "(deploy/apt-deps.sh --tests)")
        }
        prefix = previous?.prefix ?? makeTempDirectory("nginx")
        mkdir(prefix + "/www", 0o755)
        mkdir(prefix + "/tmp", 0o755)
        var lastError = ""
        for _ in 0..<5 {
            let port = previous?.port ?? freePort()
            let conf = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log info;
            events { worker_connections 64; }
            http {
                log_format kiosk escape=none '$request_method $uri $status $body_bytes_sent inm=$http_if_none_match';
                access_log \(prefix)/access.log kiosk;
                client_body_temp_path \(prefix)/tmp/body;
                proxy_temp_path \(prefix)/tmp/proxy;
                fastcgi_temp_path \(prefix)/tmp/fastcgi;
                uwsgi_temp_path \(prefix)/tmp/uwsgi;
                scgi_temp_path \(prefix)/tmp/scgi;
                types { image/jpeg jpg; image/png png; application/json json; }
                default_type application/octet-stream;
                server {
                    listen 127.0.0.1:\(port)\(tls != nil ? " ssl" : "");
                    \(ipv6 ? "listen [::1]:\(port);" : "")
                    \(tls.map { "ssl_certificate \($0.certificate); ssl_certificate_key \($0.key);" } ?? "")
                    root \(prefix)/www;
                    location = /moved.json { return 301 /show.json; }
                }
            }
            """
            try conf.write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
            let p = try Child(binary, ["-p", prefix, "-c", prefix + "/nginx.conf", "-e", prefix + "/error.log"])
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline && p.isRunning && !canConnect(port) { usleep(10_000) }
            if p.isRunning && canConnect(port) {
                self.port = port
                self.process = p
                return
            }
            p.stop()
            lastError = (try? String(contentsOfFile: prefix + "/error.log", encoding: .utf8)) ?? "(no error log)"
        }
        throw Failure("nginx did not start: \(lastError)")
    }

    /// Puts a file in the document root (creating folders).
    func put(_ path: String, _ bytes: [UInt8]) throws {
        let full = root + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try writeFile(full, bytes)
    }

    /// The access log's lines (`METHOD URI STATUS BYTES inm=IF-NONE-MATCH`).
    func accessLog() -> [String] {
        // nginx writes each line when the request ends; a short wait lets the last one land.
        usleep(50_000)
        return ((try? String(contentsOfFile: prefix + "/access.log", encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    func stop() { process.stop() }

    deinit { stop() }
}

/// A child process started with `posix_spawn` with every signal unblocked and at its default
/// action (the test runner's threads block some, and a child inherits the mask: nginx with
/// `master_process off` would then ignore SIGTERM). ``stop()`` sends SIGTERM, then SIGKILL
/// after 2 s, and reaps it.
final class Child {
    let pid: pid_t
    private var status: Int32?

    init(_ path: String, _ arguments: [String]) throws {
        let pid = try spawnResettingSignals(path, arguments)
        self.pid = pid
    }

    var isRunning: Bool {
        if status != nil { return false }
        var st: Int32 = 0
        if waitpid(pid, &st, WNOHANG) == pid { status = st; return false }
        return true
    }

    func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        for _ in 0..<200 where isRunning { usleep(10_000) }
        if isRunning {
            kill(pid, SIGKILL)
            var st: Int32 = 0
            waitpid(pid, &st, 0)
            status = st
        }
    }
}

/// The scripted fault server (`Tests/Fixtures/content/fault_server.py`, /usr/bin/python3).
final class FaultServer {
    let process: Process
    let port: Int
    private let input = Pipe()
    var base: String { "http://127.0.0.1:\(port)" }

    init() throws {
        let python = "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else { throw Failure("\(python) is missing") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [contentFixtures + "/fault_server.py"]
        let output = Pipe()
        p.standardOutput = output
        p.standardInput = input
        try p.run()
        var line = [UInt8]()
        while true {
            let byte = try output.fileHandleForReading.read(upToCount: 1) ?? Data()
            if byte.isEmpty || byte.first == 10 { break }
            line += byte
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            throw Failure("fault server did not start: \(text)")
        }
        self.port = port
        self.process = p
    }

    func stats() throws -> (peak: Int, count: [String: Int]) {
        // Read with the project's own fetcher (a manifest-sized body into memory).
        let fetcher = Fetcher(cache: try DiskCache(.init(directory: makeTempDirectory("stats-cache"))))
        defer { fetcher.shutdown() }
        let answer: Result<ManifestResponse, ContentError> = try waitFor { done in
            fetcher.fetchManifest(URL(string: base + "/stats")!) { done($0) }
        }
        guard case .success(.modified(let download)) = answer else { throw Failure("GET /stats: \(answer)") }
        let data = Data(download.body)
        let json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        return (json["peak"] as! Int, json["count"] as! [String: Int])
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Runs an async-callback operation and waits for its result (tests only).
func waitFor<T: Sendable>(timeout: Double = 30, _ start: (@escaping @Sendable (T) -> Void) -> Void) throws -> T {
    let box = ResultBox<T>()
    start { value in box.set(value) }
    guard let value = box.wait(timeout: timeout) else { throw Failure("no answer within \(timeout) s") }
    return value
}

final class ResultBox<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: T?
    func set(_ v: T) { condition.lock(); value = v; condition.broadcast(); condition.unlock() }
    func wait(timeout: Double) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while value == nil && condition.wait(until: deadline) {}
        return value
    }
}

/// A clock for the disk cache that tests move by hand (a `Duration` since the epoch).
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Duration
    init(_ start: Duration = .seconds(1_700_000_000)) { current = start }
    var now: Duration { lock.withLock { current } }
    func advance(_ d: Duration) { lock.withLock { current += d } }
}

/// Starts `path` with `arguments`, stdin from /dev/null, stdout and stderr on the given
/// descriptors (inherited when nil), with every signal unblocked and at its default: the test
/// runner's threads block some signals, and a child inheriting that mask would ignore SIGTERM.
func spawnResettingSignals(_ path: String, _ arguments: [String], stdout: Int32? = nil,
                           stderr: Int32? = nil) throws -> pid_t {
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
    if let stdout { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }
    if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, 2) }
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for a in argv { free(a) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, &attr, argv, environ)
    guard rc == 0 else { throw Failure("posix_spawn \(path): \(String(cString: strerror(rc)))") }
    return pid
}
