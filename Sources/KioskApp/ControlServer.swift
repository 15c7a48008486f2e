// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskSystem

// The control socket (docs/control-socket.md): a local stream socket taking JSON lines in the
// manner of mpv's IPC (the protocol is in ControlProtocol.swift).
//
// Threads: the socket is served by a ``WorkerThread`` (accept, read, parse, write), never by
// the frame loop. A parsed request goes to the loop through a ``Mailbox`` the loop polls
// (``ControlServer/requests``); the loop carries it out between frames and hands the reply back
// through another (the outbox) that wakes the server thread. Neither thread ever blocks on the
// other or on a client.

/// The control socket's server: listens on a local stream socket, serves its clients on a
/// thread of its own and hands parsed requests to the frame loop.
///
/// Limits: at most ``maxClients`` connections (one more is told so and closed); a request
/// line is at most ``maxLineBytes`` (a longer one is discarded up to its newline and answered
/// with an error; the connection stays); at most ``maxInFlight`` requests of one client wait
/// for the loop (then the server stops reading that client until replies went out, so a client
/// that floods is slowed down by its own socket); at most ``maxPendingOutput`` bytes wait for
/// a client that does not read (replies and events): past that it is dropped. Every client
/// receives the `shown` and `tap` event lines (as mpv sends its events to every client).
public final class ControlServer: @unchecked Sendable {
    public static let maxClients = 16
    public static let maxLineBytes = 65_536
    public static let maxInFlight = 32
    public static let maxPendingOutput = 256 * 1024
    /// How long a client must have sent nothing (and wait for nothing) before a new client may
    /// take its place when ``maxClients`` are connected: 10 s.
    public static let idleBeforeMakingRoom: Duration = .seconds(10)

    /// The socket's path.
    public let path: String
    private let listener: Int32
    /// The socket file as bound (device and inode): removed at exit only if it is still ours.
    private let boundFile: (dev: UInt, ino: UInt)
    /// Requests for the frame loop, oldest first (it polls the descriptor and takes them).
    public let requests: Mailbox<ControlRequest>
    /// A line for the clients: `client` nil for every client (events).
    private struct Outgoing: Sendable {
        var client: Int?
        var line: [UInt8]
    }
    /// Replies and events for the server thread (its descriptor wakes the thread).
    private let outbox: Mailbox<Outgoing>
    private let worker: WorkerThread

    /// Opens the socket at `path`: an old socket file there is removed first when nothing
    /// listens on it any more (one another process still listens on is left alone: EADDRINUSE;
    /// anything that is not a socket too: EEXIST), the new one gets mode 0660 before it listens.
    public init(path: String) throws(SystemError) {
        let pathBytes = Array(path.utf8)
        var address = sockaddr_un()
        guard !pathBytes.isEmpty, pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw SystemError(operation: "bind", path: path, errno: ENAMETOOLONG)
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in pathBytes.enumerated() { raw[i] = b }
        }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK else {
                throw SystemError(operation: "bind", path: path, errno: EEXIST)  // not a socket: left alone
            }
            // A live socket (another show, another program) answers a connect: keep off it.
            let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if probe >= 0 {
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
                close(probe)
                if connected == 0 { throw SystemError(operation: "bind", path: path, errno: EADDRINUSE) }
            }
            try syscall("unlink", path: path) { unlink(path) }
        }
        let fd = try syscall("socket", path: path) {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                   0)
        }
        do {
            try syscall("bind", path: path) {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
            // Not listening yet: nobody can connect before the mode is right.
            try syscall("chmod", path: path) { chmod(path, 0o660) }
            try syscall("lstat", path: path) { lstat(path, &st) }
            try syscall("listen", path: path) { listen(fd, 16) }
        } catch {
            close(fd)
            throw error
        }
        do {
            requests = try Mailbox()
            outbox = try Mailbox()
            worker = try WorkerThread(name: "control socket \(path)")
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        self.path = path
        listener = fd
        boundFile = (UInt(st.st_dev), UInt(st.st_ino))
    }

    deinit {
        stop()
        close(listener)
    }

    /// Starts the server thread (once). Throws ``SystemError`` (`pthread_create`).
    public func start() throws(SystemError) {
        try worker.start { self.serve() }
    }

    /// Stops the server thread, closes every connection and removes the socket file (if it is
    /// still the one this server made).
    public func stop() {
        worker.stop()
        var st = stat()
        if lstat(path, &st) == 0, UInt(st.st_dev) == boundFile.dev, UInt(st.st_ino) == boundFile.ino {
            unlink(path)
        }
    }

    // MARK: The frame loop's side (never blocks)

    /// Answers `request`: `{"error":"success","data":…}` or the failure's message.
    public func answer(_ request: ControlRequest, _ result: Result<JSONValue?, ControlFailure>) {
        let line: [UInt8]
        switch result {
        case .success(let data): line = ControlProtocol.reply(id: request.id, error: "success", data: data)
        case .failure(let failure): line = ControlProtocol.reply(id: request.id, error: failure.message)
        }
        post(client: request.client, line)
    }

    /// Sends an event line (the very line written to stdout, without its newline) to every client.
    public func publish(eventLine: String) {
        post(client: nil, Array(eventLine.utf8) + [UInt8(ascii: "\n")])
    }

    private func post(client: Int?, _ line: [UInt8]) {
        outbox.post(Outgoing(client: client, line: line))
    }

    // MARK: The server thread

    private final class Client {
        let id: Int
        let fd: Int32
        var input = ControlLineReader(maxLineBytes: ControlServer.maxLineBytes)
        var output: [UInt8] = []
        var outputStart = 0
        var inFlight = 0
        /// The client shut down its sending side: close once everything is answered and written.
        var readClosed = false
        /// The client hung up altogether (POLLHUP, POLLERR): nothing can reach it any more.
        var peerGone = false
        var closed = false
        /// When it connected or last sent something (``MonotonicClock/raw()``).
        var lastHeard: Duration
        init(id: Int, fd: Int32, at now: Duration) { self.id = id; self.fd = fd; lastHeard = now }
        var pendingOutput: Int { output.count - outputStart }
    }

    private func serve() {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var buffer = [UInt8](repeating: 0, count: 65_536)
        defer { for c in clients.values { close(c.fd) } }
        // Refused clients (too many connected): at most one log line a second, with a count.
        var refusals = LogThrottle(period: .seconds(1))
        func logRefused(_ count: Int) {
            Log.warning("control client refused", path: path,
                        reason: "\(Self.maxClients) clients are connected already"
                            + (count > 1 ? "; \(count) clients refused since the last such line" : ""))
        }
        while true {
            var set = PollSet(readable: [outbox.wakeDescriptor, listener, worker.stopDescriptor])
            let order = clients.keys.sorted()
            for id in order {
                let c = clients[id]!
                var events: Int32 = 0
                if !c.readClosed && c.inFlight < Self.maxInFlight { events |= Int32(POLLIN) }
                if c.pendingOutput > 0 { events |= Int32(POLLOUT) }
                set.add(c.fd, events: Int16(events))
            }
            var timeout: Int32 = -1
            if let flushAt = refusals.flushDeadline {
                let ns = max(0, (flushAt - MonotonicClock.raw()).wholeNanoseconds)
                timeout = Int32(clamping: (ns + 999_999) / 1_000_000)
            }
            do { try set.wait(milliseconds: timeout) } catch { usleep(10_000) }
            if let n = refusals.flush(at: MonotonicClock.raw()) { logRefused(n) }

            if set.isReady(2) { return }
            // Replies and events from the loop.
            for (target, line) in outbox.take().map({ ($0.client, $0.line) }) {
                if let target {
                    guard let c = clients[target] else { continue }  // gone: the reply is dropped
                    c.inFlight -= 1
                    enqueue(line, to: c)
                } else {
                    for c in clients.values { enqueue(line, to: c) }
                }
            }

            // New connections.
            if set.isReady(1) {
                // Until none waits (EAGAIN: the listener is non-blocking) or accept fails.
                while let fd = try? nonBlockingSyscall("accept", path: path, { accept(listener, nil, nil) }) {
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // (accept4 is not visible from Swift's Glibc)
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    if clients.count >= Self.maxClients, let idle = longestIdle(clients, at: MonotonicClock.raw()) {
                        // All places taken: the client idle longest (connected and silent, a
                        // forgotten `socat`, or one only listening for events) makes room, so a
                        // new one still gets an answer; it is told so and logged.
                        let quiet = MonotonicClock.raw() - idle.lastHeard
                        let seconds = quiet.components.seconds
                        enqueue(ControlProtocol.reply(
                            id: nil, error: "closed to make room: \(Self.maxClients) clients were connected and"
                                + " this one had sent nothing for \(seconds) s"), to: idle)
                        flush(idle)
                        close(idle.fd)
                        clients[idle.id] = nil
                        Log.warning("control client dropped", path: path,
                                    reason: "\(Self.maxClients) clients were connected: the one idle longest"
                                        + " (\(seconds) s) made room for a new one")
                    }
                    if clients.count >= Self.maxClients {
                        let line = ControlProtocol.reply(
                            id: nil, error: "too many clients (at most \(Self.maxClients) at a time)")
                        _ = line.withUnsafeBytes {
                            send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                        }
                        close(fd)
                        if let n = refusals.note(at: MonotonicClock.raw()) { logRefused(n) }
                        continue
                    }
                    clients[nextID] = Client(id: nextID, fd: fd, at: MonotonicClock.raw())
                    nextID += 1
                }
            }

            // Reading and writing.
            for (i, id) in order.enumerated() {
                guard let c = clients[id], !c.closed else { continue }
                let revents = Int32(set.returnedEvents(3 + i))
                if revents & Int32(POLLOUT) != 0 { flush(c) }
                if !c.closed, revents & Int32(POLLIN | POLLHUP | POLLERR) != 0, !c.readClosed {
                    // Hung up altogether: what it sent before is still carried out (its replies
                    // cannot reach it), then it is closed; poll would report it again and again.
                    let hungUp = revents & Int32(POLLHUP | POLLERR) != 0
                    repeat {
                        let received: Int?
                        do {
                            received = try nonBlockingSyscall("recv", path: path) {
                                recv(c.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                            }
                        } catch {
                            c.readClosed = true  // ECONNRESET, say
                            break
                        }
                        guard let n = received else { break }  // nothing more now
                        if n > 0 {
                            c.lastHeard = MonotonicClock.raw()
                            c.input.append(buffer[0..<n])
                            if c.input.bufferedBytes > 4 * Self.maxLineBytes { break }
                        } else {
                            c.readClosed = true
                        }
                    } while hungUp && !c.readClosed
                    if hungUp { c.readClosed = true; c.peerGone = true }
                }
            }
            for c in clients.values where !c.closed {
                processLines(c)
                if c.peerGone { c.closed = true; continue }
                if c.pendingOutput > 0 { flush(c) }
                if c.readClosed && c.inFlight == 0 && c.pendingOutput == 0 { c.closed = true }
            }
            for (id, c) in clients where c.closed {
                close(c.fd)
                clients[id] = nil
            }
        }
    }

    /// The client that has sent nothing for longest, if that is at least ``idleBeforeMakingRoom``
    /// and it waits for nothing (no request with the loop, no reply unsent, no partial line).
    private func longestIdle(_ clients: [Int: Client], at now: Duration) -> Client? {
        clients.values.filter { c in
            !c.closed && c.inFlight == 0 && c.pendingOutput == 0 && c.input.bufferedBytes == 0
                && now - c.lastHeard >= Self.idleBeforeMakingRoom
        }.min { $0.lastHeard < $1.lastHeard }
    }

    /// Parses the complete lines a client sent (as long as it has room for more requests in
    /// flight): bad ones are answered here, good ones go to the loop.
    private func processLines(_ c: Client) {
        while c.inFlight < Self.maxInFlight, !c.closed, let line = c.input.next(endOfInput: c.readClosed) {
            guard case .request(let bytes) = line else {
                refuse(ControlFailure(id: nil, message: tooLong), of: c)
                continue
            }
            switch ControlProtocol.parse(bytes) {
            case .failure(let failure):
                refuse(failure, of: c)
            case .success(let (id, command)):
                c.inFlight += 1
                requests.post(ControlRequest(client: c.id, id: id, parsed: .success(command)))
            }
        }
    }

    private var tooLong: String { "request line too long (more than \(Self.maxLineBytes) bytes): discarded" }

    /// Answers a line that cannot be carried out: at once when nothing of that client waits for
    /// the loop, else behind what waits (through the loop).
    private func refuse(_ failure: ControlFailure, of c: Client) {
        guard c.inFlight > 0 else {
            enqueue(ControlProtocol.reply(id: failure.id, error: failure.message), to: c)
            return
        }
        c.inFlight += 1
        requests.post(ControlRequest(client: c.id, id: failure.id, parsed: .failure(failure)))
    }

    /// Queues a line for a client; one that lets too much pile up unread is dropped.
    private func enqueue(_ line: [UInt8], to c: Client) {
        guard !c.closed else { return }
        if c.pendingOutput + line.count > Self.maxPendingOutput {
            Log.warning("control client dropped", path: path,
                        reason: "it does not read what it is sent (\(counted(c.pendingOutput, "byte")) waiting)")
            c.closed = true
            return
        }
        if c.outputStart > 0 && c.outputStart >= c.output.count / 2 {
            c.output.removeFirst(c.outputStart)
            c.outputStart = 0
        }
        c.output += line
    }

    /// Writes what the socket takes now, never waiting.
    private func flush(_ c: Client) {
        while c.pendingOutput > 0 {
            let sent: Int?
            do {
                sent = try nonBlockingSyscall("send", path: path) {
                    c.output.withUnsafeBytes { raw in
                        send(c.fd, raw.baseAddress! + c.outputStart, c.pendingOutput,
                             Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    }
                }
            } catch {
                c.closed = true  // the client is gone (EPIPE, ECONNRESET)
                return
            }
            guard let n = sent else { return }  // the socket's buffer is full: at the next POLLOUT
            if n > 0 { c.outputStart += n } else { c.closed = true; return }
        }
        c.output.removeAll(keepingCapacity: true)
        c.outputStart = 0
    }
}

extension KioskApp {
    /// Opens and starts the control socket at `path` (nil: none). One that cannot be made is
    /// logged and the show goes on without it: a kiosk must not go dark over its remote control.
    static func openControlSocket(_ path: String?) -> ControlServer? {
        guard let path else { return nil }
        do {
            let server = try ControlServer(path: path)
            try server.start()
            Log.info("control socket listening", path: path, detail: "JSON lines: {\"command\":[\"status\"]}")
            return server
        } catch {
            let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
            let hint = error.errno == EEXIST ? "; it is not a socket, so it is left alone"
                : error.errno == ENOENT ? "; the folder \(folder.isEmpty ? "/" : folder) does not exist "
                    + "(it is not created: make it, or let systemd's RuntimeDirectory= make it)"
                : ""
            Log.error("control socket unavailable", path: path, reason: error.description + hint)
            return nil
        }
    }
}
