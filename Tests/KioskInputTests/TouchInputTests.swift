// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskInput

/// The device layer cannot open real devices here (no /dev/input, no /dev/uinput); these check
/// the thread, the queue, the wake pipe and the inotify rescan with a directory of stand-ins.
@Suite(.serialized) struct TouchInputTests {
    func waitForEvents(_ input: TouchInput, until done: ([TouchInputEvent]) -> Bool) -> [TouchInputEvent] {
        var all: [TouchInputEvent] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            var fds = [pollfd(fd: input.events.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, 200)
            all += input.events.take()
            if done(all) { break }
        }
        return all
    }

    func problems(_ events: [TouchInputEvent]) -> [TouchProblem] {
        events.compactMap { if case .problem(let p) = $0 { return p } else { return nil } }
    }

    @Test func emptyDirectoryThenANodeAppears() throws {
        let dir = NSTemporaryDirectory() + "kc-input-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = try TouchInput(configuration: TouchInputConfiguration(directory: dir, panelWidth: 800,
                                                                          panelHeight: 480, showStart: .zero))
        try input.start()
        let first = waitForEvents(input) { !problems($0).isEmpty }
        #expect(problems(first) == [TouchProblem("no touchscreen found", path: dir)])
        // A node named like an evdev device appears (a regular file: libevdev refuses it). inotify
        // makes the reader look again at once, and say why this one is no good.
        _ = FileManager.default.createFile(atPath: dir + "/event7", contents: Data())
        _ = FileManager.default.createFile(atPath: dir + "/mouse0", contents: Data())
        let second = waitForEvents(input) { !problems($0).isEmpty }
        let problem = try #require(problems(second).first)
        #expect(problem.what == "no touchscreen found" && problem.path == dir, "\(problem)")
        #expect(problem.reason?.hasPrefix("libevdev_new_from_fd \(dir)/event7: ") == true, "\(problem)")
        #expect(problem.reason?.contains("mouse0") == false)
        input.stop()
        input.stop()
    }

    @Test func explicitPathThatIsMissing() throws {
        let path = NSTemporaryDirectory() + "kc-input-missing-\(UUID().uuidString)/event0"
        let input = try TouchInput(configuration: TouchInputConfiguration(devicePath: path, panelWidth: 800,
                                                                          panelHeight: 480, showStart: .zero))
        try input.start()
        let wanted = TouchProblem("touchscreen not found (--input), waiting for it to appear", path: path)
        let events = waitForEvents(input) { problems($0).contains(wanted) }
        #expect(problems(events).contains(wanted), "\(events)")
        // Retried every 2 s, but said once.
        usleep(4_500_000)
        let later = input.events.take()
        #expect(problems(later).isEmpty, "\(later)")
        input.stop()
    }

    @Test func explicitPathThatIsNoInputDevice() throws {
        let input = try TouchInput(configuration: TouchInputConfiguration(devicePath: "/dev/null", panelWidth: 800,
                                                                          panelHeight: 480, showStart: .zero))
        try input.start()
        let events = waitForEvents(input) { !problems($0).isEmpty }
        let problem = problems(events).first
        #expect(problem?.what == "not an evdev input device (--input), touch is off", "\(events)")
        // The system call's error names the node: path= would say it twice.
        #expect(problem?.path == nil && problem?.reason?.contains("/dev/null") == true, "\(events)")
        input.stop()
    }
}
