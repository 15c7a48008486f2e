// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
@testable import KioskContent
import KioskSystem
import Testing

private func makeFetcher(_ configure: (inout Fetcher.Configuration) -> Void = { _ in }) throws -> (Fetcher, DiskCache) {
    let cache = try DiskCache(.init(directory: makeTempDirectory("fetch-cache")))
    var config = Fetcher.Configuration()
    configure(&config)
    return (Fetcher(cache: cache, configuration: config), cache)
}

private func image(_ fetcher: Fetcher, _ url: String,
                   sha256: String? = nil) throws -> Result<DiskCache.Entry, ContentError> {
    try waitFor { done in fetcher.fetchImage(url, sha256: sha256) { done($0) } }
}

private func manifest(_ fetcher: Fetcher, _ url: String,
                      _ validators: ManifestValidators? = nil) throws -> Result<ManifestResponse, ContentError> {
    try waitFor { done in fetcher.fetchManifest(URL(string: url)!, validators: validators) { done($0) } }
}

/// First fetch of a manifest from nginx, then a repoll with its ETag: a 304 (nginx's access
/// log shows it), then a changed manifest is a 200 again; relative srcs resolve against the URL.
@Test func firstFetchThenA304RepollThenAChange() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    try nginx.put("shows/show.json",
                  Array(#"{"interval":8,"items":[{"src":"img/a.jpg"},{"src":"../b.jpg?v=2"},{"src":"/c.png"}]}"#.utf8))
    let (fetcher, _) = try makeFetcher()
    guard case .success(.modified(let first)) = try manifest(fetcher, nginx.base + "/shows/show.json") else {
        Issue.record("first fetch failed"); return
    }
    #expect(first.validators.etag?.hasPrefix("\"") == true, "nginx sends an ETag")
    #expect(first.validators.lastModified != nil)
    let parsed = try Manifest.parse(first.body, origin: .remote(first.url))
    #expect(parsed.items.map(\.src)
            == [nginx.base + "/shows/img/a.jpg", nginx.base + "/b.jpg?v=2", nginx.base + "/c.png"])
    #expect(parsed.interval == .seconds(8))

    let again = try manifest(fetcher, nginx.base + "/shows/show.json", first.validators)
    #expect(again == .success(.notModified))
    let log = nginx.accessLog()
    #expect(log.count == 2)
    #expect(log.first?.hasPrefix("GET /shows/show.json 200 ") == true, "\(log)")
    #expect(log.last?.hasPrefix("GET /shows/show.json 304 0 inm=\(first.validators.etag!)") == true, "\(log)")

    usleep(1_100_000)  // a new mtime second, so nginx's ETag changes
    try nginx.put("shows/show.json", Array(#"{"imgs":[{"src":"/static/a.jpg"}]}"#.utf8))
    guard case .success(.modified(let changed)) = try manifest(fetcher, nginx.base + "/shows/show.json",
                                                               first.validators) else {
        Issue.record("changed manifest not fetched"); return
    }
    #expect(changed.validators.etag != first.validators.etag)
    #expect(try Manifest.parse(changed.body, origin: .remote(changed.url)).items.map(\.src)
            == [nginx.base + "/static/a.jpg"])
    #expect(nginx.accessLog().last?.hasPrefix("GET /shows/show.json 200 ") == true)
}

/// A manifest behind a 301 resolves its relative srcs against the URL that answered.
@Test func aRedirectedManifestResolvesAgainstTheFinalURL() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    try nginx.put("show.json", Array(#"{"items":[{"src":"a.jpg"}]}"#.utf8))
    let (fetcher, _) = try makeFetcher()
    guard case .success(.modified(let m)) = try manifest(fetcher, nginx.base + "/moved.json") else {
        Issue.record("failed"); return
    }
    #expect(m.url.absoluteString == nginx.base + "/show.json")
}

@Test func imagesAreFetchedIntoTheCacheAndServedFromIt() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    let jpeg = jpegBytes(40_000)
    var png = jpegBytes(5000, seed: 3)
    png.replaceSubrange(0..<8, with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    try nginx.put("a/photo.jpg", jpeg)
    try nginx.put("b/photo.jpg", png)
    try nginx.put("notes.jpg", Array("<html>not an image</html>".utf8))
    let (fetcher, cache) = try makeFetcher()
    let a = try image(fetcher, nginx.base + "/a/photo.jpg", sha256: SHA256.hex(ofBytes: jpeg)).get()
    #expect(readFile(a.path) == jpeg)
    let b = try image(fetcher, nginx.base + "/b/photo.jpg").get()
    #expect(readFile(b.path) == png && b.path != a.path)
    // Again: from the cache, no request.
    #expect(try image(fetcher, nginx.base + "/a/photo.jpg").get() .path == a.path)
    #expect(fetcher.statistics.cacheHits == 1)
    #expect(nginx.accessLog().count == 2)
    // Not a JPEG or PNG: refused, nothing cached.
    let bad = try image(fetcher, nginx.base + "/notes.jpg")
    #expect(bad == .failure(.notAnImage(url: nginx.base + "/notes.jpg", firstBytes: "3c68746d6c3e6e6f")))
    // The manifest's hash does not match: refused.
    let wrong = try image(fetcher, nginx.base + "/b/photo.jpg?x", sha256: String(repeating: "a", count: 64))
    #expect(wrong.failureKind == "hash-mismatch")
    #expect(cache.count == 2)
}

@Test func a404AndA403AreTypedErrors() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    let (fetcher, cache) = try makeFetcher()
    #expect(try image(fetcher, nginx.base + "/missing.jpg")
            == .failure(.httpStatus(url: nginx.base + "/missing.jpg", status: 404)))
    // A directory without an index is nginx's 403 (the 500 comes from the fault server below).
    let dir = try image(fetcher, nginx.base + "/")
    #expect(dir == .failure(.httpStatus(url: nginx.base + "/", status: 403)))
    #expect(cache.count == 0)
    #expect(try manifest(fetcher, nginx.base + "/nothing.json").failureKind == "http-status")
    #expect(try manifest(fetcher, nginx.base + "/nothing.json").failureDescription.contains("HTTP status 404"))
}

@Test func a500IsATypedError() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let (fetcher, _) = try makeFetcher()
    let r = try image(fetcher, faults.base + "/status/500")
    #expect(r == .failure(.httpStatus(url: faults.base + "/status/500", status: 500)))
}

@Test func retryAfterInDelaySecondsIsKeptAndADateIsNot() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let (fetcher, _) = try makeFetcher()
    let busy = faults.base + "/status/503?retry-after=120"
    #expect(try manifest(fetcher, busy) == .failure(.httpStatus(url: busy, status: 503, retryAfter: .seconds(120))))
    let dated = faults.base + "/status/429?retry-after=Wed,%2021%20Oct%202015%2007:28:00%20GMT"
    #expect(try manifest(fetcher, dated) == .failure(.httpStatus(url: dated, status: 429)))
    let plain = faults.base + "/status/503"
    #expect(try manifest(fetcher, plain) == .failure(.httpStatus(url: plain, status: 503)))
}

@Test func aServerThatIsDownIsATransportError() throws {
    let (fetcher, _) = try makeFetcher()
    let port = freePort()
    let r = try manifest(fetcher, "http://127.0.0.1:\(port)/show.json")
    #expect(r.failureKind == "transport", "\(r)")
    #expect(r.failureDescription.contains("127.0.0.1"), "\(r)")
}

@Test func aRedirectChainIsFollowedAndALoopStopped() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let (fetcher, _) = try makeFetcher()
    let five = try image(fetcher, faults.base + "/chain/5")
    #expect(try five.get().length == 5000)
    let six = try image(fetcher, faults.base + "/chain/6")
    guard case .failure(.tooManyRedirects(_, let chain, 5, false)) = six else { Issue.record("\(six)"); return }
    #expect(chain.count == 7 && chain.last == faults.base + "/chain/0")
    let loop = try image(fetcher, faults.base + "/loop/a")
    guard case .failure(.tooManyRedirects(_, let loopChain, _, true)) = loop else { Issue.record("\(loop)"); return }
    #expect(loopChain == [faults.base + "/loop/a", faults.base + "/loop/b", faults.base + "/loop/a"])
    #expect(loop.failureDescription.contains("redirect loop: "))
}

@Test func anOversizeBodyIsCutAtTheCap() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let (fetcher, cache) = try makeFetcher { $0.maxImageBytes = 1_000_000 }
    let start = ContinuousClock.now
    let streamed = try image(fetcher, faults.base + "/big")
    guard case .failure(.bodyTooLarge(_, 1_000_000, nil, let received)) = streamed else {
        Issue.record("\(streamed)"); return
    }
    #expect(received <= 1_000_000 && received > 900_000)
    let declared = try image(fetcher, faults.base + "/big-declared")
    #expect(declared == .failure(.bodyTooLarge(url: faults.base + "/big-declared", limit: 1_000_000,
                                                declaredBytes: 60_000_000, receivedBytes: 0)))
    #expect(ContinuousClock.now - start < .seconds(5), "cut while streaming, not after 200 MB")
    #expect(cache.count == 0)
    #expect(!((try? FileManager.default.contentsOfDirectory(atPath: cache.directory)) ?? [])
        .contains { $0.hasPrefix(".tmp-") })
}

@Test func aBodyCutOffHalfWayIsNotCached() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let (fetcher, cache) = try makeFetcher()
    let r = try image(fetcher, faults.base + "/cut")
    #expect(r == .failure(.truncated(url: faults.base + "/cut", expectedBytes: 20000, receivedBytes: 10000)), "\(r)")
    #expect(cache.count == 0)
}

@Test func slowServersTimeOut() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let (fetcher, _) = try makeFetcher {
        $0.connectTimeout = .milliseconds(700)
        $0.totalTimeout = .milliseconds(1500)
    }
    let start = ContinuousClock.now
    let drip = try image(fetcher, faults.base + "/slow")
    let dripTime = ContinuousClock.now - start
    guard case .failure(.timedOut(_, "total", 1.5, let received)) = drip else { Issue.record("\(drip)"); return }
    #expect(received >= 3 && received < 20)
    #expect(dripTime >= .milliseconds(1500) && dripTime < .milliseconds(2500), "\(dripTime)")
    let stallStart = ContinuousClock.now
    let stall = try image(fetcher, faults.base + "/stall")
    #expect(stall == .failure(.timedOut(url: faults.base + "/stall", phase: "connect", seconds: 0.7, receivedBytes: 0)),
            "\(stall)")
    #expect(ContinuousClock.now - stallStart < .milliseconds(1400))
}

@Test func concurrencyIsBoundedAndOneRequestPerURL() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let (fetcher, _) = try makeFetcher { $0.maxConcurrent = 4 }
    let group = DispatchGroup()
    let results = ResultBox<Int>()
    let lock = NSLock()
    nonisolated(unsafe) var ok = 0
    // 10 distinct URLs, and the first one asked 5 times while in flight.
    let urls = (0..<10).map { faults.base + "/hold/\($0)" } + Array(repeating: faults.base + "/hold/0", count: 4)
    for url in urls {
        group.enter()
        fetcher.fetchImage(url) { r in
            if case .success = r { lock.withLock { ok += 1 } }
            group.leave()
        }
    }
    #expect(group.wait(timeout: .now() + 20) == .success)
    _ = results
    #expect(lock.withLock { ok } == 14)
    let stats = try faults.stats()
    #expect(stats.peak == 4, "at most 4 at once, and 4 were used")
    #expect(stats.count["/hold/0"] == 1, "joiners share one request: \(stats.count)")
    #expect(fetcher.statistics.started == 10)
    #expect(fetcher.statistics.joined == 4)
    #expect(fetcher.statistics.peakConcurrent == 4)
}

@Test func aFileURLIsNeverFetched() throws {
    let (fetcher, _) = try makeFetcher()
    #expect(try image(fetcher, "file:///etc/passwd")
             == .failure(.unsupportedURL(url: "file:///etc/passwd",
                                         reason: "'file:///etc/passwd' is not an http or https URL")))
}

extension Result where Failure == ContentError {
    var failureKind: String? { if case .failure(let e) = self { return e.kind }; return nil }
    var failureDescription: String { if case .failure(let e) = self { return e.description }; return "(success)" }
}

@Test func everyRequestSaysWhoAsksWithTheVersionFileAndAsksForNoEncoding() throws {
    let server = try FaultServer()
    let (fetcher, _) = try makeFetcher()
    defer { fetcher.shutdown() }
    let answer: Result<ManifestResponse, ContentError> = try waitFor { done in
        fetcher.fetchManifest(URL(string: server.base + "/headers")!) { done($0) }
    }
    guard case .success(.modified(let download)) = answer else { Issue.record("GET /headers: \(answer)"); return }
    let json = try JSONSerialization.jsonObject(with: Data(download.body)) as! [String: Any]
    // The top-level VERSION file is the one source of the version (docs/building.md "The Debian package").
    let versionFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../VERSION").standardized
    let version = try String(contentsOf: versionFile, encoding: .utf8).split(separator: "\n").first
        .map(String.init) ?? ""
    #expect(!version.isEmpty)
    #expect(json["user-agent"] as? String == "kiosk-carousel/\(version)")
    #expect(json["accept-encoding"] as? String == "identity")
}

@Test func aQueuedRequestStartsAsSoonAsTheLastRunningOneEnds() throws {
    // With one transfer at a time, each end leaves none running and one waiting: the fetcher's
    // thread must start it rather than fall into its idle sleep (60 s).
    let faults = try FaultServer()
    defer { faults.stop() }
    let (fetcher, _) = try makeFetcher { $0.maxConcurrent = 1 }
    defer { fetcher.shutdown() }
    let group = DispatchGroup()
    let lock = NSLock()
    nonisolated(unsafe) var ok = 0
    let start = ContinuousClock.now
    for i in 0..<3 {
        group.enter()
        fetcher.fetchImage(faults.base + "/hold/queued-\(i)") { r in
            if case .success = r { lock.withLock { ok += 1 } }
            group.leave()
        }
    }
    #expect(group.wait(timeout: .now() + 20) == .success)
    #expect(lock.withLock { ok } == 3)
    // Three 400 ms answers one after another; far below the idle sleep.
    #expect(ContinuousClock.now - start < .seconds(10), "\(ContinuousClock.now - start)")
}

/// shutdown() returns only once the fetcher's thread has ended (joined: nothing of libcurl or
/// its TLS library runs on past it, into the program's exit) and every completion of the
/// cancelled requests has run.
@Test func shutdownJoinsTheFetchersThreadAndRunsEveryCompletion() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    for round in 0..<20 {
        let (fetcher, _) = try makeFetcher()
        let done = Locked(0)
        for i in 0..<6 { fetcher.fetchImage(faults.base + "/stall?\(round)-\(i)") { _ in done.withLock { $0 += 1 } } }
        let deadline = ContinuousClock.now + .seconds(10)
        while fetcher.engine.workerThread?.threadID == nil, ContinuousClock.now < deadline { usleep(1000) }
        let tid = try #require(fetcher.engine.workerThread?.threadID)
        let comm = "/proc/self/task/\(tid)/comm"
        #expect((try? String(contentsOfFile: comm, encoding: .utf8)) == "kc-fetcher\n")
        fetcher.shutdown()
        #expect(done.withLock { $0 } == 6, "round \(round): completions run before shutdown returns")
        #expect(!FileManager.default.fileExists(atPath: comm), "round \(round): the thread is gone")
    }
}
