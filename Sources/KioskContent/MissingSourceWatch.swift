// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// Waits, on its own thread, for a SOURCE that does not exist (or cannot be looked at) to
/// appear, so that a show pointed at a folder not made yet, or on a disk not mounted yet, starts
/// by itself once it is there (docs/content.md): ``appeared`` gets one value, the moment
/// ``path`` can be used (``isUsable(_:)``: `stat(2)` succeeds and, for a folder, it can be
/// listed, so a folder made readable again by `chmod` is taken up too), and the thread ends.
///
/// It watches the nearest folder above ``path`` that exists with inotify(7) (`IN_CREATE`,
/// `IN_MOVED_TO`, `IN_ATTRIB`: a `mkdir`, a folder renamed into place, a permission changed),
/// moving down as the folders on the way are made, and looks again every ``pollInterval``
/// besides, since a mount, an automounter or a permission changed above the watched folder
/// sends that folder no event.
public final class MissingSourceWatch: @unchecked Sendable {
    /// The SOURCE argument waited for, as given.
    public let path: String
    /// Gets one value, when ``path`` exists.
    public let appeared: Mailbox<Void>
    /// The look at ``path`` that needs no event (a mount): every 2 s.
    public static let pollInterval: Duration = .seconds(2)

    private let worker: WorkerThread

    /// Starts waiting for `path`. Throws ``ContentError/system(_:)`` when the mailbox or the
    /// thread cannot be made (inotify trouble is not an error: the poll remains).
    public init(path: String) throws(ContentError) {
        self.path = path
        do {
            appeared = try Mailbox()
            worker = try WorkerThread(name: "waiting for \(path)")
            try worker.start { self.run() }
        } catch { throw .system(error) }
    }

    /// Stops the thread and waits for it. Idempotent.
    public func stop() { worker.stop() }

    deinit { stop() }

    private func run() {
        var reader: InotifyReader?
        var watched: String?
        while true {
            if Self.isUsable(path) { appeared.post(()); return }
            let folder = Self.nearestExistingFolder(above: path)
            if folder != watched {
                watched = folder
                reader = try? InotifyReader()
                _ = try? reader?.addWatch(folder, mask: UInt32(IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR))
            }
            var set = PollSet(readable: [worker.stopDescriptor])
            if let reader { set.add(reader.descriptor) }
            do { try set.wait(timeout: Self.pollInterval) } catch { return }
            if set.isReady(0) { return }
            _ = reader?.readEvents()
        }
    }

    /// Whether `path` can be taken up: `stat(2)` succeeds and, when it is a folder, `opendir(3)`
    /// too (a folder of mode 000, or one whose owner took away this user's read or search
    /// permission, is there but cannot be listed or watched).
    public static func isUsable(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0 else { return false }
        guard st.st_mode & S_IFMT == S_IFDIR else { return true }
        guard let folder = opendir(path) else { return false }
        closedir(folder)
        return true
    }

    /// The nearest folder above `path` that exists ("/" or "." at the latest, for an absolute
    /// or a relative path).
    public static func nearestExistingFolder(above path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let root = path.hasPrefix("/") ? "/" : "."
        while !parts.isEmpty {
            parts.removeLast()
            let candidate = parts.isEmpty ? root : (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
            var st = stat()
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { return candidate }
        }
        return root
    }
}
