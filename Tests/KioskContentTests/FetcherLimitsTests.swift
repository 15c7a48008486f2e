// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskContent
import Testing

// The fetcher's limits against hostile or broken servers, proxies and TLS, all on loopback:
// the project's fault server, nginx, Debian's tinyproxy, and a test CA made with openssl.

private func makeFetcher(_ configure: (inout Fetcher.Configuration) -> Void = { _ in }) throws -> Fetcher {
    let cache = try DiskCache(.init(directory: makeTempDirectory("fetch-limits")))
    var config = Fetcher.Configuration()
    configure(&config)
    return Fetcher(cache: cache, configuration: config)
}

private func image(_ fetcher: Fetcher, _ url: String) throws -> Result<DiskCache.Entry, ContentError> {
    try waitFor { done in fetcher.fetchImage(url) { done($0) } }
}

/// Runs `tool` with `arguments` and `environment` (nothing inherited), returns its stdout.
private func run(_ tool: String, _ arguments: [String],
                 environment: [String: String] = ["PATH": "/usr/bin:/bin"]) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = arguments
    p.environment = environment
    let output = Pipe()
    p.standardOutput = output
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

/// One image fetched by the Fetcher in a process of its own (`kiosk-cache-writer --fetch`):
/// its result line (`ok LENGTH` / `failed KIND: ...`) and its peak RSS in KiB.
private func fetchInChild(_ url: String, _ options: [String] = [],
                          environment: [String: String] = [:]) throws -> (line: String, peakKiB: Int) {
    let text = try run(builtExecutable("kiosk-cache-writer"),
                       ["--fetch", makeTempDirectory("child-cache"), url] + options,
                       environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a })
    let lines = text.split(separator: "\n").map(String.init)
    guard lines.count == 2, lines[1].hasPrefix("VmHWM "), let peak = Int(lines[1].dropFirst(6)) else {
        throw Failure("kiosk-cache-writer --fetch said: \(text)")
    }
    return (lines[0], peak)
}

/// 1 GB without a Content-Length: cut at 50 MB in the write callback, the process's peak RSS
/// stays far below the body (it went to the cache's temporary file, then was dropped). A
/// Content-Length that lies (40 MB said, 1 GB sent): libcurl reads what was said, no more.
@Test func aGigabyteBodyIsCutAndMemoryStaysBounded() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let huge = try fetchInChild(faults.base + "/huge")
    #expect(huge.line.hasPrefix("failed too-large: \(faults.base)/huge: body over 50 MB"), "\(huge.line)")
    #expect(huge.peakKiB <= 64 << 10, "peak RSS \(huge.peakKiB) KiB")
    let lying = try fetchInChild(faults.base + "/lying")
    #expect(lying.line == "ok 40000000", "\(lying.line)")
    #expect(lying.peakKiB <= 64 << 10, "peak RSS \(lying.peakKiB) KiB")
}

/// A body that trickles (one byte per 200 ms) is dropped by the low-speed limit.
@Test func aTrickleIsDroppedByTheLowSpeedLimit() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let fetcher = try makeFetcher { $0.lowSpeedTime = .seconds(2) }
    let start = ContinuousClock.now
    let r = try image(fetcher, faults.base + "/slow")
    guard case .failure(.timedOut(_, "low-speed", 2, let received)) = r else { Issue.record("\(r)"); return }
    #expect(received > 0 && received < 30)
    #expect(ContinuousClock.now - start < .seconds(4))
    #expect(r.failureDescription.contains("low-speed limit"))
}

/// Redirects to file: and ftp: are refused and say so; a loop is stopped.
@Test func redirectsOutsideHTTPAreRefused() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let fetcher = try makeFetcher()
    let file = try image(fetcher, faults.base + "/go?file:///etc/passwd")
    #expect(file == .failure(.redirectRefused(url: faults.base + "/go?file:///etc/passwd",
                                              location: "file:///etc/passwd")))
    #expect(file.failureDescription.contains("redirect to file:///etc/passwd refused"), "\(file.failureDescription)")
    let ftp = try image(fetcher, faults.base + "/go?ftp://127.0.0.1:21/photo.jpg")
    #expect(ftp == .failure(.redirectRefused(url: faults.base + "/go?ftp://127.0.0.1:21/photo.jpg",
                                             location: "ftp://127.0.0.1:21/photo.jpg")))
    let loop = try image(fetcher, faults.base + "/loop/b")
    guard case .failure(.tooManyRedirects(_, let chain, 5, true)) = loop else { Issue.record("\(loop)"); return }
    #expect(chain == [faults.base + "/loop/b", faults.base + "/loop/a", faults.base + "/loop/b"])
}

/// Debian's tinyproxy on a free loopback port, with its own configuration and log.
private final class TinyProxy {
    let directory = makeTempDirectory("tinyproxy")
    let port = freePort()
    let process: Child
    var url: String { "http://127.0.0.1:\(port)" }

    init() throws {
        let binary = "/usr/bin/tinyproxy"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw Failure("tinyproxy is not installed (\(binary)): run `apt-get install tinyproxy` "
                          + "(deploy/apt-deps.sh --tests)")
        }
        let conf = """
        Port \(port)
        Listen 127.0.0.1
        Timeout 30
        LogFile "\(directory)/tinyproxy.log"
        LogLevel Info
        PidFile "\(directory)/tinyproxy.pid"
        MaxClients 20
        Allow 127.0.0.1
        """
        try conf.write(toFile: directory + "/tinyproxy.conf", atomically: true, encoding: .utf8)
        process = try Child(binary, ["-d", "-c", directory + "/tinyproxy.conf"])
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && process.isRunning && !canConnect(port) { usleep(10_000) }
        guard process.isRunning && canConnect(port) else {
            throw Failure("tinyproxy did not start: \(log)")
        }
    }

    var log: String { (try? String(contentsOfFile: directory + "/tinyproxy.log", encoding: .utf8)) ?? "" }
    func stop() { process.stop() }
}

/// Downloads go through a proxy given with --proxy or in http_proxy; no_proxy bypasses it.
@Test func proxiesFromTheOptionAndTheEnvironment() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    let proxy = try TinyProxy()
    defer { proxy.stop() }
    for name in ["option.jpg", "env.jpg", "bypass.jpg", "dead.jpg"] { try nginx.put(name, jpegBytes(3000)) }
    let dead = "http://127.0.0.1:\(freePort())"

    let option = try fetchInChild(nginx.base + "/option.jpg", ["--proxy", proxy.url])
    #expect(option.line == "ok 3000", "\(option.line)")
    let environment = try fetchInChild(nginx.base + "/env.jpg", environment: ["http_proxy": proxy.url])
    #expect(environment.line == "ok 3000", "\(environment.line)")
    usleep(100_000)
    #expect(proxy.log.contains("/option.jpg") && proxy.log.contains("/env.jpg"), "\(proxy.log)")
    // A proxy that is down: the download fails, unless no_proxy names the host.
    let down = try fetchInChild(nginx.base + "/dead.jpg", environment: ["http_proxy": dead])
    #expect(down.line.hasPrefix("failed transport:"), "\(down.line)")
    // The failure names the proxy, where it was set and libcurl's reason, not the server.
    #expect(down.line.hasPrefix("failed transport: \(nginx.base)/dead.jpg: cannot connect to the proxy \(dead) "
                                + "(http_proxy): "), "\(down.line)")
    #expect(down.line.contains("(libcurl error 7)"), "\(down.line)")
    let deadPort = String(dead.split(separator: ":").last!)
    let secret = try fetchInChild(nginx.base + "/dead.jpg", ["--proxy", "http://u:pw-1234@127.0.0.1:\(deadPort)"])
    #expect(secret.line.contains("cannot connect to the proxy http://u:***@127.0.0.1:\(deadPort) (--proxy): "),
            "\(secret.line)")
    #expect(!secret.line.contains("pw-1234"), "\(secret.line)")
    let all = try fetchInChild(nginx.base + "/dead.jpg", environment: ["all_proxy": "127.0.0.1:\(deadPort)"])
    #expect(all.line.contains("cannot connect to the proxy 127.0.0.1:\(deadPort) (all_proxy): "), "\(all.line)")
    // A value libcurl cannot use is named as such (libcurl calls it a DNS failure).
    for (value, problem) in [("http://127.0.0.1:99999",
                              "'http://127.0.0.1:99999': port 99999 is out of range (a TCP port is 1...65535)"),
                             ("http://proxy:abc", "'http://proxy:abc': port 'abc' is not a number")] {
        let bad = try fetchInChild(nginx.base + "/dead.jpg", environment: ["http_proxy": value])
        #expect(bad.line.contains("the proxy \(value) (http_proxy) is not usable: \(problem); libcurl said: "),
                "\(bad.line)")
    }
    // The proxy is up, the server is not: the proxy's answer says which proxy it came through.
    let upstream = try fetchInChild("http://127.0.0.1:\(deadPort)/x.jpg", environment: ["http_proxy": proxy.url])
    #expect(upstream.line.hasPrefix("failed http-status: http://127.0.0.1:\(deadPort)/x.jpg: HTTP status 5"),
            "\(upstream.line)")
    #expect(upstream.line.hasSuffix(" through the proxy \(proxy.url) (http_proxy)"), "\(upstream.line)")
    // Direct (no_proxy names the host): a refused server is the server's failure.
    let direct = try fetchInChild("http://127.0.0.1:\(deadPort)/x.jpg",
                                  environment: ["http_proxy": proxy.url, "no_proxy": "localhost, 127.0.0.0/8"])
    #expect(direct.line.hasPrefix("failed transport: http://127.0.0.1:\(deadPort)/x.jpg: ")
            && !direct.line.contains("proxy"), "\(direct.line)")
    let bypass = try fetchInChild(nginx.base + "/bypass.jpg", ["--proxy", dead], environment: ["no_proxy": "127.0.0.1"])
    #expect(bypass.line == "ok 3000", "\(bypass.line)")
    #expect(!proxy.log.contains("/bypass.jpg"))
}

/// https against nginx with a certificate of a test CA: refused (host and reason named)
/// without --ca-file, accepted with it.
@Test func tlsWithAPrivateCA() throws {
    let dir = makeTempDirectory("test-ca")
    let openssl = "/usr/bin/openssl"
    let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _ = try run(openssl, ["req", "-x509"] + curve + ["-keyout", dir + "/ca.key", "-out", dir + "/ca.pem", "-days", "2",
                "-subj", "/CN=kiosk-carousel test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    _ = try run(openssl, ["req"] + curve + ["-keyout", dir + "/server.key", "-out", dir + "/server.csr",
                                            "-subj", "/CN=127.0.0.1"])
    try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: dir + "/ext.cnf", atomically: true, encoding: .utf8)
    _ = try run(openssl, ["x509", "-req", "-in", dir + "/server.csr", "-CA", dir + "/ca.pem", "-CAkey", dir + "/ca.key",
                          "-CAcreateserial", "-out", dir + "/server.pem", "-days", "2", "-extfile", dir + "/ext.cnf"])
    let nginx = try Nginx(tls: (dir + "/server.pem", dir + "/server.key"))
    defer { nginx.stop() }
    #expect(nginx.base.hasPrefix("https://"))
    try nginx.put("secure.jpg", jpegBytes(4000))

    let refused = try image(try makeFetcher(), nginx.base + "/secure.jpg")
    #expect(refused.failureKind == "transport", "\(refused)")
    #expect(refused.failureDescription.contains("TLS with 127.0.0.1 failed"), "\(refused.failureDescription)")
    #expect(refused.failureDescription.contains("certificate"), "\(refused.failureDescription)")
    let accepted = try image(try makeFetcher { $0.caFile = dir + "/ca.pem" }, nginx.base + "/secure.jpg")
    #expect(try accepted.get().length == 4000)

    // Through https_proxy: a CONNECT tunnel, TLS end to end with nginx.
    let proxy = try TinyProxy()
    defer { proxy.stop() }
    let tunnelled = try fetchInChild(nginx.base + "/secure.jpg", ["--ca-file", dir + "/ca.pem"],
                                     environment: ["https_proxy": proxy.url])
    #expect(tunnelled.line == "ok 4000", "\(tunnelled.line)")
    usleep(100_000)
    #expect(proxy.log.contains("CONNECT 127.0.0.1:\(nginx.port)"), "\(proxy.log)")
}

/// An IPv6 literal URL over `[::1]`.
@Test func ipv6Loopback() throws {
    let nginx = try Nginx(ipv6: true)
    defer { nginx.stop() }
    try nginx.put("six.jpg", jpegBytes(2000))
    let r = try image(try makeFetcher(), "http://[::1]:\(nginx.port)/six.jpg")
    #expect(try r.get().length == 2000)
}

/// shutdown() ends a transfer that is waiting on a silent server at once.
@Test func shutdownCancelsWithinASecond() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let fetcher = try makeFetcher()
    let box = ResultBox<Result<DiskCache.Entry, ContentError>>()
    fetcher.fetchImage(faults.base + "/stall") { box.set($0) }
    usleep(300_000)
    let start = ContinuousClock.now
    fetcher.shutdown()
    #expect(box.wait(timeout: 2) == .failure(.cancelled(url: faults.base + "/stall")))
    #expect(ContinuousClock.now - start < .seconds(1))
}

/// The manifest's cap holds the same way: a body without Content-Length is cut as it passes it.
@Test func aManifestOverItsCapIsCut() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let fetcher = try makeFetcher { $0.maxManifestBytes = 100_000 }
    let r: Result<ManifestResponse, ContentError> = try waitFor { done in
        fetcher.fetchManifest(URL(string: faults.base + "/big")!) { done($0) }
    }
    guard case .failure(.bodyTooLarge(_, 100_000, nil, let received)) = r else { Issue.record("\(r)"); return }
    #expect(received <= 100_000)
}

/// A host that does not resolve: one transport error that says DNS and names the host.
@Test func aHostThatDoesNotResolveSaysSo() throws {
    let r = try image(try makeFetcher(), "http://kiosk-carousel-test.invalid/a.jpg")
    #expect(r.failureKind == "transport", "\(r)")
    #expect(r.failureDescription.contains("cannot resolve host kiosk-carousel-test.invalid (DNS)"),
            "\(r.failureDescription)")
}

/// A 200 KB response header line: libcurl 7.88 ends the transfer with CURLE_OUT_OF_MEMORY and
/// no message (its header buffer is capped at CURL_MAX_HTTP_HEADER, 100 KiB); the error says
/// what happened instead of "Out of memory".
@Test func aHugeResponseHeaderIsCalledThatNotOutOfMemory() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let r = try image(try makeFetcher(), faults.base + "/bigheader")
    guard case .failure(.transport(_, let reason, _)) = r else { Issue.record("\(r)"); return }
    #expect(reason.hasPrefix("response header too large: a header line over libcurl's limit of 100 KiB "
                             + "(CURL_MAX_HTTP_HEADER)"),
            "\(reason)")
    #expect(!reason.contains("Out of memory"), "\(reason)")
}

/// A port past 65535 (or 0, or not a number) is refused before any connection is tried, with
/// the reason: libcurl would call it unreachable and the show would try it again forever.
@Test func aPortOutOfRangeIsRefusedWithTheReason() throws {
    let fetcher = try makeFetcher()
    for (url, reason) in [("http://127.0.0.1:99999/a.jpg", "port 99999 is out of range (a TCP port is 1...65535)"),
                          ("http://127.0.0.1:0/a.jpg", "port 0 is out of range"),
                          ("http://127.0.0.1:123456789012345678901/a.jpg",
                           "port 123456789012345678901 is out of range"),
                          ("http://u:pw@[::1]:65536/a.jpg",
                           "'http://u:***@[::1]:65536/a.jpg': port 65536 is out of range")] {
        let r = try image(fetcher, url)
        guard case .failure(.unsupportedURL(url, let said?)) = r else { Issue.record("\(url): \(r)"); continue }
        #expect(said.contains(reason), "\(said)")
    }
    #expect(HTTPURL.problem("http://[::1]:65535/a.jpg") == nil)
    #expect(HTTPURL.problem("http://host:/a.jpg") == nil)   // RFC 3986 section 3.2.3: the default port
    #expect(HTTPURL.problem("http://host:000080/a.jpg") == nil)   // leading zeros: port 80
    #expect(HTTPURL.problem("http://host:0000/a.jpg")?.contains("port 0000 is out of range") == true)
}

/// A user name or password with a character RFC 3986 does not allow in `userinfo` (a quote, a
/// space) is refused without quoting the URL: such a character would also end the part of a
/// line that log lines and replies hide, and the password would be shown.
@Test func aPasswordWithACharacterURLsCannotHoldIsRefusedUnshown() throws {
    for (url, name) in [("http://kiosk:sec\"retPW@127.0.0.1:8080/ok.jpg", "'\"'"),
                        ("http://u:p wPW@h:3128", "a space"),
                        ("https://u:a<bPW@h/m.json", "'<'")] {
        let reason = try #require(HTTPURL.problem(url), "\(url)")
        #expect(reason.contains(name) && reason.contains("RFC 3986"), "\(reason)")
        #expect(!reason.contains("PW") && !reason.contains("p w"), "\(reason)")
    }
    #expect(HTTPURL.problem("http://kiosk:s3cret-Pw%22x@127.0.0.1:8080/ok.jpg") == nil, "percent-encoded")
    #expect(HTTPURL.problem("http://k:a!$&'()*+,;=~._-@h/") == nil, "sub-delims and unreserved")
}

/// `kiosk-carousel ARGUMENTS` with only `environment` (and PATH): its exit status and stderr.
private func kiosk(_ arguments: [String], environment: [String: String]) throws -> (code: Int32, stderr: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: builtExecutable("kiosk-carousel"))
    let dir = makeTempDirectory("proxy-show")
    p.arguments = ["--display", "offscreen:" + dir + "/frames", "--size", "64x64", "--run-for", "0.5",
                   "--cache-dir", dir + "/cache", "--state-dir", dir + "/state"] + arguments
    p.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }
    let errors = Pipe()
    p.standardOutput = FileHandle.nullDevice
    p.standardError = errors
    try p.run()
    let data = errors.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A proxy variable libcurl cannot use is a usage error at the start naming the variable, as a
/// bad --proxy is, when the show downloads; a show of local files does not read it, and
/// --proxy replaces it. A proxy that is down is named in the manifest's log line.
@Test func proxyVariablesAreCheckedAtTheStartAndNamedInTheLog() throws {
    let manifest = ["--manifest", "http://127.0.0.1:\(freePort())/show.json"]
    let port = try kiosk(manifest, environment: ["http_proxy": "http://127.0.0.1:99999"])
    #expect(port.code == 64, "\(port.stderr)")
    #expect(port.stderr.contains("http_proxy: expected a proxy URL such as http://proxy.lan:3128: "
                                 + "'http://127.0.0.1:99999': "
                                 + "port 99999 is out of range (a TCP port is 1...65535)"), "\(port.stderr)")
    let word = try kiosk(manifest, environment: ["HTTPS_PROXY": "http://u:pw-1234@proxy:abc"])
    #expect(word.code == 64 && word.stderr.contains("HTTPS_PROXY: expected a proxy URL")
            && word.stderr.contains("port 'abc' is not a number"),
            "\(word.stderr)")
    #expect(!word.stderr.contains("pw-1234"), "\(word.stderr)")
    let local = try kiosk([samplePhoto("grey-1920x1200.jpg")], environment: ["http_proxy": "http://127.0.0.1:99999"])
    #expect(local.code == 0, "\(local.stderr)")
    let dead = "http://127.0.0.1:\(freePort())"
    let replaced = try kiosk(manifest + ["--proxy", dead], environment: ["http_proxy": "http://127.0.0.1:99999"])
    #expect(replaced.code == 0, "\(replaced.stderr)")
    let line = replaced.stderr.split(separator: "\n").first { $0.contains("manifest unreachable") }.map(String.init)
    expectDocumentedLine(line, "warning manifest unreachable at start and none stored yet: nothing to show until it "
                         + "is fetched; retrying in the background (logged once)", path: manifest[1])
    #expect(line?.contains(#"reason="cannot connect to the proxy \#(dead) (--proxy): "#) == true, "\(replaced.stderr)")
}

/// Four prefetches that trickle hold every ordinary place: an urgent request (a slot's image)
/// still starts at once, in a lane of its own, and is answered while they go on.
@Test func anUrgentImageIsNotKeptWaitingByPrefetchesThatTrickle() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let fetcher = try makeFetcher { $0.lowSpeedTime = .seconds(5) }
    defer { fetcher.shutdown() }
    for n in 1...4 { fetcher.fetchImage(faults.base + "/slow?prefetch=\(n)") { _ in } }
    usleep(300_000)   // the four are under way
    let start = ContinuousClock.now
    let r: Result<DiskCache.Entry, ContentError> = try waitFor { done in
        fetcher.fetchImage(faults.base + "/hold/urgent", urgent: true) { done($0) }
    }
    let took = ContinuousClock.now - start
    guard case .success = r else { Issue.record("\(r)"); return }
    #expect(took < .seconds(3), "the urgent image took \(took) behind four trickling prefetches")
    // An ordinary request still waits for a place.
    let queued = ResultBox<Bool>()
    fetcher.fetchImage(faults.base + "/hold/ordinary") { _ in queued.set(true) }
    #expect(queued.wait(timeout: 1.5) == nil, "an ordinary request started beyond the limit")
}
