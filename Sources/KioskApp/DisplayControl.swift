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
    /// False while the card is gone (``ReopeningDRMDisplay``: its driver unbound, a reset).
    public internal(set) var deviceThere = true
    /// The carousel was paused because the card went away (it resumes when one is back).
    var pausedForLoss = false
    /// Frames go to the display only when the VT is ours, the screen is on and the card there.
    public var canDraw: Bool { vtActive && powerOn && deviceThere }
    /// `display on|off`: the state asked for and the automatic decision then (schedule and
    /// presence, ``ScreenPowerPolicy``); it holds until that decision changes.
    var manual: (on: Bool, automaticOn: Bool)?
    /// Inside a `--display-off` range (or an `off` brightness tier) at the last look.
    var scheduledOff = false
    /// Why the screen is on or off (the control socket's `status`).
    var powerReason: ScreenReason = .schedule
    /// The carousel was already paused (control socket) when the screen went off: it stays so.
    var wasPaused = false
    /// The schedule must be looked at (start, timer expired, clock set).
    var evaluate = true
    var timer: DisplayScheduleTimer?
    var timerUnavailable = false
    /// When to try a failed VT acquire again (loop clock).
    public internal(set) var acquireRetryAt: Duration?
    /// How long a touch wakes a screen off by the schedule (`--wake-minutes`; zero: touches do
    /// nothing while it is off). Each touch while woken starts it again.
    public var wakeDuration: Duration = .seconds(120)
    /// On by a touch although the schedule says off (until the loop's `wakeEnd` deadline).
    var woken = false
    /// The rest of the touch that woke the screen (or fell on a dark one) goes nowhere.
    var swallowingTouch = false
    /// The screen was dark since the last `shown`: the image on it is announced once it is lit.
    var announceWhenLit = false

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
            dc.scheduledOff = schedule.isOff(minuteOfDay: DisplayScheduleTimer.localNow().minuteOfDay)
        }
        dc.woken = false
        deadlines[.wakeEnd] = nil
        dc.manual = (
            on, ScreenPowerPolicy.automatic(scheduledOff: dc.scheduledOff, woken: false, present: presentNow).on
        )
        dc.powerReason = .control
        guard on != dc.powerOn else {
            Log.info("display already \(on ? "on" : "off")", detail: reason)
            return
        }
        let until = [dc.schedule.map { "--display-off \($0)" }, power.effectiveTimeout.map { _ in "presence" }]
            .compactMap { $0 }
        applyDisplayPower(
            on: on,
            reason: reason + (until.isEmpty ? "" : ", until the next change of " + until.joined(separator: " or ")),
                          cause: "control")
    }

    /// The VT is being switched away: stop drawing, give the display up (DRM: drop master), then
    /// VT_RELDISP 1 so the switch goes ahead. Always acknowledged, even if releasing failed:
    /// refusing would hold the whole console hostage.
    func releaseDisplayForVT() {
        let dc = displayControl
        if dc.vtActive {
            if dc.canDraw { announceDisplay(on: false, reason: "vt", time: clock.now) }
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
        if dc.canDraw { announceDisplay(on: true, reason: "vt", time: clock.now) }
        lastScene = nil   // the other VT drew over the screen: redraw now
        Log.info("display acquired", detail: "VT switched back; redrawing")
    }

    /// Once per loop turn: a VT acquire to retry; the schedule when its timer fired (or at the
    /// start, or after the clock was set): switch the screen as it says (a manual override ends
    /// when the schedule's state changes) and arm the timer for the next change.
    func serviceDisplayControl() {
        let dc = displayControl
        if let retry = dc.acquireRetryAt, clock.now >= retry { takeDisplayBack() }
        if deadlines.isDue(.wakeEnd, at: clock.now) { deadlines[.wakeEnd] = nil; dc.woken = false; dc.evaluate = true }
        serviceSchedule()
        decideScreenPower()
    }

    /// The schedule when its timer fired (or at the start, or after the clock was set): whether
    /// it says off now, and the timer armed for its next change. Real clock only.
    private func serviceSchedule() {
        let dc = displayControl
        guard let schedule = dc.schedule, virtualClock == nil else {
            if dc.schedule == nil { dc.scheduledOff = false }
            return
        }
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
        dc.scheduledOff = schedule.isOff(minuteOfDay: now.minuteOfDay)
        if !dc.scheduledOff { dc.woken = false; deadlines[.wakeEnd] = nil }
        if let seconds = schedule.secondsUntilChange(minuteOfDay: now.minuteOfDay, second: now.second) {
            if !timer.arm(at: now.epoch + seconds) {
                Log.warning("--display-off timer not armed", reason: String(cString: strerror(errno)))
            }
        }
    }

    /// On or off, as ``ScreenPowerPolicy`` says from the schedule, presence (FrameLoop+Power.swift),
    /// a touch's wake and a manual override (which ends when the automatic decision changes).
    func decideScreenPower() {
        let dc = displayControl
        let present = presentNow
        let automatic = ScreenPowerPolicy.automatic(scheduledOff: dc.scheduledOff, woken: dc.woken, present: present)
        if let manual = dc.manual, ScreenPowerPolicy.overrideEnds(given: manual.automaticOn, now: automatic.on) {
            dc.manual = nil
            Log.info("display override ended", detail: automatic.reason == .presence
                    ? (automatic.on
                        ? "someone is there"
                        : "nobody was seen for \(power.presence.timeout.wholeMilliseconds / 1000) s")
                     : "--display-off \(dc.schedule.map { "\($0)" } ?? "") says \(automatic.on ? "on" : "off") now")
        }
        let (on, reason) = ScreenPowerPolicy.decide(
            manual: dc.manual?.on, scheduledOff: dc.scheduledOff, woken: dc.woken,
                                                   present: present)
        if dc.manual == nil { dc.powerReason = reason }
        guard on != dc.powerOn else { return }
        let text: String
        switch reason {
        case .presence:
            text = on ? "motion: someone is there" + (power.sensorSummary.map { " (\($0))" } ?? "")
                      : "nobody seen for \(power.presence.timeout.wholeMilliseconds / 1000) s (--presence-timeout)"
        case .touch: text = "touched; woken for \(dc.wakeDuration.wholeMilliseconds) ms"
        default: text = "--display-off \(dc.schedule.map { "\($0)" } ?? "")"
        }
        applyDisplayPower(on: on, reason: text, cause: reason.rawValue)
    }

    /// Switches the screen and pauses or resumes the show; logs the change.
    /// `cause` goes into the `display` event (`schedule`, `control`, `touch`) when the screen's
    /// visibility changes with it.
    func applyDisplayPower(on: Bool, reason: String, cause: String) {
        let dc = displayControl
        guard on != dc.powerOn else { return }
        let now = clock.now
        let wasVisible = dc.canDraw
        dc.powerOn = on
        if dc.canDraw != wasVisible { announceDisplay(on: on, reason: cause, time: now) }
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
        if let dpms = (display as? DRMDisplay)?.dpmsState ?? (display as? ReconnectingDisplay)?.dpmsState {
            detail += "; DPMS \(["On", "Standby", "Suspend", "Off"][Int(min(dpms, 3))])"
        }
        Log.info(on ? "display on" : "display off", detail: detail)
        if let warning {
            Log.warning("display power not switched \(on ? "on" : "off")",
                        reason: warning + "; the show \(on ? "resumes" : "pauses") anyway")
        }
        screenPowerChanged(on: on)  // the TV over CEC, brightness (FrameLoop+Power.swift)
    }
}

extension FrameLoop {
    /// Whether a touch sample goes on to the show. While the screen is off none does: a finger
    /// landing on a screen the schedule switched off (no `display` override, `--wake-minutes`
    /// not 0) lights it for ``DisplayControl/wakeDuration``, and that touch, to its end, is no
    /// tap, swipe or hold. Touches while woken start the wake again.
    func touchReachesShow(_ sample: TouchSample) -> Bool {
        let dc = displayControl
        if dc.swallowingTouch {
            if sample.phase == .up || sample.phase == .cancel { dc.swallowingTouch = false }
            return false
        }
        if dc.powerOn {
            if dc.woken { deadlines[.wakeEnd] = clock.now + dc.wakeDuration }
            notePresenceTouch()  // a touch counts as presence (FrameLoop+Power.swift)
            return true
        }
        dc.swallowingTouch = sample.phase == .down || sample.phase == .move
        if sample.phase == .down, darkForWantOfPresence {
            notePresenceTouch()
            dc.powerReason = .presence
            applyDisplayPower(on: true, reason: "touched: someone is there", cause: "touch")
            return false
        }
        guard sample.phase == .down, dc.manual == nil, dc.scheduledOff, dc.wakeDuration > .zero else { return false }
        dc.woken = true
        deadlines[.wakeEnd] = clock.now + dc.wakeDuration
        applyDisplayPower(on: true, reason: "touched; woken for \(dc.wakeDuration.wholeMilliseconds) ms", cause: "touch")
        return false
    }

    /// After a frame is presented: nothing is announced while the screen is dark (VT switched
    /// away, screen off); when it is lit again, the image on it gets a `shown` at that moment
    /// (unless the carousel announces one itself now, or its image is still being prepared and
    /// will be announced when it is).
    func announceWhenVisible(scene: Scene?, now: Duration) {
        let dc = displayControl
        guard dc.canDraw else {
            if framesPresented > 0 || !pendingShown.isEmpty { dc.announceWhenLit = true }
            pendingShown.removeAll()
            return
        }
        guard dc.announceWhenLit, scene != nil, lastScene != nil else { return }
        dc.announceWhenLit = false
        guard pendingShown.isEmpty, let item = carousel.currentItem, let slot = carousel.currentSlot,
              case .ready = carousel.status(ofSlot: slot) else { return }
        pendingShown.append((item, carousel.items[item].source, now))
    }
}

extension FrameLoop {
    /// A `display` event (the screen went dark or was lit; docs/events-and-logs.md) on
    /// stdout and to the control socket's clients.
    func announceDisplay(on: Bool, reason: String, time: Duration) {
        events.emitDisplay(on: on, reason: reason, time: time)
        let line = events.displayLine(on: on, reason: reason, time: time)
        control?.publish(eventLine: line)
        forwardToMQTT(eventLine: line)  // MQTTBridge.swift
    }
}

extension FrameLoop {
    /// Once per loop turn and after each frame: the card's comings and goings and its
    /// connector's (``ReconnectingDisplay``). A lost card or connector darkens the show (a `display` event with reason
    /// `device`, no `shown` meanwhile) and pauses it, so it goes on at the same image; a card
    /// or connector back redraws that image at once and resumes, at its new size when it has
    /// another one (``adoptDisplaySize()``). Returns true when the card is lost now.
    /// Throws when the card that appeared cannot carry on the show (a pixel format it cannot scan out).
    @discardableResult
    func serviceDisplayDevice() throws(DisplayError) -> Bool {
        guard let device = display as? ReconnectingDisplay else { return false }
        let dc = displayControl
        for change in try device.service(now: clock.now) {
            switch change {
            case .lost(let reason):
                if dc.deviceThere {
                    if dc.canDraw { announceDisplay(on: false, reason: "device", time: clock.now) }
                    dc.deviceThere = false
                    dc.pausedForLoss = !carousel.isPaused
                    if dc.pausedForLoss { carousel.pause(at: clock.now) }
                }
                Log.warning("display lost", reason: reason + "; the show waits at its image for a display to appear")
                notifier?.status("display lost: \(reason); waiting for one")
            case .reopened(let summary):
                dc.deviceThere = true
                if dc.pausedForLoss && dc.powerOn { carousel.resume(at: clock.now) }
                dc.pausedForLoss = false
                if dc.canDraw { announceDisplay(on: true, reason: "device", time: clock.now) }
                lastScene = nil   // the new card shows nothing of ours yet: draw now
                Log.info("display reopened", detail: summary)
                notifier?.status("display reopened: \(summary)")
                adoptDisplaySize()   // FrameLoop+Resize.swift
            }
        }
        deadlines[.displayReopen] = device.retryAt
        return device.isLost
    }
}
