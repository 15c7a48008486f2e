// SPDX-License-Identifier: Apache-2.0
/// A change of brightness spread over ``duration`` rather than made at once (docs/power.md):
/// the level at any show time, eased in and out (``Easing/easeInOutWeight(elapsed:total:)``),
/// and when the loop should look again to apply the next step.
///
/// Levels are per mille of full brightness (0 ... 1000): fine enough for a backlight's raw
/// steps (often 0 ... 255) and for the pixel tables (``PixelBrightness``). A value with no clock.
public struct BrightnessRamp: Equatable, Sendable {
    /// How long a change takes: 1.5 s.
    public static let standardDuration: Duration = .milliseconds(1500)
    /// Time between two steps of a change: 50 ms (20 steps a second, smooth to the eye, and 30
    /// backlight writes or redraws for a whole change).
    public static let stepInterval: Duration = .milliseconds(50)

    /// The level the change started from, per mille.
    public private(set) var from: Int
    /// The level it goes to, per mille.
    public private(set) var target: Int
    /// Show time the change started.
    public private(set) var start: Duration = .zero
    /// How long it takes.
    public private(set) var duration: Duration = .zero

    /// Steady at `level` per mille (clamped to 0 ... 1000).
    public init(level: Int) {
        from = Self.clamp(level)
        target = from
    }

    /// The level at `now`, per mille.
    public func level(at now: Duration) -> Int {
        guard from != target, now < start + duration else { return target }
        guard now > start else { return from }
        let w = Easing.easeInOutWeight(elapsed: (now - start).wholeNanoseconds, total: duration.wholeNanoseconds)
        return from + ((target - from) * w + (target > from ? 128 : -128)) / 256
    }

    /// Whether the level still changes after `now`.
    public func isChanging(at now: Duration) -> Bool { from != target && now < start + duration }

    /// Starts a change to `level` per mille at `now`, from the level at `now`, over `over`
    /// (zero: at once). A change to the level already aimed at does nothing.
    public mutating func go(to level: Int, at now: Duration, over: Duration = BrightnessRamp.standardDuration) {
        let to = Self.clamp(level)
        guard to != target else { return }
        from = self.level(at: now)
        target = to
        start = now
        duration = max(.zero, over)
        if duration == .zero { from = to }
    }

    /// Jumps to `level` per mille (the screen is dark: nobody sees a ramp).
    public mutating func jump(to level: Int) {
        from = Self.clamp(level)
        target = from
        duration = .zero
    }

    /// When to apply the next step after `now` (every ``stepInterval``, and the end); nil when
    /// the level no longer changes.
    public func nextStep(after now: Duration) -> Duration? {
        guard isChanging(at: now) else { return nil }
        return min(now + Self.stepInterval, start + duration)
    }

    private static func clamp(_ v: Int) -> Int { min(1000, max(0, v)) }
}
