// SPDX-License-Identifier: Apache-2.0
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
/// Capture times (``captureTime(path:zone:)``) are read once per file version (path, size,
/// mtime) and only when the order needs them (`date`, `newest`, `on-this-day`, or
/// `--recent-days`): at most ``ImageDescription/readLimit`` bytes of each file's front.
/// Owned by the frame loop's thread.
final class PlayOrder {
    private(set) var order: ShowOrder
    /// The folder of `shuffle-round`; nil: the round is not kept.
    let stateDirectory: String?
    /// Capture times by path, with the file version they were read from.
    private var times: [String: (version: FileIdentity, taken: CaptureTime?)] = [:]
    /// The day the last "none taken on this day" line was written for.
    private var saidNoneOn: LocalDate?
    /// The `shuffle-round` text last written (nothing is written when it did not change).
    private var saved: String?

    static let stateFile = "shuffle-round"
    /// The longest show time between writes of a changed round (60 s).
    static let saveInterval: Duration = .seconds(60)
    /// When the round was last written (show time); nil: not yet.
    private var savedAt: Duration?
    /// `--order`: what plays when the manifest gives no `order`.
    let configured: PlaylistOrder

    /// The manifest's `order` (nil: none given): it is in force over `--order` while given.
    func use(manifestOrder: PlaylistOrder?) {
        let wanted = manifestOrder ?? configured
        guard wanted != order.order else { return }
        Log.info("order changed", detail: "\(order.order.rawValue) to \(wanted.rawValue)"
                 + (manifestOrder != nil ? " (the manifest's)" : " (--order)"))
        order.order = wanted
    }

    /// `order` with a bag restored from `stateDirectory/shuffle-round` when there is a usable
    /// one (else a fresh bag); `seed` draws the shuffles (nil: from the system's random source).
    init(order: PlaylistOrder, recentDays: Int?, stateDirectory: String?, seed: UInt64? = nil) {
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
                        Log.info("shuffle round restored", path: path,
                                 detail: "\(counted(restored.shownThisRound.count, "image")) of it shown")
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

    /// Whether capture times are needed at all.
    private var needsTimes: Bool { order.order != .name && order.order != .shuffle || order.recentDays != nil }

    /// The sequence for `playlist` (nil: as listed), `current` being the source on screen.
    func sequence(for playlist: [PlaylistItem], current: String?, wall: any WallTimeSource) -> [Int]? {
        let (now, zone) = wall.readWallTime()
        let today = zone.local(atEpochSecond: now.components.seconds).date
        let taken: [CaptureTime?] = needsTimes ? playlist.map { captureTime(path: $0.source, zone: zone) }
            : Array(repeating: nil, count: playlist.count)
        let (sequence, matched) = order.sequence(for: playlist, taken: taken, today: today, current: current)
        if !matched, saidNoneOn != today {
            saidNoneOn = today
            Log.info("on this day: none", detail: "no photo taken on \(today.description.dropFirst(5)) in an "
                     + "earlier year; the whole playlist plays by date")
        }
        save()
        return sequence
    }

    /// Playlist item `item` was shown; the new sequence when the carousel's next item must
    /// change, and whether a shuffle round was completed. The round is kept.
    func shown(item: Int, playlist: [PlaylistItem], sequence: [Int]?,
               at now: Duration) -> (newSequence: [Int]?, roundDone: Bool) {
        let step = order.shown(item: item, playlist: playlist, sequence: sequence)
        if step.roundDone || savedAt.map({ now - $0 >= Self.saveInterval }) ?? true {
            savedAt = now
            save()
        }
        return step
    }

    /// Writes the round if it changed since it was last written (the show stops).
    func flush() { save() }

    /// Writes the shuffle round when it changed; a failure is logged once per kind and the
    /// show goes on (the round is then not kept over a restart).
    private func save() {
        guard order.order == .shuffle, let directory = stateDirectory else { return }
        let text = order.bag.encoded()
        guard text != saved else { return }
        saved = text
        do {
            try AtomicFile.makeDirectories(directory)
            try AtomicFile.write(Array(text.utf8), directory: directory, name: Self.stateFile, mode: 0o600)
        } catch {
            Log.warning("shuffle round not kept", path: directory + "/" + Self.stateFile, reason: error.description)
        }
    }

    /// When the photo at `path` was taken: EXIF DateTimeOriginal (with OffsetTimeOriginal, else
    /// the camera's wall time read in `zone`), else the file's modification time; nil for a URL
    /// or a file that cannot be looked at. Read once per file version.
    func captureTime(path: String, zone: any TimeZoneRules) -> CaptureTime? {
        guard path.hasPrefix("/"), let info = try? fileStatus(path) else { return nil }
        let version = FileIdentity(info)
        if let known = times[path], known.version == version { return known.taken }
        let taken = Self.captureTime(metadata: ImageDescription.metadata(path: path),
                                     modified: Int64(info.st_mtim.tv_sec), zone: zone)
        times[path] = (version, taken)
        return taken
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
