// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem

@Test func stopWakesABodyBlockedInPollAndJoinsIt() throws {
    let worker = try WorkerThread(name: "blocked")
    let state = Locked((started: false, ended: false))
    try worker.start {
        state.withLock { $0.started = true }
        var p = pollfd(fd: worker.stopDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 60_000)  // would block a minute without stop()
        state.withLock { $0.ended = true }
    }
    #expect(worker.isRunning)
    let deadline = ContinuousClock.now + .seconds(10)
    while !state.withLock({ $0.started }), ContinuousClock.now < deadline { usleep(1000) }
    #expect(!worker.isStopRequested)
    let start = ContinuousClock.now
    worker.stop()
    #expect(ContinuousClock.now - start < .seconds(5))
    #expect(state.withLock { $0.ended }, "stop returns after the body ended")
    #expect(!worker.isRunning)
    #expect(worker.isStopRequested)
    worker.stop()  // idempotent
}

@Test func startTwiceRunsTheBodyOnce() throws {
    let worker = try WorkerThread(name: "once")
    let runs = Locked(0)
    let body: @Sendable () -> Void = {
        runs.withLock { $0 += 1 }
        var p = pollfd(fd: worker.stopDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 60_000)
    }
    try worker.start(body)
    try worker.start(body)
    worker.stop()
    #expect(runs.withLock { $0 } == 1)
}

@Test func aBodyThatEndsByItselfIsJoinedByStop() throws {
    let worker = try WorkerThread(name: "short")
    let done = Locked(false)
    try worker.start { done.withLock { $0 = true } }
    worker.stop()
    #expect(done.withLock { $0 })
}
