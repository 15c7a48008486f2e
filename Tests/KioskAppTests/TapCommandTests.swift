// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem
@testable import KioskApp

private func scratchDirectory() -> String {
    var template = Array("/tmp/kc-child-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

@Test func aTapCommandsBackgroundJobsCountAsRunningAndEndWithTheShow() throws {
    let dir = scratchDirectory()
    let marker = "\(dir)/runs"
    // Each run appends a line, then leaves a background job behind and exits at once.
    let command = TapCommand(arguments: ["/bin/sh", "-c", "echo run >> \(marker); sleep 30 & exit 0"])
    command.run(index: 0, source: "/a.jpg")
    usleep(300_000)
    command.reap()
    command.run(index: 1, source: "/b.jpg")   // the background sleep still runs: skipped
    usleep(300_000)
    #expect(String(decoding: try readRegularFile(marker, limit: 1 << 16), as: UTF8.self) == "run\n")
    command.stop()                            // SIGTERM to the whole group
    usleep(300_000)
    command.run(index: 2, source: "/c.jpg")   // nothing left: runs
    usleep(300_000)
    #expect(String(decoding: try readRegularFile(marker, limit: 1 << 16), as: UTF8.self) == "run\nrun\n")
    command.stop()
}
