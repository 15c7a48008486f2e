// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem

// The errno funnel (SystemError.swift): EINTR retried, -1 + errno and -errno turned into a
// SystemError that names the operation and the path. The EINTR cases are real: a blocking
// read(2) on an empty pipe, interrupted by a signal whose handler is installed without
// SA_RESTART, so the kernel ends the read with EINTR (signal(7), "Interruption of system calls
// and library functions by signal handlers").

/// The signal that interrupts: SIGURG, whose default action is to ignore it, so one that lands
/// after the test has put the old action back does nothing (SIGUSR1 and SIGUSR2 belong to the
/// SignalPipe tests).
private let interruptingSignal = SIGURG

/// Held while a test owns `interruptingSignal`'s disposition (the tests run in parallel).
private let signalOwner = Locked(())

/// Runs `body` (which blocks in a read of `pipe.read`) with `interruptingSignal` caught by a
/// handler that does nothing, installed without SA_RESTART, and unblocked in this thread (the
/// test runner's threads are libdispatch's, which block signals). A second thread sends the
/// signal to this thread every 2 ms until `sawEINTR` says a read was interrupted (or 5 s pass),
/// then writes one byte, 42, into the pipe so that the retried read finds it.
private func whileInterrupted<T>(_ pipe: (read: Int32, write: Int32), sawEINTR: Locked<Int>,
                                 _ body: () throws(SystemError) -> T) throws -> T {
    try signalOwner.withLock { _ in try interrupting(pipe, sawEINTR: sawEINTR, body) }
}

private func interrupting<T>(_ pipe: (read: Int32, write: Int32), sawEINTR: Locked<Int>,
                             _ body: () throws(SystemError) -> T) throws -> T {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0  // no SA_RESTART: the blocked read ends with EINTR
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
    let writeEnd = pipe.write
    try interrupter.start {
        let deadline = ContinuousClock.now + .seconds(5)
        while sawEINTR.withLock({ $0 }) == 0, ContinuousClock.now < deadline {
            pthread_kill(target, interruptingSignal)
            usleep(2000)
        }
        var byte: UInt8 = 42
        _ = write(writeEnd, &byte, 1)
    }
    defer { interrupter.stop() }
    return try body()
}

/// A blocking pipe (the test starts no process, so close-on-exec does not matter).
private func blockingPipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    try syscall("pipe") { pipe(&fds) }
    return (fds[0], fds[1])
}

@Suite struct SyscallFunnelTests {
    @Test func aReadInterruptedByASignalIsRetried() throws {
        let pipe = try blockingPipe()
        defer { close(pipe.read); close(pipe.write) }
        let sawEINTR = Locked(0)
        var calls = 0
        var byte: UInt8 = 0
        let n = try whileInterrupted(pipe, sawEINTR: sawEINTR) { () throws(SystemError) in
            try syscall("read", path: "the test pipe") { () -> Int in
                calls += 1
                let n = read(pipe.read, &byte, 1)
                if n < 0 && errno == EINTR { sawEINTR.withLock { $0 += 1 } }
                return n
            }
        }
        #expect(n == 1 && byte == 42)
        #expect(sawEINTR.withLock { $0 } >= 1, "the read was never interrupted")
        #expect(calls == sawEINTR.withLock { $0 } + 1, "every interrupted read was tried again, and only those")
    }

    @Test func minusOneCarriesErrnoTheOperationAndThePath() {
        let path = "/nonexistent-\(getpid())/photo.jpg"
        var calls = 0
        #expect {
            try syscall("open", path: path) { () -> Int32 in calls += 1; return open(path, O_RDONLY) }
        } throws: { error in
            guard let error = error as? SystemError else { return false }
            return error == SystemError(operation: "open", path: path, errno: ENOENT)
                && error.description == "open \(path): No such file or directory (errno 2)"
        }
        #expect(calls == 1, "an error other than EINTR is not retried")
    }

    @Test func otherResultsAreReturnedAsTheyAre() throws {
        let pipe = try blockingPipe()
        defer { close(pipe.read); close(pipe.write) }
        var byte: UInt8 = 7
        #expect(try syscall("write", path: "the test pipe") { write(pipe.write, &byte, 1) } == 1)
        #expect(try syscall("read") { read(pipe.read, &byte, 1) } == 1)
        // Only -1 is a failure: lseek's offsets, say, may be any other value.
        #expect(try syscall("any") { Int64(-2) } == -2)
        #expect(try syscall("any") { UInt32.max } == UInt32.max)
    }

    @Test func theOperationIsOnlyWorkedOutOnFailure() throws {
        var built = 0
        func name() -> String { built += 1; return "ioctl DRM_IOCTL_MODE_GETRESOURCES" }
        _ = try syscall(name()) { Int32(0) }
        #expect(built == 0)
        #expect(throws: SystemError(operation: "ioctl DRM_IOCTL_MODE_GETRESOURCES", path: "", errno: EBADF)) {
            try syscall(name()) { ioctl(-1, 0) }
        }
        #expect(built == 1)
    }

    @Test func anErrorWithoutAPathSaysOnlyTheOperation() {
        #expect(SystemError(operation: "pipe", path: "", errno: EMFILE).description
                == "pipe: Too many open files (errno 24)")
    }
}

@Suite struct NegativeErrnoFunnelTests {
    @Test func minusErrnoBecomesThatErrno() {
        #expect(throws: SystemError(operation: "drmModeAtomicCommit", path: "/dev/dri/card0", errno: EACCES)) {
            try negativeErrnoCall("drmModeAtomicCommit", path: "/dev/dri/card0") { -EACCES }
        }
        // Without minusOneSetsErrno, -1 is -EPERM, whatever errno holds.
        errno = EBUSY
        #expect(throws: SystemError(operation: "libevdev_next_event", path: "", errno: EPERM)) {
            try negativeErrnoCall("libevdev_next_event") { -1 }
        }
    }

    @Test func minusOneReadsErrnoWhenTheLibrarySetsIt() {
        // libdrm's drmIoctl returns -1 and leaves errno set.
        #expect(throws: SystemError(operation: "drmIoctl", path: "/dev/dri/card1", errno: EBADF)) {
            try negativeErrnoCall("drmIoctl", path: "/dev/dri/card1", minusOneSetsErrno: true) { ioctl(-1, 0) }
        }
        // Another negative result is still -errno.
        #expect(throws: SystemError(operation: "drmModeSetCrtc", path: "", errno: EINVAL)) {
            try negativeErrnoCall("drmModeSetCrtc", minusOneSetsErrno: true) { -EINVAL }
        }
    }

    @Test func zeroOrMoreIsReturned() throws {
        var calls = 0
        #expect(try negativeErrnoCall("count") { calls += 1; return 3 } == 3)
        #expect(try negativeErrnoCall("none") { 0 } == 0)
        #expect(calls == 1)
    }

    @Test func minusEINTRIsRetried() throws {
        let pipe = try blockingPipe()
        defer { close(pipe.read); close(pipe.write) }
        let sawEINTR = Locked(0)
        var calls = 0
        var byte: UInt8 = 0
        // A library that reports -errno around a blocking read, as libevdev does.
        let n = try whileInterrupted(pipe, sawEINTR: sawEINTR) { () throws(SystemError) in
            try negativeErrnoCall("libevdev_next_event", path: "the test pipe") { () -> Int32 in
                calls += 1
                let n = read(pipe.read, &byte, 1)
                guard n >= 0 else {
                    let code = errno
                    if code == EINTR { sawEINTR.withLock { $0 += 1 } }
                    return -code
                }
                return Int32(n)
            }
        }
        #expect(n == 1 && byte == 42)
        #expect(sawEINTR.withLock { $0 } >= 1, "the read was never interrupted")
        #expect(calls == sawEINTR.withLock { $0 } + 1)
    }
}
