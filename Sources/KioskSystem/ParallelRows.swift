// SPDX-License-Identifier: Apache-2.0
import Glibc
import CKioskSys

/// A fixed team of threads for frame kernels split by rows (the blend, the slide, the scanout
/// conversion of a frame): ``splitRows(_:granularity:_:)`` cuts `0 ..< rows` into one band per
/// thread, runs the first band on the caller's thread and the others on the team, and returns
/// when all are done. Bands are contiguous, so each thread streams through memory of its own.
///
/// The team (``parallelism`` − 1 threads, parked on a condition variable between calls) is made
/// at init and ends on deinit. Calls must come from one thread at a time (the frame loop's).
/// Synchronisation is pthread mutex and condition variables, which ThreadSanitizer sees
/// (as ``Locked``).
public final class ParallelRows: @unchecked Sendable {
    /// Threads a call uses, the caller's included (at least 1).
    public let parallelism: Int
    private let team: Team

    /// The number of CPUs this process may run on (sched_getaffinity, kc_cpu.h), at least 1.
    public static var availableCPUs: Int { Int(kc_available_cpus()) }

    /// Starts `threads - 1` helper threads (`threads` nil: ``availableCPUs``; at most 64). A
    /// thread that cannot be created is done without: the team is smaller.
    public init(threads: Int? = nil) {
        team = Team()
        let wanted = min(64, max(1, threads ?? Self.availableCPUs))
        for index in 1..<wanted {
            guard team.startThread(index: index) else { break }
        }
        parallelism = team.threads.count + 1
    }

    deinit { team.stop() }

    /// The bands of `rows` for `parts` threads: as equal as the `granularity` allows, in order.
    public static func bands(rows: Int, parts: Int, granularity: Int) -> [Range<Int>] {
        let g = max(1, granularity)
        let units = (rows + g - 1) / g
        let n = max(1, min(parts, units))
        var out: [Range<Int>] = []
        var start = 0
        for i in 0..<n {
            let end = min(rows, units * (i + 1) / n * g)
            if end > start { out.append(start..<end) }
            start = end
        }
        return out
    }

    /// Calls `body` once for each band of `0 ..< rows` (``bands(rows:parts:granularity:)``), the
    /// first on this thread, the others on the team, and returns when every call has returned;
    /// the team lets go of `body` before the return.
    ///
    /// `body` is `@escaping` because other threads call it, and not converted with
    /// `withoutActuallyEscaping`: swiftc (6.0 to 6.3) puts the length of the unmapped source path
    /// into that conversion's escape check while `-file-prefix-map` maps the path itself, so the
    /// binary would depend on where it was built (docs/building.md, reproducible builds).
    public func splitRows(_ rows: Int, granularity: Int, _ body: @escaping (Range<Int>) -> Void) {
        let all = Self.bands(rows: rows, parts: parallelism, granularity: granularity)
        guard all.count > 1 else {
            if let only = all.first { body(only) }
            return
        }
        team.run(all, body)
    }

    /// The threads and what they share, kept alive by each thread until it ends (the owner's
    /// deinit stops and joins them).
    private final class Team: @unchecked Sendable {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        let done = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        var threads: [pthread_t] = []
        // Guarded by `mutex`:
        var generation = 0
        var bands: [Range<Int>] = []
        var body: ((Range<Int>) -> Void)?
        var remaining = 0
        var stopping = false

        init() {
            mutex.initialize(to: pthread_mutex_t()); pthread_mutex_init(mutex, nil)
            wake.initialize(to: pthread_cond_t()); pthread_cond_init(wake, nil)
            done.initialize(to: pthread_cond_t()); pthread_cond_init(done, nil)
        }

        deinit {
            pthread_cond_destroy(wake); pthread_cond_destroy(done); pthread_mutex_destroy(mutex)
            wake.deallocate(); done.deallocate(); mutex.deallocate()
        }

        final class Start { let team: Team; let index: Int; init(_ t: Team, _ i: Int) { team = t; index = i } }

        func startThread(index: Int) -> Bool {
            var tid = pthread_t()
            let context = Unmanaged.passRetained(Start(self, index)).toOpaque()
            let rc = pthread_create(&tid, nil, { raw in
                let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                start.team.work(index: start.index)
                return nil
            }, context)
            if rc != 0 { Unmanaged<Start>.fromOpaque(context).release(); return false }
            threads.append(tid)
            return true
        }

        func stop() {
            pthread_mutex_lock(mutex)
            stopping = true
            pthread_cond_broadcast(wake)
            pthread_mutex_unlock(mutex)
            for t in threads { pthread_join(t, nil) }
            threads = []
        }

        func run(_ all: [Range<Int>], _ job: @escaping (Range<Int>) -> Void) {
            pthread_mutex_lock(mutex)
            bands = all
            body = job
            remaining = all.count - 1
            generation &+= 1
            pthread_cond_broadcast(wake)
            pthread_mutex_unlock(mutex)
            job(all[0])
            pthread_mutex_lock(mutex)
            while remaining > 0 { pthread_cond_wait(done, mutex) }
            body = nil
            bands = []
            pthread_mutex_unlock(mutex)
        }

        /// A helper thread's loop: waits for a new generation, does its band (if the call has one
        /// for it), reports it done.
        func work(index: Int) {
            var seen = 0
            pthread_mutex_lock(mutex)
            while true {
                while generation == seen && !stopping { pthread_cond_wait(wake, mutex) }
                if stopping { break }
                seen = generation
                let band = index < bands.count ? bands[index] : nil
                let job = body
                pthread_mutex_unlock(mutex)
                if let band, let job { job(band) }
                pthread_mutex_lock(mutex)
                if band != nil {
                    remaining -= 1
                    if remaining == 0 { pthread_cond_signal(done) }
                }
            }
            pthread_mutex_unlock(mutex)
        }
    }
}
