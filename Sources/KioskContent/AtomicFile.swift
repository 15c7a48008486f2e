// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// The crash-safe write protocol shared by the disk cache and the manifest store: the bytes go
/// to a new temporary file in the destination's own directory (so `rename(2)` is atomic, same
/// file system), which is `fsync`'ed, renamed over the destination, and then the directory is
/// `fsync`'ed so the rename itself is durable. A crash at any point leaves the old file or the
/// new one under the destination name, never a torn one; at worst a temporary file is left,
/// which ``removeTemporaryFiles(in:)`` deletes at the next open.
enum AtomicFile {
    /// Prefix of every temporary file name (hidden, never taken for an entry).
    static let temporaryPrefix = ".tmp-"

    /// A new temporary file in `directory`, opened for writing (`O_EXCL`, `mode`: 0644 unless
    /// told, before the umask). Returns the descriptor and the path. Throws ``ContentError/system(_:)``.
    static func createTemporary(in directory: String, tag: String, mode: mode_t = 0o644) throws(ContentError) -> FileDescriptor {
        var attempt = 0
        while true {
            let name = "\(temporaryPrefix)\(tag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            do {
                return try FileDescriptor.open(directory + "/" + name, O_WRONLY | O_CREAT | O_EXCL, mode: mode)
            } catch {
                attempt += 1
                if error.errno != EEXIST || attempt > 8 { throw .system(error) }
            }
        }
    }

    /// Writes all of `bytes` to `fd` (retrying short writes and EINTR).
    /// `onFull` is asked to make room when the file system is full (ENOSPC); when it returns
    /// true the write is tried again from where it stopped, once per call of `onFull`.
    static func writeAll(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer,
                         onFull: (Int) -> Bool = { _ in false }) throws(ContentError) {
        var offset = 0
        while offset < bytes.count {
            let raw = fd.rawValue
            let n: Int
            do {
                n = try syscall("write", path: fd.path) { Glibc.write(raw, bytes.baseAddress! + offset, bytes.count - offset) }
            } catch {
                if error.errno == ENOSPC, onFull(bytes.count - offset) { continue }
                throw .system(error)
            }
            offset += n
        }
    }

    /// `fsync(2)`.
    static func sync(_ fd: FileDescriptor) throws(ContentError) {
        let raw = fd.rawValue
        do { try syscall("fsync", path: fd.path) { fsync(raw) } } catch { throw .system(error) }
    }

    /// Sets the file's modification time (`futimens(2)`; access time left alone).
    static func setModificationTime(_ fd: Int32, path: String, _ time: Duration) throws(ContentError) {
        var times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(time)]
        do { try syscall("futimens", path: path) { futimens(fd, &times) } } catch { throw .system(error) }
    }

    /// `rename(2)` then `fsync` of the directory.
    static func commit(temporary: String, to destination: String, directory: String) throws(ContentError) {
        do {
            try syscall("rename", path: temporary) { rename(temporary, destination) }
        } catch { throw .system(error) }
        try syncDirectory(directory)
    }

    /// `fsync(2)` on a directory, making renames and unlinks in it durable.
    static func syncDirectory(_ directory: String) throws(ContentError) {
        do {
            let dir = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY)
            let raw = dir.rawValue
            try syscall("fsync", path: directory) { fsync(raw) }
        } catch { throw .system(error) }
    }

    /// Writes `bytes` to `directory/name` with the protocol above; the file's mtime is set to
    /// `modified` when given; its mode is `mode` (0644 unless told; the rename replaces the old
    /// file with its mode).
    static func write(_ bytes: [UInt8], directory: String, name: String, modified: Duration? = nil,
                      mode: mode_t = 0o644) throws(ContentError) {
        let fd = try createTemporary(in: directory, tag: name, mode: mode)
        do throws(ContentError) {
            try bytes.withUnsafeBytes { b in Result { () throws(ContentError) in try writeAll(fd, b) } }.get()
            if let modified { try setModificationTime(fd.rawValue, path: fd.path, modified) }
            try sync(fd)
            fd.close()
            try commit(temporary: fd.path, to: directory + "/" + name, directory: directory)
        } catch {
            unlink(fd.path)
            throw error
        }
    }

    /// Reads a whole regular file; nil when it does not exist. Throws on other errors.
    /// Only a regular file is read (a FIFO or a device is refused at once, never waited on),
    /// and at most `limit` bytes (8 MiB, the manifest cap): a larger file is refused (EFBIG).
    static func read(_ path: String, limit: Int = 8 << 20) throws(ContentError) -> [UInt8]? {
        do {
            return try readRegularFile(path, limit: limit)
        } catch {
            if error.errno == ENOENT { return nil }
            throw .system(error)
        }
    }

    /// Deletes the temporary files a crash left in `directory`; returns how many.
    @discardableResult
    static func removeTemporaryFiles(in directory: String) -> Int {
        guard let entries = try? listDirectory(directory) else { return 0 }
        var removed = 0
        for entry in entries {
            if let name = entry.name, name.hasPrefix(temporaryPrefix), unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// `mkdir -p` (mode 0755).
    static func makeDirectories(_ path: String) throws(ContentError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw .system(SystemError(operation: "mkdir", path: current, errno: errno))
            }
        }
    }
}

/// `UTIME_OMIT` from <sys/stat.h> ((1l << 30) - 2l): leave this time stamp as it is.
private let utimeOmit = (1 << 30) - 2

extension timespec {
    /// A `timespec` for a time given as a `Duration` since the Unix epoch.
    init(_ time: Duration) {
        let (seconds, attoseconds) = time.components
        self.init(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    }

    /// This time as a `Duration` since the Unix epoch.
    var duration: Duration { .seconds(tv_sec) + .nanoseconds(tv_nsec) }
}

/// Wall-clock time (`CLOCK_REALTIME`) as a `Duration` since the Unix epoch.
public func wallClockNow() -> Duration {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return ts.duration
}
