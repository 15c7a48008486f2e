// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskSystem

/// Watches the DRM card nodes come and go: `/dev/dri` (drm_sysfs.c's devnode) through
/// inotify(7), or `/dev` for `/dev/dri` to appear while it is not there (devtmpfs removes a
/// directory left empty, and makes it again with the first node). The one watcher both for
/// waiting for a display at start (``waitForDRMCard(retryEvery:wake:status:tryOpen:)``) and
/// for a card lost during the show (``ReopeningDRMDisplay``).
///
/// A node appearing (IN_CREATE, IN_MOVED_TO), changing owner or mode (IN_ATTRIB: udev gives it
/// the group `video` after devtmpfs made it), or going (IN_DELETE, IN_MOVED_FROM), and the
/// directory itself going (IN_DELETE_SELF), are reported by ``take()``. A connector that
/// connects sends no inotify event (a hotplug uevent would, but needs netlink): callers also try
/// again on a timer.
///
/// Ownership: owns an inotify descriptor (``descriptor``), closed with it.
public final class DRMCardWatch {
    /// What changed since the last ``take()``.
    public struct Changes: Equatable, Sendable {
        /// Something happened that is worth a look for a card: a node appeared, changed or went,
        /// or the card directory was (again) watched (cards may have appeared before the watch).
        public var worthALook = false
        /// The card nodes removed, as full paths (`/dev/dri/card0`).
        public var removed: [String] = []
        /// The card directory itself was removed.
        public var directoryRemoved = false

        public init() {}
    }

    /// The directory the card nodes are in, `/dev/dri`.
    public let cardDirectory: String
    /// Its parent, watched for it while it is not there: `/dev`.
    public let parentDirectory: String
    private let inotify: InotifyReader?
    private var cardWatch: Int32 = -1
    private var parentWatch: Int32 = -1
    private var watchedAgain = false

    /// Events in the card directory that mean a card may have appeared, or one gone (inotify(7)).
    private static let cardEvents = UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_TO | IN_MOVED_FROM
                                           | IN_DELETE_SELF)

    /// Starts watching. Without inotify (no descriptor left, a kernel without it) ``descriptor``
    /// is nil and ``take()`` reports nothing: callers then rely on their timer.
    public init(cardDirectory: String = "/dev/dri", parentDirectory: String = "/dev") {
        self.cardDirectory = cardDirectory
        self.parentDirectory = parentDirectory
        inotify = try? InotifyReader()
        watch()
    }

    /// Readable (POLLIN) when inotify has events waiting; nil without inotify.
    public var descriptor: Int32? { inotify?.descriptor }

    /// Reads what inotify reported (never blocks: the descriptor is polled first, since a read
    /// costs a 64 KiB buffer and callers ask every turn) and watches the card directory again
    /// when it came or went.
    public func take() -> Changes {
        var changes = Changes()
        changes.worthALook = watchedAgain
        watchedAgain = false
        for event in readable ? inotify?.readEvents() ?? [] : [] {
            changes.worthALook = true
            let name = String(decoding: event.name, as: UTF8.self)
            if event.watch == cardWatch, event.has(IN_DELETE_SELF | IN_IGNORED) {
                cardWatch = -1
                changes.directoryRemoved = true
            } else if event.watch == cardWatch, event.has(IN_DELETE | IN_MOVED_FROM) {
                changes.removed.append("\(cardDirectory)/\(name)")
            }
        }
        if cardWatch < 0 || parentWatch >= 0 {
            watch()
            if watchedAgain { changes.worthALook = true; watchedAgain = false }
        }
        return changes
    }

    private var readable: Bool {
        guard let fd = inotify?.descriptor else { return false }
        return PollSet.isReadable(fd)
    }

    /// Watches the card directory when it exists, else its parent for it to appear.
    private func watch() {
        guard let inotify else { return }
        if cardWatch < 0, let wd = try? inotify.addWatch(cardDirectory, mask: Self.cardEvents) {
            cardWatch = wd
            if parentWatch >= 0 { inotify_rm_watch(inotify.descriptor, parentWatch); parentWatch = -1 }
            watchedAgain = true
        }
        if cardWatch < 0, parentWatch < 0 {
            parentWatch = (try? inotify.addWatch(parentDirectory, mask: UInt32(IN_CREATE | IN_MOVED_TO))) ?? -1
        }
    }
}

/// Waits for a DRM card that opens (the driver still loading at boot, its node not yet given to
/// the video group by udev, a card being reset): calls `tryOpen` every `retryEvery`, and at once
/// whenever a card node appears or changes (`cards`), until it gives a display. Before each wait
/// `status` is called (to keep a service manager's start timeout from running out); `wake` is a
/// descriptor that ends a wait early (the signal pipe); after each wait `stop` is asked whether
/// to give up.
///
/// Returns the display, or nil when `stop` said so.
public func waitForDRMCard(retryEvery: Duration = .seconds(1), cards: DRMCardWatch = DRMCardWatch(), wake: Int32 = -1,
                           status: () -> Void, stop: () -> Bool, tryOpen: () -> (any Display)?) -> (any Display)? {
    let timeout = Int32(clamping: retryEvery.wholeMilliseconds)
    while true {
        status()
        var set = PollSet(readable: [wake, cards.descriptor ?? -1])
        _ = try? set.wait(milliseconds: timeout)
        _ = cards.take()
        if stop() { return nil }
        if let display = tryOpen() { return display }
    }
}
