// SPDX-License-Identifier: Apache-2.0
import Glibc

/// The descriptors one `poll(2)` waits on, and what it found: the one poll loop of the program
/// (the frame loop, the mailboxes, the directory and source watches, the control socket, the
/// touchscreen reader, the wait for a display).
///
/// Each descriptor keeps the index it was added at (0, 1, 2...); after ``wait(timeout:)``,
/// ``isReady(_:)`` and ``returnedEvents(_:)`` say what happened to it. A negative descriptor (a
/// source that is not there) keeps its index and is never ready: poll(2) ignores it.
public struct PollSet {
    private var fds: [pollfd] = []

    public init() {}

    /// Waits for each of `descriptors` to become readable (`POLLIN`), indices in their order.
    public init(readable descriptors: [Int32]) {
        fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    }

    /// Adds `descriptor`, waited on for `events` (`POLLIN`, `POLLOUT`, or both; `POLLHUP` and
    /// `POLLERR` are always reported). Returns its index.
    @discardableResult
    public mutating func add(_ descriptor: Int32, events: Int16 = Int16(POLLIN)) -> Int {
        fds.append(pollfd(fd: descriptor, events: events, revents: 0))
        return fds.count - 1
    }

    /// How many descriptors were added.
    public var count: Int { fds.count }

    /// Waits until at least one descriptor is ready or `timeout` has passed (nil: no limit; a
    /// duration is rounded up to whole milliseconds and is at most 60 s, ``pollTimeout(_:)``;
    /// zero looks without waiting). A signal that interrupts the wait (`EINTR`) does not end it:
    /// it goes on for the time that is left, as the errno funnel retries any call (a signal the
    /// program handles writes to ``SignalPipe``, which is among the descriptors when it should
    /// wake the wait).
    /// - Returns: how many descriptors are ready; 0 when the time ran out.
    /// - Throws: ``SystemError`` (`poll`) for any other failure (`EINVAL`: more descriptors than
    ///   RLIMIT_NOFILE; `ENOMEM`).
    @discardableResult
    public mutating func wait(timeout: Duration?) throws(SystemError) -> Int {
        try wait(milliseconds: timeout.map(pollTimeout) ?? -1)
    }

    /// ``wait(timeout:)`` with poll(2)'s own timeout: milliseconds, -1 for no limit.
    @discardableResult
    public mutating func wait(milliseconds: Int32) throws(SystemError) -> Int {
        let deadline = milliseconds >= 0 ? ContinuousClock.now + .milliseconds(milliseconds) : nil
        var timeout = milliseconds
        let n = try syscall("poll") { () -> Int32 in
            for i in fds.indices { fds[i].revents = 0 }
            let n = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
            // Tried again after EINTR: with the time that is left.
            if let deadline { timeout = pollTimeout(ContinuousClock.now.duration(to: deadline)) }
            return n
        }
        return Int(n)
    }

    /// What poll(2) reported for the descriptor at `index` in the last wait (`revents`: `POLLIN`,
    /// `POLLOUT`, `POLLHUP`, `POLLERR`, `POLLNVAL` bits); 0 when nothing.
    public func returnedEvents(_ index: Int) -> Int16 { fds[index].revents }

    /// Whether anything was reported for the descriptor at `index` in the last wait (readable,
    /// writable, hung up or in error: a read or write will not block).
    public func isReady(_ index: Int) -> Bool { fds[index].revents != 0 }

    /// Whether `descriptor` is readable now (or hung up), without waiting.
    public static func isReadable(_ descriptor: Int32) -> Bool {
        var set = PollSet(readable: [descriptor])
        return ((try? set.wait(milliseconds: 0)) ?? 0) > 0
    }
}

/// Milliseconds for `poll(2)` covering `duration` (rounded up, at most 60 s; 0 when past).
public func pollTimeout(_ duration: Duration) -> Int32 {
    guard duration > .zero else { return 0 }
    let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000 + 1
    return Int32(min(ms, 60_000))
}
