// SPDX-License-Identifier: Apache-2.0
import Glibc

/// A value behind a `pthread_mutex_t` (default attributes: not recursive), for state shared
/// between threads: the frame loop, the decode worker, the fetcher, the watches, the control
/// server and their queues.
///
/// Used instead of the standard library's `Synchronization.Mutex`, which on Linux locks with
/// atomics and `futex(2)` inside the (uninstrumented) runtime: ThreadSanitizer cannot see that
/// lock and reports every access it guards as a race (`Tests/sanitizers/run.sh thread`), which
/// would hide a real one among them. ThreadSanitizer intercepts `pthread_mutex_lock` and
/// `pthread_mutex_unlock`, so accesses under this lock are ordered for it as they are for the CPU.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value while holding the lock; rethrows what `body` throws. `body` must
    /// not take the same lock again (it is not recursive: that would deadlock).
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
