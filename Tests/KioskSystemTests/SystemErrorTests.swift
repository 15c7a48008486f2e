// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem

// The errno funnel (SystemError.swift): EINTR retried, -1 + errno, -errno and NULL + errno
// turned into a SystemError that names the operation and the path, EAGAIN as "nothing now".
// The EINTR cases are real (SignalInterrupter.swift).

@Suite struct SyscallFunnelTests {
    @Test func aReadInterruptedByASignalIsRetried() throws {
        let pipe = try blockingPipe()
        defer { close(pipe.read); close(pipe.write) }
        let sawEINTR = Locked(0)
        var calls = 0
        var byte: UInt8 = 0
        let n = try whileInterrupted(until: sawEINTR, then: writeMarker(pipe.write)) { () throws(SystemError) in
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
        let n = try whileInterrupted(until: sawEINTR, then: writeMarker(pipe.write)) { () throws(SystemError) in
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

@Suite struct PointerAndNonBlockingFunnelTests {
    @Test func nullBecomesErrnoWithTheOperationAndThePath() {
        let path = "/nonexistent-\(getpid())"
        #expect(throws: SystemError(operation: "realpath", path: path, errno: ENOENT)) {
            try nonNullCall("realpath", path: path) { realpath(path, nil) }
        }
        #expect(throws: SystemError(operation: "fdopen", path: "descriptor -1", errno: EBADF)) {
            try nonNullCall("fdopen", path: "descriptor -1") { fdopen(-1, "rb") }
        }
        #expect(throws: SystemError(operation: "opendir", path: path, errno: ENOENT)) { try listDirectory(path) }
        // NULL without errno (a library that does not say why) is EIO, never "Success".
        #expect(throws: SystemError(operation: "lookup", path: "", errno: EIO)) {
            try nonNullCall("lookup") { () -> UnsafeMutableRawPointer? in nil }
        }
    }

    @Test func aPointerIsReturned() throws {
        let resolved = try nonNullCall("realpath", path: "/") { realpath("/", nil) }
        defer { free(resolved) }
        #expect(String(cString: resolved) == "/")
        #expect(try resolvePath("/proc/self/../self/.") == "/proc/\(getpid())")
        #expect(throws: SystemError(operation: "realpath", path: "/proc/self/nothing", errno: ENOENT)) {
            try resolvePath("/proc/self/nothing")
        }
    }

    /// open(2) of a FIFO for reading blocks until a writer opens it: interrupted, fopen returns
    /// NULL with EINTR, and is tried again.
    @Test func anOpenInterruptedByASignalIsRetried() throws {
        let fifo = "/tmp/kc-funnel-fifo-\(getpid())"
        try syscall("mkfifo", path: fifo) { mkfifo(fifo, 0o600) }
        defer { unlink(fifo) }
        let sawEINTR = Locked(0)
        var calls = 0
        let file = try whileInterrupted(until: sawEINTR, then: {
            // Opened once a reader waits in open(2) (without one a non-blocking open for writing
            // fails with ENXIO): that ends the retried fopen's wait. At most 5 s.
            for _ in 0..<5000 {
                let fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                if fd >= 0 { close(fd); return }
                usleep(1000)
            }
        }) { () throws(SystemError) in
            try nonNullCall("fopen", path: fifo) { () -> UnsafeMutablePointer<FILE>? in
                calls += 1
                let file = fopen(fifo, "re")
                if file == nil && errno == EINTR { sawEINTR.withLock { $0 += 1 } }
                return file
            }
        }
        fclose(file)
        #expect(sawEINTR.withLock { $0 } >= 1, "the open was never interrupted")
        #expect(calls == sawEINTR.withLock { $0 } + 1)
    }

    @Test func wouldBlockIsNothingNow() throws {
        let pipe = try makeWakePipe()  // non-blocking
        defer { close(pipe.read); close(pipe.write) }
        var byte: UInt8 = 5
        #expect(try nonBlockingSyscall("read") { read(pipe.read, &byte, 1) } == nil)
        #expect(try nonBlockingSyscall("write") { write(pipe.write, &byte, 1) } == 1)
        #expect(try nonBlockingSyscall("read") { read(pipe.read, &byte, 1) } == 1)
        // Another failure still throws: reading the write end.
        #expect(throws: SystemError(operation: "read", path: "the write end", errno: EBADF)) {
            try nonBlockingSyscall("read", path: "the write end") { read(pipe.write, &byte, 1) }
        }
    }

    @Test func anErrnoIsDescribedAsEveryMessageGivesIt() {
        #expect(SystemError.describe(errno: EACCES) == "Permission denied (errno 13)")
        #expect(SystemError.reason(errno: ENOSPC) == "No space left on device")
    }
}
