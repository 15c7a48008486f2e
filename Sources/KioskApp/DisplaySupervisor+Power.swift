// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskInput
import KioskSystem

// Presence and power (docs/power.md), the display supervision's part of them: the motion
// sensor and touches against --presence-timeout, the TV over HDMI-CEC, brightness tiers through
// the backlight or the pixels. The state is ``PowerControl``; ``DisplaySupervisor/service(carousel:)``
// calls ``DisplaySupervisor/servicePower()`` once per turn and then
// ``DisplaySupervisor/decideScreenPower(carousel:)``, which decides on/off with the schedule;
// ``DisplaySupervisor/powerChanged(on:)`` follows each switch.

/// Where the frame loop reads a motion sensor from (the GPIO reader, or a test's own feed).
public protocol PresenceFeed: AnyObject {
    /// Readable while events wait (polled with the loop's other descriptors).
    var wakeDescriptor: Int32 { get }
    /// The events waiting, oldest first; never blocks.
    func take() -> [PresenceInputEvent]
    /// How long a level must hold to count (``KioskCore/EdgeDebouncer``).
    var debounce: Duration { get }
}

extension GPIOPresenceInput: PresenceFeed {
    public var wakeDescriptor: Int32 { events.wakeDescriptor }
    public func take() -> [PresenceInputEvent] { events.take() }
    public var debounce: Duration { spec.debounce }
}

/// Where brightness goes: a panel's backlight, the pixels (a TV on HDMI; offscreen frames), or
/// nowhere (`--backlight none` on a display that cannot dim its pixels). Never two at once.
public enum BrightnessSink {
    case backlight(Backlight)
    case pixels(PixelDimmable)
    case none

    var name: String {
        switch self {
        case .backlight: return "backlight"
        case .pixels: return "pixels"
        case .none: return "none"
        }
    }
}

/// The display supervision's presence, brightness and CEC state (docs/power.md), made from
/// ``FrameLoop/Configuration``'s `presence`, `presenceTimeout`, `brightness`, `brightnessSink`
/// and `cec`. Runs on the frame loop's thread.
public final class PowerControl {
    // MARK: Presence
    /// The motion sensor, if `--presence` names one.
    public var presenceFeed: PresenceFeed?
    /// `--presence-timeout` (nil: not given: 300 s with a sensor, none without one).
    public var commandLineTimeout: Duration?
    /// The manifest's `presence_timeout`, the control socket's (which wins); zero: presence off.
    var manifestTimeout: Duration?, controlTimeout: Duration?
    /// Someone there or not; its timeout is the one in force (``effectiveTimeout``).
    var presence = Presence(timeout: PowerControl.defaultTimeout)
    var debouncer: EdgeDebouncer?
    /// The sensor's line as requested, and why it cannot be read (nil: it can).
    var sensorSummary: String?, sensorProblem: String?
    /// The timeout with a sensor and none given: 300 s.
    public static let defaultTimeout: Duration = .seconds(300)

    // MARK: Brightness
    /// `--brightness`, and the manifest's `brightness` (which wins).
    public var commandLineTiers: BrightnessTiers? { didSet { brightnessDue = true } }
    var manifestTiers: BrightnessTiers? { didSet { brightnessDue = true } }
    /// `brightness PCT` on the control socket or MQTT: per mille, the tier in force then (it
    /// holds until the tier changes, as `display on|off` does with the schedule), and who asked.
    var brightnessOverride: (permille: Int, tier: BrightnessTiers.Tier?, origin: String)?
    var ramp = BrightnessRamp(level: 1000)
    /// Where the level goes.
    public var sink: BrightnessSink = .none
    /// The level last given to the sink, per mille (nil: none yet).
    var applied: Int?
    /// Look at the tiers now (start, a change of settings, the screen on again).
    var brightnessDue = true
    /// `--display-off` as given (the schedule in force adds the tiers' `off` ranges).
    public var baseSchedule: DisplaySchedule?
    /// When the sensor's level settles or its timeout runs out; the tiers' next change; the
    /// ramp's next step (show time; the loop's `presence`, `brightness`, `brightnessStep`).
    var presenceAt: Duration?, brightnessAt: Duration?, brightnessStepAt: Duration?

    // MARK: CEC
    /// The TV's CEC client, if one is in use; why none is (`--cec none`, auto found none).
    public var cec: CECClient?
    public var cecAbsence: String?

    /// Nothing followed: no sensor, no tiers, no CEC (a show without `--presence`, `--brightness`, `--cec`).
    public init() {}

    /// From the loop's configuration (see ``FrameLoop/Configuration``).
    init(feed: PresenceFeed?, timeout: Duration?, tiers: BrightnessTiers?, sink: BrightnessSink, cec: CECClient?,
         cecAbsence: String?) {
        presenceFeed = feed
        commandLineTimeout = timeout
        commandLineTiers = tiers
        self.sink = sink
        self.cec = cec
        self.cecAbsence = cecAbsence
    }

    /// The tiers in force (the manifest's, else the command line's).
    var tiers: BrightnessTiers? { manifestTiers ?? commandLineTiers }

    /// The presence timeout in force; nil: presence is not followed.
    var effectiveTimeout: Duration? {
        let t =
            controlTimeout ?? manifestTimeout ?? commandLineTimeout ?? (presenceFeed != nil ? Self.defaultTimeout : nil)
        return t == .zero ? nil : t
    }

    /// Descriptors the loop polls.
    var wakeDescriptors: [Int32] { presenceFeed.map { [$0.wakeDescriptor] } ?? [] }

}

extension DisplaySupervisor {
    /// Whether someone counts as there now for ``ScreenPowerPolicy``; nil when presence is not
    /// followed (no timeout) or the sensor cannot be read (the screen then follows the schedule alone).
    var presentNow: Bool? {
        guard let timeout = power.effectiveTimeout else { return nil }
        if power.presenceFeed != nil && power.sensorProblem != nil { return nil }
        var p = power.presence
        p.timeout = timeout
        return p.isPresent(at: clock.now)
    }

    /// Once per loop turn: the sensor's edges, settled; the presence deadline; the brightness
    /// tiers and the ramp (``service(carousel:)`` then decides on/off).
    func servicePower() -> [Effect] {
        let pc = power
        let now = clock.now
        for event in pc.presenceFeed?.take() ?? [] {
            switch event {
            case .attached(let summary, let active, let time):
                pc.sensorSummary = summary
                pc.sensorProblem = nil
                pc.debouncer = EdgeDebouncer(debounce: pc.presenceFeed?.debounce ?? .zero, level: active)
                pc.presence.motion(active: active, at: time)
                Log.info("motion sensor attached", detail: summary + "; " + (active ? "motion now" : "no motion now")
                        + (pc.effectiveTimeout.map {
                            ", the screen goes off \($0.wholeMilliseconds / 1000) s after the last"
                        } ?? ", presence off"))
            case .edge(let active, let time):
                if pc.debouncer == nil { pc.debouncer = EdgeDebouncer(debounce: pc.presenceFeed?.debounce ?? .zero) }
                pc.debouncer?.edge(to: active, at: time)
            case .unavailable(let reason):
                pc.sensorProblem = reason
                let retry = GPIOPresenceInput.retryInterval.wholeMilliseconds / 1000
                Log.warning("motion sensor unavailable",
                            reason: reason + "; the screen follows the schedule alone; tried again every \(retry) s")
            }
        }
        if let settled = pc.debouncer?.settle(at: now) {
            pc.presence.motion(active: settled.level, at: settled.at)
        }
        if let timeout = pc.effectiveTimeout { pc.presence.timeout = timeout }
        let absent = pc.effectiveTimeout == nil ? nil : pc.presence.absentAt.flatMap { $0 > now ? $0 : nil }
        pc.presenceAt = [pc.debouncer?.deadline, absent].compactMap { $0 }.min()
        return serviceBrightness(at: now)
    }

    /// On or off, as ``ScreenPowerPolicy`` says from the schedule, presence, a touch's wake and a
    /// manual override (which ends when the automatic decision changes).
    func decideScreenPower(carousel: inout Carousel) -> [Effect] {
        let present = presentNow
        let automatic = ScreenPowerPolicy.automatic(scheduledOff: scheduledOff, woken: woken, present: present)
        if let manual, ScreenPowerPolicy.overrideEnds(given: manual.automaticOn, now: automatic.on) {
            self.manual = nil
            let timeout = power.presence.timeout.wholeMilliseconds / 1000
            Log.info("display override ended", detail: automatic.reason == .presence
                     ? (automatic.on ? "someone is there" : "nobody was seen for \(timeout) s")
                     : "--display-off \(schedule.map { "\($0)" } ?? "") says \(automatic.on ? "on" : "off") now")
        }
        let (on, reason) = ScreenPowerPolicy.decide(manual: manual?.on, scheduledOff: scheduledOff, woken: woken,
                                                    present: present)
        if manual == nil { powerReason = reason }
        guard on != powerOn else { return [] }
        let text: String
        switch reason {
        case .presence:
            text = on ? "motion: someone is there" + (power.sensorSummary.map { " (\($0))" } ?? "")
                      : "nobody seen for \(power.presence.timeout.wholeMilliseconds / 1000) s (--presence-timeout)"
        case .touch: text = "touched; woken for \(wakeDuration.wholeMilliseconds) ms"
        default: text = "--display-off \(schedule.map { "\($0)" } ?? "")"
        }
        return applyPower(on: on, reason: text, cause: reason.rawValue, carousel: &carousel)
    }

    /// The screen was switched on or off (the schedule, presence, the control socket, a touch):
    /// the TV follows over CEC; brightness comes on at its level, not ramping from the last one.
    func powerChanged(on: Bool) -> [Effect] {
        power.cec?.screen(on: on)
        guard on else { return [] }
        power.brightnessDue = true
        return serviceBrightness(at: clock.now, jump: true)
    }

    /// A touch while the screen is on, or the one that lights it: someone is there.
    func notePresenceTouch() { power.presence.touched(at: clock.now) }

    /// Whether the screen is dark only for want of presence (the schedule allows it, nobody
    /// overrode it): a touch then lights it (``admits(_:carousel:)``).
    var darkForWantOfPresence: Bool {
        !powerOn && manual == nil && !scheduledOff && presentNow == false
    }

    // MARK: Brightness

    /// The level the tiers (or an override) ask for now, per mille: full without either. An
    /// `off` tier keeps the last level (the screen is off by the schedule then).
    private func brightnessTarget(at now: Duration) -> (permille: Int, tier: BrightnessTiers.Tier?) {
        let pc = power
        var tier: BrightnessTiers.Tier?
        if let tiers = pc.tiers { tier = tiers.tier(atMinute: localMinute().minute) }
        if let o = pc.brightnessOverride {
            if o.tier == tier { return (o.permille, tier) }
            pc.brightnessOverride = nil
            Log.info("brightness override ended",
                     detail: "the tier \(tier.map { "\($0)" } ?? "none") of --brightness applies")
        }
        guard let tier else { return (1000, nil) }
        if case .percent(let p) = tier.level { return (p * 10, tier) }
        return (pc.ramp.target, tier)
    }

    /// The minute of the day and its second in local time (the show's wall clock and time zone,
    /// as item schedules read them: on the virtual clock they run with show time).
    func localMinute() -> (minute: Int, second: Int) {
        let (sinceEpoch, zone) = driver.readWallTime()
        let epoch = sinceEpoch.components.seconds
        let local = epoch + Int64(zone.utcOffset(atEpochSecond: epoch))
        let daySecond = Int(((local % 86_400) + 86_400) % 86_400)
        return (daySecond / 60, daySecond % 60)
    }

    /// Looks at the tiers when due, moves the ramp on and gives the level to the sink; sets the
    /// `brightness` deadlines (the ramp's next step, the tiers' next change). A level given to
    /// the pixels redraws the screen (``Effect/redraw``).
    func serviceBrightness(at now: Duration, jump: Bool = false) -> [Effect] {
        let pc = power
        // Nothing asked for, ever: the backlight (or the pixels) are left as they are.
        guard pc.tiers != nil || pc.brightnessOverride != nil || pc.applied != nil else { return [] }
        if pc.brightnessDue || pc.brightnessAt.map({ now >= $0 }) == true {
            pc.brightnessDue = false
            let target = brightnessTarget(at: now)
            if jump || !canDraw || pc.applied == nil {
                pc.ramp.jump(to: target.permille)
            } else {
                pc.ramp.go(to: target.permille, at: now)
            }
            if let tiers = pc.tiers {
                let (minute, second) = localMinute()
                // A real wall clock can be set: looked at again within the schedules' recheck.
                pc.brightnessAt = tiers.secondsUntilChange(minuteOfDay: minute, second: second)
                    .map { now + min(.seconds($0), driver.scheduleRecheck ?? .seconds($0)) }
            } else {
                pc.brightnessAt = nil
            }
        }
        let effects = applyBrightness(pc.ramp.level(at: now))
        pc.brightnessStepAt = pc.ramp.nextStep(after: now)
        return effects
    }

    private func applyBrightness(_ level: Int) -> [Effect] {
        let pc = power
        guard pc.applied != level else { return [] }
        var effects: [Effect] = []
        let first = pc.applied == nil
        switch pc.sink {
        case .backlight(let light):
            do {
                try light.set(permille: level)
            } catch {
                Log.warning("backlight not set", path: light.directory,
                            reason: error.description + "; dimming by the pixels instead")
                if let pixels = display as? PixelDimmable {
                    pc.sink = .pixels(pixels); pc.applied = nil; return applyBrightness(level)
                }
                pc.sink = .none
            }
        case .pixels(let pixels):
            pixels.pixelBrightness = PixelBrightness(permille: level)
            effects.append(.redraw)  // the frame on screen is redrawn at the new level
        case .none:
            break
        }
        pc.applied = level
        if first || !pc.ramp.isChanging(at: clock.now) {
            Log.info("brightness", detail: "\(level / 10)." + "\(level % 10) % by the \(pc.sink.name)"
                    + (pc.brightnessOverride.map { " (\($0.origin))" }
                        ?? pc.tiers.map { " (--brightness \($0))" } ?? ""))
        }
        return effects
    }

    // MARK: Control socket and manifest

    /// `brightness PCT` (nil: `auto`, back to the tiers) on the control socket
    /// (docs/control-socket.md) or MQTT (`origin`, for the log): it holds until the tier in
    /// force changes.
    func setBrightness(percent: Int?, origin: String = "control socket") -> [Effect] {
        let pc = power
        if let percent {
            pc.brightnessOverride = (percent * 10, pc.tiers?.tier(atMinute: localMinute().minute), origin)
        } else {
            pc.brightnessOverride = nil
        }
        pc.brightnessDue = true
        return serviceBrightness(at: clock.now)
    }

    /// `presence_timeout SECONDS` on the control socket (0: presence off); it wins over the
    /// manifest's and the command line's. The screen follows at the next turn.
    func setPresenceTimeout(seconds: Int, origin: String = "control socket") -> [Effect] {
        power.controlTimeout = .seconds(seconds)
        Log.info("presence timeout",
                 detail: seconds == 0 ? "off (\(origin)): the screen follows the schedule alone"
                                      : "\(seconds) s (\(origin))")
        return serviceBrightness(at: clock.now)
    }

    /// A manifest's `brightness` and `presence_timeout` (nil: the command line's apply again).
    func applyPowerSettings(brightness: BrightnessTiers?, presenceTimeout: Duration?) {
        let pc = power
        if pc.manifestTiers != brightness {
            pc.manifestTiers = brightness
            let tiers = brightness.map { "\($0) (manifest)" } ?? pc.commandLineTiers.map { "\($0) (--brightness)" }
            Log.info("brightness tiers", detail: tiers ?? "none")
        }
        if pc.manifestTimeout != presenceTimeout {
            pc.manifestTimeout = presenceTimeout
            Log.info("presence timeout",
                     detail: pc.effectiveTimeout.map { "\($0.wholeMilliseconds / 1000) s" } ?? "off")
        }
        let offs = (pc.baseSchedule?.ranges ?? []) + (pc.tiers?.offSchedule?.ranges ?? [])
        let inForce = offs.isEmpty ? nil : DisplaySchedule(ranges: offs)
        if schedule != inForce { schedule = inForce }
    }

    // MARK: Status

    /// The `status` reply's power fields: why the screen is on or off, presence, brightness, CEC.
    func powerStatus(at now: Duration) -> [String: JSONValue] {
        let pc = power
        var presence: [String: JSONValue] = [:]
        if let timeout = pc.effectiveTimeout {
            let state = presentNow.map { $0 ? "present" : "absent" } ?? "unavailable"
            presence["state"] = .string(state)
            presence["timeout_s"] = .int(Int64(timeout.wholeMilliseconds / 1000))
            presence["last_seen_ms"] = .int(pc.presence.lastSeen.wholeMilliseconds)
            presence["last_sign"] = .string(pc.presence.lastSign.rawValue)
            presence["motion"] = .bool(pc.presence.motion)
        } else {
            presence["state"] = .string("off")
        }
        if let summary = pc.sensorSummary { presence["sensor"] = .string(summary) }
        if let problem = pc.sensorProblem { presence["reason"] = .string(problem) }
        var brightness: [String: JSONValue] = [
            "percent": .double(Double(pc.ramp.level(at: now)) / 10),
            "target_percent": .double(Double(pc.ramp.target) / 10),
            "via": .string(pc.sink.name), "override": .bool(pc.brightnessOverride != nil),
        ]
        if case .backlight(let light) = pc.sink { brightness["device"] = .string(light.directory) }
        if let tiers = pc.tiers {
            brightness["tiers"] = .string(tiers.description)
            brightness["tier"] = .string(tiers.tier(atMinute: localMinute().minute).description)
        }
        var cec: [String: JSONValue] = [:]
        if let client = pc.cec {
            let s = client.status
            cec["state"] = .string(s.state.rawValue)
            cec["device"] = .string(client.device)
            if let r = s.reason { cec["reason"] = .string("CEC unavailable: " + r) }
            if let a = s.adapter { cec["adapter"] = .string(a) }
            if let la = s.logicalAddress { cec["logical_address"] = .int(Int64(la)) }
            if let pa = s.physicalAddress { cec["physical_address"] = .string(pa) }
        } else {
            cec["state"] = .string("off")
            if let why = pc.cecAbsence { cec["reason"] = .string(why) }
        }
        let reason: String = !vtActive ? "vt" : !deviceThere ? "device" : powerReason.rawValue
        return ["display_reason": .string(reason), "presence": .object(presence), "brightness": .object(brightness),
                "cec": .object(cec)]
    }
}
