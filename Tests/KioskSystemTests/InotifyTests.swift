// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem

private func scratchDirectory() -> String {
    var template = Array("/tmp/kc-inotify-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

/// Events until `done` says enough (or 5 s).
private func events(_ reader: InotifyReader, until done: ([InotifyEvent]) -> Bool) -> [InotifyEvent] {
    var all: [InotifyEvent] = []
    let deadline = ContinuousClock.now + .seconds(5)
    while !done(all), ContinuousClock.now < deadline {
        var p = pollfd(fd: reader.descriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 200)
        all += reader.readEvents()
    }
    return all
}

private func name(_ e: InotifyEvent) -> String { String(decoding: e.name, as: UTF8.self) }

@Test func aFileWrittenAndRenamedInARealDirectoryGivesItsEventsWithNames() throws {
    let dir = scratchDirectory()
    defer { _ = unlink(dir + "/b.jpg"); _ = rmdir(dir) }
    let reader = try InotifyReader()
    let watch = try reader.addWatch(dir, mask: UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO))
    #expect(reader.readEvents().isEmpty, "nothing yet, and no blocking")

    let fd = open(dir + "/a.jpg", O_CREAT | O_WRONLY, 0o644)
    _ = write(fd, "x", 1)
    close(fd)
    rename(dir + "/a.jpg", dir + "/b.jpg")
    let got = events(reader) { $0.contains { $0.has(IN_MOVED_TO) } }
    #expect(got.allSatisfy { $0.watch == watch })
    let summary = got.map { e -> String in
        let kind = e.has(IN_CREATE) ? "create" : e.has(IN_CLOSE_WRITE) ? "close-write"
            : e.has(IN_MOVED_FROM) ? "moved-from" : "moved-to"
        return "\(kind) \(name(e))"
    }
    #expect(summary == ["create a.jpg", "close-write a.jpg", "moved-from a.jpg", "moved-to b.jpg"])
    let from = try #require(got.first { $0.has(IN_MOVED_FROM) }), to = try #require(got.first { $0.has(IN_MOVED_TO) })
    #expect(from.cookie == to.cookie && from.cookie != 0, "a rename's two halves share a cookie")
}

@Test func theWatchedDirectoryGoingAwayEndsTheWatch() throws {
    let dir = scratchDirectory()
    let reader = try InotifyReader()
    try reader.addWatch(dir, mask: UInt32(IN_CREATE | IN_DELETE_SELF))
    #expect(rmdir(dir) == 0)
    let got = events(reader) { $0.contains { $0.has(IN_IGNORED) } }
    #expect(got.contains { $0.has(IN_DELETE_SELF) })
    #expect(got.contains { $0.has(IN_IGNORED) })
}

@Test func aMissingDirectoryIsAnErrorWithItsPath() throws {
    let reader = try InotifyReader()
    #expect(throws: SystemError(operation: "inotify_add_watch", path: "/nonexistent/kc", errno: ENOENT)) {
        try reader.addWatch("/nonexistent/kc", mask: UInt32(IN_CREATE))
    }
}

@Test func parsingTakesNulPaddedNamesAndIgnoresATruncatedRecord() {
    // Two records as the kernel lays them out (sys/inotify.h), then 10 bytes of a third.
    func record(wd: Int32, mask: UInt32, cookie: UInt32, name: String, padded: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: wd) { bytes += $0 }
        withUnsafeBytes(of: mask) { bytes += $0 }
        withUnsafeBytes(of: cookie) { bytes += $0 }
        withUnsafeBytes(of: UInt32(padded)) { bytes += $0 }
        return bytes + Array(name.utf8) + [UInt8](repeating: 0, count: padded - name.utf8.count)
    }
    let buffer = record(wd: 1, mask: UInt32(IN_CREATE), cookie: 0, name: "event3", padded: 16)
        + record(wd: -1, mask: UInt32(IN_Q_OVERFLOW), cookie: 0, name: "", padded: 0)
        + [UInt8](repeating: 7, count: 10)
    let parsed = buffer.withUnsafeBytes { InotifyEvent.parse($0) }
    #expect(parsed == [InotifyEvent(watch: 1, mask: UInt32(IN_CREATE), cookie: 0, name: Array("event3".utf8)),
                       InotifyEvent(watch: -1, mask: UInt32(IN_Q_OVERFLOW), cookie: 0, name: [])])
}
