import Glibc
import KioskSystem
import Synchronization

/// A queue of results from worker threads to the frame loop, like ``SlotPreparer``'s: a worker
/// ``post(_:)``s a value and writes a byte to a pipe; the frame loop polls ``wakeDescriptor``
/// (readable while values wait) and calls ``take()``, which never blocks.
public final class Mailbox<Value: Sendable>: @unchecked Sendable {
    /// Read end of the wake-up pipe (non-blocking, close-on-exec).
    public let wakeDescriptor: Int32
    private let wakeWrite: Int32
    private let values = Mutex<[Value]>([])

    /// Throws ``ContentError/system(_:)`` when the pipe cannot be made.
    public init() throws(ContentError) {
        do {
            let fds = try makeWakePipe()
            wakeDescriptor = fds.read
            wakeWrite = fds.write
        } catch { throw .system(error) }
    }

    deinit {
        close(wakeDescriptor)
        close(wakeWrite)
    }

    /// Queues a value and wakes the reader (from any thread).
    public func post(_ value: Value) {
        values.withLock { $0.append(value) }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// The values waiting, oldest first; drains the wake-up pipe. Never blocks.
    public func take() -> [Value] {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeDescriptor, &buffer, buffer.count) > 0 {}
        return values.withLock {
            let taken = $0
            $0.removeAll()
            return taken
        }
    }

    /// Waits up to `timeout` for at least one value, then takes what is waiting (for tests and
    /// offscreen runs; the frame loop polls ``wakeDescriptor`` instead).
    public func wait(timeout: Duration) -> [Value] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let count = values.withLock { $0.count }
            if count > 0 { return take() }
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return [] }
            var fd = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            _ = poll(&fd, 1, ms)
        }
    }
}
