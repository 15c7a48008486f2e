// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskContent
import Testing

/// The events other than `.polled` (which follow every poll).
private func meaningful(_ events: [ManifestPoller.Event]) -> [ManifestPoller.Event] {
    events.filter { if case .polled = $0 { return false } else { return true } }
}

private func take(_ poller: ManifestPoller) -> [ManifestPoller.Event] { meaningful(poller.events.take()) }

/// Waits up to `timeout` for events other than `.polled`.
private func wait(_ poller: ManifestPoller, timeout: Duration) -> [ManifestPoller.Event] {
    let end = ContinuousClock.now + timeout
    while ContinuousClock.now < end {
        let got = meaningful(poller.events.wait(timeout: end - ContinuousClock.now))
        if !got.isEmpty { return got }
    }
    return []
}

private func srcs(_ e: ManifestPoller.Event?) -> [String]? {
    if case .manifest(let m, _)? = e { return m.items.map(\.src) }
    return nil
}

/// Against nginx, a 300 ms interval: the first poll applies the manifest and stores it; repolls
/// are 304s (access log) and post nothing; a change is applied; invalid JSON posts one warning
/// and the old list stays; the server going away is logged once, its return once.
@Test func pollingFollowsTheServer() throws {
    var nginx = try Nginx()
    defer { nginx.stop() }
    try nginx.put("show.json", Array(#"{"items":[{"src":"a.jpg"}]}"#.utf8))
    let cache = try DiskCache(.init(directory: makeTempDirectory("poll-cache")))
    let fetcher = Fetcher(cache: cache, configuration: {
        var c = Fetcher.Configuration(); c.connectTimeout = .seconds(2); c.totalTimeout = .seconds(3); return c
    }())
    let stateDir = makeTempDirectory("poll-state")
    let store = try ManifestStore(directory: stateDir)
    let poller = try ManifestPoller(url: URL(string: nginx.base + "/show.json")!, fetcher: fetcher, store: store,
                                    schedule: .init(interval: .milliseconds(300), jitter: 0,
                                                    backoffStart: .milliseconds(100), backoffCap: .milliseconds(400)))
    poller.start()
    let firstPoll = poller.events.wait(timeout: .seconds(5)) + { usleep(100_000); return poller.events.take() }()
    #expect(srcs(meaningful(firstPoll).first) == [nginx.base + "/a.jpg"])
    // The manifest, then the end of the poll that brought it.
    #expect(firstPoll.contains(.polled(reached: true)), "\(firstPoll)")
    #expect(try store.load()?.url == nginx.base + "/show.json")
    // Three more polls: all 304, nothing posted.
    usleep(1_000_000)
    #expect(take(poller).isEmpty)
    let log = nginx.accessLog()
    #expect(log.count >= 3)
    #expect(log.dropFirst().allSatisfy { $0.hasPrefix("GET /show.json 304 ") }, "\(log)")

    usleep(1_000_000)  // a new second for nginx's ETag
    try nginx.put("show.json", Array(#"{"items":[{"src":"b.jpg"},{"src":"a.jpg"}]}"#.utf8))
    #expect(srcs(wait(poller, timeout: .seconds(3)).first) == [nginx.base + "/b.jpg", nginx.base + "/a.jpg"])

    usleep(1_000_000)
    try nginx.put("show.json", Array(#"{"items":[{"src":"b.jpg"},]"#.utf8))
    let refused = wait(poller, timeout: .seconds(3))
    guard case .log(let line, let reason, true)? = refused.first else { Issue.record("\(refused)"); return }
    // The phrase, then the reason alone: the URL goes in path= once (docs/events-and-logs.md).
    #expect(line == "manifest refused, the previous one stays in force", "\(line)")
    #expect(reason?.hasPrefix("manifest is not valid JSON: trailing comma") == true, "\(String(describing: reason))")
    usleep(800_000)
    #expect(take(poller).isEmpty, "the same bad version is not logged again")
    #expect(try store.load().map { String(decoding: $0.body, as: UTF8.self) }
            == #"{"items":[{"src":"b.jpg"},{"src":"a.jpg"}]}"#)

    nginx.stop()
    usleep(1_500_000)  // several failed polls
    let down = take(poller)
    #expect(down.count == 1, "\(down)")
    guard case .log(let text, let reason, true)? = down.first else { Issue.record("\(down)"); return }
    #expect(text == "manifest unreachable, the current show goes on; retrying in the background (logged once)",
            "\(text)")
    #expect(reason.map { !$0.isEmpty && !$0.contains(nginx.base) } == true, "\(String(describing: reason))")
    #expect(poller.consecutiveFailures >= 3)
    try nginx.put("show.json", Array(#"{"items":[{"src":"c.jpg"}]}"#.utf8))
    nginx = try Nginx(restarting: nginx)
    let back = wait(poller, timeout: .seconds(3)) + { usleep(300_000); return take(poller) }()
    #expect(back.contains(where: {
        if case .log(let t, nil, false) = $0 { return t.hasPrefix("manifest reachable again after ") }; return false
    }), "\(back)")
    #expect(back.contains(where: { srcs($0) == [nginx.base + "/c.jpg"] }), "\(back)")
    poller.stop()
}

/// Offline first: with a stored manifest and no server, the stored show is posted at once,
/// before any network answer, and the outage is one log line however many polls fail.
@Test func noNetworkAtBootStartsFromTheStoredManifest() throws {
    let stateDir = makeTempDirectory("boot-state")
    let port = freePort()
    let url = "http://127.0.0.1:\(port)/show.json"
    try ManifestStore(directory: stateDir).save(StoredManifest(url: url,
                                                               body: Array(#"{"items":[{"src":"x.jpg"}]}"#.utf8),
                                                               validators: ManifestValidators(etag: "\"1\"")))
    let cache = try DiskCache(.init(directory: makeTempDirectory("boot-cache")))
    let poller = try ManifestPoller(url: URL(string: url)!, fetcher: Fetcher(cache: cache),
                                    store: try ManifestStore(directory: stateDir),
                                    schedule: .init(interval: .seconds(60), backoffStart: .milliseconds(50),
                                                    backoffCap: .milliseconds(200)))
    let start = ContinuousClock.now
    poller.start()
    let first = wait(poller, timeout: .seconds(2))
    #expect(ContinuousClock.now - start < .milliseconds(500))
    guard case .manifest(let m, true)? = first.first else { Issue.record("\(first)"); return }
    #expect(m.items.map(\.src) == ["http://127.0.0.1:\(port)/x.jpg"])
    usleep(1_500_000)
    let logs = (first.dropFirst() + take(poller))
    #expect(logs.count == 1, "\(logs)")
    guard case .log(let text, let reason, true)? = logs.first else { Issue.record("\(logs)"); return }
    #expect(text.hasPrefix("manifest unreachable at start, showing the cached show"), "\(text)")
    #expect(!text.contains(url) && reason?.contains(url) == false && reason?.isEmpty == false,
            "\(text) \(String(describing: reason))")
    #expect(poller.consecutiveFailures >= 4)
    poller.stop()
}

/// A manifest stored for another URL (the device was pointed at another show) is not played,
/// nor are its validators sent to the new server; one stored for this URL, reached through a
/// redirect, is.
@Test func aManifestStoredForAnotherURLIsNotUsed() throws {
    let stateDir = makeTempDirectory("other-state")
    let port = freePort()
    let old = "http://127.0.0.1:\(port)/old-show.json", new = "http://127.0.0.1:\(port)/new-show.json"
    try ManifestStore(directory: stateDir).save(StoredManifest(url: old,
                                                               body: Array(#"{"items":[{"src":"x.jpg"}]}"#.utf8),
                                                               validators: ManifestValidators(etag: "\"1\"")))
    let cache = try DiskCache(.init(directory: makeTempDirectory("other-cache")))
    let schedule = PollSchedule.Configuration(interval: .seconds(60), backoffStart: .seconds(30),
                                              backoffCap: .seconds(30))
    let poller = try ManifestPoller(url: URL(string: new)!, fetcher: Fetcher(cache: cache),
                                    store: try ManifestStore(directory: stateDir),
                                    schedule: schedule)
    poller.start()
    var events = wait(poller, timeout: .seconds(5))
    let deadline = ContinuousClock.now + .seconds(10)
    while !events.contains(where: { if case .polled = $0 { return true }; return false }),
          ContinuousClock.now < deadline {
        events += wait(poller, timeout: .seconds(1))
    }
    poller.stop()
    #expect(!events.contains { if case .manifest = $0 { return true }; return false }, "\(events)")
    #expect(events.contains { event in
        guard case .log("stored manifest not used", let reason?, true) = event else { return false }
        return reason.contains("stored for \(old)")
    }, "\(events)")

    // Stored for this URL (the body came from where it redirected to): used.
    try ManifestStore(directory: stateDir).save(StoredManifest(url: old, requested: new,
                                                               body: Array(#"{"items":[{"src":"y.jpg"}]}"#.utf8),
                                                               validators: ManifestValidators()))
    guard case .usable(let manifest, _) = ManifestPoller.loadStored(from: try ManifestStore(directory: stateDir),
                                                                     for: URL(string: new)!)
    else { Issue.record("not usable"); return }
    #expect(manifest.items.map(\.src) == ["http://127.0.0.1:\(port)/y.jpg"])
}

/// A manifest over the 8 MiB cap (9 MiB on nginx) is refused for its size, with the limit, and
/// said once while it stays so: never logged as the server being unreachable.
@Test func aManifestOverTheCapIsRefusedForItsSizeNotUnreachable() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    try nginx.put("show.json", [])
    let path = nginx.root + "/show.json"
    #expect(truncate(path, 9 << 20) == 0)   // 9 MiB, sparse
    let cache = try DiskCache(.init(directory: makeTempDirectory("poll-big-cache")))
    let fetcher = Fetcher(cache: cache)
    defer { fetcher.shutdown() }
    let poller = try ManifestPoller(url: URL(string: nginx.base + "/show.json")!, fetcher: fetcher, store: nil,
                                    schedule: .init(interval: .milliseconds(300), jitter: 0))
    poller.start()
    defer { poller.stop() }
    let first = wait(poller, timeout: .seconds(5))
    guard case .log(let line, let reason, true)? = first.first else { Issue.record("\(first)"); return }
    #expect(line == "manifest refused, there is no earlier one to keep", "\(line)")
    #expect(reason == "manifest too large: 9437184 bytes, over the limit of 8 MiB (8388608 bytes)",
            "\(reason ?? "nil")")
    // Polled again at the interval: not said again.
    usleep(1_000_000)
    let later = take(poller)
    #expect(later.isEmpty, "\(later)")
    #expect(nginx.accessLog().filter { $0.hasPrefix("GET /show.json") }.count >= 3)
}
