// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskContent
import KioskCore
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
    let store = ImageStore(cache: try DiskCache(.init(directory: makeTempDirectory("store-failures"))))
    defer { store.shutdown() }
    let item = PlaylistItem(source: faults.base + "/status/503")
    store.prefetch([item])
    var first: Result<ImageStore.OpenImage, ContentError>? = nil
    for _ in 0..<100 where first == nil {
        usleep(50_000)
        let answer = try openImage(store, item)
        if case .failure(.httpStatus(_, 503, _, _)) = answer { first = answer }
    }
    #expect(first != nil)
    for _ in 0..<3 {
        let again = try openImage(store, item)
        #expect(again.failureKind == first?.failureKind)
    }
    #expect(try faults.stats().count["/status/503"] == 1, "one request for a prefetch and four asks")
    store.forgetFailures()
    _ = try openImage(store, item)
    #expect(try faults.stats().count["/status/503"] == 2)
}
