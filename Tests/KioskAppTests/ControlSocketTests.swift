// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
@testable import KioskApp
import KioskSystem

// The control socket (docs/control-socket.md) and the signals, end to end: the real executable in
// offscreen mode on the real clock with a long interval, so nothing moves unless asked to.

/// Starts a show of the five samples that would stand still for a minute (offscreen runs stop
/// after one round unless --run-for is given: it is), with its control
/// socket at DIR/control; waits for the socket and for the first image to be shown.
private func startShow(_ extra: [String] = [], interval: String = "60") throws -> (KioskChild, String) {
    let dir = controlTestDirectory()
    let socket = "\(dir)/control"
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real", "--run-for", "100000",
                                "--interval", interval, "--fade", "100", "--control", socket] + extra + [controlTestSamples.path])
    guard waitFor(15, { access(socket, F_OK) == 0 && !child.shown.isEmpty }) else {
        throw ControlTestFailure("no control socket or no first image within 15 s; stderr: \(child.stderr.text)")
    }
    return (child, socket)
}

// MARK: The protocol, without a process

@Test func requestsParseAsMpvStyleCommandsAndBadOnesSayWhatIsWrong() {
    func parse(_ s: String) -> Result<(id: JSONValue?, command: ControlCommand), ControlFailure> { ControlProtocol.parse(Array(s.utf8)) }
    func command(_ s: String) -> ControlCommand? { if case .success(let r) = parse(s) { return r.command } else { return nil } }
    func error(_ s: String) -> String { if case .failure(let f) = parse(s) { return f.message } else { return "" } }

    #expect(command(#"{"command":["next"]}"#) == .next)
    #expect(command(#"{"command":["previous"]}"#) == .previous)
    #expect(command(#"{"command":["pause"]}"#) == .pause)
    #expect(command(#"{"command":["resume"]}"#) == .resume)
    #expect(command(#"{"command":["status"]}"#) == .status)
    #expect(command(#"{"command":["goto",3]}"#) == .goto(3))
    #expect(command(#"{"command":["display","off"]}"#) == .display(on: false))
    #expect(command(#" {"request_id":9,"command":["display","on"]} "#) == .display(on: true))
    if case .success(let r) = parse(#"{"command":["status"],"request_id":"abc"}"#) { #expect(r.id == .string("abc")) } else { Issue.record("status with a string id") }

    #expect(error("{nope").hasPrefix("invalid JSON"))
    #expect(error(#"["next"]"#).contains("expected a JSON object"))
    #expect(error(#"{"cmd":["next"]}"#).contains("no \"command\""))
    #expect(error(#"{"command":"next"}"#).contains("must be an array"))
    #expect(error(#"{"command":[]}"#).contains("must be an array"))
    #expect(error(#"{"command":[1]}"#).contains("must be a string"))
    #expect(error(#"{"command":["jump"]}"#).hasPrefix("unknown command \"jump\""))
    #expect(error(#"{"command":["next",1]}"#).contains("takes no arguments"))
    // A boolean or a fraction is not an index, nor is a string.
    #expect(error(#"{"command":["goto",true]}"#).contains("bad index true"))
    #expect(error(#"{"command":["goto",1.5]}"#).contains("bad index 1.5"))
    #expect(error(#"{"command":["goto","2"]}"#).contains("bad index \"2\""))
    #expect(error(#"{"command":["goto"]}"#).contains("expected one argument"))
    #expect(error(#"{"command":["display","dim"]}"#).contains("expected \"on\" or \"off\""))
    // The request_id comes back with an error too, when the request could be read.
    if case .failure(let f) = parse(#"{"command":["jump"],"request_id":4}"#) { #expect(f.id == .int(4)) }

    #expect(String(decoding: ControlProtocol.reply(id: .int(7), error: "success", data: .object(["index": .int(2)])), as: UTF8.self)
            == #"{"data":{"index":2},"error":"success","request_id":7}"# + "\n")
    #expect(String(decoding: ControlProtocol.reply(id: nil, error: "bad \"x\""), as: UTF8.self) == #"{"error":"bad \"x\""}"# + "\n")
}

@Test func theControlOptionDefaultsToTheRuntimeDirectoryAndCanBeTurnedOff() throws {
    #expect(try CommandLineParser.parse(["--control", "/run/k/control", "/photos"]).controlPath == "/run/k/control")
    #expect(try CommandLineParser.parse(["--control", "none", "/photos"]).controlPath == nil)
    #expect(throws: UsageError.self) { try CommandLineParser.parse(["--control", String(repeating: "x", count: 120), "/photos"]) }
    // $RUNTIME_DIRECTORY decides the default (read from the process environment at parse time).
    let expected = ProcessInfo.processInfo.environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first.map { "\($0)/control" }
    #expect(try CommandLineParser.parse(["/photos"]).controlPath == expected)
    // And in the child: RUNTIME_DIRECTORY set, no --control: the socket is $RUNTIME_DIRECTORY/control.
    let dir = controlTestDirectory()
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real", "--run-for", "100000",
                                "--interval", "60", controlTestSamples.path], environment: ["RUNTIME_DIRECTORY": dir])
    #expect(waitFor(15) { access("\(dir)/control", F_OK) == 0 }, "stderr: \(child.stderr.text)")
    #expect(child.stop() == 0)
    #expect(access("\(dir)/control", F_OK) != 0, "the socket is removed at exit")
}

// MARK: The show driven through the socket

@Test func theControlSocketDrivesTheShowAndStreamsEvents() throws {
    let (child, path) = try startShow()
    var st = stat()
    #expect(lstat(path, &st) == 0)
    #expect(st.st_mode & S_IFMT == S_IFSOCK)
    #expect(st.st_mode & 0o777 == 0o660, "mode \(String(st.st_mode & 0o777, radix: 8))")

    let client = try ControlClient(path: path)
    let watcher = try ControlClient(path: path)   // only listens: every client gets the events

    var status = try client.request(#"{"command":["status"],"request_id":1}"#)
    #expect(status["error"] as? String == "success")
    #expect(status["request_id"] as? Int == 1)
    var data = status["data"] as? [String: Any] ?? [:]
    #expect(data["index"] as? Int == 0)
    #expect(data["src"] as? String == controlTestPhotos[0])
    #expect(data["paused"] as? Bool == false)
    #expect(data["playlist_length"] as? Int == 5)
    #expect(data["display"] as? String == "on")
    #expect(data["version"] as? String == releaseVersionFile(), "status gives the VERSION file's version")

    // next, previous, goto: each answered, each followed by its `shown` event on the socket.
    #expect(try client.request(#"{"command":["next"],"request_id":"n"}"#)["error"] as? String == "success")
    #expect(client.waitForShown(1), "no shown 1; stderr: \(child.stderr.text)")
    #expect(try client.request(#"{"command":["previous"]}"#)["error"] as? String == "success")
    #expect(client.waitForShown(0))
    #expect(try client.request(#"{"command":["goto",3]}"#)["error"] as? String == "success")
    #expect(client.waitForShown(3))
    status = try client.request(#"{"command":["status"]}"#)
    data = status["data"] as? [String: Any] ?? [:]
    #expect(data["index"] as? Int == 3)
    #expect(data["src"] as? String == controlTestPhotos[3])

    // The same lines as stdout, byte for byte, and the listening client got them too.
    #expect(waitFor(5) { child.shown.map(\.index) == [0, 1, 0, 3] }, "stdout: \(child.stdout.text)")
    let stdoutShown = child.stdout.lines.map(\.text).filter { $0.contains("\"shown\"") }
    // The client connected after the first `shown`, or (on a loaded machine) just before it:
    // what it got is the end of stdout's lines, at least the three moves it asked for.
    let clientShown = client.eventLines.filter { $0.contains("\"shown\"") }
    #expect(clientShown.count >= 3 && Array(stdoutShown.suffix(clientShown.count)) == clientShown,
            "stdout: \(stdoutShown) client: \(clientShown)")
    #expect(watcher.waitForShown(1) && watcher.waitForShown(0) && watcher.waitForShown(3))

    // Errors name what was wrong; the connection stays open after each.
    var reply = try client.request(#"{"command":["goto",9],"request_id":5}"#)
    #expect((reply["error"] as? String)?.contains("bad index 9") == true, "\(reply)")
    #expect(reply["request_id"] as? Int == 5)
    reply = try client.request(#"{"command":["goto","first"]}"#)
    #expect((reply["error"] as? String)?.contains("bad index") == true)
    reply = try client.request(#"{"command":["fly"]}"#)
    #expect((reply["error"] as? String)?.hasPrefix("unknown command") == true)
    reply = try client.request(#"{"command":["next""#)
    #expect((reply["error"] as? String)?.hasPrefix("invalid JSON") == true, "\(reply)")
    reply = try client.request(#"{"command":["next",],"request_id":6}"#)
    #expect((reply["error"] as? String)?.hasPrefix("invalid JSON: trailing comma before ']'") == true, "\(reply)")
    reply = try client.request("this is not JSON at all")
    #expect((reply["error"] as? String)?.hasPrefix("invalid JSON") == true)
    // Replies come in the order of the requests, bad lines among good ones included.
    client.send(#"{"command":["status"],"request_id":10}"#)
    client.send("{oops")
    client.send(#"{"command":["status"],"request_id":12}"#)
    let ordered = try [client.reply(), client.reply(), client.reply()]
    #expect(ordered[0]["request_id"] as? Int == 10 && ordered[0]["error"] as? String == "success")
    #expect((ordered[1]["error"] as? String)?.hasPrefix("invalid JSON") == true)
    #expect(ordered[2]["request_id"] as? Int == 12)

    // pause / resume: `paused` in status; a paused show still moves when asked.
    #expect(try client.request(#"{"command":["pause"]}"#)["error"] as? String == "success")
    #expect((try client.request(#"{"command":["status"]}"#)["data"] as? [String: Any])?["paused"] as? Bool == true)
    #expect(try client.request(#"{"command":["next"]}"#)["error"] as? String == "success")
    #expect(client.waitForShown(4))
    #expect(try client.request(#"{"command":["resume"]}"#)["error"] as? String == "success")
    #expect((try client.request(#"{"command":["status"]}"#)["data"] as? [String: Any])?["paused"] as? Bool == false)

    // SIGTERM: a clean exit, and the socket file is gone.
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
    #expect(access(path, F_OK) != 0, "the socket file is removed at exit")
    #expect(client.closedByServer(timeout: 2))
}

@Test func anOldSocketIsReplacedButAnyOtherFileIsLeftAlone() throws {
    let dir = controlTestDirectory()
    // A stale socket (a previous run killed with SIGKILL): replaced.
    let stale = "\(dir)/control"
    let old = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in stale.utf8.enumerated() { raw[i] = b } }
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(old, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    close(old)
    #expect(access(stale, F_OK) == 0)
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real", "--run-for", "100000",
                                "--interval", "60", "--control", stale, controlTestSamples.path])
    #expect(waitFor(15) { child.stderr.text.contains("control socket listening") }, "stderr: \(child.stderr.text)")
    let client = try ControlClient(path: stale)
    #expect(try client.request(#"{"command":["status"]}"#)["error"] as? String == "success")
    #expect(child.stop() == 0)

    // A regular file at the path: left alone, logged, and the show goes on without a socket.
    let file = "\(dir)/precious"
    try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: file))
    let second = try KioskChild(["--display", "offscreen:\(dir)/frames2", "--size", "160x100", "--clock", "real", "--run-for", "100000",
                                 "--interval", "60", "--control", file, controlTestSamples.path])
    #expect(waitFor(15) { !second.shown.isEmpty }, "the show must go on: \(second.stderr.text)")
    #expect(second.stderr.text.contains("control socket unavailable"))
    #expect(try String(contentsOfFile: file) == "keep me\n")
    #expect(second.stop() == 0)
    #expect(try String(contentsOfFile: file) == "keep me\n")

    // A folder that does not exist: not made, and the message says so; the show goes on.
    let third = try KioskChild(["--display", "offscreen:\(dir)/frames3", "--size", "160x100", "--clock", "real", "--run-for", "100000",
                                "--interval", "60", "--control", "\(dir)/missing/control", controlTestSamples.path])
    #expect(waitFor(15) { !third.shown.isEmpty }, "the show must go on: \(third.stderr.text)")
    #expect(third.stderr.text.contains("the folder \(dir)/missing does not exist (it is not created"), "\(third.stderr.text)")
    #expect(third.stop() == 0)
    #expect(access("\(dir)/missing", F_OK) != 0)
}

// MARK: Limits: clients that misbehave

@Test func aClientThatNeverReadsDoesNotStallTheShowAndIsDropped() throws {
    // Auto-advance every 0.5 s, so the show visibly goes on.
    let (child, path) = try startShow(interval: "0.5")
    let good = try ControlClient(path: path)
    let stuck = try ControlClient(path: path, receiveBuffer: 4096)

    // The stuck client sends request after request and never reads a reply: far more than the
    // socket buffers and the server's per-client limit hold.
    let flags = fcntl(stuck.fd, F_GETFL)
    _ = fcntl(stuck.fd, F_SETFL, flags | O_NONBLOCK)
    let request = Array((#"{"command":["status"],"request_id":123456}"# + "\n").utf8)
    var sent = 0
    var worstRoundTrip = 0.0
    let shownBefore = child.shown.count
    let end = wallNow() + 6
    while wallNow() < end && !child.stderr.text.contains("control client dropped") {
        for _ in 0..<200 {
            let n = Glibc.send(stuck.fd, request, request.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if n <= 0 { break }
            sent += 1
        }
        // Meanwhile the good client is answered at once.
        let t0 = wallNow()
        let reply = try good.request(#"{"command":["status"]}"#, timeout: 3)
        worstRoundTrip = max(worstRoundTrip, wallNow() - t0)
        #expect(reply["error"] as? String == "success")
        usleep(20_000)
    }
    #expect(child.stderr.text.contains("control client dropped"), "sent \(sent) requests; stderr: \(child.stderr.text)")
    #expect(stuck.closedByServer(timeout: 3), "the stuck client is disconnected")
    #expect(worstRoundTrip < 1.0, "a status took \(worstRoundTrip) s while another client did not read")
    // The show went on: images kept coming on stdout and to the good client.
    #expect(waitFor(3) { child.shown.count >= shownBefore + 3 }, "stdout: \(child.stdout.text)")
    let index = (try good.request(#"{"command":["status"]}"#)["data"] as? [String: Any])?["index"] as? Int
    #expect(index != nil)
    #expect(child.stop() == 0)
}

@Test func atMost16ClientsAndLongLinesAreRefusedWithoutClosingTheConnection() throws {
    let (child, path) = try startShow()
    var clients: [ControlClient] = []
    for _ in 0..<ControlServer.maxClients { clients.append(try ControlClient(path: path)) }
    // All of them are served.
    for c in clients { #expect(try c.request(#"{"command":["status"]}"#)["error"] as? String == "success") }
    // One more is told why and closed.
    let extra = try ControlClient(path: path)
    let refusal = extra.readLine(timeout: 3) ?? ""
    #expect(refusal.contains("too many clients"), "\(refusal)")
    #expect(extra.closedByServer(timeout: 3))
    // A line over 64 KiB: an error, the rest of it skipped, the connection still good.
    let c = clients[0]
    c.send(#"{"command":["goto",""# + String(repeating: "x", count: 100_000) + #""]}"#)
    let tooLong = try c.reply()
    #expect((tooLong["error"] as? String)?.contains("too long") == true, "\(tooLong)")
    #expect(try c.request(#"{"command":["status"],"request_id":2}"#)["request_id"] as? Int == 2)
    // A closed client frees its place.
    clients.removeLast()
    usleep(200_000)
    let again = try ControlClient(path: path)
    #expect(try again.request(#"{"command":["status"]}"#)["error"] as? String == "success")
    #expect(child.stop() == 0)
}

/// 16 clients connected and silent do not lock the socket: once the oldest has sent nothing
/// for 10 s, a new client takes its place (the old one is told why, closed, and logged) and is
/// answered; one that spoke within the 10 s keeps its place.
@Test func sixteenIdleClientsDoNotLockANewOneOut() throws {
    let (child, path) = try startShow()
    var clients: [ControlClient] = []
    for _ in 0..<ControlServer.maxClients { clients.append(try ControlClient(path: path)) }
    for c in clients { #expect(try c.request(#"{"command":["status"]}"#)["error"] as? String == "success") }
    usleep(UInt32(ControlServer.idleBeforeMakingRoom.components.seconds) * 1_000_000 + 500_000)
    // All but the first spoke again: it is the one idle for 10 s, and the only one.
    for c in clients.dropFirst() { #expect(try c.request(#"{"command":["status"]}"#)["error"] as? String == "success") }
    let newcomer = try ControlClient(path: path)
    let answer = try newcomer.request(#"{"command":["status"]}"#)
    #expect(answer["error"] as? String == "success", "\(answer)")
    let told = clients[0].readLine(timeout: 3) ?? ""
    #expect(told.contains("closed to make room: 16 clients were connected"), "\(told)")
    #expect(clients[0].closedByServer(timeout: 3))
    #expect(waitFor(3) { child.stderr.text.contains("control client dropped") }, "\(child.stderr.text)")
    // Now none has been idle for 10 s: one more is refused, and the 16 are still served.
    let extra = try ControlClient(path: path)
    #expect((extra.readLine(timeout: 3) ?? "").contains("too many clients"))
    for c in clients.dropFirst() { #expect(try c.request(#"{"command":["status"]}"#)["error"] as? String == "success") }
    #expect(child.stop() == 0)
}

// MARK: Signals in a child process (SIGHUP's log line and SIGTERM are in OffscreenShowTests)

@Test func signalsMoveTheShowReloadThePlaylistAndSigintEndsIt() throws {
    let dir = controlTestDirectory()
    let playlist = "\(dir)/list.json"
    func writePlaylist(_ photos: [String]) throws {
        let items = photos.map { "{\"src\":\"\($0)\"}" }.joined(separator: ",")
        try Data("{\"items\":[\(items)]}".utf8).write(to: URL(fileURLWithPath: playlist))
    }
    try writePlaylist(Array(controlTestPhotos.prefix(3)))
    let socket = "\(dir)/control"
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real", "--run-for", "100000",
                                "--interval", "60", "--fade", "100", "--control", socket, playlist])
    #expect(waitFor(15) { child.shown.count == 1 && access(socket, F_OK) == 0 }, "stderr: \(child.stderr.text)")
    let client = try ControlClient(path: socket)

    kill(child.pid, SIGUSR1)            // next
    #expect(client.waitForShown(1), "SIGUSR1 did not move to the next image")
    kill(child.pid, SIGUSR1)
    #expect(client.waitForShown(2))
    kill(child.pid, SIGUSR2)            // previous
    #expect(waitFor(5) { child.shown.map(\.index) == [0, 1, 2, 1] }, "stdout: \(child.stdout.text)")

    // SIGHUP reads the playlist again now (a local playlist is not watched).
    try writePlaylist(controlTestPhotos)
    usleep(300_000)
    #expect((try client.request(#"{"command":["status"]}"#)["data"] as? [String: Any])?["playlist_length"] as? Int == 3)
    kill(child.pid, SIGHUP)
    #expect(waitFor(5) {
        (try? client.request(#"{"command":["status"]}"#)["data"] as? [String: Any])?["playlist_length"] as? Int == 5
    }, "SIGHUP did not reload the playlist; stderr: \(child.stderr.text)")
    #expect(child.process.isRunning)

    // SIGINT: a clean exit (status 0), the socket removed.
    #expect(child.stop(SIGINT) == 0, "stderr: \(child.stderr.text)")
    #expect(child.stderr.text.contains("signal 2"))
    #expect(access(socket, F_OK) != 0)
}

// MARK: The commands on virtual time (the loop's side of the socket, at exact show times)

/// `next`, `previous`, `goto`, `pause`, `resume` and `status` carried out by the real loop on
/// virtual time: each move's `shown` event at the very time it was asked for, the errors with
/// their words, a paused show moving only when asked, `status` as the show stands then.
@Test func theCommandsMoveTheShowAtTheTimeTheyAreAsked() throws {
    let show = try VirtualShow(colours: [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF, 0xFFFF_FF00, 0xFF00_FFFF],
                               seconds: 12)
    var replies: [(ms: Int, reply: Result<JSONValue?, ControlFailure>)] = []
    func ask(_ time: Int, _ command: ControlCommand) {
        show.at(ms(time)) { replies.append((time, $0.perform(command))) }
    }
    ask(1000, .next)
    ask(2000, .previous)
    ask(3000, .goto(3))
    ask(3000, .status)
    ask(3001, .status)
    ask(3500, .goto(9))
    ask(4000, .pause)
    ask(4500, .next)
    ask(4500, .status)
    ask(9000, .resume)
    try show.makeLoop(interval: .seconds(2))
    let events = try show.run()
    // Each move restarts the 2 s interval, so none runs out before the pause at 4000; paused, the
    // show moves only when asked (4 at 4500); the resume at 9000 gives 4 a full interval.
    #expect(describe(events)
            == "shown 0 @0; shown 1 @1000; shown 0 @2000; shown 3 @3000; shown 4 @4500; shown 0 @11000")

    #expect(replies.map(\.ms) == [1000, 2000, 3000, 3000, 3001, 3500, 4000, 4500, 4500, 9000])
    func data(_ i: Int) -> [String: JSONValue] {
        guard case .success(.object(let fields)?) = replies[i].reply else { return [:] }
        return fields
    }
    // `status` says what is on the screen: asked with the `goto`, image 3 is still being
    // decoded (0 is on screen, 3 frames so far); a millisecond later 3 is.
    #expect(data(3)["index"] == .int(0) && data(3)["frames"] == .int(3) && data(3)["t"] == .int(3000))
    #expect(data(4)["index"] == .int(3) && data(4)["frames"] == .int(4) && data(4)["paused"] == .bool(false))
    #expect(data(4)["src"] == .string(show.items[3].source) && data(4)["playlist_length"] == .int(5))
    #expect(data(8)["index"] == .int(4) && data(8)["paused"] == .bool(true) && data(8)["t"] == .int(4500))
    guard case .failure(let bad) = replies[5].reply else {
        Issue.record("goto 9 succeeded: \(replies[5].reply)")
        return
    }
    #expect(bad.message == "goto: bad index 9: the playlist has 5 items (0...4)")
    for i in [0, 1, 2, 6, 7, 9] {
        guard case .success(nil) = replies[i].reply else {
            Issue.record("reply \(i) at \(replies[i].ms) ms: \(replies[i].reply)")
            continue
        }
    }
}

// MARK: Taps reach the socket too (a finger on virtual time: VirtualShowSupport's VirtualTouches)

@Test func tapsAndShownEventsGoToTheSocketAsToStdout() throws {
    let dir = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let server = try ControlServer(path: "\(dir)/control")
    try server.start()
    defer { server.stop() }
    let client = try ControlClient(path: "\(dir)/control")
    let show = try VirtualShow(colours: [0xFFFF_0000, 0xFF00_FF00], seconds: 1)
    show.configuration.control = server
    // A tap at (100, 50) at 500 ms: down and up 40 ms later, without moving.
    show.touch([.sample(TouchSample(.down, x: 100, y: 50, time: .milliseconds(500))),
                .sample(TouchSample(.up, x: 100, y: 50, time: .milliseconds(540)))])
    try show.makeLoop(width: 320, height: 200, interval: .seconds(60))
    let events = try show.run()
    #expect(describe(events) == "shown 0 @0; tap 0 @540")
    #expect(events.last?["x"] as? Int == 100 && events.last?["y"] as? Int == 50)
    // The socket's client gets the same lines, byte for byte (they leave the server's thread
    // after the loop has ended: each is waited for).
    let expected = events.map { e in
        EventWriter().line(event: e["event"] as! String, index: e["index"] as! Int, source: e["src"] as! String,
                           time: .milliseconds(Int64(eventTime(e))),
                           point: e["x"] == nil ? nil : (e["x"] as! Int, e["y"] as! Int))
    }
    let socketLines = expected.map { _ in client.readLine(timeout: 5) }
    #expect(socketLines == expected.map { Optional($0) })
}

@Test func aSocketAnotherProcessStillListensOnIsLeftAlone() throws {
    let path = NSTemporaryDirectory() + "kc-live-\(getpid()).sock"
    unlink(path)
    defer { unlink(path) }
    let first = try ControlServer(path: path)
    _ = first
    #expect(throws: SystemError(operation: "bind", path: path, errno: EADDRINUSE)) {
        _ = try ControlServer(path: path)
    }
}

/// In a show of one image `next` and `previous` have nowhere to go: the reply says so instead
/// of a success that does nothing (docs/control-socket.md); a show of two moves as asked.
@Test func nextAndPreviousInAShowOfOneImageSayThereIsNothingToMoveTo() throws {
    let show = try VirtualShow(colours: [0xFFFF_0000], seconds: 4)
    var replies: [Result<JSONValue?, ControlFailure>] = []
    show.at(ms(1000)) { replies.append($0.perform(.next)) }
    show.at(ms(2000)) { replies.append($0.perform(.previous)) }
    try show.makeLoop(interval: .seconds(2))
    let events = try show.run()
    #expect(describe(events) == "shown 0 @0")
    let messages = replies.map { reply -> String in
        if case .failure(let f) = reply { return f.message }
        return "success"
    }
    #expect(messages == ["next: nothing to move to: the show has one image (1 item in the playlist)",
                         "previous: nothing to move to: the show has one image (1 item in the playlist)"])
}
