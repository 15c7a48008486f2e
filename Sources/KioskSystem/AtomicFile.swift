// SPDX-License-Identifier: Apache-2.0
import Glibc

/// The one way a file is replaced whole (the disk cache's entries, the stored manifest, the
/// PNG frames and screenshots): the bytes go to a new temporary file in the destination's own
/// directory (so `rename(2)` is atomic, same file system), which is renamed over the
/// destination, so a reader sees the old file or the new one, never half of one. Durable
/// writes (the cache, the manifest) also `fsync` the file before the rename and the directory
/// after it, so that a crash at any point leaves the old file or the new one under the
/// destination name, never a torn one; at worst a temporary file is left, which
/// ``removeTemporaryFiles(in:)`` deletes at the next open. Every failure throws
/// ``SystemError`` with the call and the path.
public enum AtomicFile {
    /// Prefix of every temporary file name (hidden, never taken for an entry or an image).
    public static let temporaryPrefix = ".tmp-"

    /// A new temporary file in `directory` whose name starts with ``temporaryPrefix`` and
    /// `tag` and ends in the process id and a random number (at most 26 bytes more than `tag`),
    /// opened for writing (`O_EXCL`, close-on-exec, `mode`: 0644 unless told, before the umask).
    /// Its ``FileDescriptor/path`` is the temporary file's path.
    /// Throws ``SystemError`` (`open PATH`).
    public static func createTemporary(in directory: String, tag: String,
                                       mode: mode_t = 0o644) throws(SystemError) -> FileDescriptor {
        var attempt = 0
        while true {
            let name = "\(temporaryPrefix)\(tag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            do {
                return try FileDescriptor.open(directory + "/" + name, O_WRONLY | O_CREAT | O_EXCL, mode: mode)
            } catch {
                attempt += 1
                if error.errno != EEXIST || attempt > 8 { throw error }
            }
        }
    }

    /// Writes all of `bytes` to `fd` (retrying short writes and EINTR).
    /// `onFull` is asked to make room when the file system is full (ENOSPC); when it returns
    /// true the write is tried again from where it stopped, once per call of `onFull`.
    /// Throws ``SystemError`` (`write PATH`).
    public static func writeAll(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer,
                                onFull: (Int) -> Bool = { _ in false }) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let raw = fd.rawValue
            let n: Int
            do {
                n = try syscall("write", path: fd.path) {
                    Glibc.write(raw, bytes.baseAddress! + offset, bytes.count - offset)
                }
            } catch {
                if error.errno == ENOSPC, onFull(bytes.count - offset) { continue }
                throw error
            }
            offset += n
        }
    }

    /// `fsync(2)`. Throws ``SystemError`` (`fsync PATH`).
    public static func sync(_ fd: FileDescriptor) throws(SystemError) {
        let raw = fd.rawValue
        try syscall("fsync", path: fd.path) { fsync(raw) }
    }

    /// Sets the file's modification time (`futimens(2)`; access time left alone), `time` since
    /// the Unix epoch. Throws ``SystemError`` (`futimens PATH`).
    public static func setModificationTime(_ fd: Int32, path: String, _ time: Duration) throws(SystemError) {
        var times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(time)]
        try syscall("futimens", path: path) { futimens(fd, &times) }
    }

    /// `rename(2)` of `temporary` over `destination`, then, when `durable`, `fsync` of
    /// `directory` (theirs). Throws ``SystemError`` (`rename TEMPORARY`, `open` or `fsync
    /// DIRECTORY`); the temporary file is left for the caller to remove.
    public static func commit(temporary: String, to destination: String, directory: String,
                              durable: Bool = true) throws(SystemError) {
        try syscall("rename", path: temporary) { rename(temporary, destination) }
        if durable { try syncDirectory(directory) }
    }

    /// `fsync(2)` on a directory, making renames and unlinks in it durable.
    /// Throws ``SystemError`` (`open DIRECTORY`, `fsync DIRECTORY`).
    public static func syncDirectory(_ directory: String) throws(SystemError) {
        let dir = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY)
        let raw = dir.rawValue
        try syscall("fsync", path: directory) { fsync(raw) }
    }

    /// Writes `bytes` to `directory/name` with the protocol above, durably; the file's mtime
    /// is set to `modified` when given; its mode is `mode` (0644 unless told, before the umask;
    /// the rename replaces the old file with its mode). The temporary file is removed on
    /// failure. Throws ``SystemError``.
    public static func write(_ bytes: [UInt8], directory: String, name: String, modified: Duration? = nil,
                             mode: mode_t = 0o644) throws(SystemError) {
        let fd = try createTemporary(in: directory, tag: name, mode: mode)
        do throws(SystemError) {
            try bytes.withUnsafeBytes { b in Result { () throws(SystemError) in try writeAll(fd, b) } }.get()
            if let modified { try setModificationTime(fd.rawValue, path: fd.path, modified) }
            try sync(fd)
            fd.close()
            try commit(temporary: fd.path, to: directory + "/" + name, directory: directory)
        } catch {
            unlink(fd.path)
            throw error
        }
    }

    /// Reads a whole regular file; nil when it does not exist. Only a regular file is read (a
    /// FIFO or a device is refused at once, never waited on), and at most `limit` bytes (8 MiB,
    /// the manifest cap): a larger file is refused (EFBIG). Throws ``SystemError`` on other
    /// errors (``readRegularFile(_:limit:)``).
    public static func read(_ path: String, limit: Int = 8 << 20) throws(SystemError) -> [UInt8]? {
        do {
            return try readRegularFile(path, limit: limit)
        } catch where error.errno == ENOENT {
            return nil
        }
    }

    /// Deletes the temporary files a crash left in `directory`; returns how many.
    @discardableResult
    public static func removeTemporaryFiles(in directory: String) -> Int {
        guard let entries = try? listDirectory(directory) else { return 0 }
        var removed = 0
        for entry in entries {
            if let name = entry.name, name.hasPrefix(temporaryPrefix), unlink(directory + "/" + name) == 0 {
                removed += 1
            }
        }
        return removed
    }

    /// `mkdir -p` (mode 0755, before the umask). Throws ``SystemError`` (`mkdir PATH`) for the
    /// first folder that cannot be made and does not exist.
    public static func makeDirectories(_ path: String) throws(SystemError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            do {
                try syscall("mkdir", path: current) { mkdir(current, 0o755) }
            } catch where error.errno == EEXIST {}
        }
    }
}

/// `UTIME_OMIT` from <sys/stat.h> ((1l << 30) - 2l): leave this time stamp as it is.
private let utimeOmit = (1 << 30) - 2

extension timespec {
    /// A `timespec` for a time given as a `Duration` since the Unix epoch.
    public init(_ time: Duration) {
        let (seconds, attoseconds) = time.components
        self.init(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    }

    /// This time as a `Duration` since the Unix epoch.
    public var duration: Duration { .seconds(tv_sec) + .nanoseconds(tv_nsec) }
}

/// Wall-clock time (`CLOCK_REALTIME`) as a `Duration` since the Unix epoch.
public func wallClockNow() -> Duration {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return ts.duration
}
