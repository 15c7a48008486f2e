// SPDX-License-Identifier: Apache-2.0
import Glibc
import Synchronization
import Testing
import KioskSystem

@Suite struct PollSetTests {
    @Test func eachDescriptorKeepsItsIndex() throws {
        let full = try makeWakePipe(), empty = try makeWakePipe()
        defer { for fd in [full.read, full.write, empty.read, empty.write] { close(fd) } }
        var byte: UInt8 = 1
        _ = write(full.write, &byte, 1)
        var set = PollSet(readable: [empty.read, -1, full.read])
        #expect(try set.wait(timeout: .zero) == 1)
        #expect(!set.isReady(0) && !set.isReady(1) && set.isReady(2))
        #expect(set.returnedEvents(2) == Int16(POLLIN))
        let writable = set.add(empty.write, events: Int16(POLLOUT))
        #expect(writable == 3 && set.count == 4)
        #expect(try set.wait(timeout: nil) == 2)
        #expect(set.returnedEvents(3) == Int16(POLLOUT) && set.isReady(2) && !set.isReady(0))
        #expect(PollSet.isReadable(full.read) && !PollSet.isReadable(empty.read))
        // A hung-up pipe is ready (POLLHUP), so a reader learns it is gone.
        close(empty.write)
        var hangUp = PollSet(readable: [empty.read])
        #expect(try hangUp.wait(milliseconds: 0) == 1)
        #expect(hangUp.returnedEvents(0) & Int16(POLLHUP) != 0)
    }

    @Test func aTimeoutEndsTheWaitWithNothingReady() throws {
        let pipe = try makeWakePipe()
        defer { close(pipe.read); close(pipe.write) }
        var set = PollSet(readable: [pipe.read])
        #expect(try set.wait(milliseconds: 0) == 0)
        #expect(!set.isReady(0))
    }

    /// Signals every 2 ms interrupt poll(2) again and again: the wait neither ends early nor
    /// starts its time over after each (which would keep it waiting as long as they come).
    @Test func signalsNeitherShortenNorLengthenAWait() throws {
        let pipe = try makeWakePipe()
        defer { close(pipe.read); close(pipe.write) }
        let done = Locked(0)
        var set = PollSet(readable: [pipe.read])
        let handledBefore = signalsHandled.load(ordering: .relaxed)
        let start = ContinuousClock.now
        let ready = try whileInterrupted(until: done) { () throws(SystemError) in
            defer { done.withLock { $0 = 1 } }
            return try set.wait(timeout: .milliseconds(200))
        }
        let elapsed = start.duration(to: .now)
        #expect(ready == 0 && !set.isReady(0))
        #expect(signalsHandled.load(ordering: .relaxed) - handledBefore >= 5, "the wait was hardly interrupted")
        #expect(elapsed >= .milliseconds(200), "a signal ended the wait early")
        #expect(elapsed < .seconds(3), "the wait started over after a signal")
    }
}
