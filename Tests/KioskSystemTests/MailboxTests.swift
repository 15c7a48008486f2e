// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem

/// Bytes waiting in a pipe (FIONREAD), to see exactly when a post wakes the reader.
private func pendingBytes(_ fd: Int32) -> Int32 {
    var count: Int32 = 0
    _ = ioctl(fd, UInt(FIONREAD), &count)
    return count
}

private func isReadable(_ fd: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&p, 1, 0) > 0
}

@Test func valuesPostedFromAnotherThreadArriveInOrderAndTheDescriptorWakesThePoller() throws {
    let box = try Mailbox<Int>()
    #expect(!isReadable(box.wakeDescriptor))
    let worker = try WorkerThread(name: "poster")
    try worker.start { for i in 0..<1000 { box.post(i) } }
    var got: [Int] = []
    let deadline = ContinuousClock.now + .seconds(10)
    while got.count < 1000, ContinuousClock.now < deadline {
        var p = pollfd(fd: box.wakeDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 1000)
        got += box.take()
    }
    worker.stop()
    #expect(got == Array(0..<1000))
    #expect(!isReadable(box.wakeDescriptor), "take drains the pipe")
    #expect(box.take().isEmpty)
}

@Test func aBoundDropsTheOldest() throws {
    let box = try Mailbox<Int>(bound: 3)
    for i in 1...5 { box.post(i) }
    #expect(box.take() == [3, 4, 5])
}

@Test func dropNewDropsOnlyWhatThePredicateAllowsAndSaysSoOncePerTake() throws {
    // Negative numbers stand for touch moves (droppable); -1000 is the notice.
    let box = try Mailbox<Int>(bound: 2, overflow: .dropNew(where: { $0 < 0 }, notice: -1000))
    box.post(contentsOf: [-1, 1, -2, 2, -3, 3])
    #expect(box.take() == [-1, 1, -1000, 2, 3], "moves past the bound dropped, the rest kept beyond it, one notice")
    box.post(contentsOf: [-4, -5, -6])
    #expect(box.take() == [-4, -5, -1000], "the notice comes again after a take")
}

@Test func wakeWhenEmptyWritesOneByteUntilTaken() throws {
    let box = try Mailbox<Int>(wake: .whenEmpty)
    box.post(1); box.post(2); box.post(contentsOf: [3, 4])
    #expect(pendingBytes(box.wakeDescriptor) == 1)
    #expect(box.take() == [1, 2, 3, 4])
    #expect(pendingBytes(box.wakeDescriptor) == 0)
    box.post(5)
    #expect(pendingBytes(box.wakeDescriptor) == 1)

    let every = try Mailbox<Int>()
    every.post(1); every.post(2); every.post(3)
    #expect(pendingBytes(every.wakeDescriptor) == 3)
}

@Test func waitEndsOnAValueOnTheTimeoutOrOnTheInterruptDescriptor() throws {
    let box = try Mailbox<String>()
    let start = ContinuousClock.now
    #expect(box.waitForValues(timeout: .milliseconds(150)) == .timedOut)
    #expect(ContinuousClock.now - start >= .milliseconds(150))
    #expect(box.wait(timeout: .milliseconds(20)).isEmpty)

    let interrupt = try makeWakePipe()
    defer { close(interrupt.read); close(interrupt.write) }
    var byte: UInt8 = 1
    _ = write(interrupt.write, &byte, 1)
    #expect(box.waitForValues(timeout: .seconds(10), interrupt: interrupt.read) == .interrupted)
    #expect(isReadable(interrupt.read), "the interrupt is left for its owner")

    let worker = try WorkerThread(name: "late poster")
    try worker.start { usleep(50_000); box.post("late") }
    #expect(box.wait(timeout: .seconds(10)) == ["late"])
    worker.stop()
}
