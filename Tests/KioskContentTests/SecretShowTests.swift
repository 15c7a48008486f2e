// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing

// A manifest URL with a password (`http://user:secret@host/show.json`, RFC 3986 section
// 3.2.1): the real executable against nginx on loopback. The password reaches the server (its
// images come from the same authority) and no output: not the `shown` lines, not the control
// socket's `status` and `screenshot` replies, not the log; the stored manifest keeps it for the
// offline start but is readable by the kiosk's user only (0600).

/// A blocking control-socket client: one request, its reply line (events before it skipped).
private func controlRequest(_ path: String, _ request: String) throws -> [String: Any] {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard rc == 0 else { throw Failure("connect \(path): errno \(errno)") }
    let bytes = Array((request + "\n").utf8)
    guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw Failure("send failed") }
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    let end = monotonicSeconds() + 10
    while monotonicSeconds() < end {
        while let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Data(pending[..<nl])
            pending.removeSubrange(...nl)
            if let obj = try JSONSerialization.jsonObject(with: line) as? [String: Any], obj["error"] != nil {
                return obj
            }
        }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 200) > 0 else { continue }
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { break }
        pending += buffer[0..<n]
    }
    throw Failure("no reply to \(request)")
}

/// Everything the program wrote, stdout and stderr (the transcript also has the command line).
private func output(_ show: KioskShow) -> String {
    (show.stdoutLines + show.stderrLines).map(\.text).joined(separator: "\n")
}

@Test func aManifestURLsPasswordReachesTheServerAndNoOutputAndTheStoredManifestIsPrivate() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    try publish(nginx, "img/a.png", solidPNG(Swatch.red))
    try publish(nginx, "img/b.png", solidPNG(Swatch.green))
    try publish(nginx, "show.json", json: itemsManifest(["img/a.png", "img/b.png"]))
    let secret = "s3cret-Pw"
    let authority = "kiosk:\(secret)@127.0.0.1:\(nginx.port)"
    let manifest = "http://\(authority)/show.json"
    let hidden = "http://kiosk:***@127.0.0.1:\(nginx.port)"
    let cache = makeTempDirectory("secret-cache"), state = makeTempDirectory("secret-state")
    let dir = makeTempDirectory("secret-ctl")
    let common = ["--size", "320x200", "--cache-dir", cache, "--state-dir", state, "--manifest", manifest,
                  "--interval", "1", "--fade", "100"]

    let show = try KioskShow(common + ["--clock", "real", "--run-for", "4", "--control", dir + "/control"])
    #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")
    let status = try controlRequest(dir + "/control", #"{"command":["status"]}"#)
    let shot = try controlRequest(dir + "/control", #"{"command":["screenshot","shot.png"]}"#)
    #expect(show.waitForExit(timeout: 20) == 0, "\(show.transcript)")
    #expect(status["error"] as? String == "success", "\(status)")
    #expect((status["data"] as? [String: Any])?["src"] as? String == hidden + "/img/a.png", "\(status)")
    #expect(shot["error"] as? String == "success", "\(shot)")
    #expect((shot["data"] as? [String: Any])?["src"] as? String == hidden + "/img/a.png", "\(shot)")
    #expect(show.shown.first?.src == hidden + "/img/a.png", "\(show.transcript)")
    #expect(!output(show).contains(secret), "\(show.transcript)")
    // The password was used: the images came from nginx with the manifest's authority.
    #expect(requestCount(nginx, "/img/a.png") >= 1 && requestCount(nginx, "/img/b.png") >= 1, "\(nginx.accessLog())")

    // The stored manifest: owner only, URL with its password (the base of the relative srcs).
    var info = stat()
    #expect(stat(state + "/manifest.json", &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600, "mode \(String(info.st_mode & 0o777, radix: 8))")
    let stored = try #require(readFile(state + "/manifest.json"))
    let json = try #require(try JSONSerialization.jsonObject(with: Data(stored)) as? [String: Any])
    #expect(json["url"] as? String == manifest)

    // Offline: the stored manifest and the cached images, found by the same URLs. The file
    // is made readable by all first, as versions before 0600 left it: the start narrows it.
    nginx.stop()
    #expect(chmod(state + "/manifest.json", 0o644) == 0)
    let offline = try KioskShow(common)
    #expect(offline.waitForExit(timeout: 30) == 0, "\(offline.transcript)")
    #expect(offline.shown.map(\.src) == [hidden + "/img/a.png", hidden + "/img/b.png", hidden + "/img/a.png"],
            "\(offline.transcript)")
    #expect(offline.logLines(containing: "stored manifest loaded").count == 1, "\(offline.transcript)")
    #expect(!output(offline).contains(secret), "\(offline.transcript)")
    #expect(stat(state + "/manifest.json", &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600, "mode after an offline start \(String(info.st_mode & 0o777, radix: 8))")
}

/// A usage error never prints the password; a proxy URL that does not parse is refused at the
/// start, not at the first download; ports past 65535 are refused where the URL is read.
@Test func badManifestAndProxyURLsAreUsageErrorsWithoutThePassword() throws {
    func run(_ arguments: [String]) throws -> (code: Int32, stderr: String) {
        let show = try KioskShow(["--size", "320x200"] + arguments)
        let code = show.waitForExit(timeout: 20) ?? -1
        return (code, show.log)
    }
    let proxy = try run(["--proxy", "http://u:pw-1234@[::1", "--manifest", "http://127.0.0.1:9/m.json"])
    #expect(proxy.code == 64, "\(proxy.stderr)")
    #expect(proxy.stderr.contains("--proxy: expected an http:// or https:// URL: 'http://u:***@[::1' is not a URL"),
            "\(proxy.stderr)")
    #expect(!proxy.stderr.contains("pw-1234"))
    let port = try run(["--manifest", "http://u:pw-1234@127.0.0.1:99999/m.json"])
    #expect(port.code == 64, "\(port.stderr)")
    #expect(port.stderr.contains("port 99999 is out of range (a TCP port is 1...65535)"), "\(port.stderr)")
    #expect(!port.stderr.contains("pw-1234"))
    let scheme = try run(["--manifest", "ftp://u:pw-1234@127.0.0.1/m.json"])
    #expect(scheme.code == 64 && !scheme.stderr.contains("pw-1234"), "\(scheme.stderr)")
    let source = try run(["http://127.0.0.1:70000/a.jpg"])
    #expect(source.code == 64 && source.stderr.contains("port 70000 is out of range"), "\(source.stderr)")
}
