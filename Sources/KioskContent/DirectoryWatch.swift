// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskSystem

/// Watches one directory with inotify(7) and publishes its sorted list of image files whenever
/// it changes (docs/content.md), on its own thread: the caller only polls ``changes``'s
/// ``Mailbox/wakeDescriptor`` and takes the newest list, never blocking.
///
/// - The images are the entries whose name ends in an extension of a format shown
///   (``ImageFormat/imageExtensions``: `.jpg`, `.jpeg`, `.jpe`, `.png`, `.webp`, `.heic`, `.heif`,
///   `.avif`, `.gif`, any case), not hidden, valid UTF-8, not directories: the rule of
///   ``SourceList`` too; and not symbolic links that lead out of the directory (or nowhere).
///   Each file left out for its name not being UTF-8, or for being such a link, is logged once.
///   Each list is sorted byte-wise (C locale, as `ls`), entries given as full paths.
/// - A file being written is listed only when complete: a file created (`IN_CREATE`) or
///   modified (`IN_MODIFY`) is held back until it is closed after writing, except the
///   directory's only image, which stays listed while it is rewritten
///   (`IN_CLOSE_WRITE`); a file renamed in (`IN_MOVED_TO`) is complete at once; removed or
///   renamed away (`IN_DELETE`, `IN_MOVED_FROM`) leaves at once. Files present at the start
///   are taken as complete. Subdirectories are not watched. (The kernel sends `IN_CLOSE_WRITE`
///   at the last close of a descriptor open for writing: a file whose descriptor a forked child
///   inherited stays held back until that child closes it too.)
/// - Changes are debounced: a list is published ``debounce`` after the last event of a burst,
///   and only when it differs from the last one published.
/// - A queue overflow (`IN_Q_OVERFLOW`) rescans the directory. When the directory itself is
///   deleted or moved, or its path no longer leads to it (looked at every ``identityInterval``:
///   a file or another folder put in its place, a symbolic link retargeted), an empty list is
///   published (even after an empty one), ``ended`` becomes true and watching ends.
public final class DirectoryWatch: @unchecked Sendable {
    /// The directory watched, without a trailing slash.
    public let path: String
    /// Quiet time before a burst of changes is published.
    public let debounce: Duration
    /// Receives each new list (full paths, sorted). The first list is ``initialFiles``, not posted.
    public let changes: Mailbox<[String]>
    /// The image files found at the start.
    public let initialFiles: [String]

    /// How often the watch thread looks whether ``path`` still leads to the folder watched.
    public static let identityInterval: Duration = .seconds(2)
    /// True once watching ended (the folder went or its path leads elsewhere); set before the
    /// last, empty, list is posted. Read from any thread.
    public var ended: Bool { endedFlag.withLock { $0 } }

    private let endedFlag = Locked(false)
    private let inotify: InotifyReader
    private let worker: WorkerThread
    /// The folder's device and inode at the start.
    private let identity: (dev: UInt64, ino: UInt64)

    // Owned by the watch thread.
    private var complete: Set<String> = []
    private var writing: Set<String> = []
    private var published: [String]
    /// Files whose names are not images, each logged once (again only if it goes and comes back).
    private var skipped: Set<String> = []
    /// Names that are not UTF-8, each logged once (the same way).
    private var notUTF8: Set<[UInt8]> = []
    /// The directory with every link resolved (realpath(3)) at the start: a symbolic link whose
    /// target is not inside it is not shown.
    private let realPath: String

    /// Starts watching `path`. Throws ``ContentError/system(_:)`` when inotify cannot be set up
    /// or the directory cannot be read.
    public init(path: String, debounce: Duration = .milliseconds(200)) throws(ContentError) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.debounce = debounce
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_MODIFY
                           | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
        do {
            changes = try Mailbox()
            inotify = try InotifyReader()
            try inotify.addWatch(self.path, mask: mask)
            worker = try WorkerThread(name: "directory watch \(self.path)")
            realPath = Self.resolved(self.path) ?? self.path
            let st = try fileStatus(self.path)
            identity = (UInt64(st.st_dev), UInt64(st.st_ino))
            // Scan after the watch is in place, so nothing falls between the two.
            complete = Set(try Self.imageNames(in: self.path))
            skipped = Set(try Self.skippedNames(in: self.path))
            notUTF8 = Set(try listDirectory(self.path).filter { $0.name == nil && !$0.isDirectory }.map(\.bytes))
        } catch { throw .system(error) }
        // Said once while they stay: a watch made again (SIGHUP, the folder back) says only new ones.
        let folder = self.path
        let unsaid = Self.unsaid(Set(skipped.map { Self.sayingKey($0, in: folder) }
                                     + notUTF8.map { Self.sayingKey($0, in: folder) }), in: folder)
        for name in skipped.sorted() where unsaid.contains(Self.sayingKey(name, in: folder)) {
            Self.logSkipped(name, in: folder)
        }
        for bytes in notUTF8.sorted(by: { $0.lexicographicallyPrecedes($1) })
        where unsaid.contains(Self.sayingKey(bytes, in: folder)) {
            Self.logNotUTF8(bytes, in: folder)
        }
        for name in complete.sorted() where Self.linkLeaving(name, in: self.path, realPath: realPath) {
            complete.remove(name)
        }
        published = Self.sortedPaths(complete, in: self.path)
        initialFiles = published
        do { try worker.start { self.run() } } catch { throw .system(error) }
    }

    /// Stops the watch thread and waits for it. Idempotent. Call it when done: the running
    /// thread keeps the watch alive until then.
    public func stop() { worker.stop() }

    deinit { stop() }

    // MARK: - The watch thread

    private func run() {
        var deadline: ContinuousClock.Instant?
        var nextLook = ContinuousClock.now + Self.identityInterval
        func end() {
            complete.removeAll(); writing.removeAll()
            published = []
            endedFlag.withLock { $0 = true }
            changes.post([])
        }
        while true {
            var set = PollSet(readable: [inotify.descriptor, worker.stopDescriptor])
            let wake = min(deadline ?? nextLook, nextLook)
            do { try set.wait(timeout: ContinuousClock.now.duration(to: wake)) } catch { return }
            if set.isReady(1) { return }
            if set.isReady(0) {
                switch handle(inotify.readEvents()) {
                case .changed: deadline = ContinuousClock.now + debounce
                case .gone: end(); return
                case .nothing: break
                }
            }
            if ContinuousClock.now >= nextLook {
                nextLook = ContinuousClock.now + Self.identityInterval
                // A file or another folder in its place, or a link retargeted, sends no event here.
                var st = stat()
                if stat(path, &st) != 0 || st.st_mode & S_IFMT != S_IFDIR
                    || UInt64(st.st_dev) != identity.dev || UInt64(st.st_ino) != identity.ino {
                    end(); return
                }
            }
            if let d = deadline, ContinuousClock.now >= d {
                deadline = nil
                let list = Self.sortedPaths(complete, in: path)
                if list != published {
                    published = list
                    changes.post(list)
                }
            }
        }
    }

    private enum Handled { case nothing, changed, gone }

    /// Applies the events read (``InotifyEvent``s of the one watch).
    private func handle(_ events: [InotifyEvent]) -> Handled {
        var result = Handled.nothing
        for event in events {
            let mask = event.mask
            let nameBytes = event.name
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { return .gone }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                complete = Set(((try? Self.imageNames(in: path)) ?? []).filter {
                    !Self.linkLeaving($0, in: path, realPath: realPath)
                })
                writing.removeAll()
                result = .changed
                continue
            }
            if mask & UInt32(IN_ISDIR) != 0 { continue }
            guard let name = String(validating: nameBytes, as: UTF8.self) else {
                let key = Self.sayingKey(nameBytes, in: path)
                if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) != 0, notUTF8.insert(nameBytes).inserted,
                   Self.said.withLock({ $0.insert(key).inserted }) {
                    Self.logNotUTF8(nameBytes, in: path)
                }
                if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                    notUTF8.remove(nameBytes)
                    Self.said.withLock { _ = $0.remove(key) }
                }
                continue
            }
            guard Self.isImageName(name) else {
                // Not an image by its name: listed once in the log when it is complete, so "why
                // is my photo not shown?" has an answer.
                let key = Self.sayingKey(name, in: path)
                if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0, !name.hasPrefix("."),
                   skipped.insert(name).inserted, Self.said.withLock({ $0.insert(key).inserted }) {
                    Self.logSkipped(name, in: path)
                }
                if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                    skipped.remove(name)
                    Self.said.withLock { _ = $0.remove(key) }
                }
                continue
            }
            // The directory's only image rewritten in place stays listed while it is written:
            // held back, the show would fall to "No images" for as long as the write lasts; its
            // old picture stays on screen instead, and the show's file check takes the new
            // content once it decodes. (With others listed, it is held back as any write.)
            let onlyImageRewritten = mask & UInt32(IN_CREATE) == 0 && complete.count == 1 && complete.contains(name)
            if mask & UInt32(IN_CREATE | IN_MODIFY) != 0 && !onlyImageRewritten {
                if complete.remove(name) != nil { result = .changed }
                // A symlink (or a hard link: a regular file with more than one name) is
                // complete when it appears: no write, so no close-after-write, will follow.
                var st = stat()
                let linked = mask & UInt32(IN_CREATE) != 0 && lstat(path + "/" + name, &st) == 0
                    && ((st.st_mode & S_IFMT) == S_IFLNK || ((st.st_mode & S_IFMT) == S_IFREG && st.st_nlink > 1))
                if linked {
                    if !Self.linkLeaving(name, in: path, realPath: realPath) { complete.insert(name) }
                    result = .changed
                } else {
                    writing.insert(name)
                }
            }
            if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 {
                writing.remove(name)
                if !Self.linkLeaving(name, in: path, realPath: realPath) { complete.insert(name) }
                result = .changed
            }
            if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                writing.remove(name)
                if complete.remove(name) != nil { result = .changed }
            }
        }
        return result
    }

    // MARK: - Names

    /// The image files of `path` once, without watching: full paths sorted byte-wise (links
    /// leading out of it left out, and logged), and the names left out because they are not
    /// UTF-8 (they could not be opened again from their text form). Throws ``SystemError`` when
    /// the directory cannot be listed.
    public static func imagePaths(in path: String) throws(SystemError) -> (paths: [String], notUTF8: [[UInt8]]) {
        let entries = try listDirectory(path)
        let real = resolved(path) ?? path
        let names = entries.compactMap { entry -> String? in
            guard !entry.isDirectory, let name = entry.name, isImageName(name),
                  !linkLeaving(name, in: path, realPath: real) else {
                return nil
            }
            return name
        }
        return (sortedPaths(Set(names), in: path), entries.filter { $0.name == nil && !$0.isDirectory }.map(\.bytes))
    }

    /// Whether `name` in the directory `path` (whose resolved path is `realPath`) is a symbolic
    /// link that leads out of it or nowhere (then logged: not shown). A link inside the
    /// directory, to a file of it or of a folder below it, is followed as before.
    static func linkLeaving(_ name: String, in path: String, realPath: String) -> Bool {
        let full = (path.hasSuffix("/") ? path : path + "/") + name
        var st = stat()
        guard lstat(full, &st) == 0, st.st_mode & S_IFMT == S_IFLNK else { return false }
        guard let target = resolved(full) else {
            Log.info("file skipped", path: full, detail: "not shown: a symbolic link that leads nowhere")
            return true
        }
        guard !target.hasPrefix(realPath == "/" ? "/" : realPath + "/") else { return false }
        Log.info("file skipped", path: full,
                 detail: "not shown: a symbolic link to \(target), outside the folder "
                     + "(only links within it are followed)")
        return true
    }

    /// `path` with every link and `..` resolved (realpath(3)), nil when it cannot be.
    static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    /// One log line for a file of the directory whose name is not UTF-8 (shown with U+FFFD in
    /// place of the bytes that are not, and its bytes in hex).
    static func logNotUTF8(_ bytes: [UInt8], in path: String) {
        let shown = String(decoding: bytes, as: UTF8.self)
        let hex = bytes.map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined(separator: " ")
        Log.info("file skipped", path: (path.hasSuffix("/") ? path : path + "/") + shown,
                 detail: "not shown: its name is not valid UTF-8 (bytes \(hex)); rename it")
    }

    /// The one rule for what in a directory is an image (the watch, and ``SourceList`` for a
    /// directory that cannot be watched): not hidden, and named with an extension of a format
    /// shown (``ImageFormat/shown(byFileName:)``), compared in any case.
    static func isImageName(_ name: String) -> Bool {
        !name.hasPrefix(".") && ImageFormat.shown(byFileName: name) != nil
    }

    /// The files of `path` that are not images by their names (hidden ones left out).
    static func skippedNames(in path: String) throws(SystemError) -> [String] {
        try listDirectory(path).compactMap { entry in
            guard !entry.isDirectory, let name = entry.name, !name.hasPrefix("."), !isImageName(name) else {
                return nil
            }
            return name
        }
    }

    /// The `file skipped` lines (for a name that is no image's, or is not UTF-8) said and still
    /// standing, by ``sayingKey(_:in:)``, over every watch of the process: a folder watched again
    /// (each SIGHUP makes a new watch) does not say them again while the file stays.
    static let said = Locked<Set<String>>([])

    /// The key in ``said`` of the file `name` of the folder `path`.
    static func sayingKey(_ name: String, in path: String) -> String { (path == "/" ? "/" : path + "/") + name }

    /// The key in ``said`` of a file of `path` whose name, `bytes`, is not UTF-8 (a NUL, which no
    /// name holds, then the bytes in hex).
    static func sayingKey(_ bytes: [UInt8], in path: String) -> String {
        sayingKey("\u{0}" + bytes.map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined(), in: path)
    }

    /// Of `keys` (the folder `path`'s files to be said now), those not said yet, which are taken
    /// into ``said``; the folder's keys said before but not in `keys` are forgotten (the file went
    /// or was renamed while no watch looked), so that file is said again if it comes back.
    static func unsaid(_ keys: Set<String>, in path: String) -> Set<String> {
        let prefix = path == "/" ? "/" : path + "/"
        return said.withLock { said in
            said = said.filter { key in
                !key.hasPrefix(prefix) || key.dropFirst(prefix.count).contains("/") || keys.contains(key)
            }
            let new = keys.subtracting(said)
            said.formUnion(new)
            return new
        }
    }

    /// One log line for a file of the directory that is not shown because of its name.
    static func logSkipped(_ name: String, in path: String) {
        let names = ImageFormat.imageExtensions.sorted().map { "." + $0 }.joined(separator: ", ")
        Log.info("file skipped", path: (path.hasSuffix("/") ? path : path + "/") + name,
                 detail: "not shown: the images of a directory are its files named \(names) (any case)")
    }

    static func imageNames(in path: String) throws(SystemError) -> [String] {
        try listDirectory(path).compactMap { entry in
            guard !entry.isDirectory, let name = entry.name, isImageName(name) else { return nil }
            return name
        }
    }

    static func sortedPaths(_ names: Set<String>, in path: String) -> [String] {
        let base = path.hasSuffix("/") ? path : path + "/"
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map { base + $0 }
    }
}
