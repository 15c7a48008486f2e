// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Something a poll loop waits on and drains: ``wakeDescriptor`` is readable while values
/// wait, ``take()`` hands them over and never blocks. The frame loop drains every source it
/// has (decoded frames, touches, control requests, signals, content) through this one shape.
public protocol WakeSource: AnyObject {
    associatedtype Value
    /// Readable (POLLIN) while values wait; owned by the source, never closed by the caller.
    var wakeDescriptor: Int32 { get }
    /// The values waiting, oldest first. Never blocks.
    func take() -> [Value]
}

/// How a wait ended (``Mailbox/waitForValues(timeout:interrupt:)``).
public enum WaitOutcome: Equatable, Sendable {
    /// At least one value waits.
    case ready
    /// The time ran out with nothing waiting.
    case timedOut
    /// The interrupt descriptor became readable (what is in it is left there).
    case interrupted
}

/// The one hand-off from threads to a poll loop: a queue behind a lock plus a pipe that wakes
/// the reader. Any thread ``post(_:)``s; the reader polls ``wakeDescriptor`` and calls
/// ``take()``, which never blocks.
///
/// Policies (fixed at creation):
/// - ``bound`` and ``Overflow``: nil keeps everything; otherwise, once `bound` values wait,
///   either the oldest is dropped (``Overflow/dropOldest``) or a new value the predicate calls
///   droppable is dropped and everything else is kept beyond the bound
///   (``Overflow/dropNew(where:notice:)``: touch moves go, downs and ups stay), with one notice
///   value queued at the first drop since the last ``take()``.
/// - ``Wake``: a byte per post (``Wake/everyPost``), or only when the queue was empty
///   (``Wake/whenEmpty``, for high-rate producers: the pipe never fills).
///
/// The pipe is drained under the same lock that empties the queue, so the descriptor is
/// readable exactly while values wait (or after a spurious wake-up, which ``take()`` answers
/// with an empty array).
public final class Mailbox<Value: Sendable>: WakeSource, @unchecked Sendable {
    /// What happens to a post when ``bound`` values already wait.
    public enum Overflow: @unchecked Sendable {
        /// The oldest waiting value is dropped to make room.
        case dropOldest
        /// A new value for which `droppable` is true is dropped; others are kept beyond the
        /// bound. `notice`, when given, is queued once at the first drop since the last take.
        case dropNew(where: (Value) -> Bool, notice: Value?)
    }

    /// When a post writes the wake-up byte.
    public enum Wake: Sendable {
        case everyPost
        /// Only when the queue was empty before the post.
        case whenEmpty
    }

    /// Read end of the wake-up pipe (non-blocking, close-on-exec).
    public let wakeDescriptor: Int32
    private let wakeWrite: Int32
    /// Most values that wait (nil: unbounded); see ``Overflow``.
    public let bound: Int?
    public let overflow: Overflow
    public let wake: Wake

    private struct State {
        var values: [Value] = []
        var noticed = false
    }
    private let state = Locked(State())

    /// Makes the wake-up pipe. Throws ``SystemError`` (`pipe: … (errno N)`) when it cannot.
    public init(bound: Int? = nil, overflow: Overflow = .dropOldest, wake: Wake = .everyPost) throws(SystemError) {
        precondition(bound.map { $0 > 0 } ?? true, "Mailbox: bound must be positive")
        let fds = try makeWakePipe()
        wakeDescriptor = fds.read
        wakeWrite = fds.write
        self.bound = bound
        self.overflow = overflow
        self.wake = wake
    }

    deinit {
        close(wakeDescriptor)
        close(wakeWrite)
    }

    /// Queues a value and wakes the reader (from any thread).
    public func post(_ value: Value) { post(contentsOf: CollectionOfOne(value)) }

    /// Queues values in order under one lock, waking the reader at most once.
    public func post<S: Sequence>(contentsOf values: S) where S.Element == Value {
        let wakeNow = state.withLock { s -> Bool in
            let wasEmpty = s.values.isEmpty
            for value in values { append(value, to: &s) }
            guard !s.values.isEmpty else { return false }
            return wake == .everyPost || wasEmpty
        }
        if wakeNow {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)  // a full pipe already wakes the reader
        }
    }

    private func append(_ value: Value, to s: inout State) {
        guard let bound, s.values.count >= bound else { s.values.append(value); return }
        switch overflow {
        case .dropOldest:
            s.values.removeFirst(s.values.count - bound + 1)
            s.values.append(value)
        case .dropNew(let droppable, let notice):
            guard droppable(value) else { s.values.append(value); return }
            if !s.noticed {
                s.noticed = true
                if let notice { s.values.append(notice) }
            }
        }
    }

    /// The values waiting, oldest first; drains the wake-up pipe. Never blocks.
    public func take() -> [Value] {
        state.withLock { s in
            var buffer = [UInt8](repeating: 0, count: 64)
            while read(wakeDescriptor, &buffer, buffer.count) > 0 {}
            s.noticed = false
            defer { s.values.removeAll() }
            return s.values
        }
    }

    /// How many values wait now.
    public var count: Int { state.withLock { $0.values.count } }

    /// Waits until a value waits, `timeout` runs out, or `interrupt` (a descriptor such as the
    /// signal pipe; -1 for none) becomes readable. Takes nothing.
    public func waitForValues(timeout: Duration, interrupt: Int32 = -1) -> WaitOutcome {
        let deadline = ContinuousClock.now + timeout
        while true {
            if count > 0 { return .ready }
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return .timedOut }
            var set = PollSet(readable: [wakeDescriptor])
            if interrupt >= 0 { set.add(interrupt) }
            _ = try? set.wait(timeout: left)
            if set.count > 1, set.isReady(1) { return count > 0 ? .ready : .interrupted }
        }
    }

    /// Waits up to `timeout` for at least one value, then takes what is waiting (for tests and
    /// offscreen runs; the frame loop polls ``wakeDescriptor`` instead).
    public func wait(timeout: Duration) -> [Value] {
        waitForValues(timeout: timeout) == .ready ? take() : []
    }
}
