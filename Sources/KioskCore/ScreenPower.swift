// SPDX-License-Identifier: Apache-2.0
/// Why the screen is on or off: the `reason` of `display` events and of the control socket's
/// `status` (docs/events-and-logs.md, docs/power.md).
public enum ScreenReason: String, Equatable, Sendable {
    /// `--display-off` or an `off` brightness tier: on outside it, off inside it.
    case schedule
    /// The motion sensor (`--presence`): someone was seen within `--presence-timeout`, or not.
    case presence
    /// `display on|off` on the control socket.
    case control
    /// A touch woke a screen the schedule had switched off (`--wake-minutes`).
    case touch
    /// The VT was switched away or back.
    case vt
    /// The card or its connector went away or came back.
    case device
}

/// Whether the screen should be on, from the schedule, the motion sensor, a touch that woke it
/// and a manual override (docs/power.md): the schedule says when the screen *may* be on,
/// presence *whether* it is. Pure functions of their inputs; the frame loop keeps the state.
public enum ScreenPowerPolicy {
    /// The automatic decision (no manual override):
    /// - inside a schedule's off range: off (`schedule`), unless a touch woke it (`touch`);
    /// - else with a motion sensor: on while someone counts as present, off when not (`presence`);
    /// - else on (`schedule`).
    ///
    /// - Parameters:
    ///   - scheduledOff: inside a `--display-off` range or an `off` brightness tier.
    ///   - woken: a touch woke the screen and its `--wake-minutes` are not up.
    ///   - present: ``Presence/isPresent(at:)``; nil without a motion sensor (or while it is unavailable).
    public static func automatic(scheduledOff: Bool, woken: Bool, present: Bool?) -> (on: Bool, reason: ScreenReason) {
        if scheduledOff { return woken ? (true, .touch) : (false, .schedule) }
        if let present { return (present, .presence) }
        return (true, .schedule)
    }

    /// The decision: a manual override (`display on|off`) while it holds, else
    /// ``automatic(scheduledOff:woken:present:)``. An override holds until the automatic
    /// decision's on/off differs from what it was when the override was given
    /// (``overrideEnds(given:now:)``).
    public static func decide(
        manual: Bool?, scheduledOff: Bool, woken: Bool, present: Bool?
    ) -> (on: Bool, reason: ScreenReason) {
        if let manual { return (manual, .control) }
        return automatic(scheduledOff: scheduledOff, woken: woken, present: present)
    }

    /// Whether a manual override given while the automatic decision was `given` ends now that
    /// it is `now`: at the schedule's next change, or presence's (someone came, or the timeout ran out).
    public static func overrideEnds(given: Bool, now: Bool) -> Bool { given != now }
}
