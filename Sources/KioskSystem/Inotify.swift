// SPDX-License-Identifier: Apache-2.0
import Glibc

/// One event read from an inotify descriptor (`struct inotify_event`, sys/inotify.h).
public struct InotifyEvent: Equatable, Sendable {
    /// The watch it belongs to (`inotify_add_watch`'s result); -1 for `IN_Q_OVERFLOW`.
    public var watch: Int32
    /// `IN_*` bits, e.g. `IN_CREATE | IN_ISDIR`.
    public var mask: UInt32
    /// Pairs `IN_MOVED_FROM` with `IN_MOVED_TO`.
    public var cookie: UInt32
    /// The name inside the watched directory, without its NUL padding (empty for the directory itself).
    public var name: [UInt8]

    public init(watch: Int32, mask: UInt32, cookie: UInt32, name: [UInt8]) {
        self.watch = watch; self.mask = mask; self.cookie = cookie; self.name = name
    }

    /// True when any of `bits` is set in ``mask``.
    public func has<Bits: BinaryInteger>(_ bits: Bits) -> Bool { mask & UInt32(truncatingIfNeeded: bits) != 0 }

    /// Parses a buffer of `struct inotify_event`s as `read(2)` returns them: a 16-byte header
    /// (`int wd; uint32_t mask, cookie, len`, host byte order) followed by `len` bytes of
    /// NUL-padded name. A truncated last record is ignored.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var offset = 0
        while offset + 16 <= bytes.count {
            let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let name = bytes[(offset + 16) ..< min(bytes.count, offset + 16 + length)].prefix { $0 != 0 }
            events.append(InotifyEvent(watch: wd, mask: mask, cookie: cookie, name: Array(name)))
            offset += 16 + length
        }
        return events
    }
}

/// An inotify(7) instance (non-blocking, close-on-exec): add watches, poll ``descriptor``, read
/// the events waiting with ``readEvents()``. Closed on deinit.
public final class InotifyReader: @unchecked Sendable {
    /// The inotify descriptor, for `poll(2)` (POLLIN while events wait).
    public let descriptor: Int32

    /// `inotify_init1(IN_NONBLOCK | IN_CLOEXEC)`. Throws ``SystemError`` (`inotify_init1`).
    public init() throws(SystemError) {
        descriptor = try syscall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
    }

    deinit { close(descriptor) }

    /// `inotify_add_watch(2)` on `path` with `mask` (`IN_*` bits); returns the watch descriptor.
    /// Throws ``SystemError`` (`inotify_add_watch PATH`).
    @discardableResult
    public func addWatch(_ path: String, mask: UInt32) throws(SystemError) -> Int32 {
        let fd = descriptor
        return try syscall("inotify_add_watch", path: path) { inotify_add_watch(fd, path, mask) }
    }

    /// Every event waiting now, oldest first (reads until the kernel has no more: never blocks).
    public func readEvents() -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            // EAGAIN (nothing more) or another failure: what was read is all there is.
            let count = try? nonBlockingSyscall("read") {
                buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            }
            guard let count, count > 0 else { return events }
            buffer.withUnsafeBytes { events += InotifyEvent.parse(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }
}
