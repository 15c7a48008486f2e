// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import KioskCore
import KioskSystem

/// A disk cache of downloaded image files (docs/content.md), bounded in bytes, least recently used
/// evicted on write, entries expiring some time after their last use.
///
/// Layout: one file per entry, named `KEY.LENGTH` in ``Configuration/directory``, where KEY is
/// ``key(for:)`` (SHA-256 of the full URL, query included, 64 hex digits) and LENGTH the body's
/// length in bytes as decimal, so a file whose size is not in its name is known to be bad. The
/// file's modification time is its last use (set with `futimens(2)` on every hit and write, from
/// ``Configuration/now``). Every entry is written with the temp file + `fsync` + `rename` +
/// directory `fsync` protocol (``AtomicFile``): a crash leaves the old entry or the new one.
/// Temporary files left by a crash are deleted at open.
///
/// Beside an entry, `KEY.validators` keeps the `ETag` and `Last-Modified` its body came with
/// (JSON: `{"length","etag","lastModified"}`), for revalidating it with a conditional GET
/// (RFC 9110 section 13.1, RFC 9111 section 4.3); its mtime is when the entry was last
/// written or confirmed (``Entry/validated``). It is removed before a new body is renamed in
/// and written after, so a crash leaves an entry without validators (asked for again
/// unconditionally), never the validators of another body.
///
/// Thread-safe: calls are serialized by a lock, and do file I/O: call them off the frame loop
/// (the ``Fetcher`` does).
public final class DiskCache: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The cache directory (created with its parents if missing).
        public var directory: String
        /// The most bytes the entries may take together (file sizes, not blocks); default 500 MB.
        public var maxBytes: Int
        /// An entry unused for longer than this is deleted; default 7 days.
        public var maxAge: Duration
        /// The wall clock, as a `Duration` since the Unix epoch; tests pass their own.
        public var now: @Sendable () -> Duration

        public init(directory: String, maxBytes: Int = 500_000_000, maxAge: Duration = .seconds(7 * 86_400),
                    now: @escaping @Sendable () -> Duration = { wallClockNow() }) {
            self.directory = directory; self.maxBytes = maxBytes; self.maxAge = maxAge; self.now = now
        }
    }

    /// One cached file.
    public struct Entry: Equatable, Sendable {
        /// SHA-256 of the URL, 64 hex digits.
        public var key: String
        /// The file's path, to be decoded (it may be evicted later: open it before the next
        /// call that writes to the cache, or look it up again).
        public var path: String
        /// Body length in bytes.
        public var length: Int
        /// Last use, as a `Duration` since the Unix epoch (the file's mtime).
        public var lastUse: Duration
        /// The `ETag` and `Last-Modified` the body came with, if the server sent either.
        public var validators: ManifestValidators?
        /// When the body was last written or confirmed unchanged by the server (a 304), as a
        /// `Duration` since the Unix epoch; `.zero` when not known.
        public var validated: Duration = .zero
    }

    /// What `KEY.validators` holds.
    private struct StoredValidators: Codable {
        var length: Int
        var etag: String?
        var lastModified: String?
    }

    public let configuration: Configuration
    /// Held for the index, `verified`, `total` and `byLastUse` (the state lives beside it).
    // Not Locked(()): ThreadSanitizer took the accesses to an empty value for accesses to the
    // lock object's header (its generic metadata read without the lock) and reported a race.
    private let lock = Locked(0)
    private var index: [String: Entry] = [:]
    /// Keys whose file's SHA-256 has been checked against this hash since it was written.
    private var verified: [String: String] = [:]
    private var total = 0
    /// The entries by last use, least recent first, for eviction in O(log n) per entry instead
    /// of sorting the whole index on every write. A node is pushed whenever an entry's last use
    /// is set; nodes whose time no longer matches their entry (used again since, or removed)
    /// are skipped when they come up, and the heap is rebuilt from the index when such nodes
    /// outnumber the entries.
    private var byLastUse = MinHeap<UseNode>()

    /// One entry's last use in ``byLastUse``.
    private struct UseNode: Comparable, Sendable {
        var lastUse: Duration
        var key: String
        static func < (a: UseNode, b: UseNode) -> Bool { (a.lastUse, a.key) < (b.lastUse, b.key) }
    }

    /// Opens (creating if needed) the cache directory: deletes leftover temporary files, indexes
    /// the entries (deleting files whose size is not the length in their name), then deletes
    /// expired entries and evicts down to ``Configuration/maxBytes``.
    /// Throws ``ContentError/system(_:)`` when the directory cannot be created or read.
    public init(_ configuration: Configuration) throws(ContentError) {
        self.configuration = configuration
        do { try AtomicFile.makeDirectories(configuration.directory) } catch { throw .system(error) }
        AtomicFile.removeTemporaryFiles(in: configuration.directory)
        let entries: [DirectoryEntry]
        do { entries = try listDirectory(configuration.directory) } catch { throw .system(error) }
        var sidecars: [String] = []
        for item in entries {
            guard let name = item.name, !item.isDirectory else { continue }
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 2, parts[0].utf8.count == 64, parts[1] == Self.validatorsSuffix {
                sidecars.append(String(parts[0]))
                continue
            }
            guard parts.count == 2, parts[0].utf8.count == 64, let length = Int(parts[1]) else { continue }
            let path = directory + "/" + name
            // a symlink is never followed out of the cache
            guard let st = try? fileStatus(path, followLinks: false) else { continue }
            guard (st.st_mode & S_IFMT) == S_IFREG, Int(st.st_size) == length else {
                unlink(path)  // torn, tampered with, or a link: not an entry
                continue
            }
            let entry = Entry(key: String(parts[0]), path: path, length: length, lastUse: st.st_mtim.duration)
            if let other = index[entry.key] {
                // A crash between the rename of a new version and the unlink of the old one:
                // both are whole files; keep the newer.
                let (keep, drop) = other.lastUse >= entry.lastUse ? (other, entry) : (entry, other)
                unlink(drop.path)
                total -= other.length
                index[entry.key] = keep
                total += keep.length
            } else {
                index[entry.key] = entry
                total += length
            }
        }
        for key in sidecars {
            let path = configuration.directory + "/" + key + "." + Self.validatorsSuffix
            guard let entry = index[key], let st = try? fileStatus(path, followLinks: false),
                  st.st_mode & S_IFMT == S_IFREG,
                  let bytes = try? AtomicFile.read(path, limit: 64 << 10),
                  let stored = try? JSONDecoder().decode(StoredValidators.self, from: Data(bytes)),
                  stored.length == entry.length
            else {
                unlink(path)  // no entry, or one of another body: never sent for this one
                continue
            }
            index[key]?.validators = ManifestValidators(etag: stored.etag, lastModified: stored.lastModified)
            index[key]?.validated = st.st_mtim.duration
        }
        lock.withLock { _ in
            byLastUse = MinHeap(index.values.map { UseNode(lastUse: $0.lastUse, key: $0.key) })
            removeExpiredLocked()
            evictLocked(toFit: 0, keeping: nil)
        }
    }

    /// The cache directory.
    public var directory: String { configuration.directory }

    /// The key of a URL: SHA-256 of its full text (query included), 64 lowercase hex digits.
    public static func key(for url: String) -> String { SHA256.hex(of: url) }

    /// The suffix of an entry's validators file, `KEY.validators`.
    static let validatorsSuffix = "validators"

    /// The entry for `url` as indexed, without looking at its file or counting a use (for a
    /// quick "is this still the file I read?" check); nil when there is none.
    public func currentEntry(url: String) -> Entry? {
        let key = Self.key(for: url)
        return lock.withLock { _ in index[key] }
    }

    /// The server confirmed the entry for `url` unchanged (a 304): ``Entry/validated`` is now.
    public func noteValidated(url: String) {
        let key = Self.key(for: url)
        let now = configuration.now()
        lock.withLock { _ in
            guard index[key] != nil else { return }
            index[key]?.validated = now
            let path = directory + "/" + key + "." + Self.validatorsSuffix
            if let fd = try? FileDescriptor.open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK) {
                try? AtomicFile.setModificationTime(fd.rawValue, path: path, now)
                fd.close()
            }
        }
    }

    /// Total bytes of the entries.
    public var totalBytes: Int { lock.withLock { _ in total } }

    /// Number of entries.
    public var count: Int { lock.withLock { _ in index.count } }

    /// The entry for `url`, checked before use: the file must exist with the recorded length,
    /// be unexpired, and (when `sha256` is given) have that SHA-256. A bad or expired entry is
    /// deleted and reported as a miss (nil). A hit becomes the most recently used (mtime set to
    /// now).
    public func entry(for url: String, sha256: String? = nil) -> Entry? {
        let key = Self.key(for: url)
        return lock.withLock { _ -> Entry? in
            guard var entry = index[key] else { return nil }
            let now = configuration.now()
            if now - entry.lastUse > configuration.maxAge {
                removeLocked(key)
                return nil
            }
            guard let fd = try? FileDescriptor.open(entry.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK),
                  let st = try? fd.status(), (st.st_mode & S_IFMT) == S_IFREG, Int(st.st_size) == entry.length else {
                removeLocked(key); return nil
            }
            if let expected = sha256?.lowercased(), verified[key] != expected {
                guard let actual = Self.hashFile(fd), actual == expected else { removeLocked(key); return nil }
                verified[key] = expected
            }
            try? AtomicFile.setModificationTime(fd.rawValue, path: entry.path, now)
            entry.lastUse = now
            index[key] = entry
            noteUseLocked(entry)
            return entry
        }
    }

    /// Stores `bytes` as the entry for `url` (replacing any older one), evicting least recently
    /// used entries first so that the total stays within ``Configuration/maxBytes``.
    /// Throws ``ContentError/system(_:)`` on an I/O failure (the old entry, if any, stays), or
    /// ``ContentError/bodyTooLarge(url:limit:declaredBytes:receivedBytes:)`` when the body alone
    /// is over the cache's size.
    @discardableResult
    public func store(url: String, bytes: [UInt8]) throws(ContentError) -> Entry {
        let writer = try makeWriter(url: url)
        try bytes.withUnsafeBytes { b in Result { () throws(ContentError) in try writer.append(b) } }.get()
        return try writer.commit()
    }

    /// Starts a streamed write of the entry for `url`: append the body as it arrives, then
    /// ``CacheWriter/commit(expectedSHA256:)`` or ``CacheWriter/abort()``. Nothing is visible
    /// under the entry's name until the commit.
    public func makeWriter(url: String) throws(ContentError) -> CacheWriter {
        let key = Self.key(for: url)
        let fd: FileDescriptor
        do {
            fd = try AtomicFile.createTemporary(in: directory, tag: String(key.prefix(16)))
        } catch { throw .system(error) }
        return CacheWriter(cache: self, url: url, key: key, fd: fd)
    }

    /// Deletes the entry for `url`, if any.
    public func remove(url: String) {
        let key = Self.key(for: url)
        lock.withLock { _ in removeLocked(key) }
    }

    /// Deletes every entry unused for longer than ``Configuration/maxAge``; returns how many.
    @discardableResult
    public func removeExpired() -> Int { lock.withLock { _ in removeExpiredLocked() } }

    // MARK: - Internals

    /// Makes the writer's file the entry. A body with the same bytes as the entry already there
    /// (same length and SHA-256: a server that sent it again) leaves that file in place, only
    /// its validators renewed, so a reader sees no change (``CacheWriter/keptEarlierFile``).
    fileprivate func commit(_ writer: CacheWriter, validators: ManifestValidators?) throws(ContentError) -> Entry {
        let length = writer.bytesWritten
        guard length <= configuration.maxBytes else {
            throw .bodyTooLarge(url: writer.url, limit: configuration.maxBytes, declaredBytes: nil,
                                receivedBytes: length)
        }
        let now = configuration.now()
        let sidecar = writer.key + "." + Self.validatorsSuffix
        let sidecarBytes: [UInt8]? = validators.flatMap { v in
            guard v.etag != nil || v.lastModified != nil else { return nil }
            return try? Array(JSONEncoder().encode(StoredValidators(length: length, etag: v.etag,
                                                                    lastModified: v.lastModified)))
        }
        if let same = sameEntry(writer) {
            writer.fd.close()
            unlink(writer.fd.path)
            lock.withLock { _ in removeSidecarLocked(writer.key) }
            if let sidecarBytes {
                try? AtomicFile.write(sidecarBytes, directory: directory, name: sidecar, modified: now)
            }
            if let fd = try? FileDescriptor.open(same.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) {
                try? AtomicFile.setModificationTime(fd.rawValue, path: same.path, now)  // a use, as a write is
                fd.close()
            }
            return lock.withLock { _ in
                guard var entry = index[writer.key] else { return same }
                entry.validators = sidecarBytes == nil ? nil : validators
                entry.validated = now
                entry.lastUse = now
                index[writer.key] = entry
                noteUseLocked(entry)
                return entry
            }
        }
        do {
            try AtomicFile.setModificationTime(writer.fd.rawValue, path: writer.fd.path, now)
            try AtomicFile.sync(writer.fd)
        } catch { throw .system(error) }
        writer.fd.close()
        let path = directory + "/" + writer.key + "." + String(length)
        var entry = try lock.withLock { (_) throws(ContentError) -> Entry in
            evictLocked(toFit: length, keeping: writer.key)
            removeSidecarLocked(writer.key)
            do throws(SystemError) {
                try AtomicFile.commit(temporary: writer.fd.path, to: path, directory: directory)
            } catch { throw .system(error) }
            if let old = index[writer.key] {
                total -= old.length
                if old.path != path {
                    unlink(old.path)
                    try? AtomicFile.syncDirectory(directory)
                }
            }
            let entry = Entry(key: writer.key, path: path, length: length, lastUse: now, validated: now)
            index[writer.key] = entry
            noteUseLocked(entry)
            verified[writer.key] = writer.sha256
            total += length
            return entry
        }
        writer.keptEarlierFile = false
        if let sidecarBytes,
           (try? AtomicFile.write(sidecarBytes, directory: directory, name: sidecar, modified: now)) != nil {
            entry.validators = validators
            lock.withLock { _ in if index[writer.key]?.path == path { index[writer.key]?.validators = validators } }
        }
        return entry
    }

    /// The entry already there when it holds the writer's bytes (same length and SHA-256; the
    /// old file is hashed when its hash is not known), else nil.
    private func sameEntry(_ writer: CacheWriter) -> Entry? {
        let known: (entry: Entry, hash: String?)? = lock.withLock { _ in
            guard let old = index[writer.key], old.length == writer.bytesWritten else { return nil }
            return (old, verified[writer.key])
        }
        guard let known else { return nil }
        var hash = known.hash
        if hash == nil, let fd = try? FileDescriptor.open(known.entry.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) {
            hash = Self.hashFile(fd)
            fd.close()
        }
        guard hash == writer.sha256 else { return nil }
        writer.keptEarlierFile = true
        return lock.withLock { _ in index[writer.key]?.path == known.entry.path ? known.entry : nil }
    }

    private func removeSidecarLocked(_ key: String) {
        if unlink(directory + "/" + key + "." + Self.validatorsSuffix) == 0 { index[key]?.validators = nil }
    }

    private func removeLocked(_ key: String) {
        guard let entry = index.removeValue(forKey: key) else { return }
        verified[key] = nil
        unlink(entry.path)
        if entry.validators != nil { unlink(directory + "/" + key + "." + Self.validatorsSuffix) }
        total -= entry.length
    }

    @discardableResult
    private func removeExpiredLocked() -> Int {
        let now = configuration.now()
        let expired = index.values.filter { now - $0.lastUse > configuration.maxAge }
        for entry in expired { removeLocked(entry.key) }
        return expired.count
    }

    /// The file system is full: deletes least recently used entries (never `keeping`) until
    /// `bytes` have been freed; false when there was nothing left to delete.
    func makeRoom(bytes: Int, keeping: String?) -> Bool {
        lock.withLock { _ in
            var freed = 0
            while freed < bytes, let entry = popLeastRecentLocked(keeping: keeping) {
                removeLocked(entry.key)
                freed += entry.length
            }
            return freed > 0
        }
    }

    /// Deletes least recently used entries (never `keeping`) until `incoming` more bytes fit:
    /// O(log n) per entry deleted.
    private func evictLocked(toFit incoming: Int, keeping: String?) {
        let replaced = keeping.flatMap { index[$0]?.length } ?? 0
        while total - replaced + incoming > configuration.maxBytes, let entry = popLeastRecentLocked(keeping: keeping) {
            removeLocked(entry.key)
        }
    }

    /// An entry's last use was set: its node goes into the heap (the old node becomes stale).
    private func noteUseLocked(_ entry: Entry) {
        byLastUse.push(UseNode(lastUse: entry.lastUse, key: entry.key))
        if byLastUse.count > 2 * index.count + 64 {
            byLastUse = MinHeap(index.values.map { UseNode(lastUse: $0.lastUse, key: $0.key) })
        }
    }

    /// Takes the least recently used entry other than `keeping` off the heap (stale nodes are
    /// dropped on the way; `keeping`'s node is put back); nil when there is none.
    private func popLeastRecentLocked(keeping: String?) -> Entry? {
        var kept: UseNode?
        defer { if let kept { byLastUse.push(kept) } }
        while let node = byLastUse.pop() {
            guard let entry = index[node.key], entry.lastUse == node.lastUse else { continue }
            if node.key == keeping { kept = node; continue }
            return entry
        }
        return nil
    }

    /// The SHA-256 of the file's bytes (64 hex digits), nil when reading fails.
    private static func hashFile(_ fd: FileDescriptor) -> String? {
        let hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var offset = 0
        while true {
            guard let n = try? buffer.withUnsafeMutableBytes({ raw throws(SystemError) in
                try fd.read(into: raw, at: offset)
            })
            else { return nil }
            if n == 0 { return hasher.finalizeHex() }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            offset += n
        }
    }
}

/// A streamed write of one cache entry into a temporary file (see ``DiskCache/makeWriter(url:)``).
/// Not thread-safe: one writer is fed from one thread at a time.
public final class CacheWriter: @unchecked Sendable {
    let cache: DiskCache
    /// The URL the entry is for.
    public let url: String
    let key: String
    let fd: FileDescriptor
    private let hasher = SHA256()
    fileprivate var sha256 = ""
    private var finished = false
    /// After ``commit(expectedSHA256:validators:)``: true when the body was the one already
    /// cached, whose file was kept (nothing changed for a reader).
    public fileprivate(set) var keptEarlierFile = false
    /// Body bytes appended so far.
    public private(set) var bytesWritten = 0

    init(cache: DiskCache, url: String, key: String, fd: FileDescriptor) {
        self.cache = cache; self.url = url; self.key = key; self.fd = fd
    }

    /// The temporary file's path (for tests).
    public var temporaryPath: String { fd.path }

    /// Appends body bytes. Throws ``ContentError/system(_:)``.
    /// On a full file system (ENOSPC) the least recently used entries make room, as long as
    /// there are any (this URL's own entry is kept).
    public func append(_ bytes: UnsafeRawBufferPointer) throws(ContentError) {
        do {
            try AtomicFile.writeAll(fd, bytes) { [cache, key] needed in
                cache.makeRoom(bytes: max(needed, 1 << 20), keeping: key)
            }
        } catch { throw .system(error) }
        hasher.update(bytes)
        bytesWritten += bytes.count
    }

    /// Makes the written body the entry (fsync, rename, directory fsync), evicting as needed,
    /// with the response's `validators` kept beside it. Throws
    /// ``ContentError/hashMismatch(url:expected:actual:)`` when `expectedSHA256` is given
    /// and differs, ``ContentError/system(_:)`` on I/O failure; the temporary file is deleted on
    /// any failure.
    @discardableResult
    public func commit(expectedSHA256: String? = nil,
                       validators: ManifestValidators? = nil) throws(ContentError) -> DiskCache.Entry {
        precondition(!finished, "CacheWriter used after commit or abort")
        finished = true
        sha256 = hasher.finalizeHex()
        do throws(ContentError) {
            if let expected = expectedSHA256?.lowercased(), expected != sha256 {
                throw ContentError.hashMismatch(url: url, expected: expected, actual: sha256)
            }
            return try cache.commit(self, validators: validators)
        } catch {
            fd.close()
            unlink(fd.path)
            throw error
        }
    }

    /// Drops the written bytes (deletes the temporary file).
    public func abort() {
        guard !finished else { return }
        finished = true
        fd.close()
        unlink(fd.path)
    }

    deinit { abort() }
}
