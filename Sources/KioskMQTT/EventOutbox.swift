// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// The events not yet acknowledged by the broker, on disk (docs/mqtt.md "The outbox"): the
/// file `outbox` in its folder, a journal of ``OutboxRecord`` lines.
///
/// - An event gets the next `seq` and its record is appended and `fdatasync`'ed (one sync per
///   batch) before it may be published: a SIGKILL or a power cut loses at most events that
///   were never sent. An acknowledgement is appended without a sync: losing one only sends the
///   event again (at least once; `seq` tells duplicates apart).
/// - At open, the file is replayed up to its first incomplete or invalid line and cut there;
///   the events it holds are sent again, and `seq` goes on from the highest seen.
/// - Bounded: at most `limit` events and ``maxTotalBytes`` of payload wait; past that the
///   oldest are dropped, each with a `D` record, counted in ``droppedTotal``, and an
///   `outbox_dropped` event (`count`, `first_seq`, `last_seq`) is added for the consumer.
/// - When dead records (acknowledged, dropped) pass ``rewriteThreshold`` and the live ones, the
///   file is rewritten (header and waiting events to a temporary file, `fsync`, `rename(2)`,
///   `fsync` of the folder): a crash leaves the old file or the new one.
/// - A write that fails (a full disk) is cut back off the file and the events stay in memory:
///   they are still sent, only not crash-safe, and ``lastError`` says why.
///
/// Not thread-safe: the MQTT client's thread owns it.
public final class EventOutbox {
    /// The file's name in its folder.
    public static let fileName = "outbox"
    /// Longest payload kept, bytes; a longer event line is refused (logged by the caller).
    public static let maxPayloadBytes = 16 * 1024
    /// Most payload bytes waiting.
    public static let maxTotalBytes = 32 << 20
    /// Dead bytes that make a rewrite worth it (when also more than the live ones).
    public static let rewriteThreshold = 1 << 20

    /// The file, nil for an outbox in memory only.
    public let path: String?
    public let limit: Int
    private let directory: String?
    private var fd: Int32 = -1
    /// The file's length as written and synced or not: a failed write is cut back to it.
    private var fileLength = 0
    private var journal: OutboxJournal
    /// Why the last write failed (nil after one that worked).
    public private(set) var lastError: String?

    /// What ``append(_:)`` did.
    public struct AppendOutcome: Equatable, Sendable {
        /// The new events, in seq order (the lines', then a drop notice's).
        public var added: [OutboxEvent] = []
        /// Events dropped to stay in bounds (the oldest), and their seq range.
        public var droppedCount = 0
        public var droppedSeqs: ClosedRange<UInt64>?
        /// Lines refused: not one JSON object, or over ``maxPayloadBytes``.
        public var refused = 0
        /// Whether the new events are on disk (false: in memory only, see ``lastError``).
        public var durable = true
    }

    /// Opens the outbox in `directory` (made with mode 0700 when missing; nil: memory only).
    /// Never fails: a folder or file that cannot be used leaves an outbox in memory, and the
    /// strings returned say what happened (for the log). `limit`: most events kept (at least 1).
    public static func open(directory: String?, limit: Int) -> (EventOutbox, notes: [String]) {
        var notes: [String] = []
        guard let directory else { return (EventOutbox(directory: nil, journal: OutboxJournal(), limit: limit), notes) }
        let path = directory + "/" + fileName
        do throws(MQTTError) {
            try makeDirectory(directory)
            removeTemporaryFiles(in: directory)
            var bytes: [UInt8] = []
            do {
                bytes = try readRegularFile(path, limit: 2 * maxTotalBytes + 2 * rewriteThreshold)
            } catch {
                if error.errno != ENOENT { throw .system(error) }
            }
            let (journal, valid, records) = OutboxJournal.replay(bytes)
            let outbox = EventOutbox(directory: directory, journal: journal, limit: limit)
            if valid < bytes.count {
                notes.append("\(bytes.count - valid) bytes after record \(records) were not a complete record"
                             + " (a write cut short by a crash or a power cut): cut off")
            }
            try outbox.openFile(truncatingTo: valid)
            if outbox.journal.deadBytes > rewriteThreshold { try outbox.rewrite() }
            return (outbox, notes)
        } catch {
            notes.append("\(error); events are kept in memory only (lost on a restart) and seq starts at 1")
            return (EventOutbox(directory: nil, journal: OutboxJournal(), limit: limit), notes)
        }
    }

    private init(directory: String?, journal: OutboxJournal, limit: Int) {
        self.directory = directory
        self.path = directory.map { $0 + "/" + Self.fileName }
        self.journal = journal
        self.limit = max(1, limit)
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// The events waiting, oldest first.
    public var pending: [OutboxEvent] { journal.pending }
    public var pendingCount: Int { journal.pending.count }
    /// Events dropped over the outbox's whole life (kept in the file).
    public var droppedTotal: UInt64 { journal.droppedTotal }
    /// The seq of the newest event made (0: none yet).
    public var lastSeq: UInt64 { journal.nextSeq - 1 }
    /// The file's length now, bytes (0 in memory).
    public var fileBytes: Int { fileLength }

    /// Adds events for `lines` (event JSON lines without newline, ``OutboxEvent/payload(line:seq:)``),
    /// drops the oldest past the bounds, and writes and syncs their records with one
    /// `fdatasync`. Returns at once when the file cannot be written (see ``AppendOutcome/durable``).
    public func append(_ lines: [[UInt8]]) -> AppendOutcome {
        var outcome = AppendOutcome()
        var records: [OutboxRecord] = []
        for line in lines {
            let seq = journal.nextSeq
            guard let payload = OutboxEvent.payload(line: line, seq: seq), payload.count <= Self.maxPayloadBytes else {
                outcome.refused += 1
                continue
            }
            let event = OutboxEvent(seq: journal.takeSeq(), payload: payload)
            journal.apply(.event(event))
            records.append(.event(event))
            outcome.added.append(event)
        }
        dropOldest(room: 0, roomBytes: 0, records: &records, outcome: &outcome)
        if outcome.droppedCount > 0 {
            // The notice is the newest event, so it outlives the events it tells of; making
            // room for it may drop one more, which it counts.
            dropOldest(room: 1, roomBytes: 160, records: &records, outcome: &outcome)
            let seq = journal.takeSeq()
            let notice = OutboxEvent(seq: seq, payload: Self.dropNotice(outcome, seq: seq))
            journal.apply(.event(notice))
            records.append(.event(notice))
            outcome.added.append(notice)
            var kept: [OutboxEvent] = []
            for event in outcome.added where journal.index(of: event.seq) != nil { kept.append(event) }
            outcome.added = kept
        }
        outcome.durable = write(records, sync: !outcome.added.isEmpty)
        return outcome
    }

    /// Drops the oldest events until `room` more events of `roomBytes` bytes fit, noting each
    /// drop in `records` and `outcome`. A method, not a local function of `append`: with the local
    /// function, swiftc 6.3.1 -O gave `append` a different register and stack-slot allocation
    /// from one build to the next, so the release binary was not reproducible (docs/building.md).
    private func dropOldest(room: Int, roomBytes: Int, records: inout [OutboxRecord], outcome: inout AppendOutcome) {
        while journal.pending.count + room > limit || journal.pendingBytes + roomBytes > Self.maxTotalBytes,
              let oldest = journal.pending.first {
            journal.apply(.dropped(seq: oldest.seq))
            records.append(.dropped(seq: oldest.seq))
            outcome.droppedCount += 1
            let low = min(outcome.droppedSeqs?.lowerBound ?? oldest.seq, oldest.seq)
            outcome.droppedSeqs = low...max(outcome.droppedSeqs?.upperBound ?? oldest.seq, oldest.seq)
        }
    }

    /// The drop notice's payload: one JSON object naming how many events were dropped and their
    /// seq range (``AppendOutcome/droppedSeqs``), with its own `seq`.
    private static func dropNotice(_ outcome: AppendOutcome, seq: UInt64) -> [UInt8] {
        let range = outcome.droppedSeqs ?? 0...0
        var text = "{\"event\":\"outbox_dropped\",\"count\":\(outcome.droppedCount),"
        text += "\"first_seq\":\(range.lowerBound),\"last_seq\":\(range.upperBound),\"seq\":\(seq)}"
        return Array(text.utf8)
    }

    /// Records that the broker acknowledged these events (or refused them for good); written
    /// without a sync. Seqs not waiting are ignored.
    public func acknowledge(_ seqs: [UInt64]) {
        var records: [OutboxRecord] = []
        for seq in seqs where journal.index(of: seq) != nil {
            journal.apply(.acknowledged(seq: seq))
            records.append(.acknowledged(seq: seq))
        }
        guard !records.isEmpty else { return }
        _ = write(records, sync: false)
        if journal.deadBytes > Self.rewriteThreshold && journal.deadBytes > journal.pendingBytes {
            do { try rewrite() } catch { lastError = error.description }
        }
    }

    /// Makes the acknowledgements written so far durable (at a clean stop).
    public func sync() {
        if fd >= 0 { _ = fdatasync(fd) }
    }

    // MARK: The file

    private func openFile(truncatingTo length: Int) throws(MQTTError) {
        guard let path else { return }
        let opened = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw .system(SystemError(operation: "open", path: path, errno: errno)) }
        if fd >= 0 { Glibc.close(fd) }
        fd = opened
        var st = stat()
        _ = fstat(fd, &st)
        if Int(st.st_size) != length {
            guard ftruncate(fd, off_t(length)) == 0, fdatasync(fd) == 0 else {
                throw .system(SystemError(operation: "ftruncate", path: path, errno: errno))
            }
        }
        fileLength = length
        // A new file's name must survive a power cut too.
        try syncDirectory()
    }

    /// Appends `records`; on failure cuts the file back to its last good length.
    private func write(_ records: [OutboxRecord], sync: Bool) -> Bool {
        guard fd >= 0, !records.isEmpty else { return fd >= 0 }
        var bytes: [UInt8] = []
        for r in records { bytes += r.line }
        var offset = 0
        var failure: SystemError?
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { failure = SystemError(operation: "write", path: path ?? "", errno: n < 0 ? errno : EIO); break }
            offset += n
        }
        if failure == nil && sync && fdatasync(fd) != 0 {
            failure = SystemError(operation: "fdatasync", path: path ?? "", errno: errno)
        }
        if let failure {
            lastError = failure.description
            _ = ftruncate(fd, off_t(fileLength))
            return false
        }
        fileLength += bytes.count
        lastError = nil
        return true
    }

    /// Writes the header and the waiting events to a new file and renames it over the old one.
    private func rewrite() throws(MQTTError) {
        guard let path, let directory else { return }
        let temporary = directory + "/.outbox-tmp-\(getpid())"
        let out = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw .system(SystemError(operation: "open", path: temporary, errno: errno)) }
        var bytes: [UInt8] = []
        for r in journal.compacted { bytes += r.line }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(out, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let e = n < 0 ? errno : EIO
                Glibc.close(out)
                unlink(temporary)
                throw .system(SystemError(operation: "write", path: temporary, errno: e))
            }
            offset += n
        }
        guard fsync(out) == 0 else {
            let e = errno
            Glibc.close(out)
            unlink(temporary)
            throw .system(SystemError(operation: "fsync", path: temporary, errno: e))
        }
        Glibc.close(out)
        guard rename(temporary, path) == 0 else {
            let e = errno
            unlink(temporary)
            throw .system(SystemError(operation: "rename", path: temporary, errno: e))
        }
        try syncDirectory()
        journal.rewritten()
        try openFile(truncatingTo: bytes.count)
    }

    private func syncDirectory() throws(MQTTError) {
        guard let directory else { return }
        let dir = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw .system(SystemError(operation: "open", path: directory, errno: errno)) }
        defer { Glibc.close(dir) }
        guard fsync(dir) == 0 else { throw .system(SystemError(operation: "fsync", path: directory, errno: errno)) }
    }

    /// `mkdir -p` of the folder; the last level gets mode 0700 (the events name what was shown).
    private static func makeDirectory(_ path: String) throws(MQTTError) {
        var current = path.hasPrefix("/") ? "" : "."
        let levels = path.split(separator: "/")
        for (i, level) in levels.enumerated() {
            current += "/" + level
            if mkdir(current, i == levels.count - 1 ? 0o700 : 0o755) != 0 && errno != EEXIST {
                throw .system(SystemError(operation: "mkdir", path: current, errno: errno))
            }
        }
    }

    private static func removeTemporaryFiles(in directory: String) {
        guard let entries = try? listDirectory(directory) else { return }
        for entry in entries {
            if let name = entry.name, name.hasPrefix(".outbox-tmp-") { unlink(directory + "/" + name) }
        }
    }
}
