// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskDisplay
import KioskSystem

/// Display supervision (docs/frame-loop.md): who may draw on the screen now, and keeping the
/// display through what happens to it. The VT (switched away or not; see
/// ``ConsoleGuard/enableProcessSwitching(releaseSignal:acquireSignal:)``), the screen's power
/// (`--display-off` schedule, `display on|off` on the control socket, a touch waking a screen
/// the schedule switched off, presence and brightness: DisplaySupervisor+Power.swift) and the
/// card (lost and reopened, maybe at another size: ``Display/reconnection``). Frames are drawn
/// only while ``canDraw``; the show keeps its time while the VT is switched away, but pauses
/// while the screen is off or the card is gone.
///
/// What the rest of the show must do about it comes back as ``Effect``s: a `display` event, a
/// redraw, a STATUS= line, a card back (laid out again at its size). The carousel is handed in
/// to be paused and resumed. Runs on the frame loop's thread. One display today; several
/// outputs would each get their own supervision here.
final class DisplaySupervisor {
    /// What the show must do after a change of the display.
    enum Effect: Equatable {
        /// The screen went dark or was lit (`reason`: `schedule`, `vt`, `control`, `touch`,
        /// `device`): a `display` event at show time `at`.
        case visibility(on: Bool, reason: String, at: Duration)
        /// The screen shows nothing of ours (another VT drew over it, it was off, a new card):
        /// draw the current scene at once.
        case redraw
        /// systemd's STATUS= line.
        case status(String)
        /// A card or connector came back: its size may differ from what the show draws.
        case reopened
    }

    let display: Display
    /// The VT whose switches are acknowledged (VT_RELDISP); nil when there is none.
    let console: ConsoleGuard?
    /// When the screen is switched off: `--display-off` and the `off` tiers of the brightness in
    /// force (``applyPowerSettings(brightness:presenceTimeout:)``); nil: only `display on|off`
    /// (and presence) switch it.
    var schedule: DisplaySchedule? { didSet { evaluate = true } }
    /// How long a touch wakes a screen off by the schedule (`--wake-minutes`; zero: touches do
    /// nothing while it is off). Each touch while woken starts it again.
    let wakeDuration: Duration
    /// Presence, brightness and the TV over CEC (DisplaySupervisor+Power.swift, docs/power.md).
    let power: PowerControl
    let clock: ShowClock
    let driver: LoopDriver

    /// False between a VT release and the next acquire.
    private(set) var vtActive = true
    /// False while the screen is switched off.
    private(set) var powerOn = true
    /// False while the card is gone (``ReopeningDRMDisplay``: its driver unbound, a reset).
    private(set) var deviceThere = true
    /// Frames go to the display only when the VT is ours, the screen is on and the card there.
    var canDraw: Bool { vtActive && powerOn && deviceThere }
    /// The carousel was paused because the card went away (it resumes when one is back).
    private var pausedForLoss = false
    /// `display on|off`: the state asked for and the automatic decision then (schedule and
    /// presence, ``ScreenPowerPolicy``); it holds until that decision changes.
    var manual: (on: Bool, automaticOn: Bool)?
    /// Inside a `--display-off` range (or an `off` brightness tier) at the last look.
    var scheduledOff = false
    /// Why the screen is on or off (the control socket's `status`).
    var powerReason: ScreenReason = .schedule
    /// The carousel was already paused (control socket) when the screen went off: it stays so.
    private var wasPaused = false
    /// The schedule must be looked at (start, timer expired, clock set).
    var evaluate = true
    /// When to try a failed VT acquire again (loop clock).
    private(set) var acquireRetryAt: Duration?
    /// On by a touch although the schedule says off (until ``wakeEndAt``).
    var woken = false
    /// When a touch's wake of a screen off by the schedule ends.
    var wakeEndAt: Duration?
    /// The rest of the touch that woke the screen (or fell on a dark one) goes nowhere.
    private var swallowingTouch = false
    /// The screen was dark since the last `shown`: the image on it is announced once it is lit.
    private var announceWhenLit = false

    /// `power`: the motion sensor, brightness and CEC (``PowerControl``; none by default). The
    /// TV, if one is followed over CEC, is switched on and to this show at once.
    init(display: Display, console: ConsoleGuard?, schedule: DisplaySchedule?, wakeDuration: Duration,
         clock: ShowClock, driver: LoopDriver, power: PowerControl = PowerControl()) {
        self.display = display
        self.console = console
        self.schedule = schedule
        self.wakeDuration = wakeDuration
        self.clock = clock
        self.driver = driver
        self.power = power
        power.baseSchedule = schedule
        power.cec?.screen(on: true)
    }

    /// Readable when the card's directory changed (a reconnecting display's).
    var wakeDescriptor: Int32? { display.reconnection?.wakeDescriptor }
    /// True while there is no card or connector to draw on.
    var isLost: Bool { display.reconnection?.isLost == true }

    /// The supervision's deadlines: a touch's wake ending, a lost card looked for again (or its
    /// connector looked at), a VT acquire tried again (real time only).
    func setDeadlines(_ deadlines: inout Deadlines<LoopDuty>) {
        deadlines[.wakeEnd] = wakeEndAt
        deadlines[.displayReopen] = display.reconnection?.retryAt
        deadlines[.displayAcquire] = acquireRetryAt.flatMap(driver.worldDeadline)
        deadlines[.presence] = power.presenceAt
        deadlines[.brightness] = power.brightnessAt
        deadlines[.brightnessStep] = power.brightnessStepAt
    }

    // MARK: Power

    /// Switches the screen off or on by hand (`display on|off` on the control socket): a manual
    /// override of `--display-off` that holds until the schedule's next change. Off pauses the
    /// show; on resumes it with a full interval (unless it was paused before) and redraws at once.
    /// `reason` goes into the log line.
    func setPower(on: Bool, reason: String, carousel: inout Carousel) -> [Effect] {
        if let schedule {
            scheduledOff = schedule.isOff(minuteOfDay: DisplayScheduleTimer.localNow().minuteOfDay)
        }
        woken = false
        wakeEndAt = nil
        manual = (on, ScreenPowerPolicy.automatic(scheduledOff: scheduledOff, woken: false, present: presentNow).on)
        powerReason = .control
        guard on != powerOn else {
            Log.info("display already \(on ? "on" : "off")", detail: reason)
            return []
        }
        let until = [schedule.map { "--display-off \($0)" }, power.effectiveTimeout.map { _ in "presence" }]
            .compactMap { $0 }
        let untilText = until.isEmpty ? "" : ", until the next change of " + until.joined(separator: " or ")
        return applyPower(on: on, reason: reason + untilText, cause: "control", carousel: &carousel)
    }

    /// `pause` on the control socket: while the screen is off the show is paused anyway; this
    /// pause is what it comes back to when the screen is on again.
    func pauseAsked(carousel: inout Carousel) {
        carousel.pause(at: clock.now)
        if !powerOn { wasPaused = true }
    }

    /// `resume`: while the screen is off the show stays paused (nothing would be seen of it); it
    /// resumes when the screen is on again.
    func resumeAsked(carousel: inout Carousel) {
        if !powerOn { wasPaused = false } else { carousel.resume(at: clock.now) }
    }

    /// Switches the screen and pauses or resumes the show; logs the change. `cause` goes into
    /// the `display` event when the screen's visibility changes with it. The TV follows over CEC
    /// and brightness comes on at its level (``powerChanged(on:)``).
    func applyPower(on: Bool, reason: String, cause: String, carousel: inout Carousel) -> [Effect] {
        guard on != powerOn else { return [] }
        var effects: [Effect] = []
        let now = clock.now
        let wasVisible = canDraw
        powerOn = on
        if canDraw != wasVisible { effects.append(.visibility(on: on, reason: cause, at: now)) }
        if !on {
            wasPaused = carousel.isPaused
            carousel.pause(at: now)
        } else if !wasPaused {
            carousel.resume(at: now)
        }
        var warning: String?
        do { try display.setPower(on: on) } catch { warning = error.description }
        if on { effects.append(.redraw) }  // draw the current scene at once
        var detail = reason + (on ? (wasPaused ? "; the show stays paused" : "; the show resumes with a full interval")
                                  : "; the show pauses")
        if let dpms = display.powerState { detail += "; DPMS \(dpms)" }
        Log.info(on ? "display on" : "display off", detail: detail)
        if let warning {
            Log.warning("display power not switched \(on ? "on" : "off")",
                        reason: warning + "; the show \(on ? "resumes" : "pauses") anyway")
        }
        return effects + powerChanged(on: on)  // the TV over CEC, brightness (DisplaySupervisor+Power.swift)
    }

    // MARK: The VT

    /// The VT is being switched away: stop drawing, give the display up (DRM: drop master), then
    /// VT_RELDISP 1 so the switch goes ahead. Always acknowledged, even if releasing failed:
    /// refusing would hold the whole console hostage.
    func releaseForVT() -> [Effect] {
        var effects: [Effect] = []
        if vtActive {
            if canDraw { effects.append(.visibility(on: false, reason: "vt", at: clock.now)) }
            vtActive = false
            acquireRetryAt = nil
            do { try display.release() } catch { Log.warning("display release incomplete", reason: error.description) }
        }
        do { try console?.acknowledgeRelease() } catch {
            Log.warning("VT release not acknowledged", reason: error.description)
        }
        Log.info("display released", detail: "VT switched away; drawing stops until it is switched back")
        return effects
    }

    /// The VT was switched back to: VT_RELDISP VT_ACKACQ, take the display back (DRM: master,
    /// CRTC) and redraw the current scene at once. If taking it back fails (another process holds
    /// DRM master) it is tried again every second.
    func acquireForVT() -> [Effect] {
        do { try console?.acknowledgeAcquire() } catch {
            Log.warning("VT acquire not acknowledged", reason: error.description)
        }
        return takeDisplayBack()
    }

    private func takeDisplayBack() -> [Effect] {
        do {
            try display.acquire()
        } catch {
            if acquireRetryAt == nil {
                Log.warning("display not taken back", reason: error.description + "; trying again every second")
            }
            acquireRetryAt = clock.now + .seconds(1)
            return []
        }
        acquireRetryAt = nil
        vtActive = true
        var effects: [Effect] = []
        if canDraw { effects.append(.visibility(on: true, reason: "vt", at: clock.now)) }
        effects.append(.redraw)  // the other VT drew over the screen: redraw now
        Log.info("display acquired", detail: "VT switched back; redrawing")
        return effects
    }

    // MARK: Every turn

    /// Once per loop turn: a VT acquire to retry; a touch's wake that ended; the motion sensor's
    /// edges and the brightness tiers (``servicePower()``); the schedule when its timer fired (or
    /// at the start, or after the clock was set), the timer armed for its next change; then the
    /// screen is switched as the schedule and presence say (``decideScreenPower(carousel:)``).
    func service(carousel: inout Carousel) -> [Effect] {
        var effects: [Effect] = []
        if let retry = acquireRetryAt, clock.now >= retry { effects += takeDisplayBack() }
        if let end = wakeEndAt, clock.now >= end { wakeEndAt = nil; woken = false; evaluate = true }
        effects += servicePower()
        serviceSchedule()
        effects += decideScreenPower(carousel: &carousel)
        return effects
    }

    /// The schedule when its timer fired (or at the start, or after the clock was set): whether
    /// it says off now, and the timer armed for its next change. Only with a timer (none on
    /// virtual time: ``LoopDriver/displayScheduleTimer()``).
    private func serviceSchedule() {
        guard let schedule else { scheduledOff = false; return }
        guard let timer = driver.displayScheduleTimer() else { return }
        if timer.consume() { evaluate = true }
        guard evaluate else { return }
        evaluate = false
        let now = DisplayScheduleTimer.localNow()
        scheduledOff = schedule.isOff(minuteOfDay: now.minuteOfDay)
        if !scheduledOff { woken = false; wakeEndAt = nil }
        if let seconds = schedule.secondsUntilChange(minuteOfDay: now.minuteOfDay, second: now.second) {
            do { try timer.arm(at: now.epoch + seconds) } catch {
                Log.warning("--display-off timer not armed", reason: error.description)
            }
        }
    }

    /// Once per loop turn and after each frame: the card's comings and goings and its
    /// connector's (``Display/reconnection``). A lost card or connector darkens the show (a
    /// `display` event with reason `device`, no `shown` meanwhile) and pauses it, so it goes on at
    /// the same image; a card or connector back redraws that image at once and resumes, at its
    /// new size when it has another one (``Effect/reopened``).
    /// Throws when the card that appeared cannot carry on the show (a pixel format it cannot scan out).
    func serviceDevice(carousel: inout Carousel) throws(DisplayError) -> [Effect] {
        guard let device = display.reconnection else { return [] }
        var effects: [Effect] = []
        for change in try device.service(now: clock.now) {
            switch change {
            case .lost(let reason):
                if deviceThere {
                    if canDraw { effects.append(.visibility(on: false, reason: "device", at: clock.now)) }
                    deviceThere = false
                    pausedForLoss = !carousel.isPaused
                    if pausedForLoss { carousel.pause(at: clock.now) }
                }
                Log.warning("display lost", reason: reason + "; the show waits at its image for a display to appear")
                effects.append(.status("display lost: \(reason); waiting for one"))
            case .reopened(let summary):
                // An output of several back while another showed: no `display` event.
                let wasThere = deviceThere
                deviceThere = true
                if pausedForLoss && powerOn { carousel.resume(at: clock.now) }
                pausedForLoss = false
                if canDraw && !wasThere { effects.append(.visibility(on: true, reason: "device", at: clock.now)) }
                effects.append(.redraw)  // the new card shows nothing of ours yet: draw now
                Log.info("display reopened", detail: summary)
                effects += [.status("display reopened: \(summary)"), .reopened]
            }
        }
        return effects
    }

    // MARK: Touches and `shown`

    /// Whether a touch sample goes on to the show. While the screen is off none does: a finger
    /// landing on a screen the schedule switched off (no `display` override, `--wake-minutes`
    /// not 0) lights it for ``wakeDuration``, and that touch, to its end, is no tap, swipe or
    /// hold. Touches while woken start the wake again. A touch counts as presence: one on a screen
    /// dark only for want of it lights it (docs/power.md). Returns whether it goes on, and what
    /// lighting the screen takes.
    func admits(_ sample: TouchSample, carousel: inout Carousel) -> (Bool, [Effect]) {
        if swallowingTouch {
            if sample.phase == .up || sample.phase == .cancel { swallowingTouch = false }
            return (false, [])
        }
        if powerOn {
            if woken { wakeEndAt = clock.now + wakeDuration }
            notePresenceTouch()  // a touch counts as presence (DisplaySupervisor+Power.swift)
            return (true, [])
        }
        swallowingTouch = sample.phase == .down || sample.phase == .move
        if sample.phase == .down, darkForWantOfPresence {
            notePresenceTouch()
            powerReason = .presence
            let effects = applyPower(on: true, reason: "touched: someone is there", cause: "touch", carousel: &carousel)
            return (false, effects)
        }
        guard sample.phase == .down, manual == nil, scheduledOff, wakeDuration > .zero else { return (false, []) }
        woken = true
        wakeEndAt = clock.now + wakeDuration
        let reason = "touched; woken for \(wakeDuration.wholeMilliseconds) ms"
        return (false, applyPower(on: true, reason: reason, cause: "touch", carousel: &carousel))
    }

    /// After a frame is (or is not) presented: nothing is announced while the screen is dark (VT
    /// switched away, screen off); when it is lit again, the image on it gets a `shown` at that
    /// moment (unless the carousel announces one itself now, or its image is still being
    /// prepared and will be announced when it is). `drawn`: a frame was presented since the
    /// start (or the last redraw asked for).
    func filterShown(_ pending: inout [PendingShown], framesPresented: Int, drawn: Bool, carousel: Carousel,
                     now: Duration) {
        guard canDraw else {
            if framesPresented > 0 || !pending.isEmpty { announceWhenLit = true }
            pending.removeAll()
            return
        }
        guard announceWhenLit, drawn else { return }
        announceWhenLit = false
        guard pending.isEmpty, let item = carousel.currentItem, let slot = carousel.currentSlot,
              case .ready = carousel.status(ofSlot: slot) else { return }
        pending.append(PendingShown(item: item, source: carousel.items[item].source, at: now))
    }
}

/// A `shown` waiting for the frame that shows it to be presented.
struct PendingShown: Equatable {
    var item: Int
    var source: String
    var at: Duration
}
