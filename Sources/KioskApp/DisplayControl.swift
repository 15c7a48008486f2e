// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskDisplay
import KioskSystem

// Display ownership: VT switching and display power. The frame loop asks ``DisplayControl``
// whether it may draw and calls the extension below once per turn and on VT signals.

/// Who may draw on the screen now, for the ``FrameLoop``: the VT (switched away or not; see
/// ``ConsoleGuard/enableProcessSwitching(releaseSignal:acquireSignal:)``) and the screen's power
/// (`--display-off` schedule, `display on|off` on the control socket). Frames are drawn only
/// while ``canDraw``; the show keeps its time (a VT switched away does not stop it), but pauses
/// while the screen is off.
public final class DisplayControl {
    /// The VT whose switches the loop acknowledges (VT_RELDISP); nil when there is none.
    public var console: ConsoleGuard?
    /// When the screen is switched off (`--display-off`); nil: only `display on|off` switches it.
    public var schedule: DisplaySchedule? { didSet { evaluate = true } }
    /// False between a VT release and the next acquire.
    public internal(set) var vtActive = true
    /// False while the screen is switched off.
    public internal(set) var powerOn = true
    /// Frames go to the display only when the VT is ours and the screen is on.
    public var canDraw: Bool { vtActive && powerOn }
    /// `display on|off`: the state asked for and whether the schedule said "off" then; it holds
    /// until the schedule's state changes.
    var manual: (on: Bool, scheduledOff: Bool)?
    /// The carousel was already paused (control socket) when the screen went off: it stays so.
    var wasPaused = false
    /// The schedule must be looked at (start, timer expired, clock set).
    var evaluate = true
    var timer: DisplayScheduleTimer?
    var timerUnavailable = false
    /// When to try a failed VT acquire again (loop clock).
    public internal(set) var acquireRetryAt: Duration?

    public init() {}

    /// The schedule timer's descriptor for the loop's poll set.
    var wakeDescriptor: Int32? { timer?.descriptor }
}

extension FrameLoop {
    /// True while the screen is on (`status` on the control socket).
    var isDisplayPowerOn: Bool { displayControl.powerOn }

    /// Switches the screen off or on by hand (`display on|off` on the control socket): a manual
    /// override of `--display-off` that holds until the schedule's next change. Off pauses the
    /// show; on resumes it with a full interval (unless it was paused before) and redraws at once.
    /// `reason` goes into the log line.
    public func setDisplayPower(on: Bool, reason: String) {
        let dc = displayControl
        if let schedule = dc.schedule {
            let now = DisplayScheduleTimer.localNow()
            dc.manual = (on, schedule.isOff(minuteOfDay: now.minuteOfDay))
        }
        guard on != dc.powerOn else {
            Log.info("display already \(on ? "on" : "off")", detail: reason)
            return
        }
        applyDisplayPower(on: on, reason: reason + (dc.schedule == nil ? "" : ", until the next change of --display-off \(dc.schedule!)"))
    }

    /// The VT is being switched away: stop drawing, give the display up (DRM: drop master), then
    /// VT_RELDISP 1 so the switch goes ahead. Always acknowledged, even if releasing failed:
    /// refusing would hold the whole console hostage.
    func releaseDisplayForVT() {
        let dc = displayControl
        if dc.vtActive {
            dc.vtActive = false
            dc.acquireRetryAt = nil
            do { try display.release() } catch { Log.warning("display release incomplete", reason: error.description) }
        }
        do { try dc.console?.acknowledgeRelease() } catch { Log.warning("VT release not acknowledged", reason: error.description) }
        Log.info("display released", detail: "VT switched away; drawing stops until it is switched back")
    }

    /// The VT was switched back to: VT_RELDISP VT_ACKACQ, take the display back (DRM: master,
    /// CRTC) and redraw the current scene at once. If taking it back fails (another process holds
    /// DRM master) it is tried again every second.
    func acquireDisplayForVT() {
        let dc = displayControl
        do { try dc.console?.acknowledgeAcquire() } catch { Log.warning("VT acquire not acknowledged", reason: error.description) }
        takeDisplayBack()
    }

    private func takeDisplayBack() {
        let dc = displayControl
        do {
            try display.acquire()
        } catch {
            if dc.acquireRetryAt == nil { Log.warning("display not taken back", reason: error.description + "; trying again every second") }
            dc.acquireRetryAt = clock.now + .seconds(1)
            return
        }
        dc.acquireRetryAt = nil
        dc.vtActive = true
        lastScene = nil   // the other VT drew over the screen: redraw now
        Log.info("display acquired", detail: "VT switched back; redrawing")
    }

    /// Once per loop turn: a VT acquire to retry; the schedule when its timer fired (or at the
    /// start, or after the clock was set): switch the screen as it says (a manual override ends
    /// when the schedule's state changes) and arm the timer for the next change.
    func serviceDisplayControl() {
        let dc = displayControl
        if let retry = dc.acquireRetryAt, clock.now >= retry { takeDisplayBack() }
        guard let schedule = dc.schedule, virtualClock == nil else { return }
        if dc.timer == nil && !dc.timerUnavailable {
            var err: Int32 = 0
            dc.timer = DisplayScheduleTimer(error: &err)
            if dc.timer == nil {
                dc.timerUnavailable = true
                Log.warning("--display-off not followed", reason: "timerfd_create: \(String(cString: strerror(err)))")
                return
            }
        }
        if let timer = dc.timer, timer.consume() { dc.evaluate = true }
        guard dc.evaluate, let timer = dc.timer else { return }
        dc.evaluate = false
        let now = DisplayScheduleTimer.localNow()
        let scheduledOff = schedule.isOff(minuteOfDay: now.minuteOfDay)
        if let manual = dc.manual, manual.scheduledOff != scheduledOff {
            dc.manual = nil
            Log.info("display override ended", detail: "--display-off \(schedule) says \(scheduledOff ? "off" : "on") now")
        }
        let on = dc.manual?.on ?? !scheduledOff
        if on != dc.powerOn {
            applyDisplayPower(on: on, reason: "--display-off \(schedule)")
        }
        if let seconds = schedule.secondsUntilChange(minuteOfDay: now.minuteOfDay, second: now.second) {
            if !timer.arm(at: now.epoch + seconds) {
                Log.warning("--display-off timer not armed", reason: String(cString: strerror(errno)))
            }
        }
    }

    /// Switches the screen and pauses or resumes the show; logs the change.
    private func applyDisplayPower(on: Bool, reason: String) {
        let dc = displayControl
        guard on != dc.powerOn else { return }
        let now = clock.now
        dc.powerOn = on
        if !on {
            dc.wasPaused = carousel.isPaused
            carousel.pause(at: now)
        } else if !dc.wasPaused {
            carousel.resume(at: now)
        }
        var warning: String?
        do { try display.setPower(on: on) } catch { warning = error.description }
        if on { lastScene = nil }   // draw the current scene at once
        var detail = reason + (on ? (dc.wasPaused ? "; the show stays paused" : "; the show resumes with a full interval")
                                  : "; the show pauses")
        if let drm = display as? DRMDisplay, let dpms = drm.dpmsState {
            detail += "; DPMS \(["On", "Standby", "Suspend", "Off"][Int(min(dpms, 3))])"
        }
        Log.info(on ? "display on" : "display off", detail: detail)
        if let warning {
            Log.warning("display power not switched \(on ? "on" : "off")",
                        reason: warning + "; the show \(on ? "resumes" : "pauses") anyway")
        }
    }
}
