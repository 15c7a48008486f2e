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

/// The name of thread `tid` of this process (`/proc/self/task/TID/comm`), nil when it is gone.
func threadName(_ tid: Int32) -> String? {
    guard let comm = try? readRegularFile("/proc/self/task/\(tid)/comm", limit: 64) else { return nil }
    return String(decoding: comm.prefix { $0 != 0x0A }, as: UTF8.self)
}

@Test func theThreadIsNamedAfterTheWorkerAndGoneOnceStopped() throws {
    let worker = try WorkerThread(name: "naming test /a/long/path")
    #expect(worker.threadName == "kc-naming")
    let started = Locked(false)
    try worker.start {
        started.withLock { $0 = true }
        var p = pollfd(fd: worker.stopDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 60_000)
    }
    let deadline = ContinuousClock.now + .seconds(10)
    while !started.withLock({ $0 }), ContinuousClock.now < deadline { usleep(1000) }
    let tid = try #require(worker.threadID)
    #expect(threadName(tid) == "kc-naming")
    worker.stop()
    #expect(threadName(tid) == nil, "joined: the thread is gone when stop returns")
    #expect(try WorkerThread(name: "abcdefghijklmnopqrstuvwxyz").threadName == "kc-abcdefghijkl")
}
