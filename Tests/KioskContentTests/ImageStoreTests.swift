// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskContent
import KioskCore
import KioskSystem
import Testing

private func openImage(_ store: ImageStore, _ item: PlaylistItem) throws -> Result<ImageStore.OpenImage, ContentError> {
    try waitFor { done in store.image(for: item, urgent: true) { done($0) } }
}

/// The store hands out an open file that keeps its bytes when the entry goes; `invalidate`
/// makes the next request download again; the item's `sha256` is checked.
@Test func theStoreHandsOutOpenFilesAndForgetsWhatItIsTold() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    let jpeg = jpegBytes(30_000)
    try nginx.put("a.jpg", jpeg)
    let store = ImageStore(cache: try DiskCache(.init(directory: makeTempDirectory("store-cache"))))
    defer { store.shutdown() }
    let url = nginx.base + "/a.jpg"

    let file = try openImage(store, PlaylistItem(source: url, sha256: SHA256.hex(ofBytes: jpeg))).get()
    #expect(file.url == url && file.path.hasPrefix("/proc/self/fd/"))
    store.invalidate(url: url)
    #expect(readFile(file.path) == jpeg, "the open file keeps its bytes after the entry is gone")
    file.close()

    // Forgotten: the next request is a transfer, not a cache hit.
    let again = try openImage(store, PlaylistItem(source: url)).get()
    #expect(readFile(again.path) == jpeg)
    #expect(nginx.accessLog().count == 2 && store.statistics.cacheHits == 0)
    // Still cached now: answered without a transfer.
    _ = try openImage(store, PlaylistItem(source: url)).get()
    #expect(nginx.accessLog().count == 2 && store.statistics.cacheHits == 1)

    // A sha256 the bytes do not have: refused.
    let wrong = try openImage(store, PlaylistItem(source: url + "?x", sha256: String(repeating: "a", count: 64)))
    #expect(wrong.failureKind == "hash-mismatch")
}

/// A download that failed is answered from memory for a minute (the show's retry interval):
/// the playlist's prefetch and the slot that needs the image ask the broken server once, not
/// once each; `forgetFailures` (SIGHUP) asks again at once.
@Test func aFailedDownloadIsNotAskedForAgainWithinAMinute() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    // The memory is an hour here, so a test thread held off the CPU for a minute on a loaded
    // machine cannot see the failure expire between its steps; the default is a minute.
    #expect(ImageStore.defaultFailureMemory == .seconds(60))
    let store = ImageStore(cache: try DiskCache(.init(directory: makeTempDirectory("store-failures"))),
                           failureMemory: .seconds(3600))
    defer { store.shutdown() }
    let item = PlaylistItem(source: faults.base + "/status/503")
    store.prefetch([item])
    // The slot's request joins the prefetch's transfer or gets its remembered failure.
    let first = try openImage(store, item)
    guard case .failure(.httpStatus(_, 503, _, _)) = first else {
        Issue.record("the first answer was \(first), not HTTP status 503")
        return
    }
    for _ in 0..<3 {
        let again = try openImage(store, item)
        #expect(again.failureKind == first.failureKind)
    }
    #expect(try faults.stats().count["/status/503"] == 1, "one request for a prefetch and four asks")
    store.forgetFailures()
    _ = try openImage(store, item)
    #expect(try faults.stats().count["/status/503"] == 2)
}

/// Waits until nginx's access log has `count` lines (or 20 s), then returns them.
private func accessLog(_ nginx: Nginx, atLeast count: Int) -> [String] {
    let deadline = ContinuousClock.now + .seconds(20)
    var lines = nginx.accessLog()
    while lines.count < count, ContinuousClock.now < deadline {
        usleep(50_000)
        lines = nginx.accessLog()
    }
    return lines
}

/// A playlist of 300 remote images asks for at most `requestsPerRound` of them per round
/// (a manifest poll), the rest in later rounds, never all at once.
@Test func aRoundMakesAtMostItsBoundOfRequests() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    let items = try (0..<300).map { i in
        try nginx.put("many/\(i).jpg", jpegBytes(200, seed: i))
        return PlaylistItem(source: nginx.base + "/many/\(i).jpg")
    }
    let store = ImageStore(cache: try DiskCache(.init(directory: makeTempDirectory("store-bound"))),
                           requestsPerRound: 50)
    defer { store.shutdown() }
    let first: ImageStore.Round = try waitFor { done in store.prefetch(items) { done($0) } }
    #expect(first.downloads == 50 && first.revalidations == 0 && first.deferred == 250, "\(first)")
    #expect(accessLog(nginx, atLeast: 50).count == 50)
    usleep(500_000)
    #expect(nginx.accessLog().count == 50, "no more than the bound: \(nginx.accessLog().count)")
    let second: ImageStore.Round = try waitFor { done in store.prefetch(items) { done($0) } }
    #expect(second.downloads == 50, "\(second)")
    let lines = accessLog(nginx, atLeast: 100)
    #expect(lines.count == 100)
    #expect(Set(lines).count == 100, "the second round asks for the next 50, not the first again")
}

/// Each round asks about cached images without a sha256 with a conditional GET: a 304 costs
/// nothing and keeps the file; an image replaced on its server under the same name replaces
/// the cache file.
@Test func cachedImagesAreRevalidatedAndAReplacedOneIsTakenUp() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    try nginx.put("menu.jpg", jpegBytes(5000, seed: 1))
    try nginx.put("pinned.jpg", jpegBytes(5000, seed: 2))
    let cache = try DiskCache(.init(directory: makeTempDirectory("store-revalidate")))
    let store = ImageStore(cache: cache, requestsPerRound: 10, revalidateAfter: .zero)
    defer { store.shutdown() }
    let menu = PlaylistItem(source: nginx.base + "/menu.jpg")
    let pinned = PlaylistItem(source: nginx.base + "/pinned.jpg", sha256: SHA256.hex(ofBytes: jpegBytes(5000, seed: 2)))
    _ = try openImage(store, menu).get()
    _ = try openImage(store, pinned).get()
    let before = try #require(store.currentFile(url: menu.source))
    let firstIdentity = try FileIdentity(path: before)
    #expect(cache.currentEntry(url: menu.source)?.validators?.etag != nil)

    let unchanged: ImageStore.Round = try waitFor { done in store.prefetch([menu, pinned]) { done($0) } }
    #expect(unchanged.revalidations == 1, "the pinned image is never asked about: \(unchanged)")
    let log = accessLog(nginx, atLeast: 3)
    #expect(log.last?.hasPrefix("GET /menu.jpg 304") == true, "\(log)")
    #expect(log.last?.contains("inm=\"") == true, "sent with the ETag: \(log)")
    #expect(try FileIdentity(path: try #require(store.currentFile(url: menu.source))).inode == firstIdentity.inode)

    // Replaced on the server (a new menu.jpg): the next round takes it.
    usleep(1_100_000)  // nginx's Last-Modified has whole seconds
    try nginx.put("menu.jpg", jpegBytes(6000, seed: 3))
    _ = try waitFor { done in store.prefetch([menu]) { done($0) } } as ImageStore.Round
    let deadline = ContinuousClock.now + .seconds(20)
    while store.currentFile(url: menu.source) == before, ContinuousClock.now < deadline { usleep(20_000) }
    let after = try #require(store.currentFile(url: menu.source))
    #expect(after != before)
    #expect(readFile(after) == jpegBytes(6000, seed: 3))
    #expect(accessLog(nginx, atLeast: 4).last?.hasPrefix("GET /menu.jpg 200") == true, "\(nginx.accessLog())")

    // Across a restart the validators are read back: the next ask is conditional again.
    let reopened = try DiskCache(.init(directory: cache.directory))
    #expect(reopened.currentEntry(url: menu.source)?.validators == cache.currentEntry(url: menu.source)?.validators)
}
