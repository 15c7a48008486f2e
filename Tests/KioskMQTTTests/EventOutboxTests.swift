// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskMQTT
import Testing

func makeTempDirectory(_ tag: String) -> String {
    var template = Array("/tmp/kiosk-\(tag)-XXXXXX".utf8CString)
    return String(cString: mkdtemp(&template)!)
}

private func event(_ i: Int, _ src: String = "/photos/a.jpg") -> [UInt8] {
    Array("{\"event\":\"shown\",\"index\":\(i),\"src\":\"\(src)\",\"t\":\(i * 1000)}".utf8)
}

private func fileBytes(_ path: String) -> [UInt8] { FileManager.default.contents(atPath: path).map { Array($0) } ?? [] }

@Test func anEventsPayloadIsItsLineWithSeqAdded() {
    #expect(OutboxEvent.payload(line: event(3), seq: 7)
            == Array("{\"event\":\"shown\",\"index\":3,\"src\":\"/photos/a.jpg\",\"t\":3000,\"seq\":7}".utf8))
    #expect(OutboxEvent.payload(line: Array("{}".utf8), seq: 1) == Array("{\"seq\":1}".utf8))
    for bad in ["[1]", "{\"seq\":1}", "{\"a\":1", "{\"a\":\"x\ny\"}", "{\"a\":1}\n", "null", ""] {
        #expect(OutboxEvent.payload(line: Array(bad.utf8), seq: 1) == nil, "\(bad.debugDescription)")
    }
}

@Test func seqGrowsByOneAndSurvivesAReopen() throws {
    let dir = makeTempDirectory("outbox")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var (outbox, notes) = EventOutbox.open(directory: dir, limit: 100)
    #expect(notes.isEmpty && outbox.path == dir + "/outbox")
    let first = outbox.append([event(0), event(1), event(2)])
    #expect(first.added.map(\.seq) == [1, 2, 3] && first.durable && first.droppedCount == 0)
    outbox.acknowledge([1, 3])
    #expect(outbox.pending.map(\.seq) == [2])
    var st = stat()
    #expect(stat(dir, &st) == 0 && st.st_mode & 0o777 == 0o700)
    #expect(stat(dir + "/outbox", &st) == 0 && st.st_mode & 0o777 == 0o600)

    (outbox, notes) = EventOutbox.open(directory: dir, limit: 100)
    #expect(notes.isEmpty)
    #expect(outbox.pending.map(\.seq) == [2] && outbox.lastSeq == 3)
    #expect(outbox.append([event(3)]).added.map(\.seq) == [4])
    outbox.acknowledge([2, 4])
    (outbox, _) = EventOutbox.open(directory: dir, limit: 100)
    #expect(outbox.pending.isEmpty && outbox.lastSeq == 4)
    #expect(outbox.append([event(4)]).added.map(\.seq) == [5])
}

@Test func aFileCutAtAnyByteKeepsEveryCompleteRecordBeforeTheCut() throws {
    let dir = makeTempDirectory("outbox-cut")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let (outbox, _) = EventOutbox.open(directory: dir, limit: 100)
    _ = outbox.append([event(0), event(1)])
    outbox.acknowledge([1])
    _ = outbox.append([event(2)])
    outbox.acknowledge([3])
    let whole = fileBytes(dir + "/outbox")
    // Where each record ends, and the state after it.
    let lineEnds = whole.indices.filter { whole[$0] == 0x0A }.map { $0 + 1 }
    let expected: [(pending: [UInt64], last: UInt64)] = [([1], 1), ([1, 2], 2), ([2], 2), ([2, 3], 3), ([2], 3)]
    #expect(lineEnds.count == expected.count)
    for cut in 0...whole.count {
        let trial = makeTempDirectory("outbox-trial")
        defer { try? FileManager.default.removeItem(atPath: trial) }
        try Data(whole[..<cut]).write(to: URL(fileURLWithPath: trial + "/outbox"))
        let (reopened, notes) = EventOutbox.open(directory: trial, limit: 100)
        let complete = lineEnds.filter { $0 <= cut }.count
        let state = complete == 0 ? ([], 0) : expected[complete - 1]
        #expect(reopened.pending.map(\.seq) == state.0 && reopened.lastSeq == state.1, "cut at \(cut)")
        #expect(notes.isEmpty == (cut == (complete == 0 ? 0 : lineEnds[complete - 1])), "cut at \(cut): \(notes)")
        // The torn part is cut off, so what is appended next is read back.
        let next = reopened.append([event(9)])
        #expect(next.added.map(\.seq) == [state.1 + 1])
        let (again, againNotes) = EventOutbox.open(directory: trial, limit: 100)
        #expect(againNotes.isEmpty && again.pending.map(\.seq) == state.0 + [state.1 + 1], "cut at \(cut)")
    }
}

@Test func garbageAfterTheLastRecordIsCutOffWithANote() throws {
    let dir = makeTempDirectory("outbox-junk")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let (outbox, _) = EventOutbox.open(directory: dir, limit: 100)
    _ = outbox.append([event(0)])
    let good = fileBytes(dir + "/outbox")
    // A power cut may leave zeros (an extended size whose blocks were never written).
    try Data(good + [UInt8](repeating: 0, count: 4096) + Array("A 1\n".utf8)).write(
        to: URL(fileURLWithPath: dir + "/outbox"))
    let (reopened, notes) = EventOutbox.open(directory: dir, limit: 100)
    #expect(reopened.pending.map(\.seq) == [1])
    #expect(notes.count == 1 && notes[0].contains("4100 bytes"), "\(notes)")
    #expect(fileBytes(dir + "/outbox") == good)
}

@Test func pastItsBoundTheOldestAreDroppedCountedAndReported() throws {
    let dir = makeTempDirectory("outbox-bound")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var (outbox, _) = EventOutbox.open(directory: dir, limit: 5)
    _ = outbox.append((0..<4).map { event($0) })
    let outcome = outbox.append((4..<8).map { event($0) })
    // 8 events and a notice for 5 places: seqs 1...4 dropped, the notice is seq 9.
    #expect(outcome.droppedCount == 4 && outcome.droppedSeqs == 1...4)
    #expect(outcome.added.map(\.seq) == [5, 6, 7, 8, 9])
    #expect(outbox.pending.map(\.seq) == [5, 6, 7, 8, 9] && outbox.droppedTotal == 4)
    #expect(String(decoding: outbox.pending.last!.payload, as: UTF8.self)
            == "{\"event\":\"outbox_dropped\",\"count\":4,\"first_seq\":1,\"last_seq\":4,\"seq\":9}")
    (outbox, _) = EventOutbox.open(directory: dir, limit: 5)
    #expect(outbox.pending.map(\.seq) == [5, 6, 7, 8, 9] && outbox.droppedTotal == 4 && outbox.lastSeq == 9)
}

@Test func deadRecordsAreRewrittenAwayAtomically() throws {
    let dir = makeTempDirectory("outbox-rewrite")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let (outbox, _) = EventOutbox.open(directory: dir, limit: 100_000)
    let big = String(repeating: "x", count: 1000)
    var seq: UInt64 = 0
    for round in 0..<1200 {
        let added = outbox.append([event(round, big)])
        seq = added.added[0].seq
        outbox.acknowledge([seq])
    }
    _ = outbox.append([event(0)])
    // 1.2 MB of events came and went; the file holds little more than the header and the last one.
    #expect(outbox.fileBytes < 1 << 20 && outbox.fileBytes > 0)
    let (reopened, notes) = EventOutbox.open(directory: dir, limit: 100_000)
    #expect(notes.isEmpty && reopened.pending.map(\.seq) == [seq + 1] && reopened.lastSeq == seq + 1)
    #expect(!(try FileManager.default.contentsOfDirectory(atPath: dir)).contains { $0.hasPrefix(".outbox-tmp") })
}

@Test func aRewriteKeepsTheEventsStillWaiting() throws {
    let dir = makeTempDirectory("outbox-rewrite-waiting")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let (outbox, _) = EventOutbox.open(directory: dir, limit: 100_000)
    // Two events wait (never acknowledged) while 1.2 MB of others come and go: the rewrite
    // writes the header (next seq 1203) before them, and they must read back after it.
    _ = outbox.append([event(0), event(1)])
    let big = String(repeating: "x", count: 1000)
    for round in 0..<1200 { outbox.acknowledge(outbox.append([event(round, big)]).added.map(\.seq)) }
    #expect(outbox.fileBytes < 1 << 20)
    let (reopened, notes) = EventOutbox.open(directory: dir, limit: 100_000)
    #expect(notes.isEmpty, "\(notes)")
    #expect(reopened.pending.map(\.seq) == [1, 2] && reopened.lastSeq == 1202)
    #expect(reopened.append([event(2)]).added.map(\.seq) == [1203])
}

@Test func anUnusableFolderLeavesAnOutboxInMemory() throws {
    let dir = makeTempDirectory("outbox-file")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try Data("not a folder".utf8).write(to: URL(fileURLWithPath: dir + "/mqtt"))
    let (outbox, notes) = EventOutbox.open(directory: dir + "/mqtt", limit: 10)
    #expect(outbox.path == nil && notes.count == 1 && notes[0].contains("in memory only"), "\(notes)")
    #expect(outbox.append([event(0)]).added.map(\.seq) == [1])
}

@Test func theRecordsReadBackAsWritten() {
    let records: [OutboxRecord] = [.header(nextSeq: 0, dropped: 0), .header(nextSeq: 12, dropped: 3),
                                   .event(OutboxEvent(seq: 5, payload: Array("{\"a\":1,\"seq\":5}".utf8))),
                                   .acknowledged(seq: 9_223_372_036_854_775_806), .dropped(seq: 1)]
    for r in records { #expect(OutboxRecord.parse(r.line.dropLast()[...]) == r, "\(r)") }
    for bad in [
        "H 2 1 0", "H 1 01 0", "A 0", "A -1", "A 1 ", "E 5 {\"a\":1,\"seq\":6}", "E 5 [\"seq\":5}", "E 5 ", "X 1",
        "A 9223372036854775807", "D", "E 05 {\"seq\":5}",
    ] {
        #expect(OutboxRecord.parse(Array(bad.utf8)[...]) == nil, "\(bad)")
    }
}
