// SPDX-License-Identifier: Apache-2.0
/// Show time is a `Duration` since the show started, read from a ``ShowClock``.
extension Duration {
    /// Whole milliseconds, rounded down (the unit of the `t` field of events and of offscreen
    /// frame file names).
    public var wholeMilliseconds: Int64 {
        let c = components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }
    /// Whole nanoseconds, rounded down.
    public var wholeNanoseconds: Int64 {
        let c = components
        return c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000
    }
}

/// Where the frame loop reads the time. The real one follows `CLOCK_MONOTONIC`; tests and the
/// offscreen backend use a virtual clock that only moves when it is told to, so a show of N
/// seconds renders as fast as the machine can and the same inputs always give the same frames.
public protocol ShowClock: AnyObject {
    /// Time since the show started.
    var now: Duration { get }
}

/// A clock that moves only when ``advance(to:)`` is called.
public final class VirtualClock: ShowClock {
    public private(set) var now: Duration
    public init(start: Duration = .zero) { now = start }
    /// Moves the clock forward to `time`; a time in the past is ignored (the clock never runs back).
    public func advance(to time: Duration) { if time > now { now = time } }
    /// Moves the clock forward by `step`.
    public func advance(by step: Duration) { now += step }
}
