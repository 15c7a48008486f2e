// SPDX-License-Identifier: Apache-2.0
/// Keeps a repeated log line to at most one per ``period``, with a count: the first occurrence
/// is logged at once; the ones that follow within the period are counted, and the count is
/// logged at the next occurrence after the period or when ``flush(at:)`` is called at
/// ``flushDeadline`` (so the end of a burst is not lost). A flood of refused clients costs
/// one line a second, not one per client.
///
/// A value with no clock: times are whatever monotonic time the caller reads.
public struct LogThrottle: Sendable {
    /// Shortest time between two lines (1 s by default).
    public let period: Duration
    private var lastLogged: Duration?
    /// Occurrences since the last line.
    public private(set) var pending = 0

    public init(period: Duration = .seconds(1)) { self.period = period }

    /// One more occurrence at `now`. Returns how many occurrences to log now (this one and the
    /// ones held back since the last line), or nil to hold it back.
    public mutating func note(at now: Duration) -> Int? {
        pending += 1
        if let last = lastLogged, now - last < period { return nil }
        lastLogged = now
        defer { pending = 0 }
        return pending
    }

    /// When the occurrences held back should be logged (nil: none are).
    public var flushDeadline: Duration? {
        guard pending > 0, let last = lastLogged else { return nil }
        return last + period
    }

    /// At or after ``flushDeadline``: how many occurrences were held back (to log now), or nil.
    public mutating func flush(at now: Duration) -> Int? {
        guard let deadline = flushDeadline, now >= deadline else { return nil }
        lastLogged = now
        defer { pending = 0 }
        return pending
    }
}
