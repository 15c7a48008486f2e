// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
@testable import KioskContent
import Testing

/// From a break-it run: what a hostile file system or server must not do.

@Test func aPlaylistThatIsAFIFOOrTooLargeIsRefusedAtOnce() throws {
    let dir = makeTempDirectory("harden")
    let fifo = dir + "/p.json"
    #expect(mkfifo(fifo, 0o600) == 0)
    let start = ContinuousClock.now
    #expect(throws: ContentError.self) { _ = try Manifest.load(path: fifo) }   // no writer: must not wait
    #expect(ContinuousClock.now - start < .seconds(1))
    let big = dir + "/big.json"
    let fd = open(big, O_WRONLY | O_CREAT, 0o600)
    #expect(ftruncate(fd, 9 << 20) == 0)   // 9 MiB, sparse: over the 8 MiB cap
    close(fd)
    #expect(throws: ContentError.self) { _ = try Manifest.load(path: big) }
}

@Test func aCacheEntryThatIsASymlinkIsNotFollowed() throws {
    let dir = makeTempDirectory("harden-cache")
    let outside = makeTempDirectory("harden-outside") + "/secret.jpg"
    let body = jpegBytes(100)
    try writeFile(outside, body)
    let url = "http://example.invalid/a.jpg"
    symlink(outside, dir + "/\(DiskCache.key(for: url)).\(body.count)")
    let cache = try DiskCache(.init(directory: dir))
    #expect(cache.entry(for: url) == nil)
    #expect(access(outside, F_OK) == 0)   // the target is left alone
}

/// A hard link and a symbolic link within the folder dropped into a watched directory are
/// listed; a symbolic link leading out of it is not (docs/security.md, "What reaches the log").
@Test func linksDroppedIntoAWatchedDirectoryAreListedUnlessTheyLeadOut() throws {
    let dir = makeTempDirectory("harden-watch")
    let outside = makeTempDirectory("harden-watch-src")
    try writeFile(outside + "/x.jpg", jpegBytes(10))
    try writeFile(outside + "/y.jpg", jpegBytes(10))
    try writeFile(dir + "/z.jpg", jpegBytes(10))
    let watch = try DirectoryWatch(path: dir, debounce: .milliseconds(100))
    defer { watch.stop() }
    symlink(outside + "/x.jpg", dir + "/a.jpg")
    link(outside + "/y.jpg", dir + "/b.jpg")
    symlink("z.jpg", dir + "/c.jpg")
    var last: [String] = []
    let end = ContinuousClock.now + .seconds(3)
    while ContinuousClock.now < end, last.count < 3 {
        if let list = watch.changes.wait(timeout: .milliseconds(200)).last {
            last = list.map { String($0.split(separator: "/").last!) }
        }
    }
    #expect(last == ["b.jpg", "c.jpg", "z.jpg"])
}

@Test func aFullFileSystemMakesRoomFromTheLeastRecentlyUsedEntries() throws {
    let clock = TestClock()
    let cache = try DiskCache(.init(directory: makeTempDirectory("harden-full"), now: { clock.now }))
    for (i, name) in ["a", "b", "c"].enumerated() {
        clock.advance(.seconds(10))
        _ = try cache.store(url: "http://x.invalid/\(name).jpg", bytes: jpegBytes(1000, seed: i))
    }
    // ENOSPC while writing c's new version: a (oldest) goes first, c itself is kept.
    #expect(cache.makeRoom(bytes: 1000, keeping: DiskCache.key(for: "http://x.invalid/c.jpg")))
    #expect(cache.entry(for: "http://x.invalid/a.jpg") == nil)
    #expect(cache.entry(for: "http://x.invalid/b.jpg") != nil)
    #expect(cache.entry(for: "http://x.invalid/c.jpg") != nil)
    #expect(cache.makeRoom(bytes: 1_000_000, keeping: DiskCache.key(for: "http://x.invalid/c.jpg")))
    #expect(!cache.makeRoom(bytes: 1, keeping: DiskCache.key(for: "http://x.invalid/c.jpg")))   // nothing left but c
}
