// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskContent
import KioskCore
import KioskSystem
import Testing

private func openCache(_ dir: String, maxBytes: Int = 500_000_000, maxAge: Duration = .seconds(7 * 86_400),
                       clock: TestClock) throws -> DiskCache {
    try DiskCache(.init(directory: dir, maxBytes: maxBytes, maxAge: maxAge, now: { clock.now }))
}

private func files(_ dir: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
}

@Test func theKeyIsTheSHA256OfTheWholeURL() {
    // echo -n "abc" | sha256sum
    #expect(SHA256.hex(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(DiskCache.key(for: "http://a/x.jpg?v=1") == SHA256.hex(of: "http://a/x.jpg?v=1"))
}

@Test func sameFileNameUnderOtherPathsOrQueriesGivesOtherEntries() throws {
    let dir = makeTempDirectory("cache")
    let clock = TestClock()
    let cache = try openCache(dir, clock: clock)
    let urls = ["http://a.example/one/photo.jpg", "http://a.example/two/photo.jpg",
                "http://a.example/one/photo.jpg?v=2", "http://b.example/one/photo.jpg"]
    for (i, url) in urls.enumerated() { try cache.store(url: url, bytes: jpegBytes(100 + i, seed: i)) }
    #expect(cache.count == 4)
    for (i, url) in urls.enumerated() {
        let entry = try #require(cache.entry(for: url))
        #expect(readFile(entry.path) == jpegBytes(100 + i, seed: i))
    }
    #expect(Set(files(dir).map { String($0.prefix(64)) }).count == 4)
}

@Test func anEntryIsCheckedBeforeUse() throws {
    let dir = makeTempDirectory("cache")
    let clock = TestClock()
    let cache = try openCache(dir, clock: clock)
    let body = jpegBytes(1000)
    let hash = SHA256.hex(ofBytes: body)
    let entry = try cache.store(url: "http://a/x.jpg", bytes: body)
    #expect(entry.path.hasSuffix(".1000"))
    #expect(cache.entry(for: "http://a/x.jpg", sha256: hash) != nil)
    // A different expected hash: the entry is deleted and reported as a miss.
    #expect(cache.entry(for: "http://a/x.jpg", sha256: String(repeating: "0", count: 64)) == nil)
    #expect(!FileManager.default.fileExists(atPath: entry.path))
    // A file whose length is not the recorded one: a miss, deleted.
    let e2 = try cache.store(url: "http://a/y.jpg", bytes: body)
    truncate(e2.path, 500)
    #expect(cache.entry(for: "http://a/y.jpg") == nil)
    #expect(!FileManager.default.fileExists(atPath: e2.path))
    #expect(cache.count == 0 && cache.totalBytes == 0)
    // A body that does not match the hash given at write time is never committed.
    let writer = try cache.makeWriter(url: "http://a/z.jpg")
    try body.withUnsafeBytes { raw in Result { () throws(ContentError) in try writer.append(raw) } }.get()
    #expect(throws: ContentError.self) { try writer.commit(expectedSHA256: String(repeating: "1", count: 64)) }
    #expect(cache.entry(for: "http://a/z.jpg") == nil)
    #expect(files(dir) == [])
}

@Test func evictionBySizeTakesTheLeastRecentlyUsed() throws {
    let dir = makeTempDirectory("cache")
    let clock = TestClock()
    let cache = try openCache(dir, maxBytes: 10_000, clock: clock)
    for name in ["a", "b", "c", "d"] {
        try cache.store(url: "http://x/\(name).jpg", bytes: jpegBytes(3000))
        clock.advance(.seconds(10))
    }
    // 4 x 3000 > 10000: a (oldest) went when d came.
    #expect(cache.entry(for: "http://x/a.jpg") == nil)
    #expect(cache.totalBytes == 9000)
    // Use b, so c is now the least recently used.
    clock.advance(.seconds(10))
    #expect(cache.entry(for: "http://x/b.jpg") != nil)
    clock.advance(.seconds(10))
    try cache.store(url: "http://x/e.jpg", bytes: jpegBytes(3000))
    #expect(cache.entry(for: "http://x/c.jpg") == nil)
    #expect(cache.entry(for: "http://x/b.jpg") != nil)
    #expect(cache.entry(for: "http://x/d.jpg") != nil)
    #expect(cache.entry(for: "http://x/e.jpg") != nil)
    #expect(cache.totalBytes == 9000)
    // Replacing an entry does not count the old version: no eviction needed.
    try cache.store(url: "http://x/e.jpg", bytes: jpegBytes(3500))
    #expect(cache.count == 3 && cache.totalBytes == 9500)
    #expect(files(dir).count == 3)
    // A body larger than the whole cache is refused.
    #expect(throws: ContentError.self) { try cache.store(url: "http://x/huge.jpg", bytes: jpegBytes(10_001)) }
    #expect(cache.count == 3)
}

@Test func entriesExpireSevenDaysAfterTheirLastUse() throws {
    let dir = makeTempDirectory("cache")
    let clock = TestClock()
    var cache = try openCache(dir, clock: clock)
    try cache.store(url: "http://x/used.jpg", bytes: jpegBytes(100))
    try cache.store(url: "http://x/unused.jpg", bytes: jpegBytes(100))
    clock.advance(.seconds(6 * 86_400))
    #expect(cache.entry(for: "http://x/used.jpg") != nil)  // used on day 6
    clock.advance(.seconds(86_400 + 1))                      // day 7 + 1 s
    #expect(cache.entry(for: "http://x/unused.jpg") == nil)
    #expect(cache.entry(for: "http://x/used.jpg") != nil)
    // The last use is the file's mtime, so it survives a reopen; expiry also runs at open.
    clock.advance(.seconds(7 * 86_400 + 1))
    cache = try openCache(dir, clock: clock)
    #expect(cache.count == 0)
    #expect(files(dir) == [])
}

@Test func theCacheSurvivesReopeningAndCleansCrashLeftovers() throws {
    let dir = makeTempDirectory("cache")
    let clock = TestClock()
    do {
        let cache = try openCache(dir, clock: clock)
        try cache.store(url: "http://x/a.jpg", bytes: jpegBytes(1234, seed: 1))
        try cache.store(url: "http://x/b.jpg", bytes: jpegBytes(4321, seed: 2))
    }
    // What a crash can leave: a temporary file, and a file whose size is not the one in its name.
    try writeFile(dir + "/.tmp-deadbeef-1-2", jpegBytes(77))
    try writeFile(dir + "/" + DiskCache.key(for: "http://x/torn.jpg") + ".5000", jpegBytes(10))
    let cache = try openCache(dir, clock: clock)
    #expect(cache.count == 2 && cache.totalBytes == 1234 + 4321)
    #expect(readFile(try #require(cache.entry(for: "http://x/a.jpg")).path) == jpegBytes(1234, seed: 1))
    #expect(readFile(try #require(cache.entry(for: "http://x/b.jpg")).path) == jpegBytes(4321, seed: 2))
    #expect(files(dir).count == 2)
}

@Test func theLastGoodManifestIsStoredAndSurvivesReopening() throws {
    let dir = makeTempDirectory("state") + "/nested/state"
    let store = try ManifestStore(directory: dir)
    #expect(try store.load() == nil)
    let first = StoredManifest(url: "http://x/show.json", body: Array(#"{"items":[]}"#.utf8),
                               validators: ManifestValidators(etag: "\"abc\"",
                                                              lastModified: "Sun, 06 Nov 1994 08:49:37 GMT"))
    try store.save(first)
    let second = StoredManifest(url: "http://x/show.json", body: [0xEF, 0xBB, 0xBF, 0x7B, 0x7D],
                                validators: ManifestValidators(etag: "W/\"2\""))
    try store.save(second)
    try writeFile(dir + "/.tmp-manifest.json-9-9", Array("{\"url\":".utf8))  // a crash's leftover
    let reopened = try ManifestStore(directory: dir)
    #expect(try reopened.load() == second)
    #expect(files(dir) == [ManifestStore.fileName])
}

/// A writer process (the project's own `CacheWriter`, in `kiosk-cache-writer`) killed with
/// SIGKILL at many points of a slow write: each time the entry is the old body or the new one,
/// whole, never a torn file; the reopened cache removes the temporary file.
@Test func aWriterKilledMidWriteLeavesTheOldEntryOrTheNewOne() throws {
    let dir = makeTempDirectory("cache")
    let url = "http://x/photo.jpg?size=large"
    let old = jpegBytes(200_000, seed: 1)
    try DiskCache(.init(directory: dir)).store(url: url, bytes: old)
    let helper = builtExecutable("kiosk-cache-writer")
    #expect(FileManager.default.isExecutableFile(atPath: helper), "\(helper)")
    var outcomes: [String: Int] = [:]
    for round in 0..<12 {
        let seed = 2 + round
        let p = Process()
        p.executableURL = URL(fileURLWithPath: helper)
        // 200000 bytes in 20 chunks of 10000, 5 ms apart: about 100 ms of writing, then the commit.
        p.arguments = [dir, url, "200000", String(seed), "10000", "5"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let started = try out.fileHandleForReading.read(upToCount: 7) ?? Data()
        #expect(String(decoding: started, as: UTF8.self) == "started")
        // Kill at 0 ms (mid-write) up to 150 ms (after the commit on an idle machine); the last
        // round after the helper says `committed`, so a loaded machine gets that case too.
        if round == 11 {
            var said = Data()
            while !String(decoding: said, as: UTF8.self).contains("committed"),
                  let more = try out.fileHandleForReading.read(upToCount: 64), !more.isEmpty { said += more }
        } else {
            usleep(UInt32(round * 15_000))
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal || p.terminationStatus == 0)
        let cache = try DiskCache(.init(directory: dir))
        let entry = try #require(cache.entry(for: url), "round \(round): entry lost")
        let body = try #require(readFile(entry.path))
        if body == old { outcomes["old", default: 0] += 1 }
        else if body == jpegBytes(200_000, seed: seed) { outcomes["new", default: 0] += 1 }
        else { Issue.record("round \(round): torn entry of \(body.count) bytes") }
        #expect(files(dir).count == 1, "round \(round): \(files(dir))")
        #expect(!files(dir).contains { $0.hasPrefix(".tmp-") })
        // Put the old body back for the next round.
        try cache.store(url: url, bytes: old)
    }
    // Both kinds happened: killed during the write, and after the commit.
    #expect(outcomes["old", default: 0] > 0)
    #expect(outcomes["new", default: 0] > 0, "\(outcomes)")
}

/// Eviction takes the least recently used entry through many writes and hits (the order is
/// kept in a heap, not by sorting the index): the entries left are those a model LRU keeps.
@Test func evictionFollowsAModelLRUThroughManyWritesAndHits() throws {
    let dir = makeTempDirectory("cache-lru")
    let clock = TestClock()
    let cache = try openCache(dir, maxBytes: 40 * 100, clock: clock)
    var model: [String: Duration] = [:]   // url -> last use
    var rng = SplitMix64(seed: 7)
    for step in 0..<1500 {
        clock.advance(.milliseconds(1))
        let url = "http://x/\(rng.next() % 90).jpg"
        if rng.next() % 3 == 0 {
            let hit = cache.entry(for: url) != nil
            #expect(hit == (model[url] != nil), "step \(step) \(url)")
            if hit { model[url] = clock.now }
        } else {
            try cache.store(url: url, bytes: [UInt8](repeating: 1, count: 100))
            model[url] = clock.now
            while model.count > 40, let oldest = model.filter({ $0.key != url }).min(by: { $0.value < $1.value }) {
                model[oldest.key] = nil
            }
        }
    }
    #expect(cache.count == model.count)
    for url in model.keys { #expect(cache.entry(for: url) != nil, "\(url)") }
}


/// A manifest at the fetcher's 8 MiB cap is stored in base64 (about 11 MB on disk) and read
/// back whole at the next start: the offline-first start never loses a manifest it accepted.
@Test func aManifestAtTheCapIsReadBackAfterARestart() throws {
    let dir = makeTempDirectory("state-cap")
    let body = Array(repeating: UInt8(ascii: " "), count: 8 << 20)
    try ManifestStore(directory: dir).save(StoredManifest(url: "http://x/show.json", body: body,
                                                          validators: ManifestValidators(etag: "\"big\"")))
    let stored = try ManifestStore(directory: dir).load()
    #expect(stored?.body.count == 8 << 20)
    #expect(stored?.etag == "\"big\"")
}

/// An entry's validators are kept beside it and read back at the next open; a body that is
/// the one already cached keeps its file (a reader sees no change); a new body drops the old
/// validators before it is renamed in; a validators file without its entry is removed.
@Test func validatorsAreKeptBesideTheirEntryAndTheSameBodyKeepsItsFile() throws {
    let dir = makeTempDirectory("cache-validators")
    let cache = try DiskCache(.init(directory: dir))
    let url = "http://x/menu.jpg"
    let v1 = ManifestValidators(etag: "\"abc\"", lastModified: "Tue, 01 Jul 2025 10:00:00 GMT")
    let writer = try cache.makeWriter(url: url)
    try jpegBytes(1000).withUnsafeBytes { try writer.append($0) }
    let first = try writer.commit(validators: v1)
    #expect(!writer.keptEarlierFile && first.validators == v1)
    let key = DiskCache.key(for: url)
    #expect(FileManager.default.fileExists(atPath: dir + "/" + key + ".validators"))
    #expect(try DiskCache(.init(directory: dir)).currentEntry(url: url)?.validators == v1)

    // The same bytes again (a server without validators, or one that sent them anyway).
    let inode = try FileIdentity(path: first.path).inode
    let again = try cache.makeWriter(url: url)
    try jpegBytes(1000).withUnsafeBytes { try again.append($0) }
    let kept = try again.commit(validators: ManifestValidators(etag: "\"abd\""))
    let keptInode = try FileIdentity(path: kept.path).inode
    #expect(again.keptEarlierFile && kept.path == first.path && keptInode == inode)
    #expect(cache.currentEntry(url: url)?.validators?.etag == "\"abd\"")

    // A new body without validators: none are kept for it.
    let other = try cache.makeWriter(url: url)
    try jpegBytes(1000, seed: 9).withUnsafeBytes { try other.append($0) }
    let replaced = try other.commit()
    #expect(!other.keptEarlierFile && replaced.validators == nil)
    #expect(!FileManager.default.fileExists(atPath: dir + "/" + key + ".validators"))
    let replacedInode = try FileIdentity(path: replaced.path).inode
    #expect(replacedInode != inode)

    // An orphan, and one of another length, are removed at open.
    let orphan = String(repeating: "a", count: 64) + ".validators"
    try writeFile(dir + "/" + orphan, Array(#"{"length":5,"etag":"\"x\""}"#.utf8))
    try writeFile(dir + "/" + key + ".validators", Array(#"{"length":7,"etag":"\"x\""}"#.utf8))
    let reopened = try DiskCache(.init(directory: dir))
    #expect(reopened.currentEntry(url: url)?.validators == nil)
    #expect(!FileManager.default.fileExists(atPath: dir + "/" + orphan))
    #expect(!FileManager.default.fileExists(atPath: dir + "/" + key + ".validators"))
}

/// A stored manifest that is corrupt says what is wrong in words, with its path, never Swift's
/// `DecodingError` dump (coding keys, contexts).
@Test func aCorruptStoredManifestSaysWhatIsWrongInWords() throws {
    let dir = makeTempDirectory("state-corrupt")
    let store = try ManifestStore(directory: dir)
    let path = dir + "/" + ManifestStore.fileName
    let cases: [(String, String)] = [
        ("{\"url\":\"http://x/s", "not valid JSON (a truncated or overwritten file?)"),
        ("{\"url\":\"http://x/show.json\"}", "no \"body\" field"),
        ("{\"url\":7,\"body\":\"\"}", "field \"url\" is not text"),
        ("{\"url\":\"http://x/show.json\",\"body\":\"%%%\"}", "field \"body\" is not valid (expected base64)"),
    ]
    for (content, words) in cases {
        try writeFile(path, Array(content.utf8))
        do {
            _ = try store.load()
            Issue.record("\(content) loaded")
        } catch {
            let text = error.description
            #expect(text == "\(path): stored manifest: \(words); the next manifest fetched replaces it", "\(text)")
            #expect(!text.contains("DecodingError") && !text.contains("Context") && !text.contains("CodingKeys"))
        }
    }
}
