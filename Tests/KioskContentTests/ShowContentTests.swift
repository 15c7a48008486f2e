// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing

/// End-to-end tests of the content (docs/content.md: remote manifest and caches): the real `kiosk-carousel`
/// executable on the offscreen backend at 320x200, against nginx on loopback (and the scripted
/// fault server for a 500), with per-test cache and state directories. Each test reads the
/// program's `shown` events (stdout JSON lines) and log lines (stderr) as they arrive, and
/// checks the frames it wrote, nginx's access log and the files it left in its directories.
/// Serialized: several tests follow wall time (`--clock real`) on a 2-core machine.
@Suite(.serialized) struct ShowContentTests {
    let cache = makeTempDirectory("show-cache")
    let state = makeTempDirectory("show-state")

    /// The arguments every run shares.
    func common(_ manifest: String?, _ extra: [String]) -> [String] {
        ["--size", "320x200", "--cache-dir", cache, "--state-dir", state]
            + (manifest.map { ["--manifest", $0] } ?? []) + extra
    }

    /// Four solid-colour PNGs under /img/ (a red, b green, c blue, d yellow).
    func putSwatches(_ nginx: Nginx, under dir: String = "img") throws -> [String: [UInt8]] {
        var bodies: [String: [UInt8]] = [:]
        for (name, colour) in [("a", Swatch.red), ("b", Swatch.green), ("c", Swatch.blue), ("d", Swatch.yellow)] {
            let bytes = solidPNG(colour)
            try publish(nginx, "\(dir)/\(name).png", bytes)
            bodies[name] = bytes
        }
        return bodies
    }

    // MARK: 1. First fetch

    @Test func firstFetchShowsTheManifestInOrderAndFillsTheDiskCacheAndTheStateDirectory() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        let swatches = try putSwatches(nginx)
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: samplePhoto("colorfulcups-1920x1200.jpg"))))
        try publish(nginx, "img/cups.jpg", jpeg)
        let urls = [nginx.base + "/img/a.png", nginx.base + "/img/cups.jpg", nginx.base + "/img/c.png"]
        let manifest = itemsManifest(urls)
        try publish(nginx, "show.json", json: manifest)

        // Virtual clock, no --run-for: one round, after the manifest's first answer.
        let show = try KioskShow(common(nginx.base + "/show.json", ["--interval", "1", "--fade", "200"]))
        let code = show.waitForExit(timeout: 60)
        #expect(code == 0, "\(show.transcript)")
        #expect(show.shown.map(\.src) == urls + [urls[0]], "\(show.transcript)")
        #expect(show.shown.map(\.index) == [0, 1, 2, 0])
        #expect(show.shown.map(\.t) == [0, 1000, 2000, 3000])
        #expect(show.logLines(containing: "warning").isEmpty, "\(show.transcript)")

        // What reached the screen: the red PNG fills the first frame, the blue one is on at 2000 ms.
        let frames = try analyzeFrames(show.frames)
        let first = try #require(frames.first { $0.ms == 0 }, "no frame at 0 ms: \(frames.map(\.name).prefix(5))")
        #expect(first.centerIs(Swatch.red), "\(first)")
        let third = try #require(frames.first { $0.ms == 2000 })
        #expect(third.centerIs(Swatch.blue), "\(third)")

        // The disk cache: one entry per URL, named SHA-256(URL).LENGTH, holding the served bytes,
        // and beside it SHA-256(URL).validators with nginx's ETag and Last-Modified.
        let bodies = [swatches["a"]!, jpeg, swatches["c"]!]
        var expected: [String] = []
        for (url, body) in zip(urls, bodies) {
            let key = try independentSHA256(url)
            let name = key + ".\(body.count)"
            expected += [name, key + ".validators"]
            #expect(readFile(cache + "/" + name) == body, "cache entry \(name) for \(url)")
            let validators = try #require(readFile(cache + "/" + key + ".validators"))
            #expect(String(decoding: validators, as: UTF8.self).contains("\"etag\""), "\(key).validators")
        }
        #expect(directoryNames(cache) == expected.sorted(), "cache dir: \(directoryNames(cache))")
        // Each image was downloaded once (the prefetch and the slot share one request).
        for path in ["/img/a.png", "/img/cups.jpg", "/img/c.png"] {
            #expect(requestCount(nginx, path, status: 200) == 1, "\(path): \(nginx.accessLog())")
        }

        // The state directory: manifest.json with the URL and the body as served, and the lock
        // that keeps it one kiosk's (docs/content.md).
        #expect(directoryNames(state) == ["kiosk-carousel.lock", "manifest.json"],
                "state dir: \(directoryNames(state))")
        let stored = try #require(readFile(state + "/manifest.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(stored)) as? [String: Any])
        #expect(json["url"] as? String == nginx.base + "/show.json")
        #expect((json["body"] as? String).flatMap { Data(base64Encoded: $0) } == Data(manifest.utf8))
        #expect((json["etag"] as? String)?.isEmpty == false, "no ETag stored: \(json)")
    }

    // MARK: 2. A changed manifest applied while running

    @Test func aChangedManifestIsAppliedWithoutABlackFrameAndAnUnchangedOneCostsA304() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        _ = try putSwatches(nginx)
        let u = { (n: String) in nginx.base + "/img/\(n).png" }
        try publish(nginx, "show.json", json: itemsManifest([u("a"), u("b")]))
        let show = try KioskShow(common(nginx.base + "/show.json",
                                        ["--clock", "real", "--manifest-interval", "1", "--interval", "2",
                                         "--fade", "300", "--run-for", "7.5"]))
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")
        // a is on screen; the new list still has it, at index 1, between c and d.
        try publish(nginx, "show.json", json: itemsManifest([u("c"), u("a"), u("d")]))
        let changedAt = show.elapsed
        #expect(show.waitForExit(timeout: 20) == 0, "\(show.transcript)")
        let shown = show.shown
        #expect(shown.first?.src == u("a"), "\(show.transcript)")
        // Applied within a poll interval (1 s ±10 %), and before the first transition at ~2 s.
        let applied = show.stderrLines.filter { $0.text.contains("manifest applied") }
        #expect(applied.count == 2, "\(show.transcript)")
        if applied.count == 2 { #expect(applied[1].at - changedAt < 2.5, "\(show.transcript)") }
        // a stays (no second `shown` for it), the show continues from it in the new list:
        // d (index 2), c (index 0), then a again at its new index 1.
        let after = shown.dropFirst().map { "\($0.index) \($0.src)" }
        #expect(Array(after.prefix(3)) == ["2 \(u("d"))", "0 \(u("c"))", "1 \(u("a"))"], "\(show.transcript)")
        #expect(!shown.contains { $0.src == u("b") }, "b shown after the list changed: \(shown)")

        // No black frame once the first image was on screen: every frame's centre is one of the
        // images or a blend of two, never near black, and no frame is mostly black.
        let firstT = shown.first?.t ?? 0
        let frames = try analyzeFrames(show.frames).filter { $0.ms >= firstT }
        #expect(frames.count > 10, "\(frames.count) frames")
        let black = frames.filter { $0.centerIsDark || $0.dark > 0.5 }
        #expect(black.isEmpty, "black frames after the first image: \(black)")

        // nginx: v1 200, v2 200, every other poll a 304 sent with the ETag it had.
        let polls = manifestRequests(nginx)
        #expect(polls.filter { $0.status == 200 }.count == 2, "\(polls)")
        let notModified = polls.filter { $0.status == 304 }
        #expect(notModified.count >= 3, "expected repolls answered 304: \(polls)")
        #expect(notModified.allSatisfy { $0.inm.count > 2 }, "\(polls)")
        if let lastOK = polls.lastIndex(where: { $0.status == 200 }) {
            #expect(polls[(lastOK + 1)...].contains { $0.status == 304 }, "no 304 after the change: \(polls)")
        }
        // Images downloaded once each; the disk cache serves the rest (the polls ask about
        // them with conditional GETs, answered 304).
        for n in ["a", "c", "d"] {
            #expect(requestCount(nginx, "/img/\(n).png", status: 200) == 1, "\(n): \(nginx.accessLog())")
        }
    }

    /// An image replaced on its server under the same name (how a sign is updated: a new
    /// menu.png) is shown: each poll asks about it with a conditional GET (304 while it is the
    /// same), the new body replaces the cache file, and the show prepares it again, the old
    /// picture on screen until the new one is decoded (no black frame).
    @Test func anImageReplacedOnItsServerIsShownAfterTheNextPoll() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        try publish(nginx, "img/menu.png", solidPNG(Swatch.red))
        try publish(nginx, "show.json", json: itemsManifest([nginx.base + "/img/menu.png"]))
        let show = try KioskShow(common(nginx.base + "/show.json",
                                        ["--clock", "real", "--manifest-interval", "1", "--interval", "2",
                                         "--fade", "200", "--run-for", "30"]))
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")
        usleep(2_500_000)  // polls answered 304 for the image meanwhile
        try publish(nginx, "img/menu.png", solidPNG(Swatch.blue))
        let changedAt = show.elapsed
        #expect(show.waitUntil(15) { !$0.logLines(containing: "image changed").isEmpty }, "\(show.transcript)")
        let noticedAt = show.elapsed
        usleep(3_000_000)  // one image: the new picture cross-fades in at its next interval (2 s)
        #expect(show.stop() == 0, "\(show.transcript)")
        #expect(noticedAt - changedAt < 8, "\(show.transcript)")
        let frames = try analyzeFrames(show.frames)
        #expect(frames.first { $0.centerIs(Swatch.red) } != nil, "\(frames)")
        #expect(frames.last?.centerIs(Swatch.blue) == true, "the new picture is on screen: \(frames.suffix(3))")
        let firstT = show.shown.first?.t ?? 0
        #expect(!frames.contains { $0.ms >= firstT && ($0.centerIsDark || $0.dark > 0.5) }, "no black frame: \(frames)")
        let image = nginx.accessLog().filter { $0.contains("/img/menu.png") }
        #expect(image.filter { $0.contains(" 304 ") }.count >= 1, "revalidated with 304s: \(image)")
        #expect(image.filter { $0.contains(" 200 ") }.count == 2, "downloaded twice, before and after: \(image)")
        #expect(image.filter { $0.contains(" 304 ") }.allSatisfy { $0.contains("inm=\"") }, "\(image)")
    }

    // MARK: 3. Manifest formats and refusals

    @Test func relativeURLsResolveAgainstTheManifestURLAndABOMIsAccepted() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        try publish(nginx, "shows/lobby/img/a.png", solidPNG(Swatch.red))
        try publish(nginx, "shows/common/b.png", solidPNG(Swatch.green))
        try publish(nginx, "top/c.png", solidPNG(Swatch.blue))
        // UTF-8 BOM, then sources relative to /shows/lobby/show.json (RFC 3986 §5).
        let body = [0xEF, 0xBB, 0xBF] + Array(itemsManifest(["img/a.png", "../common/b.png", "/top/c.png"]).utf8)
        try publish(nginx, "shows/lobby/show.json", body)
        let show = try KioskShow(common(nginx.base + "/shows/lobby/show.json", ["--interval", "1", "--fade", "200"]))
        #expect(show.waitForExit(timeout: 60) == 0, "\(show.transcript)")
        let resolved = [nginx.base + "/shows/lobby/img/a.png", nginx.base + "/shows/common/b.png",
                        nginx.base + "/top/c.png"]
        #expect(show.shown.map(\.src) == resolved + [resolved[0]], "\(show.transcript)")
        let frames = try analyzeFrames(show.frames)
        for (t, colour) in [(0, Swatch.red), (1000, Swatch.green), (2000, Swatch.blue)] {
            let f = frames.first { $0.ms == t }
            #expect(f?.centerIs(colour) == true, "frame at \(t) ms: \(String(describing: f))")
        }
        #expect(show.logLines(containing: "warning").isEmpty, "\(show.transcript)")
    }

    @Test func theBannerFormatIsPlayed() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: samplePhoto("grey-1920x1200.jpg"))))
        try publish(nginx, "static/a.jpg", jpeg)
        try publish(nginx, "static/b.png", solidPNG(Swatch.yellow))
        try publish(nginx, "banner/show.json", json: #"{"imgs":[{"src":"/static/a.jpg"},{"src":"/static/b.png"}]}"#)
        let show = try KioskShow(common(nginx.base + "/banner/show.json", ["--interval", "1", "--fade", "200"]))
        #expect(show.waitForExit(timeout: 60) == 0, "\(show.transcript)")
        let urls = [nginx.base + "/static/a.jpg", nginx.base + "/static/b.png"]
        #expect(show.shown.map(\.src) == urls + [urls[0]], "\(show.transcript)")
        let frames = try analyzeFrames(show.frames)
        #expect(frames.first { $0.ms == 1000 }?.centerIs(Swatch.yellow) == true, "\(frames.prefix(3))")
    }

    @Test func invalidJSONAndAFileSourceAreRefusedOnceAndTheOldListStays() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        _ = try putSwatches(nginx)
        let u = { (n: String) in nginx.base + "/img/\(n).png" }
        let good = itemsManifest([u("a"), u("b")])
        try publish(nginx, "show.json", json: good)
        let show = try KioskShow(common(nginx.base + "/show.json",
                                        ["--clock", "real", "--manifest-interval", "1", "--interval", "1",
                                         "--fade", "200", "--run-for", "60"]))
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")

        // Invalid JSON (cut off): one warning; the repolls of the same bad version are 304s.
        try publish(nginx, "show.json", json: #"{"items":[{"src":"img/c.png"}"#)
        #expect(show.waitUntil(6) { $0.logLines(containing: "manifest refused").count >= 1 }, "\(show.transcript)")
        usleep(2_500_000)
        // A remote manifest naming a local file: refused as a whole, the file never read.
        try publish(nginx, "show.json", json: itemsManifest([u("c"), "file:///etc/passwd"]))
        #expect(show.waitUntil(6) { $0.logLines(containing: "manifest refused").count >= 2 }, "\(show.transcript)")
        usleep(2_500_000)
        let shownBeforeStop = show.shown.count
        #expect(show.stop() == 0, "\(show.transcript)")

        let refused = show.logLines(containing: "manifest refused")
        #expect(refused.count == 2, "\(show.transcript)")
        #expect(refused.first?.contains("not valid JSON") == true, "\(refused)")
        #expect(refused.last?.contains("file:///etc/passwd") == true, "\(refused)")
        #expect(refused.allSatisfy { $0.contains("warning") && $0.contains(nginx.base + "/show.json") }, "\(refused)")
        // The old list stays: only a and b, on and on.
        let srcs = Set(show.shown.map(\.src))
        #expect(srcs == [u("a"), u("b")], "\(show.transcript)")
        #expect(shownBeforeStop >= 6, "the show did not go on: \(show.transcript)")
        #expect(requestCount(nginx, "/img/c.png") == 0, "c fetched from a refused manifest: \(nginx.accessLog())")
        #expect(!show.log.contains("root:"), "contents of /etc/passwd in the log")
        // nginx: good 200, bad 200 then 304s, file:// 200 then 304s.
        let polls = manifestRequests(nginx)
        #expect(polls.filter { $0.status == 200 }.count == 3, "\(polls)")
        #expect(polls.filter { $0.status == 304 }.count >= 3, "\(polls)")
        // The stored manifest is still the good one.
        let stored = try #require(readFile(state + "/manifest.json"))
        let json = try JSONSerialization.jsonObject(with: Data(stored)) as? [String: Any]
        #expect((json?["body"] as? String).flatMap { Data(base64Encoded: $0) } == Data(good.utf8))
    }

    /// A trailing comma is not JSON (RFC 8259): such a manifest is refused like any other
    /// invalid JSON, with a message that names the comma and its place, and the stored one is
    /// shown instead.
    @Test func aManifestWithATrailingCommaIsRefusedAndTheStoredOneShown() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        _ = try putSwatches(nginx)
        let u = { (n: String) in nginx.base + "/img/\(n).png" }
        try publish(nginx, "show.json", json: itemsManifest([u("a"), u("b")]))
        let warm = try KioskShow(common(nginx.base + "/show.json", ["--interval", "1", "--fade", "200"]))
        #expect(warm.waitForExit(timeout: 60) == 0, "\(warm.transcript)")
        #expect(warm.shown.map(\.src) == [u("a"), u("b"), u("a")], "\(warm.transcript)")

        try publish(nginx, "show.json", json: "{\"items\":[{\"src\":\"img/a.png\"},\n{\"src\":\"img/c.png\"},]}")
        let show = try KioskShow(common(nginx.base + "/show.json", ["--interval", "1", "--fade", "200"]))
        #expect(show.waitForExit(timeout: 60) == 0, "\(show.transcript)")
        let refused = show.logLines(containing: "manifest refused")
        #expect(refused.count == 1, "\(show.transcript)")
        #expect(refused.first?.contains("trailing comma before ']'") == true, "\(refused)")
        #expect(refused.first?.contains("(line 2, column 21)") == true, "\(refused)")
        expectDocumentedLine(refused.first, "warning manifest refused, the previous one stays in force",
                             path: nginx.base + "/show.json")
        #expect(show.shown.map(\.src) == [u("a"), u("b"), u("a")], "\(show.transcript)")
        #expect(requestCount(nginx, "/img/c.png") == 0, "c fetched from a refused manifest: \(nginx.accessLog())")
    }

    // MARK: 4. Server down at start

    @Test func serverDownWithAWarmCacheStartsFromTheCacheAtOnceAndLogsTheOutageOnce() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        _ = try putSwatches(nginx)
        let urls = [nginx.base + "/img/a.png", nginx.base + "/img/b.png"]
        try publish(nginx, "show.json", json: itemsManifest(urls))
        let warm = try KioskShow(common(nginx.base + "/show.json", ["--interval", "1", "--fade", "200"]))
        #expect(warm.waitForExit(timeout: 60) == 0, "\(warm.transcript)")
        #expect(warm.shown.map(\.src) == urls + [urls[0]], "\(warm.transcript)")
        nginx.stop()
        #expect(!canConnect(nginx.port))

        let show = try KioskShow(common(nginx.base + "/show.json",
                                        ["--clock", "real", "--manifest-interval", "1", "--interval", "1",
                                         "--fade", "200", "--run-for", "4"]))
        #expect(show.waitForExit(timeout: 20) == 0, "\(show.transcript)")
        let shown = show.shown
        let firstAt = shown.first?.at ?? .infinity
        print("ShowContentTests: warm cache, server down: first `shown` line \(Int(firstAt * 1000)) ms after spawn "
              + "(debug build, 320x200)")
        #expect(firstAt < 1.0, "first shown \(firstAt) s after spawn: \(show.transcript)")
        #expect(shown.first?.t ?? 9999 <= 300, "\(show.transcript)")
        #expect(Array(shown.map(\.src).prefix(4)) == [urls[0], urls[1], urls[0], urls[1]], "\(show.transcript)")
        // Polls at 0, 1, 3 s all fail (backoff): the outage is one line.
        let outage = show.logLines(containing: "unreachable")
        #expect(outage.count == 1, "\(show.transcript)")
        #expect(outage.first?.contains("at start") == true, "\(outage)")
        expectDocumentedLine(outage.first, "warning manifest unreachable at start, showing the cached show; "
                             + "retrying in the background (logged once)",
                             path: nginx.base + "/show.json")
        #expect(show.logLines(containing: "image skipped").isEmpty, "\(show.transcript)")
        #expect(show.logLines(containing: "stored manifest loaded").count == 1, "\(show.transcript)")
    }

    /// A server that accepts connections and never answers (the kernel completes the handshake
    /// into a listen backlog nobody accepts from): the show must not wait for it.
    @Test func aServerThatNeverAnswersDoesNotDelayAWarmStart() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        _ = try putSwatches(nginx)
        let urls = [nginx.base + "/img/a.png", nginx.base + "/img/b.png"]
        try publish(nginx, "show.json", json: itemsManifest(urls))
        let warm = try KioskShow(common(nginx.base + "/show.json", ["--interval", "1", "--fade", "200"]))
        #expect(warm.waitForExit(timeout: 60) == 0, "\(warm.transcript)")
        nginx.stop()
        // The same port, now a black hole.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = in_port_t(UInt16(nginx.port).bigEndian)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(fd, 16) == 0, "cannot listen on \(nginx.port)")

        let show = try KioskShow(common(nginx.base + "/show.json",
                                        ["--clock", "real", "--manifest-interval", "1", "--interval", "1",
                                         "--fade", "200", "--run-for", "2.5"]))
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")
        let firstAt = show.shown.first?.at ?? .infinity
        print("ShowContentTests: warm cache, server hanging: first `shown` line \(Int(firstAt * 1000)) ms after spawn")
        #expect(firstAt < 1.5, "the show waited for a server that never answers: \(show.transcript)")
        // --run-for ends the show on time even with a request hanging.
        let code = show.waitForExit(timeout: 8)
        #expect(code == 0, "exit \(String(describing: code)) with a manifest request hanging: \(show.transcript)")
        #expect(Array(show.shown.map(\.src).prefix(3)) == urls + [urls[0]], "\(show.transcript)")
        #expect(show.logLines(containing: "warning").isEmpty, "\(show.transcript)")
    }

    @Test func serverDownWithAColdCacheShowsTheNoImagesScreenThenRecovers() throws {
        var nginx = try Nginx()
        defer { nginx.stop() }
        _ = try putSwatches(nginx)
        let urls = [nginx.base + "/img/a.png", nginx.base + "/img/b.png"]
        try publish(nginx, "show.json", json: itemsManifest(urls))
        nginx.stop()
        #expect(!canConnect(nginx.port))

        let show = try KioskShow(common(nginx.base + "/show.json",
                                        ["--clock", "real", "--manifest-interval", "1", "--interval", "1",
                                         "--fade", "200", "--run-for", "60"]))
        defer { show.stop() }
        #expect(show.waitUntil(5) { !$0.logLines(containing: "unreachable").isEmpty }, "\(show.transcript)")
        usleep(1_500_000)
        #expect(show.shown.isEmpty)
        let warningsWhileDown = show.logLines(containing: "warning")
        nginx = try Nginx(restarting: nginx)
        let upAt = show.elapsed
        // Backoff (1 s doubling) brings the next poll within a few seconds.
        #expect(show.waitUntil(12) { $0.shown.count >= 3 }, "\(show.transcript)")
        #expect(show.stop() == 0, "\(show.transcript)")

        let frames = try analyzeFrames(show.frames)
        let first = try #require(frames.first, "no frames")
        // (Real clock: the first frame is presented a few ms into the show; its words load off
        // the frame loop, so it may be the background alone, drawn again once they are there.)
        let blank = { (f: FrameInfo) in f.corner.allSatisfy { $0 < 8 } && f.dark == 1 && f.lit == 0 }
        #expect(first.ms < 200 && (first.looksLikeNoImagesScreen || blank(first)), "first frame: \(first)")
        let beforeRecovery = frames.filter { Double($0.ms) / 1000 < upAt - 0.3 }
        let worded = beforeRecovery.drop { blank($0) }
        #expect(!worded.isEmpty && worded.allSatisfy { $0.looksLikeNoImagesScreen }, "\(beforeRecovery)")
        // One clear line for the outage (beside the start-up "no images to show").
        let outage = show.logLines(containing: "unreachable")
        #expect(outage.count == 1, "\(show.transcript)")
        expectDocumentedLine(outage.first, "warning manifest unreachable at start and none stored yet: nothing to "
                             + "show until it is fetched; retrying in the background (logged once)",
                             path: nginx.base + "/show.json")
        #expect(warningsWhileDown.count <= 2, "log while the server was down: \(warningsWhileDown)")
        #expect(show.logLines(containing: "reachable again").count == 1, "\(show.transcript)")
        #expect(show.shown.first.map { $0.at > upAt } == true, "\(show.transcript)")
        #expect(Array(show.shown.map(\.src).prefix(3)) == [urls[0], urls[1], urls[0]], "\(show.transcript)")
    }

    // MARK: 5. An image that cannot be fetched

    @Test func anImageAnswered404Or500IsSkippedWithOneWarningAndTheOthersAreShown() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        let faults = try FaultServer()
        defer { faults.stop() }
        _ = try putSwatches(nginx)
        let a = nginx.base + "/img/a.png", missing = nginx.base + "/img/missing.png"
        let broken = faults.base + "/status/500", c = nginx.base + "/img/c.png"
        try publish(nginx, "show.json", json: itemsManifest([a, missing, broken, c]))
        let show = try KioskShow(common(nginx.base + "/show.json", ["--interval", "1", "--fade", "200"]))
        #expect(show.waitForExit(timeout: 60) == 0, "\(show.transcript)")
        #expect(show.shown.map(\.src) == [a, c, a], "\(show.transcript)")
        #expect(show.shown.map(\.index) == [0, 3, 0], "\(show.transcript)")
        let skipped404 = show.logLines(containing: missing)
        #expect(skipped404.count == 1 && skipped404.first?.contains("404") == true, "\(show.transcript)")
        expectDocumentedLine(skipped404.first, "warning image skipped", path: missing)
        let skipped500 = show.logLines(containing: broken)
        #expect(skipped500.count == 1 && skipped500.first?.contains("500") == true, "\(show.transcript)")
        #expect(skipped404.allSatisfy { $0.contains("warning") } && skipped500.allSatisfy { $0.contains("warning") })
        // Nothing cached for the failures: the two images and their validators.
        #expect(directoryNames(cache).count == 4, "cache: \(directoryNames(cache))")
        #expect(directoryNames(cache).filter { $0.hasSuffix(".validators") }.count == 2,
                "cache: \(directoryNames(cache))")
    }

    // MARK: 6. A watched directory

    @Test func aWatchedDirectoryFollowsFilesAddedSlowlyRenamedAndRemoved() throws {
        let dir = makeTempDirectory("show-dir")
        try writeFile(dir + "/a.png", solidPNG(Swatch.red))
        let show = try KioskShow(common(nil, ["--clock", "real", "--interval", "1", "--fade", "200",
                                              "--run-for", "60", dir]))
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")

        // b.jpg written in 12 chunks over ~1.3 s, then closed: shown only after the close.
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: samplePhoto("fallenleaf-1920x1200.jpg"))))
        let fd = open(dir + "/b.jpg", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        let chunk = (photo.count + 11) / 12
        var offset = 0
        while offset < photo.count {
            let n = min(chunk, photo.count - offset)
            let written = photo[offset..<(offset + n)].withUnsafeBytes { write(fd, $0.baseAddress, n) }
            #expect(written == n)
            offset += n
            usleep(110_000)
        }
        close(fd)
        let closedAt = show.elapsed
        #expect(show.waitUntil(20) { $0.shown.contains { $0.src.hasSuffix("/b.jpg") } }, "\(show.transcript)")

        // a.png renamed to d.png.
        #expect(rename(dir + "/a.png", dir + "/d.png") == 0)
        let renamedAt = show.elapsed
        #expect(show.waitUntil(20) { $0.shown.contains { $0.src.hasSuffix("/d.png") } }, "\(show.transcript)")

        // b.jpg removed: d.png alone stays.
        #expect(unlink(dir + "/b.jpg") == 0)
        let removedAt = show.elapsed
        usleep(5_000_000)  // the grace below plus three intervals, in which b.jpg would come back
        #expect(show.stop() == 0, "\(show.transcript)")

        let shown = show.shown
        let firstB = shown.first { $0.src.hasSuffix("/b.jpg") }
        #expect(shown.first?.src == dir + "/a.png", "\(show.transcript)")
        #expect(firstB.map { $0.at > closedAt } == true, "b.jpg shown before it was complete: \(show.transcript)")
        // A transition under way may still end on the old name, and a loaded machine may take a
        // moment to read the change; after 2 s of grace, none (each image is up for 1.2 s).
        #expect(!shown.contains { $0.src.hasSuffix("/a.png") && $0.at > renamedAt + 2.0 }, "\(show.transcript)")
        #expect(!shown.contains { $0.src.hasSuffix("/b.jpg") && $0.at > removedAt + 2.0 }, "\(show.transcript)")
        #expect(shown.last?.src == dir + "/d.png", "\(show.transcript)")
        // No file was ever read half written or after it went: no warning at all.
        #expect(show.logLines(containing: "warning").isEmpty, "\(show.transcript)")
        #expect(show.logLines(containing: "directory changed").count >= 3, "\(show.transcript)")
    }

    // MARK: 7. SIGHUP polls at once

    @Test func sighupPollsTheManifestAtOnce() throws {
        let nginx = try Nginx()
        defer { nginx.stop() }
        _ = try putSwatches(nginx)
        let u = { (n: String) in nginx.base + "/img/\(n).png" }
        try publish(nginx, "show.json", json: itemsManifest([u("a"), u("b")]))
        let show = try KioskShow(common(nginx.base + "/show.json",
                                        ["--clock", "real", "--manifest-interval", "600", "--interval", "1",
                                         "--fade", "200", "--run-for", "60"]))
        defer { show.stop() }
        #expect(show.waitUntil(10) { !$0.shown.isEmpty }, "\(show.transcript)")
        try publish(nginx, "show.json", json: itemsManifest([u("c"), u("d")]))
        usleep(2_000_000)
        // Control: without SIGHUP nothing polls for 10 minutes.
        #expect(!show.shown.contains { $0.src == u("c") || $0.src == u("d") }, "\(show.transcript)")
        #expect(manifestRequests(nginx).count == 1, "\(manifestRequests(nginx))")
        show.signal(SIGHUP)
        let hupAt = show.elapsed
        #expect(show.waitUntil(5) { $0.shown.contains { $0.src == u("c") } }, "\(show.transcript)")
        let firstC = show.shown.first { $0.src == u("c") }
        #expect(firstC.map { $0.at - hupAt < 3 } == true, "\(show.transcript)")
        #expect(show.stop() == 0, "\(show.transcript)")
        #expect(show.logLines(containing: "SIGHUP received").count == 1, "\(show.transcript)")
        let polls = manifestRequests(nginx)
        #expect(polls.map(\.status) == [200, 200], "\(polls)")
        // After the new list arrived, only its items.
        if let c = firstC {
            #expect(show.shown.filter { $0.at > c.at }.allSatisfy { $0.src == u("c") || $0.src == u("d") },
                    "\(show.transcript)")
        }
    }
}

/// `line` has docs/events-and-logs.md's form `kiosk-carousel: LEVEL WHAT path=PATH reason="…"`:
/// the phrase, the URL once in `path=`, and a non-empty reason that does not repeat it.
func expectDocumentedLine(_ line: String?, _ what: String, path: String,
                          sourceLocation: SourceLocation = #_sourceLocation) {
    let head = "kiosk-carousel: \(what) path=\(path) reason=\""
    guard let line, line.hasPrefix(head), line.hasSuffix("\""), line.count > head.count + 1 else {
        Issue.record("not `\(head)…\"`: \(line ?? "no line")", sourceLocation: sourceLocation)
        return
    }
    #expect(line.components(separatedBy: path).count == 2, "the URL more than once: \(line)",
            sourceLocation: sourceLocation)
}
