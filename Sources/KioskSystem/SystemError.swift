// SPDX-License-Identifier: Apache-2.0
import Glibc
import CKioskSys

/// A failed system call: the operation, the path or device it was about, and `errno`.
/// Its description is the log line, e.g. `open /dev/fb0: Permission denied (errno 13)`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was attempted, e.g. `open`, `ioctl FBIOGET_VSCREENINFO`, `mmap`.
    public var operation: String
    /// The path or device the call was about (empty when there is none).
    public var path: String
    /// The `errno` value the call left.
    public var errno: Int32

    public init(operation: String, path: String, errno: Int32) {
        self.operation = operation; self.path = path; self.errno = errno
    }

    /// `strerror(errno)`.
    public var reason: String { Self.reason(errno: errno) }

    public var description: String {
        let subject = path.isEmpty ? operation : "\(operation) \(path)"
        return "\(subject): \(Self.describe(errno: errno))"
    }

    /// strerror(3)'s text for `code`: `No such file or directory`.
    public static func reason(errno code: Int32) -> String { String(cString: strerror(code)) }

    /// strerror(3)'s text and the number, as every message about an errno gives it:
    /// `No such file or directory (errno 2)`.
    public static func describe(errno code: Int32) -> String { "\(reason(errno: code)) (errno \(code))" }
}

/// The one funnel for C calls that return -1 and set `errno`: retries on `EINTR`, throws
/// ``SystemError`` with the operation and path on any other failure, returns the result otherwise.
@discardableResult
public func syscall<T: FixedWidthInteger>(
    _ operation: @autoclosure () -> String, path: String = "", _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SystemError(operation: operation(), path: path, errno: code)
    }
}

/// ``syscall(_:path:_:)`` for a call on a non-blocking descriptor (`O_NONBLOCK`, `MSG_DONTWAIT`):
/// `EAGAIN` (`EWOULDBLOCK` on Linux) is no failure but "nothing now", nil. `EINTR` is retried;
/// any other failure throws ``SystemError``.
@discardableResult
public func nonBlockingSyscall<T: FixedWidthInteger>(
    _ operation: @autoclosure () -> String, path: String = "", _ body: () -> T
) throws(SystemError) -> T? {
    do {
        return try syscall(operation(), path: path, body)
    } catch where error.errno == EAGAIN {
        return nil
    }
}

/// The funnel for C calls that return a pointer, NULL with `errno` set on failure (`fdopen`,
/// `opendir`, `realpath`, `fopen`): retries on `EINTR`, throws ``SystemError`` with the
/// operation and path on any other failure, returns the pointer otherwise.
public func nonNullCall<T>(
    _ operation: @autoclosure () -> String, path: String = "", _ body: () -> T?
) throws(SystemError) -> T {
    while true {
        errno = 0
        if let result = body() { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        // A library that returned NULL without saying why (errno 0) is reported as EIO.
        throw SystemError(operation: operation(), path: path, errno: code == 0 ? EIO : code)
    }
}

/// The funnel for library calls that return `-errno` on failure instead of setting `errno`
/// (libdrm's xf86drmMode calls, libevdev): a negative result becomes ``SystemError`` with that
/// errno; `EINTR` is retried; a result of 0 or more is returned. With `minusOneSetsErrno`
/// (libdrm, where some calls return -1 and leave `errno` set, as `drmIoctl` does) a result of
/// -1 is read from `errno` instead of as `-EPERM`.
@discardableResult
public func negativeErrnoCall(
    _ operation: @autoclosure () -> String, path: String = "", minusOneSetsErrno: Bool = false, _ body: () -> Int32
) throws(SystemError) -> Int32 {
    try syscall(operation(), path: path) {
        let r = body()
        guard r < 0 else { return r }
        if r != -1 || !minusOneSetsErrno { Glibc.errno = -r }
        return -1
    }
}

/// An open file descriptor that closes itself when the last reference goes.
public final class FileDescriptor: @unchecked Sendable {
    /// The raw descriptor, valid until ``close()`` or deinit.
    public private(set) var rawValue: Int32
    /// The path it was opened from, for error messages.
    public let path: String

    /// Wraps an already open descriptor; takes ownership.
    public init(rawValue: Int32, path: String) { self.rawValue = rawValue; self.path = path }

    /// `open(2)` with `O_CLOEXEC` added. Throws ``SystemError`` (`open PATH: … (errno N)`).
    public static func open(_ path: String, _ flags: Int32,
                            mode: mode_t = 0o644) throws(SystemError) -> FileDescriptor {
        let fd = try syscall("open", path: path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(rawValue: fd, path: path)
    }

    /// `ioctl(2)` with a pointer argument; `name` is the request's name for the error message.
    @discardableResult
    public func ioctl(_ name: String, _ request: UInt, _ arg: UnsafeMutableRawPointer?) throws(SystemError) -> Int32 {
        let fd = rawValue
        return try syscall("ioctl \(name)", path: path) { kc_ioctl_ptr(fd, request, arg) }
    }

    /// `ioctl(2)` with an integer argument.
    @discardableResult
    public func ioctl(_ name: String, _ request: UInt, value: Int) throws(SystemError) -> Int32 {
        let fd = rawValue
        return try syscall("ioctl \(name)", path: path) { kc_ioctl_int(fd, request, UInt(bitPattern: value)) }
    }

    /// Hands the raw descriptor over (to `fdopen(3)`, say) without closing it: from here on the
    /// caller owns it, and this object no longer closes it.
    public func release() -> Int32 {
        let fd = rawValue
        rawValue = -1
        return fd
    }

    /// Closes the descriptor now (idempotent).
    public func close() {
        if rawValue >= 0 { _ = Glibc.close(rawValue); rawValue = -1 }
    }

    deinit { close() }
}

/// A pipe whose two ends are close-on-exec and non-blocking (for waking a `poll` loop from a
/// signal handler or a worker thread). Returns (read end, write end). Throws ``SystemError``.
public func makeWakePipe() throws(SystemError) -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    try syscall("pipe") { pipe(&fds) }
    for fd in fds {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    return (fds[0], fds[1])
}

/// One name in a directory listing (`readdir(3)`, without `.` and `..`).
public struct DirectoryEntry: Sendable {
    /// The name as text, or nil when its bytes are not valid UTF-8.
    public var name: String?
    /// True when `d_type` says directory (false also when the file system does not say).
    public var isDirectory: Bool
    /// The name's bytes as the file system gives them (to name a file whose ``name`` is nil).
    public var bytes: [UInt8] = []
}

/// The entries of the directory at `path`, in the order the file system gives them.
/// Throws ``SystemError`` (`opendir PATH: … (errno N)`).
public func listDirectory(_ path: String) throws(SystemError) -> [DirectoryEntry] {
    let dir = try nonNullCall("opendir", path: path) { opendir(path) }
    defer { closedir(dir) }
    var entries: [DirectoryEntry] = []
    while let entry = readdir(dir) {
        let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
        let name = String(validating: bytes, as: UTF8.self)
        if name == "." || name == ".." { continue }
        entries.append(DirectoryEntry(name: name, isDirectory: entry.pointee.d_type == UInt8(DT_DIR), bytes: bytes))
    }
    return entries
}

/// Reads a regular file whole, never waiting: opened `O_NONBLOCK`, anything but a regular
/// file (a FIFO, a device, a directory) refused at once (`EINVAL`), and more than `limit` bytes
/// refused (`EFBIG`, by the size `fstat` reports and again while reading, for `/proc` files
/// that report 0). Throws ``SystemError`` with the path (`open`, `fstat`, `read`).
public func readRegularFile(_ path: String, limit: Int) throws(SystemError) -> [UInt8] {
    let fd = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK)
    let info = try fd.status()
    guard (info.st_mode & S_IFMT) == S_IFREG else {
        throw SystemError(operation: "read (not a regular file)", path: path, errno: EINVAL)
    }
    guard Int(info.st_size) <= limit else {
        throw SystemError(operation: "read (over \(limit) bytes)", path: path, errno: EFBIG)
    }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = try syscall("read", path: path) { read(fd.rawValue, &buffer, buffer.count) }
        if n == 0 { return bytes }
        bytes += buffer[0..<n]
        if bytes.count > limit { throw SystemError(operation: "read (over \(limit) bytes)", path: path, errno: EFBIG) }
    }
}
