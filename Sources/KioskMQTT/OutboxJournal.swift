// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// One event waiting for the broker's acknowledgement: its `seq` and the payload published
/// (the event's JSON line with `"seq":N` added as its last member).
public struct OutboxEvent: Equatable, Sendable {
    public let seq: UInt64
    public let payload: [UInt8]

    public init(seq: UInt64, payload: [UInt8]) {
        self.seq = seq
        self.payload = payload
    }

    /// The payload for an event line (a JSON object on one line, as EventWriter writes it, no
    /// newline): the same text with `,"seq":N` before its closing brace (`{"seq":N}` for `{}`).
    /// Nil when the line is not one JSON object, already has a `seq`, or holds a line break.
    public static func payload(line: [UInt8], seq: UInt64) -> [UInt8]? {
        guard line.first == UInt8(ascii: "{"), line.last == UInt8(ascii: "}"),
              !line.contains(0x0A), !line.contains(0x0D),
              case .object(let fields)? = try? JSONValue.parse(line), fields["seq"] == nil else { return nil }
        let member = Array("\"seq\":\(seq)}".utf8)
        return Array(line.dropLast()) + (fields.isEmpty ? member : [UInt8(ascii: ",")] + member)
    }
}

/// A line of the outbox file (docs/mqtt.md "The outbox"), ASCII up to the payload, ending in
/// `\n`:
///
///     H 1 NEXT DROPPED        the header a rewrite starts with: format 1, the next seq, drops so far
///     E SEQ PAYLOAD           an event (PAYLOAD: the JSON published, one line)
///     A SEQ                   the broker acknowledged SEQ (PUBACK)
///     D SEQ                   SEQ was dropped, the oldest past the outbox's bound
///
/// Numbers are decimal without leading zeros, 1...2^63-1 (NEXT and DROPPED may be 0).
public enum OutboxRecord: Equatable, Sendable {
    case header(nextSeq: UInt64, dropped: UInt64)
    case event(OutboxEvent)
    case acknowledged(seq: UInt64)
    case dropped(seq: UInt64)

    /// The record as written, with its newline.
    public var line: [UInt8] {
        switch self {
        case .header(let next, let dropped): return Array("H 1 \(next) \(dropped)\n".utf8)
        case .event(let e): return Array("E \(e.seq) ".utf8) + e.payload + [0x0A]
        case .acknowledged(let seq): return Array("A \(seq)\n".utf8)
        case .dropped(let seq): return Array("D \(seq)\n".utf8)
        }
    }

    /// Reads one line (without its newline). Nil for anything but a record of the form above;
    /// an event's payload must be a JSON object text ending in `"seq":SEQ}` with its own SEQ.
    public static func parse(_ line: ArraySlice<UInt8>) -> OutboxRecord? {
        guard line.count >= 3, line[line.startIndex + 1] == 0x20 else { return nil }
        let body = line[(line.startIndex + 2)...]
        switch line.first {
        case UInt8(ascii: "H"):
            let words = body.split(separator: 0x20, omittingEmptySubsequences: false)
            guard words.count == 3, Array(words[0]) == [UInt8(ascii: "1")],
                  let next = number(words[1], zero: true), let dropped = number(words[2], zero: true) else {
                return nil
            }
            return .header(nextSeq: next, dropped: dropped)
        case UInt8(ascii: "A"), UInt8(ascii: "D"):
            guard let seq = number(body, zero: false) else { return nil }
            return line.first == UInt8(ascii: "A") ? .acknowledged(seq: seq) : .dropped(seq: seq)
        case UInt8(ascii: "E"):
            guard let space = body.firstIndex(of: 0x20), let seq = number(body[..<space], zero: false) else {
                return nil
            }
            let payload = body[(space + 1)...]
            let ending = Array("\"seq\":\(seq)}".utf8)
            guard payload.first == UInt8(ascii: "{"), payload.count > ending.count,
                  payload.suffix(ending.count).elementsEqual(ending),
                  !payload.contains(0x0D), payload.count <= EventOutbox.maxPayloadBytes else { return nil }
            return .event(OutboxEvent(seq: seq, payload: Array(payload)))
        default:
            return nil
        }
    }

    /// A decimal number without leading zeros (`0` itself only when `zero`), below 2^63.
    private static func number(_ digits: ArraySlice<UInt8>, zero: Bool) -> UInt64? {
        guard (1...19).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        if digits.first == 0x30 { return zero && digits.count == 1 ? 0 : nil }
        guard let n = UInt64(String(decoding: digits, as: UTF8.self)), n < UInt64(Int64.max) else { return nil }
        return n
    }
}

/// The outbox's state, as the records leave it (pure: no file). Events are kept in seq order;
/// an acknowledged or dropped one leaves at once.
public struct OutboxJournal: Equatable, Sendable {
    /// The events still waiting, oldest first (strictly increasing `seq`).
    public private(set) var pending: [OutboxEvent] = []
    /// The seq the next event gets (1 for a new outbox).
    public private(set) var nextSeq: UInt64 = 1
    /// Events dropped past the bound, over the outbox's whole life.
    public private(set) var droppedTotal: UInt64 = 0
    /// The highest seq of an event record applied (0: none): events come in increasing order.
    public private(set) var lastEventSeq: UInt64 = 0
    /// Payload bytes of ``pending``.
    public private(set) var pendingBytes = 0
    /// Bytes of records that no longer say anything (acknowledgements, drops, and the events
    /// they ended): what a rewrite would save.
    public private(set) var deadBytes = 0

    public init() {}

    /// Whether `record` may follow the records applied so far: an event's seq is above every
    /// event's seq before it (no event is written twice or out of order; a rewrite's header
    /// gives the next seq, above the events that follow it), a header comes first.
    public func accepts(_ record: OutboxRecord, first: Bool) -> Bool {
        switch record {
        case .header: return first
        case .event(let e): return e.seq > lastEventSeq
        case .acknowledged, .dropped: return true
        }
    }

    /// Applies one record (an acknowledgement or drop of a seq not waiting is kept as dead
    /// bytes: it was acknowledged already, or before a rewrite).
    public mutating func apply(_ record: OutboxRecord) {
        let size = record.line.count
        switch record {
        case .header(let next, let dropped):
            nextSeq = max(nextSeq, next)
            droppedTotal = dropped
        case .event(let e):
            pending.append(e)
            pendingBytes += e.payload.count
            lastEventSeq = max(lastEventSeq, e.seq)
            nextSeq = max(nextSeq, e.seq + 1)
        case .acknowledged(let seq), .dropped(let seq):
            deadBytes += size
            if case .dropped = record { droppedTotal += 1 }
            if let i = index(of: seq) {
                let e = pending.remove(at: i)
                pendingBytes -= e.payload.count
                deadBytes += OutboxRecord.event(e).line.count
            }
        }
    }

    /// Where the event `seq` is in ``pending`` (binary search), nil when it is not waiting.
    public func index(of seq: UInt64) -> Int? {
        var low = 0, high = pending.count
        while low < high {
            let mid = (low + high) / 2
            if pending[mid].seq < seq { low = mid + 1 } else { high = mid }
        }
        return low < pending.count && pending[low].seq == seq ? low : nil
    }

    /// Takes the next seq for a new event.
    public mutating func takeSeq() -> UInt64 {
        defer { nextSeq += 1 }
        return nextSeq
    }

    /// After a rewrite: nothing dead is left.
    public mutating func rewritten() { deadBytes = 0 }

    /// The records a rewrite writes: the header, then every waiting event.
    public var compacted: [OutboxRecord] {
        [.header(nextSeq: nextSeq, dropped: droppedTotal)] + pending.map { .event($0) }
    }

    /// Replays a file's bytes: every complete, valid line in order, up to the first that is not
    /// (a line cut short by a crash, or garbage a power cut left after the last `fdatasync`).
    /// Returns the state and how many bytes of `bytes` were valid (the rest is to be cut off).
    public static func replay(_ bytes: [UInt8]) -> (journal: OutboxJournal, validBytes: Int, records: Int) {
        var journal = OutboxJournal()
        var offset = 0, records = 0
        while offset < bytes.count {
            guard let newline = bytes[offset...].firstIndex(of: 0x0A),
                  let record = OutboxRecord.parse(bytes[offset..<newline]),
                  journal.accepts(record, first: records == 0) else { break }
            journal.apply(record)
            records += 1
            offset = newline + 1
        }
        return (journal, offset, records)
    }
}
