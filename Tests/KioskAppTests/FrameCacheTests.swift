// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskImaging
import KioskSystem
@testable import KioskApp

@Test func theFrameCacheDropsTheLeastRecentlyUsedBeyondItsBudget() {
    // 10x10 frames are 400 bytes; a 1000-byte budget holds two.
    var cache = FrameCache(budget: 1000)
    let a = Bitmap(width: 10, height: 10), b = Bitmap(width: 10, height: 10), c = Bitmap(width: 10, height: 10)
    cache.insert(a, for: .init(source: "a", fit: .fit))
    cache.insert(b, for: .init(source: "b", fit: .fit))
    #expect(cache.frame(for: .init(source: "a", fit: .fit)) === a)   // a is now the most recent
    cache.insert(c, for: .init(source: "c", fit: .fit))              // b goes
    #expect(cache.frame(for: .init(source: "b", fit: .fit)) == nil)
    #expect(cache.frame(for: .init(source: "a", fit: .fit)) === a)
    #expect(cache.frame(for: .init(source: "c", fit: .fit)) === c)
    #expect(cache.bytes == 800 && cache.count == 2)
    // Another fit of the same source is another frame.
    #expect(cache.frame(for: .init(source: "a", fit: .fill)) == nil)
    // Larger than the whole budget: not kept, nothing else lost.
    cache.insert(Bitmap(width: 20, height: 20), for: .init(source: "big", fit: .fit))
    #expect(cache.count == 2 && cache.bytes == 800)
    cache.remove(source: "a")
    #expect(cache.count == 1 && cache.bytes == 400)
}

@Test func aPreparedFrameComesBackFromMemoryWithoutDecodingAgain() throws {
    let path = NSTemporaryDirectory() + "kc-framecache-\(getpid()).png"
    defer { unlink(path) }
    try PNGWriter.write(Bitmap(width: 40, height: 30, fill: 0xFF11_2233), to: path)
    let preparer = try SlotPreparer(width: 64, height: 48, fit: .fill, background: .black, maxPixels: 1 << 20)
    guard case .frame(let first) = preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path)).outcome else {
        Issue.record("first prepare failed"); return
    }
    // The very same frame object: taken from memory, not decoded into a new one.
    guard case .frame(let again) = preparer.prepare(.init(slot: 1, ticket: 2, item: 0, path: path)).outcome else {
        Issue.record("second prepare failed"); return
    }
    #expect(again === first)
    #expect(preparer.memoryCacheUsage.frames == 1 && preparer.memoryCacheUsage.bytes == 64 * 48 * 4)
    // Another fit is another frame.
    guard case .frame(let fitted) = preparer.prepare(.init(slot: 2, ticket: 3, item: 0, path: path, fit: .fit))
        .outcome else {
        Issue.record("fit prepare failed"); return
    }
    #expect(fitted !== first)
    // The file rewritten in place (another size, another time): decoded again, new pixels.
    usleep(10_000)
    try PNGWriter.write(Bitmap(width: 48, height: 30, fill: 0xFF44_5566), to: path)
    guard case .frame(let rewritten) = preparer.prepare(.init(slot: 0, ticket: 4, item: 0, path: path)).outcome else {
        Issue.record("prepare after the rewrite failed"); return
    }
    #expect(rewritten !== first)
    #expect(rewritten[10, 10] == 0xFF44_5566)
    preparer.forgetFrames()
    #expect(preparer.memoryCacheUsage.frames == 0)
}

/// The first image warmed while the program starts: decoded into the memory cache with no
/// result posted, then the carousel's job for it is answered with that very frame.
@Test func aWarmedFirstImageAnswersTheFirstJobFromMemory() throws {
    let path = NSTemporaryDirectory() + "kc-framecache-warm-\(getpid()).png"
    defer { unlink(path) }
    try PNGWriter.write(Bitmap(width: 40, height: 30, fill: 0xFF11_2233), to: path)
    let preparer = try SlotPreparer(width: 64, height: 48, fit: .fill, background: .black, maxPixels: 1 << 20)
    preparer.warm(.init(slot: 0, ticket: 0, item: 0, path: path))
    for _ in 0..<1000 where preparer.memoryCacheUsage.frames == 0 { usleep(10_000) }
    #expect(preparer.memoryCacheUsage.frames == 1)
    #expect(preparer.outstanding == 0 && preparer.takeResults().isEmpty)
    guard case .frame(let cached) = preparer.prepare(.init(slot: 2, ticket: 9, item: 0, path: path)).outcome else {
        Issue.record("prepare failed"); return
    }
    preparer.submit(.init(slot: 0, ticket: 1, item: 0, path: path))
    let results = preparer.waitForResults()
    guard results.count == 1, case .frame(let first) = results[0].outcome else {
        Issue.record("the first job gave \(results.map(\.outcome))"); return
    }
    #expect(first === cached && results[0].ticket == 1)
    #expect(first[10, 10] == 0xFF11_2233)
}

/// The memory cache never serves an old picture for a new file: a file replaced under its name
/// by another of the same size and the same modification time (renamed over, or copied over
/// with `cp -p`, which keeps the time) is decoded again; the frame it gave carries the identity
/// it was read with.
@Test func aFileReplacedWithTheSameSizeAndTimeIsNotServedFromMemory() throws {
    let dir = NSTemporaryDirectory() + "kc-framecache-same-\(getpid())"
    mkdir(dir, 0o755)
    let path = dir + "/menu.png"
    defer { unlink(path); unlink(path + ".tmp"); rmdir(dir) }
    try PNGWriter.write(Bitmap(width: 40, height: 30, fill: 0xFFDC_2828), to: path, compressionLevel: 0)
    var original = stat()
    stat(path, &original)
    let preparer = try SlotPreparer(width: 64, height: 48, fit: .fill, background: .black, maxPixels: 1 << 20)
    let first = preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path))
    guard case .frame(let red) = first.outcome else { Issue.record("first prepare failed"); return }
    #expect(red[10, 10] == 0xFFDC_2828)
    #expect(first.identity == FileIdentity(original))

    /// Sets `path`'s access and modification times back to the original's.
    func keepTime(_ path: String) {
        var times = [original.st_atim, original.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }
    // Rewritten in place (the same inode), same size, time put back (what `cp -p` leaves).
    try PNGWriter.write(Bitmap(width: 40, height: 30, fill: 0xFF28_3CDC), to: path + ".tmp", compressionLevel: 0)
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path + ".tmp")))
    let fd = open(path, O_WRONLY | O_TRUNC)
    #expect(fd >= 0 && bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
    close(fd)
    keepTime(path)
    var now = stat()
    stat(path, &now)
    #expect(now.st_size == original.st_size && now.st_mtim.tv_nsec == original.st_mtim.tv_nsec
            && now.st_mtim.tv_sec == original.st_mtim.tv_sec && now.st_ino == original.st_ino)
    guard case .frame(let blue) = preparer.prepare(.init(slot: 1, ticket: 2, item: 0, path: path)).outcome else {
        Issue.record("prepare after the rewrite failed"); return
    }
    #expect(blue !== red && blue[10, 10] == 0xFF28_3CDC)
    // Renamed over by a file of the same size and time (another inode).
    try PNGWriter.write(Bitmap(width: 40, height: 30, fill: 0xFF28_C83C), to: path + ".tmp", compressionLevel: 0)
    keepTime(path + ".tmp")
    #expect(rename(path + ".tmp", path) == 0)
    guard case .frame(let green) = preparer.prepare(.init(slot: 2, ticket: 3, item: 0, path: path)).outcome else {
        Issue.record("prepare after the rename failed"); return
    }
    #expect(green[10, 10] == 0xFF28_C83C)
}
