// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Testing
@testable import KioskApp
import KioskSystem

@Test func shownEventIsOneJSONLineWithTheFieldsInOrder() throws {
    let line = EventWriter().line(event: "shown", index: 3, source: "/photos/a \"b\".jpg", time: .milliseconds(1234))
    #expect(line == #"{"event":"shown","index":3,"src":"/photos/a \"b\".jpg","t":1234}"#)
    #expect(!line.contains("\n"))
    // A JSON parser reads it back to the same values.
    struct Event: Decodable { var event: String; var index: Int; var src: String; var t: Int }
    let e = try JSONDecoder().decode(Event.self, from: Data(line.utf8))
    #expect(e.event == "shown" && e.index == 3 && e.src == "/photos/a \"b\".jpg" && e.t == 1234)
}

@Test func tapEventCarriesThePointBeforeTheTime() throws {
    let line = EventWriter().line(event: "tap", index: 2, source: "/p/c.jpg", time: .milliseconds(987),
                                  point: (640, 400))
    #expect(line == #"{"event":"tap","index":2,"src":"/p/c.jpg","x":640,"y":400,"t":987}"#)
}

@Test func everyShowEventHasItsDocumentedLine() {
    let lines = EventWriter(descriptor: -1)
    #expect(lines.line(for: .shown(index: 1, source: "https://u:secret@cdn/a.jpg", at: .milliseconds(61_234),
                                   playlistLength: 5))
            == #"{"event":"shown","index":1,"src":"https://u:***@cdn/a.jpg","t":61234}"#)
    #expect(lines.line(for: .tap(index: 2, source: "/p/c.jpg", at: .milliseconds(987), x: 640, y: 400))
            == #"{"event":"tap","index":2,"src":"/p/c.jpg","x":640,"y":400,"t":987}"#)
    // A tap on a pair (--pair-portraits) says the half, after y.
    #expect(lines.line(for: .tap(index: 3, source: "/p/d.jpg", at: .milliseconds(987), x: 1500, y: 400,
                                 half: "right"))
            == #"{"event":"tap","index":3,"src":"/p/d.jpg","x":1500,"y":400,"half":"right","t":987}"#)
    #expect(lines.line(for: .display(on: false, reason: "presence", at: .seconds(2)))
            == #"{"event":"display","state":"off","reason":"presence","t":2000}"#)
}

@Test func queuedEventsReachTheReaderInOrder() throws {
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    let writer = EventWriter(descriptor: fds[1])
    for i in 0..<20 { writer.emit(event: "shown", index: i, source: "/p/\(i).jpg", time: .milliseconds(i * 1000)) }
    #expect(writer.flush())
    close(fds[1])
    var data = [UInt8](repeating: 0, count: 65536)
    var text = ""
    while true {
        let n = read(fds[0], &data, data.count)
        if n <= 0 { break }
        text += String(decoding: data[0..<n], as: UTF8.self)
    }
    close(fds[0])
    let lines = text.split(separator: "\n")
    #expect(lines.count == 20)
    #expect(lines.first == #"{"event":"shown","index":0,"src":"/p/0.jpg","t":0}"#)
    #expect(lines.last == #"{"event":"shown","index":19,"src":"/p/19.jpg","t":19000}"#)
}

@Test func aReaderThatStopsReadingDoesNotBlockTheShow() {
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    let writer = EventWriter(descriptor: fds[1])
    // Far more than a pipe holds (64 KiB) and the queue takes: emit must return every time.
    let long = String(repeating: "x", count: 4000)
    for i in 0..<2000 { writer.emit(event: "shown", index: i, source: long, time: .zero) }
    #expect(writer.droppedCount > 0)
    signal(SIGPIPE, SIG_IGN)  // as the program does (KioskApp.main)
    close(fds[0])  // the writer thread's blocked write now fails with EPIPE; it drains the queue
    #expect(writer.flush(timeout: .seconds(10)))
    close(fds[1])
}

@Test func logLinesEscapeControlCharactersInEveryFieldAndCutHugeOnes() {
    let line = Log.line(.warning, "manifest refused: items[0].fit: \"x\nkiosk-carousel: error FORGED\u{1B}[31m\"",
                        path: "/a", reason: String(repeating: "z", count: 10_000))
    #expect(!line.contains("\n") && !line.contains("\u{1B}"))
    #expect(line.contains("\\nkiosk-carousel: error FORGED\\x1b[31m"))
    #expect(line.count < 4096 * 2 + 200)
    #expect(line.hasSuffix("…(5904 more)\""))
}
