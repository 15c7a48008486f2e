// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem

private func scratchDirectory() -> String {
    var template = Array("/tmp/kc-child-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

private func waitForExit(_ child: ChildProcess) -> Int32? {
    for _ in 0..<500 {
        if let status = child.poll() { return status }
        usleep(10_000)
    }
    return nil
}

@Test func theSourceReachesTheChildAsDataNeverAsShellText() throws {
    let dir = scratchDirectory()
    // A hostile file name: if it were spliced into a shell line, it would create `pwned`.
    let source = "\(dir)/a;b $(touch \(dir)/pwned) `touch \(dir)/pwned2`.jpg"
    let child = try ChildProcess(arguments: ["/bin/sh", "-c",
                                             "printf '%s|%s' \"$KIOSK_INDEX\" \"$KIOSK_SRC\" > \"$OUT\""],
                                 environment: ["KIOSK_INDEX": "7", "KIOSK_SRC": source, "OUT": "\(dir)/out"])
    #expect(waitForExit(child) == 0)
    let out = String(decoding: try readRegularFile("\(dir)/out", limit: 1 << 16), as: UTF8.self)
    #expect(out == "7|\(source)")
    #expect(access("\(dir)/pwned", F_OK) != 0)
    #expect(access("\(dir)/pwned2", F_OK) != 0)
}

@Test func aMissingProgramIsATypedErrorNamingIt() {
    #expect(throws: SystemError(operation: "posix_spawn", path: "/nonexistent/on-tap", errno: ENOENT)) {
        _ = try ChildProcess(arguments: ["/nonexistent/on-tap"])
    }
}

@Test func exitStatusAndSignalsAreReported() throws {
    #expect(waitForExit(try ChildProcess(arguments: ["/bin/sh", "-c", "exit 3"])) == 3)
    #expect(waitForExit(try ChildProcess(arguments: ["/bin/sh", "-c", "kill -TERM $$"])) == 128 + SIGTERM)
}

@Test func theChildsStdoutIsNotTheEventStream() throws {
    // stdout of the child is joined to stderr: a pipe on our stdout would stay empty. Checked
    // through /proc: the child's fd 1 names the same file as our fd 2.
    let child = try ChildProcess(arguments: ["/bin/sh", "-c", "readlink /proc/$$/fd/1 >&2; sleep 1"])
    usleep(200_000)
    var buffer = [CChar](repeating: 0, count: 512)
    let n = readlink("/proc/\(child.pid)/fd/1", &buffer, 511)
    let childStdout = n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    let m = readlink("/proc/self/fd/2", &buffer, 511)
    let ourStderr = m > 0 ? String(decoding: buffer[0..<m].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "!"
    #expect(childStdout == ourStderr)
    kill(child.pid, SIGKILL)
    _ = waitForExit(child)
}
