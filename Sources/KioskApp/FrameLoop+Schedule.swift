// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskSystem

// Item schedules (docs/schedules.md): the playlist's items whose schedule holds make up the
// rotation; at each boundary the carousel gets the playlist again with the new rotation, the
// same path as a manifest update (no restart, no black frame).

extension RealtimeClock: WallClock {}
extension LocalTimeZone: TimeZoneRules {}

extension FrameLoop {
    /// The farthest ahead the next look at the schedules is put on the real clock (60 s): a
    /// wall clock that was set (NTP, `date -s`) or a changed time zone is taken up within it.
    static let scheduleRecheck: Duration = .seconds(60)

    /// Works out which items are in the rotation now (one read of the wall clock and the time
    /// zone) and sets the `schedule` deadline at the next boundary. The carousel gets the
    /// playlist again when the rotation changed, or always when `replace` (a new playlist).
    /// Without schedules or fallback items, nothing is read: every item is in the rotation.
    func applyRotation(at now: Duration, replace: Bool) {
        guard playlist.contains(where: { $0.schedule != nil || $0.fallback }) else {
            setNoImagesMessage(!playlist.isEmpty ? SceneRenderer.noneShownText : emptyPlaylistText)
            deadlines[.schedule] = nil
            standIn = FallbackStandIn()
            let hadRotation = rotation != nil
            rotation = nil
            if replace || hadRotation { handleControlActions(carousel.replaceItems(playlist, at: now)) }
            return
        }
        (timeZone as? LocalTimeZone)?.refresh()
        let wall = wallClock.sinceEpoch
        let (showing, standby, next) = ScheduledRotation.showing(playlist, atEpochSecond: wall.components.seconds, zone: timeZone)
        if let next {
            let until = Duration.seconds(next) - wall
            deadlines[.schedule] = now + (virtualClock == nil ? min(until, Self.scheduleRecheck) : until)
        } else {
            deadlines[.schedule] = nil
        }
        setNoImagesMessage(!showing.isEmpty ? SceneRenderer.noneShownText
                           : playlist.isEmpty ? SceneRenderer.noImagesText : SceneRenderer.nothingScheduledText)
        if standIn.active, standIn.scheduled == showing, standIn.standby == standby {
            // Still standing in for the same rotation: the fallback items stay on (a look at the
            // schedules, or the same playlist again, does not end it; an image that loads does).
            if replace { handleControlActions(carousel.replaceItems(playlist, showing: rotation, at: now)) }
            return
        }
        standIn = FallbackStandIn(scheduled: showing, standby: standby)
        guard replace || showing != rotation else { return }
        if showing != rotation { logRotation(showing); restartRound() }
        rotation = showing
        handleControlActions(carousel.replaceItems(playlist, showing: showing, at: now))
        leaveRetired = !replace
    }

    /// Fallback items stand in for a rotation none of whose images can be shown (each failed
    /// to download or decode): the rotation becomes those items and the fallback items, so
    /// the failed ones are tried again at each retry while a fallback image stays on screen (no
    /// empty screen in between, no flapping). The first of the scheduled items that loads ends
    /// it: the rotation is the scheduled items again, and the fallback image gives way to it.
    func reviewStandIn(at now: Duration) {
        guard let current = rotation, !standIn.standby.isEmpty else { return }
        if !standIn.active {
            guard current == standIn.scheduled, carousel.activeCount == 0 else { return }
            standIn.active = true
            let both = (standIn.scheduled + standIn.standby).sorted()
            rotation = both
            Log.info("fallback standing in", detail: (standIn.scheduled.count == 1 ? "the one scheduled item cannot be shown; "
                                                                      : "none of the \(standIn.scheduled.count) scheduled items can be shown; ")
                     + "\(counted(standIn.standby.count, "fallback item")) \(standIn.standby.count == 1 ? "stands" : "stand") in until a scheduled one loads")
            handleControlActions(carousel.replaceItems(playlist, showing: both, at: now))
        } else if standIn.scheduled.contains(where: { !carousel.readySlots(ofItem: $0).isEmpty }) {
            standIn.active = false
            rotation = standIn.scheduled
            Log.info("rotation changed", detail: "a scheduled item loaded: the fallback items stand down")
            handleControlActions(carousel.replaceItems(playlist, showing: standIn.scheduled, at: now))
            leaveRetired = true
        }
    }

    /// At a schedule's boundary the image on screen that left the rotation gives way at once
    /// (a cross-fade to the rotation's first item) rather than after its interval; once any
    /// transition under way has ended.
    func leaveRetiredImage(at now: Duration) {
        guard !carousel.isAnimating, !carousel.isHeld else { return }
        leaveRetired = false
        if carousel.currentItem == nil, carousel.activeCount > 0 {
            handleControlActions(carousel.move(.forward, at: now))
        }
    }

    /// The empty screen's words for an empty playlist: a SOURCE that does not exist (named, with
    /// `stat`'s reason unless it is plain ENOENT), else a manifest never had, else no images.
    var emptyPlaylistText: String {
        if let missing = content?.missingSources.first {
            let reason = missing.errno == ENOENT ? nil : SystemError.reason(errno: missing.errno)
            return SceneRenderer.missingSourceText(path: missing.path, folder: !missing.isImageFile, reason: reason)
        }
        return content?.waitingForManifest == true ? SceneRenderer.waitingForManifestText : SceneRenderer.noImagesText
    }

    /// The "no images" screen's words; a change redraws it at once.
    private func setNoImagesMessage(_ text: String) {
        guard renderer.noImagesMessage != text else { return }
        renderer.noImagesMessage = text
        lastScene = nil
    }

    private func logRotation(_ showing: [Int]) {
        let fallback = !showing.isEmpty && showing.allSatisfy { playlist[$0].fallback }
        if showing.isEmpty {
            Log.info("nothing scheduled", detail: "no item of \(playlist.count) is in its schedule now and none is a fallback; the empty screen shows")
        } else {
            Log.info("rotation changed", detail: "\(showing.count) of \(counted(playlist.count, "item")) by their schedules"
                     + (fallback ? " (the fallback items: nothing else is scheduled now)" : ""))
        }
    }
}

/// The fallback items in their schedule while other items are in the rotation (``standby``),
/// and whether they stand in for those (``active``: none of ``scheduled`` could be shown).
struct FallbackStandIn {
    var scheduled: [Int] = []
    var standby: [Int] = []
    var active = false
}
