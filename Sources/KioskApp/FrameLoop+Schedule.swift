// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

// Item schedules (README "Schedules"): the playlist's items whose schedule holds make up the
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
            setNoImagesMessage(SceneRenderer.noImagesText)
            deadlines[.schedule] = nil
            let hadRotation = rotation != nil
            rotation = nil
            if replace || hadRotation { handleControlActions(carousel.replaceItems(playlist, at: now)) }
            return
        }
        (timeZone as? LocalTimeZone)?.refresh()
        let wall = wallClock.sinceEpoch
        let (showing, next) = ScheduledRotation.showing(playlist, atEpochSecond: wall.components.seconds, zone: timeZone)
        if let next {
            let until = Duration.seconds(next) - wall
            deadlines[.schedule] = now + (virtualClock == nil ? min(until, Self.scheduleRecheck) : until)
        } else {
            deadlines[.schedule] = nil
        }
        setNoImagesMessage(showing.isEmpty && !playlist.isEmpty ? SceneRenderer.nothingScheduledText : SceneRenderer.noImagesText)
        guard replace || showing != rotation else { return }
        if showing != rotation { logRotation(showing) }
        rotation = showing
        handleControlActions(carousel.replaceItems(playlist, showing: showing, at: now))
        leaveRetired = !replace
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
            Log.info("rotation changed", detail: "\(showing.count) of \(playlist.count) items by their schedules"
                     + (fallback ? " (the fallback items: nothing else is scheduled now)" : ""))
        }
    }
}
