// SPDX-License-Identifier: Apache-2.0
// The MQTT side's fuzz targets: command messages (topic, payload, retain flag) and broker URLs,
// and the outbox file's records.
import KioskMQTT
import KioskSystem

// MARK: - mqtt

private let fuzzTopics = MQTTTopics(prefix: "kiosk-carousel/lobby", discoveryPrefix: "homeassistant")

/// The one payload of each command that the parser gives it for (buttons also take nothing).
private func canonicalPayloads(_ command: MQTTCommand) -> [[UInt8]] {
    switch command {
    case .next, .previous, .pause, .resume: return [[], Array(MQTTCommandParser.press.utf8)]
    case .goto(let index): return [Array(String(index).utf8)]
    case .display(let on): return [Array((on ? "ON" : "OFF").utf8)]
    case .brightness(let percent): return [Array((percent.map { String($0) } ?? "auto").utf8)]
    }
}

/// Any bytes as a message on a command topic (byte 0: the retain flag and whether the topic is
/// the device's prefix and `/command/` then the bytes up to the first NUL, or those bytes
/// alone; the payload is the rest), as a broker URL and as an event line. Invariants: a
/// command comes only from exactly its own topic, not retained, with exactly its payload; a
/// refusal names a command only for one of the device's command topics; a broker URL read
/// back from its description is the same broker, and the description never holds the
/// password; an event payload is the line plus its seq, a record of it reads back the same.
func fuzzMQTT(_ data: [UInt8]) {
    guard let flags = data.first else { return }
    let rest = data.dropFirst()
    let split = rest.firstIndex(of: 0) ?? rest.endIndex
    let topicBytes = (flags & 2 != 0 ? Array("kiosk-carousel/lobby/command/".utf8) : []) + rest[..<split]
    let payload = Array(rest[split...].dropFirst())
    let retained = flags & 1 != 0
    switch MQTTCommandParser.parse(topic: topicBytes, payload: payload, retained: retained, topics: fuzzTopics) {
    case .success(let command):
        guard Array(fuzzTopics.command(command.name).utf8) == topicBytes, !retained,
              canonicalPayloads(command).contains(payload) else {
            fuzzFailure("\(command) from topic \(topicBytes) payload \(payload) retained \(retained)", data)
        }
    case .failure(let refusal):
        if let name = refusal.command, Array(fuzzTopics.command(name).utf8) != topicBytes {
            fuzzFailure("refusal names \(name) for topic \(topicBytes)", data)
        }
    }

    let text = String(decoding: data, as: UTF8.self)
    if let url = try? BrokerURL.parse(text) {
        guard let back = try? BrokerURL.parse(url.description.replacing(":***@", with: "@")),
              back.tls == url.tls, back.host == url.host, back.port == url.port, back.user == url.user else {
            fuzzFailure("broker URL \(url) does not read back from '\(url.description)'", data)
        }
        // The login part of the description (between "://" and its last '@') is the user,
        // percent-encoded (so holding no ':'), and ":***" for a password: never the password.
        let afterScheme = url.description.firstRange(of: "://").map { String(url.description[$0.upperBound...]) } ?? ""
        let login = afterScheme.lastIndex(of: "@").map { String(afterScheme[..<$0]) } ?? ""
        if url.password != nil, !login.hasSuffix(":***") || login.dropLast(4).contains(":") {
            fuzzFailure("password shown in '\(url.description)'", data)
        }
    }

    let seq = UInt64(flags) + 1
    if let event = OutboxEvent.payload(line: data, seq: seq) {
        guard case .object(let fields)? = try? JSONValue.parse(event), fields["seq"] == .int(Int64(seq)),
              event.count > data.count else {
            fuzzFailure("event payload \(event) of line \(data)", data)
        }
        if event.count <= EventOutbox.maxPayloadBytes {
            let record = OutboxRecord.event(OutboxEvent(seq: seq, payload: event))
            guard OutboxRecord.parse(record.line.dropLast()[...]) == record else {
                fuzzFailure("event record does not read back", data)
            }
        }
    }
}

// MARK: - outbox

/// Any bytes as an outbox file. Invariants: the valid part ends at a line end; replaying only
/// it gives the same state; the waiting events are in strictly increasing seq order below the
/// next seq; a rewrite of the state (header and waiting events) replays to the same state.
func fuzzOutbox(_ data: [UInt8]) {
    let (journal, valid, records) = OutboxJournal.replay(data)
    guard valid <= data.count, valid == 0 || data[valid - 1] == 0x0A, records <= data.count else {
        fuzzFailure("valid part \(valid) of \(data.count) bytes, \(records) records", data)
    }
    let (again, validAgain, _) = OutboxJournal.replay(Array(data[..<valid]))
    guard validAgain == valid, again.pending == journal.pending, again.nextSeq == journal.nextSeq,
          again.droppedTotal == journal.droppedTotal else {
        fuzzFailure("the valid part alone replays otherwise", data)
    }
    let seqs = journal.pending.map(\.seq)
    guard zip(seqs, seqs.dropFirst()).allSatisfy({ $0 < $1 }), seqs.allSatisfy({ $0 < journal.nextSeq }) else {
        fuzzFailure("pending seqs \(seqs) with next \(journal.nextSeq)", data)
    }
    var rewritten: [UInt8] = []
    for record in journal.compacted { rewritten += record.line }
    let (compacted, compactedValid, _) = OutboxJournal.replay(rewritten)
    guard compactedValid == rewritten.count, compacted.pending == journal.pending, compacted.nextSeq == journal.nextSeq,
          compacted.droppedTotal == journal.droppedTotal else {
        fuzzFailure("a rewrite replays otherwise", data)
    }
}
