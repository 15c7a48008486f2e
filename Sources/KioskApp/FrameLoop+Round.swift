// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

// What the show has really put on screen of its playlist. The "show started" line counts the
// playlist's items, not images shown (an item may still be downloading, or never load); once
// every item of a playlist (of its rotation, under schedules) has either been shown or left
// the show because it could not be loaded, one line says how many were shown:
// `playlist round done detail="4 of 5 items shown, 1 could not be loaded (tried again every 60 s)"`.

/// The items of the current playlist shown at least once (playlist indices), and whether the
/// round's line was written. A new playlist or rotation starts it again.
struct PlaylistRound {
    var shown: Set<Int> = []
    var reported = false
}

extension FrameLoop {
    /// A `shown` event for playlist item `item`.
    func noteShown(_ item: Int) {
        guard !round.reported else { return }
        round.shown.insert(item)
        reviewRound()
    }

    /// A new playlist or rotation: the count starts again.
    func restartRound() { round = PlaylistRound() }

    /// Writes the round's line once every item of the rotation was shown or could not be
    /// loaded (failed and out of the show until its retry); an item still downloading or
    /// decoding keeps it waiting.
    func reviewRound() {
        guard !round.reported else { return }
        let items = rotation ?? Array(playlist.indices)
        guard !items.isEmpty else { return }
        let failed = items.filter { !round.shown.contains($0) && !carousel.isInShow(item: $0) }.count
        let shown = items.filter { round.shown.contains($0) }.count
        guard shown + failed == items.count else { return }
        round.reported = true
        let total = counted(items.count, "item") + (rotation == nil ? "" : " in the rotation")
        Log.info("playlist round done", detail: "\(shown) of \(total) shown"
                 + (failed == 0 ? "" : ", \(failed) could not be loaded (tried again every \(retryInterval.wholeMilliseconds / 1000) s)"))
    }
}
