// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskContent
import KioskSystem

/// The disk cache's write cost with a full cache of N entries: every write evicts the least
/// recently used entry. Entries are 100 bytes in a directory under /dev/shm (tmpfs, so fsync
/// costs next to nothing and the figure is the cache's own work: the temporary file, the
/// rename, the index and the eviction). A write that sorted the whole index would grow with
/// N log N; one that takes the least recent entry from a heap grows with log N.
enum CacheWriteCase {
    /// `cache-write N WRITES`: fills a cache to N entries, then times WRITES more. Prints
    /// `<median µs per write> <entries after>`.
    static func run(entries: Int, writes: Int) -> Int32 {
        let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        var template = Array("\(base)/kiosk-bench-cache-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fputs("cache-write: mkdtemp failed\n", stderr); return 1 }
        let dir = String(cString: made)
        defer { removeTree(dir) }
        // Each entry gets its own last-use time: the clock moves 1 ms per call.
        final class Tick: @unchecked Sendable { var t: Duration = .seconds(1_700_000_000) }
        let tick = Tick()
        let body = [UInt8](repeating: 0x5A, count: 100)
        do {
            let cache = try DiskCache(.init(directory: dir, maxBytes: entries * body.count, now: {
                tick.t += .milliseconds(1); return tick.t
            }))
            for i in 0..<entries { try cache.store(url: "https://example.com/fill/\(i).jpg", bytes: body) }
            var times: [Double] = []
            for i in 0..<writes {
                let t0 = nowMs()
                try cache.store(url: "https://example.com/new/\(i).jpg", bytes: body)
                times.append((nowMs() - t0) * 1000)
            }
            guard cache.count == entries else {
                fputs("cache-write: \(cache.count) entries, not \(entries)\n", stderr); return 1
            }
            print("\(median(times)) \(cache.count)")
            return 0
        } catch {
            fputs("cache-write: \(error)\n", stderr)
            return 1
        }
    }

    private static func removeTree(_ dir: String) {
        if let entries = try? listDirectory(dir) {
            for e in entries { if let n = e.name, n != ".", n != ".." { unlink(dir + "/" + n) } }
        }
        rmdir(dir)
    }
}
