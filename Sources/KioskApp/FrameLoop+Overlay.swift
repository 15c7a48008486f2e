// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskText

/// `--overlay`: the clock is formatted again at the start of each minute (a deadline the loop
/// sleeps until, not a poll) and, when its text changed, the frame on screen is drawn again with
/// it; between changes it is only blended into the frames a fade or a slide presents anyway.
extension FrameLoop {
    /// Wall-clock time, seconds since 1970: CLOCK_REALTIME, or on the virtual clock
    /// ``overlayEpochAtStart`` plus the show time (so tests can start at any date).
    var overlayEpochNanoseconds: Int64 {
        if virtualClock != nil {
            let c = clock.now.components
            return Int64(overlayEpochAtStart) * 1_000_000_000 + c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000
        }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Updates the overlay's text when its deadline is due (or it has none yet) and sets the next.
    func serviceOverlay(at now: Duration) {
        guard let overlay = clockOverlay else { deadlines[.overlay] = nil; return }
        guard deadlines[.overlay] == nil || deadlines.isDue(.overlay, at: now) else { return }
        let ns = overlayEpochNanoseconds
        let seconds = Int(ns / 1_000_000_000)
        if overlay.update(epochSeconds: seconds) { lastScene = nil }  // draw the frame again with it
        let next = Int64(ClockOverlay.nextChange(after: seconds)) * 1_000_000_000
        deadlines[.overlay] = now + .nanoseconds(next - ns)
    }
}
