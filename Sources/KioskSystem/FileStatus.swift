// SPDX-License-Identifier: Apache-2.0
import Glibc

/// `stat(2)` (or `lstat(2)` when `followLinks` is false) through the errno funnel.
/// Throws ``SystemError`` (`stat PATH: No such file or directory (errno 2)`).
public func fileStatus(_ path: String, followLinks: Bool = true) throws(SystemError) -> stat {
    var info = stat()
    if followLinks {
        try syscall("stat", path: path) { stat(path, &info) }
    } else {
        try syscall("lstat", path: path) { lstat(path, &info) }
    }
    return info
}

extension FileDescriptor {
    /// `fstat(2)` through the errno funnel. Throws ``SystemError`` (`fstat PATH: …`).
    public func status() throws(SystemError) -> stat {
        var info = stat()
        let fd = rawValue
        try syscall("fstat", path: path) { fstat(fd, &info) }
        return info
    }

    /// `pread(2)` through the errno funnel (`EINTR` retried): reads up to `buffer.count` bytes
    /// from byte `offset` of the file, without moving the file position. Returns the bytes read,
    /// 0 at the end of the file. Throws ``SystemError`` (`pread PATH: …`).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        let fd = rawValue
        return try syscall("pread", path: path) { pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Clears `O_NONBLOCK` (a regular file opened without blocking, read by blocking code from
    /// here on). Throws ``SystemError`` (`fcntl F_SETFL PATH: …`).
    public func clearNonBlocking() throws(SystemError) {
        let fd = rawValue
        let flags = try syscall("fcntl F_GETFL", path: path) { fcntl(fd, F_GETFL) }
        try syscall("fcntl F_SETFL", path: path) { fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }
}

/// `realpath(3)`: `path` with every symbolic link, `.` and `..` resolved, absolute.
/// Throws ``SystemError`` (`realpath PATH: No such file or directory (errno 2)`).
public func resolvePath(_ path: String) throws(SystemError) -> String {
    let resolved = try nonNullCall("realpath", path: path) { realpath(path, nil) }
    defer { free(resolved) }
    return String(cString: resolved)
}
