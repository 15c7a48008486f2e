// SPDX-License-Identifier: Apache-2.0
import Glibc
import Synchronization
import KioskSystem

// Real EINTR for the funnel's tests: a blocking call (a read of an empty pipe, the open of a
// FIFO) interrupted by a signal whose handler is installed without SA_RESTART, so the kernel
// ends the call with EINTR (signal(7), "Interruption of system calls and library functions by
// signal handlers").

/// The signal that interrupts: SIGURG, whose default action is to ignore it, so one that lands
/// after the test has put the old action back does nothing (SIGUSR1 and SIGUSR2 belong to the
/// SignalPipe tests).
let interruptingSignal = SIGURG

/// Held while a test owns `interruptingSignal`'s disposition (the tests run in parallel).
let signalOwner = Locked(())

/// How many times the handler ran.
let signalsHandled = Atomic<Int>(0)

/// Runs `body` (which blocks) with `interruptingSignal` caught by a handler that only counts,
/// installed without SA_RESTART and unblocked in this thread (the test runner's threads are
/// libdispatch's, which block signals). A second thread sends the signal to this thread every
/// 2 ms until `done` is no longer 0 (or 5 s pass), then runs `then` (which lets the blocked call
/// finish: a byte written into the pipe it reads, say).
func whileInterrupted<T>(until done: Locked<Int>, then: @escaping @Sendable () -> Void = {},
                         _ body: () throws(SystemError) -> T) throws -> T {
    try signalOwner.withLock { _ in try interrupting(until: done, then: then, body) }
}

private func interrupting<T>(until done: Locked<Int>, then: @escaping @Sendable () -> Void,
                             _ body: () throws(SystemError) -> T) throws -> T {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in signalsHandled.add(1, ordering: .relaxed) }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0  // no SA_RESTART: a blocked read or open ends with EINTR
    var previous = sigaction()
    sigaction(interruptingSignal, &action, &previous)
    defer { sigaction(interruptingSignal, &previous, nil) }
    var unblock = sigset_t(), previousMask = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, interruptingSignal)
    pthread_sigmask(SIG_UNBLOCK, &unblock, &previousMask)
    defer { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }

    let target = pthread_self()
    let interrupter = try WorkerThread(name: "interrupter")
    try interrupter.start {
        let deadline = ContinuousClock.now + .seconds(5)
        while done.withLock({ $0 }) == 0, ContinuousClock.now < deadline {
            pthread_kill(target, interruptingSignal)
            usleep(2000)
        }
        then()
    }
    defer { interrupter.stop() }
    return try body()
}

/// Writes the byte 42 into `fd`.
func writeMarker(_ fd: Int32) -> @Sendable () -> Void {
    { var byte: UInt8 = 42; _ = write(fd, &byte, 1) }
}

/// A blocking pipe (the test starts no process, so close-on-exec does not matter).
func blockingPipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    try syscall("pipe") { pipe(&fds) }
    return (fds[0], fds[1])
}
