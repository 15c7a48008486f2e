// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskSystem
@testable import KioskApp

// The control protocol without a socket: lines as a client sends them, in pieces.

private func lines(_ chunks: [String], max: Int = 16, endOfInput: Bool = false) -> [ControlLineReader.Line] {
    var reader = ControlLineReader(maxLineBytes: max)
    var out: [ControlLineReader.Line] = []
    for (i, chunk) in chunks.enumerated() {
        reader.append(Array(chunk.utf8))
        while let line = reader.next(endOfInput: endOfInput && i == chunks.count - 1) { out.append(line) }
    }
    return out
}

private func request(_ s: String) -> ControlLineReader.Line { .request(Array(s.utf8)) }

@Test func linesAreCutAtNewlinesWhateverPiecesTheyCameIn() {
    #expect(lines(["{\"a\"", ":1}\n{\"b\":2}\r\n", "{\"c\""]) == [request("{\"a\":1}"), request("{\"b\":2}")])
    #expect(lines(["\n  \t\n\r\nx\n"]) == [request("x")], "blank lines skipped")
    #expect(lines(["last"], endOfInput: true) == [request("last")], "a last line needs no newline")
    #expect(lines(["last"]) == [], "…but only at the end of input")
}

@Test func anOverLongLineIsReportedOnceAndSkippedToItsNewline() {
    let long = String(repeating: "x", count: 40)
    #expect(lines([long, long, "tail\nok\n"]) == [.tooLong, request("ok")])
    #expect(lines([long + "\nok\n"]) == [.tooLong, request("ok")], "one that arrived whole")
    #expect(lines([String(repeating: "y", count: 16) + "\n"]) == [request(String(repeating: "y", count: 16))],
            "exactly the limit is fine")
}

@Test func repliesAndRequestsGoThroughTheOneJSONValue() {
    let line = ControlProtocol.reply(id: .string("q"), error: "success", data: .object(["t": .int(5)]))
    #expect(String(decoding: line, as: UTF8.self) == #"{"data":{"t":5},"error":"success","request_id":"q"}"# + "\n")
    #expect(String(decoding: ControlProtocol.reply(id: nil, error: "success"), as: UTF8.self)
            == #"{"error":"success"}"# + "\n")
    if case .failure(let f) = ControlProtocol.parse(Array(#"{"command":["goto",1e999]}"#.utf8)) {
        #expect(f.message.hasPrefix("invalid JSON"), "\(f.message)")
    } else { Issue.record("1e999 accepted") }
    if case .failure(let f) = ControlProtocol.parse(Array(#"{"command":["next",],"request_id":3}"#.utf8)) {
        #expect(f.message == "invalid JSON: trailing comma before ']' "
                    + "(RFC 8259 allows none after the last array member) (line 1, column 20)")
    } else { Issue.record("a trailing comma accepted") }
    if case .success(let r) = ControlProtocol.parse(
        Array(#"{"command":["goto",2],"request_id":[1,{"k":null}]}"#.utf8)) {
        #expect(r.command == .goto(2))
        #expect(r.id == .array([.int(1), .object(["k": .null])]))
    } else { Issue.record("goto 2 refused") }
}
