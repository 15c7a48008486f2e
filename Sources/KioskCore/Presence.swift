// SPDX-License-Identifier: Apache-2.0
/// Whether someone is in front of the screen (`--presence`, `--presence-timeout`; docs/power.md):
/// a motion sensor's settled level and touches, against a timeout.
///
/// A PIR sensor's output is active while it sees motion (an HC-SR501 holds it for a few seconds
/// and starts again with each movement); someone is there while it is active and for
/// ``timeout`` after it last went inactive, or after the last touch, whichever is later. At the
/// start the show counts as just seen (the screen is on for a full timeout before anything has
/// moved). A value with no clock: times are show time, given by the caller.
public struct Presence: Equatable, Sendable {
    /// What was last seen: the start, the sensor, or a finger.
    public enum Sign: String, Equatable, Sendable {
        case start, motion, touch
    }

    /// How long after the last sign of someone the screen may go off.
    public var timeout: Duration
    /// The sensor's settled level: true while it reports motion.
    public private(set) var motion = false
    /// Show time of the last sign: when the motion ended (or was last seen, while it goes on),
    /// the last touch, or the start.
    public private(set) var lastSeen: Duration
    /// What that sign was.
    public private(set) var lastSign: Sign = .start

    /// Someone counts as just seen at `start`.
    public init(timeout: Duration, start: Duration = .zero) {
        self.timeout = timeout
        lastSeen = start
    }

    /// The sensor's settled level changed at `time` (``EdgeDebouncer``): active is motion.
    public mutating func motion(active: Bool, at time: Duration) {
        if active || motion {
            lastSeen = max(lastSeen, time)
            lastSign = .motion
        }
        motion = active
    }

    /// A finger touched the screen at `time`: as good as motion.
    public mutating func touched(at time: Duration) {
        lastSeen = max(lastSeen, time)
        lastSign = .touch
    }

    /// Whether someone counts as there at `now`: the sensor is active, or its last sign is less
    /// than ``timeout`` old.
    public func isPresent(at now: Duration) -> Bool {
        motion || now < lastSeen + timeout
    }

    /// When, without a new sign, someone stops counting as there; nil while the sensor is active.
    public var absentAt: Duration? { motion ? nil : lastSeen + timeout }
}

/// Edges of a digital input (a motion sensor on a GPIO line) settled: a new level counts once
/// it has held for ``debounce`` with no edge back, and then from the time of its first edge. A
/// pulse shorter than that (a contact bounce, interference on a long wire) is dropped.
///
/// The GPIO character device's first ABI, which libgpiod 1.6 speaks, has no debounce of its own,
/// so it is done here on the kernel's timestamps of the edge events. A value with no clock.
public struct EdgeDebouncer: Equatable, Sendable {
    /// How long a new level must hold; zero: every edge counts at once.
    public let debounce: Duration
    /// The settled level.
    public private(set) var level: Bool
    /// An edge to a new level not yet held for ``debounce``: the level and its first edge's time.
    public private(set) var pending: (level: Bool, since: Duration)?

    public init(debounce: Duration, level: Bool = false) {
        self.debounce = debounce
        self.level = level
    }

    public static func == (a: EdgeDebouncer, b: EdgeDebouncer) -> Bool {
        a.debounce == b.debounce && a.level == b.level && a.pending?.level == b.pending?.level
            && a.pending?.since == b.pending?.since
    }

    /// An edge to `newLevel` at `time` (events in time order). An edge back to the settled
    /// level drops the one pending; a repeated edge to the pending level keeps its first time.
    public mutating func edge(to newLevel: Bool, at time: Duration) {
        if newLevel == level {
            pending = nil
        } else if pending == nil {
            pending = (newLevel, time)
        }
    }

    /// When the pending level will have held long enough (the loop wakes then); nil when none.
    public var deadline: Duration? { pending.map { $0.since + debounce } }

    /// At `now`: the level that settled (and the time of its first edge), if the pending one
    /// has held for ``debounce``; nil otherwise.
    public mutating func settle(at now: Duration) -> (level: Bool, at: Duration)? {
        guard let p = pending, now >= p.since + debounce else { return nil }
        pending = nil
        level = p.level
        return (p.level, p.since)
    }
}
