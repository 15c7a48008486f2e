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

/// The tap command's environment is its own: PATH of the system's folders, the language, time
/// zone and home of the show, KIOSK_INDEX and KIOSK_SRC; nothing else of the show's (a proxy
/// password in http_proxy, systemd's variables, whatever the test runner has).
@Test func aTapCommandGetsAScrubbedEnvironment() throws {
    let dir = scratchDirectory()
    let out = "\(dir)/env"
    // The child's stdout is joined to the show's stderr: sh puts env's output in a file.
    let capture = TapCommand(arguments: ["/bin/sh", "-c", "/usr/bin/env > \(out)"])
    capture.run(index: 3, source: "https://kiosk:s3cret@signs.example/a.jpg")
    let deadline = ContinuousClock.now + .seconds(10)
    while access(out, F_OK) != 0 || (try? readRegularFile(out, limit: 1 << 16))?.isEmpty != false,
          ContinuousClock.now < deadline {
        usleep(20_000)
    }
    usleep(100_000)
    capture.reap()
    let lines = String(decoding: try readRegularFile(out, limit: 1 << 16), as: UTF8.self).split(separator: "\n")
        .map(String.init)
    let names = Set(lines.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
    // PWD, SHLVL, _: sh's own
    let allowed = Set(["PATH", "KIOSK_INDEX", "KIOSK_SRC", "PWD", "SHLVL", "_"] + TapCommand.passedOn)
    #expect(names.isSubset(of: allowed), "more than the scrubbed environment: \(names.subtracting(allowed).sorted())")
    #expect(lines.contains("PATH=/usr/local/bin:/usr/bin:/bin"), "\(lines)")
    #expect(lines.contains("KIOSK_INDEX=3") && lines.contains("KIOSK_SRC=https://kiosk:***@signs.example/a.jpg"),
            "\(lines)")
}

/// The program is looked up once, in PATH's absolute folders only: an empty or relative entry
/// (which execvp takes as the working directory) is never searched.
@Test func theTapProgramIsLookedUpOnceInAbsoluteFoldersOnly() throws {
    #expect(TapCommand.locate("sh", path: "/usr/bin:/bin") == "/usr/bin/sh"
                || TapCommand.locate("sh", path: "/usr/bin:/bin") == "/bin/sh")
    let dir = scratchDirectory()
    let evil = "\(dir)/kc-evilprog"
    #expect(creat(evil, 0o755) >= 0)
    #expect(TapCommand.locate("kc-evilprog", path: dir) == evil)
    for path in ["", ":", "::", ".", "bin", ":./", "\(dir.dropFirst())"] {
        #expect(TapCommand.locate("kc-evilprog", path: path) == nil, "PATH=\(path)")
    }
    #expect(TapCommand.locate("/bin/sh", path: nil) == "/bin/sh")
    #expect(TapCommand.locate("/nonexistent/x", path: nil) == nil)
    #expect(TapCommand.locate(dir, path: nil) == nil, "a folder is no program")
    let absent = TapCommand(arguments: ["kc-no-such-program-\(getpid())"])
    #expect(absent.executable == nil)
    absent.run(index: 0, source: "/a.jpg")  // runs nothing, without a crash
}
