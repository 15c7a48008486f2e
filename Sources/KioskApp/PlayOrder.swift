// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import KioskContent
import KioskCore
import KioskImaging
import KioskSystem

/// The show's play order in the app (`--order`, `--recent-days`; docs/carousel.md "Order"):
/// ``ShowOrder`` (KioskCore) fed with capture times read from the files, and the shuffle round
/// kept in the state directory (`shuffle-round`, written with ``AtomicFile``) so that a restart
/// or a power cut carries on with the round instead of starting a new one. The round is written
/// when a playlist arrives, when a round starts, when the show stops, and otherwise at most once
/// per ``saveInterval`` of show time: a durable write of the whole round (about 60 bytes an image)
/// after every picture would wear an SD card for little; a power cut loses at most that minute's
/// places, whose pictures come again in the round.
///
/// Capture times are read only when the order needs them (`date`, `newest`, `on-this-day`, or
/// `--recent-days`), off the frame loop by a ``CaptureTimeReader``: a playlist plays in the
/// order of the times known when it arrives and is ordered again when the reader's answer
/// comes (``timesArrived(wall:)``); at the start the show waits for the first answer
/// (``awaitFirstTimes(driver:interrupt:)``). Owned by the frame loop's thread.
final class PlayOrder {
    private(set) var order: ShowOrder
    /// The folder of `shuffle-round`; nil: the round is not kept.
    let stateDirectory: String?
    /// Reads the files' metadata off the loop.
    let reader: CaptureTimeReader
    /// What the reader last answered, by path: the file's metadata and modification time (nil:
    /// not a file that could be looked at).
    private var metadata: [String: CaptureTimeReader.Facts?] = [:]
    /// The playlist the times were last asked for, and the number of that question.
    private var asked: (playlist: [PlaylistItem], question: Int)?
    /// The number of the last question whose answer was taken.
    private var answered = 0
    /// The local day the sequence was last made for.
    private var orderedOn: LocalDate?
    /// When the day is looked at next (show time): the next local midnight in the show's zone,
    /// or sooner on a real clock (``WallTimeSource/scheduleRecheck``: a clock that is set is taken
    /// up within it); nil when the order does not change with the day. The loop wakes for it.
    private(set) var nextDayLook: Duration?
    /// The day the last "none taken on this day" line was written for (once the times were read).
    private(set) var saidNoneOn: LocalDate?
    /// The `shuffle-round` text last written (nothing is written when it did not change).
    private var saved: String?

    static let stateFile = "shuffle-round"
    /// The longest show time between writes of a changed round (60 s).
    static let saveInterval: Duration = .seconds(60)
    /// When the round was last written (show time); nil: not yet.
    private var savedAt: Duration?
    /// The kind of the last failed write (the call and its errno), so that a state directory
    /// that stays unwritable is logged once, not at every round; nil: the last write worked.
    private var saveFailure: (operation: String, errno: Int32)?
    /// `--order`: what plays when the manifest gives no `order`.
    let configured: PlaylistOrder

    /// The manifest's `order` (nil: none given): it is in force over `--order` while given.
    func use(manifestOrder: PlaylistOrder?) {
        let wanted = manifestOrder ?? configured
        guard wanted != order.order else { return }
        Log.info("order changed", detail: "\(order.order.rawValue) to \(wanted.rawValue)"
                 + (manifestOrder != nil ? " (the manifest's)" : " (--order)")
                 + (order.recentDays != nil && wanted != .shuffle ? "; --recent-days weights a shuffle only" : ""))
        order.order = wanted
    }

    /// `order` with a bag restored from `stateDirectory/shuffle-round` when there is a usable
    /// one (else a fresh bag); `seed` draws the shuffles (nil: from the system's random source).
    /// Throws ``SystemError`` when the reader's mailbox cannot be made (pipe2(2) fails).
    init(order: PlaylistOrder, recentDays: Int?, stateDirectory: String?, seed: UInt64? = nil) throws(SystemError) {
        reader = try CaptureTimeReader()
        let seed = seed ?? UInt64.random(in: 0...UInt64.max)
        var bag = ShuffleBag(seed: seed)
        configured = order
        if let directory = stateDirectory {
            let path = directory + "/" + Self.stateFile
            do {
                if let bytes = try AtomicFile.read(path, limit: 16 << 20) {
                    let text = String(decoding: bytes, as: UTF8.self)
                    if let restored = ShuffleBag(decoding: text, seed: seed) {
                        bag = restored
                        saved = text
                        // Kept for a manifest that asks for a shuffle; said only when the show shuffles.
                        if order == .shuffle {
                            Log.info("shuffle round restored", path: path,
                                     detail: "\(counted(restored.shownThisRound.count, "image")) of it shown")
                        }
                    } else {
                        Log.warning("shuffle round not restored", path: path,
                                    reason: "not a shuffle round; a new one starts")
                    }
                }
            } catch {
                Log.warning("shuffle round not restored", path: path, reason: error.description)
            }
        }
        self.order = ShowOrder(order: order, recentDays: recentDays, bag: bag)
        self.stateDirectory = stateDirectory
    }

    /// With `--order shuffle`, the sources with a place still to come in this round (the bag's
    /// upcoming places); nil for the other orders. A new set each call (one pass over the round).
    var roundToCome: Set<String>? { order.order == .shuffle ? Set(order.bag.upcoming) : nil }

    /// Whether capture times are needed at all.
    private var needsTimes: Bool { order.order != .name && order.order != .shuffle || order.recentDays != nil }

    /// The sequence for `playlist` (nil: as listed), `current` being the source on screen, from
    /// the capture times known now (`now`: show time); when the order needs times they are asked
    /// for again (a new playlist, or files that changed), and
    /// ``timesArrived(current:wall:at:)`` gives the sequence they make.
    func sequence(for playlist: [PlaylistItem], current: String?, wall: any WallTimeSource,
                  at now: Duration) -> [Int]? {
        if needsTimes {
            // Every file, relative paths too (`--order date photos`); URLs have no times.
            asked = (playlist, reader.ask(paths: playlist.map(\.source).filter { !ManifestItem.isRemote($0) }))
        }
        return ordered(playlist, current: current, wall: wall, timesKnown: !needsTimes, at: now)
    }

    /// The reader's answer to the last question, when it came: the sequence of that playlist
    /// in the order of the times read (nil when nothing changed or no answer is in). Else, at
    /// ``nextDayLook`` (`now`: show time), when the local day changed since the sequence was
    /// made (midnight): the sequence of the day that began (`on-this-day`, `--recent-days`).
    func timesArrived(current: String?, wall: any WallTimeSource, at now: Duration) -> [Int]?? {
        guard let answer = reader.take() else { return dayChanged(current: current, wall: wall, at: now) }
        guard let asked, answer.question == asked.question else { return nil }
        answered = answer.question
        let before = asked.playlist.map { metadata[$0.source] ?? nil }
        for (path, facts) in answer.facts { metadata[path] = facts }
        let changed = asked.playlist.map({ metadata[$0.source] ?? nil }) != before
        // Ordered even when nothing changed: the times are known now, so "none" can be said.
        let sequence = ordered(asked.playlist, current: current, wall: wall, timesKnown: true, at: now)
        return changed ? .some(sequence) : nil
    }

    /// At ``nextDayLook``: the sequence of the last playlist again when the local day is not
    /// the one it was made for; nil when it is (the next look is set).
    private func dayChanged(current: String?, wall: any WallTimeSource, at now: Duration) -> [Int]?? {
        guard let look = nextDayLook, now >= look, let asked else { return nil }
        let (sinceEpoch, zone) = wall.readWallTime()
        let today = zone.local(atEpochSecond: sinceEpoch.components.seconds).date
        guard today != orderedOn else {
            lookAtDay(after: today, sinceEpoch: sinceEpoch, zone: zone, wall: wall, at: now)
            return nil
        }
        Log.info("new day", detail: "\(today): the playlist is ordered again (--order \(order.order.rawValue))")
        return .some(ordered(asked.playlist, current: current, wall: wall, timesKnown: answered == asked.question,
                             at: now))
    }

    /// Sets ``nextDayLook`` at the local midnight that ends `today` (`sinceEpoch`: the wall time
    /// at show time `now`), when the order changes with the day.
    private func lookAtDay(after today: LocalDate, sinceEpoch: Duration, zone: any TimeZoneRules,
                           wall: any WallTimeSource, at now: Duration) {
        guard order.order == .onThisDay || order.order == .shuffle && order.recentDays != nil else {
            nextDayLook = nil
            return
        }
        let midnight = Duration.seconds(zone.instant(of: today.adding(days: 1), minute: 0))
        let until = max(midnight - sinceEpoch, .seconds(1))
        nextDayLook = now + (wall.scheduleRecheck.map { min(until, $0) } ?? until)
    }

    /// At the start: waits for the capture times of the first question, on virtual time for as
    /// long as it takes, on the real clock at most ``startWait`` (nothing is on the screen yet; a
    /// larger folder plays in the order known and is ordered again when its times are in).
    func awaitFirstTimes(driver: LoopDriver, interrupt: Int32) {
        guard asked != nil, reader.outstanding > 0 else { return }
        driver.settle(reader, interrupt: interrupt)  // virtual time: until the answer is in
        if reader.answers.count == 0 { _ = reader.answers.waitForValues(timeout: Self.startWait, interrupt: interrupt) }
    }

    /// The longest the show's start waits for capture times on the real clock (2 s).
    static let startWait: Duration = .seconds(2)

    /// The sequence of `playlist` by the capture times known; `timesKnown`: the reader answered
    /// for this playlist (only then is "on this day: none" said: before, no time may be known).
    private func ordered(_ playlist: [PlaylistItem], current: String?, wall: any WallTimeSource,
                         timesKnown: Bool, at showTime: Duration) -> [Int]? {
        let (now, zone) = wall.readWallTime()
        let today = zone.local(atEpochSecond: now.components.seconds).date
        orderedOn = today
        lookAtDay(after: today, sinceEpoch: now, zone: zone, wall: wall, at: showTime)
        let taken: [CaptureTime?] = needsTimes
            ? playlist.map { item in
                (metadata[item.source] ?? nil).map {
                    Self.captureTime(metadata: $0.metadata, modified: $0.modified, zone: zone)
                }
            }
            : Array(repeating: nil, count: playlist.count)
        let (sequence, matched) = order.sequence(for: playlist, taken: taken, today: today, current: current)
        if !matched, timesKnown, saidNoneOn != today {
            saidNoneOn = today
            Log.info("on this day: none", detail: "no photo taken on \(today.description.dropFirst(5)) in an "
                     + "earlier year; the whole playlist plays by date")
        }
        save()
        return sequence
    }

    /// Playlist item `item` was shown; the new sequence when the carousel's next item must
    /// change, and whether a shuffle round was completed. The round is kept.
    func shown(item: Int, playlist: [PlaylistItem], sequence: [Int]?, partner: Bool = false,
               at now: Duration) -> (newSequence: [Int]?, roundDone: Bool) {
        let step = order.shown(item: item, playlist: playlist, sequence: sequence, partner: partner)
        if step.roundDone || savedAt.map({ now - $0 >= Self.saveInterval }) ?? true {
            savedAt = now
            save()
        }
        return step
    }

    /// Writes the round if it changed since it was last written (the show stops).
    func flush() { save() }

    /// Writes the shuffle round when it changed; a failure is logged once per kind (the call
    /// and its errno) and the show goes on (the round is then not kept over a restart); a write
    /// that works again after one is logged too.
    private func save() {
        guard order.order == .shuffle, let directory = stateDirectory else { return }
        let text = order.bag.encoded()
        guard text != saved else { return }
        saved = text
        let path = directory + "/" + Self.stateFile
        do throws(SystemError) {
            try AtomicFile.makeDirectories(directory)
            try AtomicFile.write(Array(text.utf8), directory: directory, name: Self.stateFile, mode: 0o600)
            if saveFailure != nil {
                saveFailure = nil
                Log.info("shuffle round kept again", path: path)
            }
        } catch {
            if let last = saveFailure, last.operation == error.operation, last.errno == error.errno { return }
            saveFailure = (error.operation, error.errno)
            Log.warning("shuffle round not kept", path: path,
                        reason: error.description + " (said once until it changes; the show goes on)")
        }
    }

    /// The capture time from a file's metadata, else its modification time (seconds since the
    /// epoch, dated in `zone`).
    static func captureTime(metadata: PhotoMetadata, modified: Int64, zone: any TimeZoneRules) -> CaptureTime {
        if let exif = metadata.dateTimeOriginal {
            return CaptureTime(epochSecond: exif.epochSecond(zone: zone), localDate: exif.date)
        }
        return CaptureTime(epochSecond: modified, localDate: zone.local(atEpochSecond: modified).date)
    }
}

/// The facts capture times are made of, read off the frame loop on a utility queue: for each
/// local file its metadata (``ImageDescription/metadata(path:)``: at most
/// ``ImageDescription/readLimit`` bytes of its front) and modification time, read once per file
/// version (path, size, mtime) and looked up again (one stat(2)) at each question.
final class CaptureTimeReader: OffLoopWork {
    /// A file's metadata and modification time (seconds since the epoch).
    struct Facts: Equatable, Sendable {
        var metadata: PhotoMetadata
        var modified: Int64
    }

    /// An answer: the question's number and the facts of each path asked (nil: no file to read).
    struct Answer: Sendable {
        var question: Int
        var facts: [String: Facts?]
    }

    /// The answers, readable when one is in.
    let answers: Mailbox<Answer>
    /// Questions asked and not taken yet (loop thread).
    private(set) var outstanding = 0
    private var questions = 0
    private let queue = DispatchQueue(label: "kiosk-carousel capture times", qos: .utility)
    /// The facts by path with the file version they were read from (touched on `queue` only).
    private nonisolated(unsafe) var known: [String: (version: FileIdentity, facts: Facts)] = [:]

    /// Throws ``SystemError`` when the answers' mailbox cannot be made (pipe2(2) fails).
    init() throws(SystemError) { answers = try Mailbox() }

    /// Asks for the facts of `paths` (local files, a relative path from the working directory);
    /// returns the question's number.
    func ask(paths: [String]) -> Int {
        questions += 1
        outstanding += 1
        let question = questions
        queue.async { [self] in
            var facts: [String: Facts?] = [:]
            for path in paths {
                guard let info = try? fileStatus(path) else { facts[path] = .some(nil); continue }
                let version = FileIdentity(info)
                if let k = known[path], k.version == version { facts[path] = k.facts; continue }
                let read = Facts(metadata: ImageDescription.metadata(path: path), modified: Int64(info.st_mtim.tv_sec))
                known[path] = (version, read)
                facts[path] = read
            }
            answers.post(Answer(question: question, facts: facts))
        }
        return question
    }

    /// The latest answer in (older ones are dropped), if any.
    func take() -> Answer? {
        let taken = answers.take()
        outstanding -= taken.count
        return taken.last
    }

    func waitForAnswers(interrupt: Int32) {
        while outstanding > 0 && answers.count == 0 {
            if answers.waitForValues(timeout: .seconds(1), interrupt: interrupt) != .timedOut { break }
        }
    }
}
