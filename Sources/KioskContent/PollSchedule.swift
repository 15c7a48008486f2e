// SPDX-License-Identifier: Apache-2.0
/// When to poll the manifest next (docs/content.md), as a value driven by the caller's clock: no
/// timers, no threads, so tests drive it by hand.
///
/// - The first poll is due at once.
/// - After a success (a 200 or a 304) the next one is ``Configuration/interval`` away, times a
///   factor drawn uniformly from 1 ± ``Configuration/jitter`` (default ±10 %).
/// - Except after the first success since the start or since a failure streak: then the next
///   poll is drawn uniformly from the whole interval around it (0.5 to 1.5 intervals). A fleet
///   powered on together, or brought back together by the end of an outage, polls first in
///   step; ±10 % alone would leave it polling within two tenths of an interval of each other
///   for dozens of rounds (a random walk spreads it by about √n · 6 % of the interval after n
///   polls), while one draw over a whole interval spreads it evenly at once.
/// - After a failure, exponential backoff: ``Configuration/backoffStart`` doubling on each
///   failure in a row up to ``Configuration/backoffCap`` (default 1 s, 2 s, 4 s, ... 5 min),
///   with the same jitter; back to the interval after the next success. An answer with
///   `Retry-After` (a 503 or 429 from a busy server or CDN, RFC 9110 §10.2.3) waits at least
///   that long, up to the cap.
/// - ``pollNow(at:)`` (SIGHUP) makes a poll due at once.
///
/// Log lines are decided here too, so that a kiosk without network logs one line, not one per
/// attempt: ``failed(at:error:)`` returns a ``PollNote`` only for the first failure of a streak,
/// and ``succeeded(at:)`` one when a streak ends.
public struct PollSchedule: Sendable {
    public struct Configuration: Sendable {
        /// Time between polls while they work; default 60 s (`--manifest-interval`).
        public var interval: Duration = .seconds(60)
        /// Relative jitter, 0 ≤ x < 1; default 0.1 (±10 %).
        public var jitter: Double = 0.1
        /// Delay after the first failure; default 1 s.
        public var backoffStart: Duration = .seconds(1)
        /// Longest delay between failed polls; default 5 min.
        public var backoffCap: Duration = .seconds(300)
        public init(interval: Duration = .seconds(60), jitter: Double = 0.1, backoffStart: Duration = .seconds(1),
                    backoffCap: Duration = .seconds(300)) {
            self.interval = interval; self.jitter = jitter
            self.backoffStart = backoffStart; self.backoffCap = backoffCap
        }
    }

    /// What to log after a poll, if anything.
    public enum PollNote: Equatable, Sendable, CustomStringConvertible {
        /// The first failure of a streak. `atBoot`: no poll has worked since the start (no
        /// network at boot: the cached show runs).
        case unreachable(error: ContentError, atBoot: Bool)
        /// Polls work again after `failures` failed ones.
        case reachableAgain(failures: Int)

        /// The log line's fixed phrase (docs/events-and-logs.md); the error goes in
        /// `reason="…"` (``ContentError/logReason(path:)``), the URL in `path=`.
        public var what: String {
            switch self {
            case .unreachable(_, true):
                return "manifest unreachable at start, showing the cached show; retrying in the background"
                    + " (logged once)"
            case .unreachable(_, false):
                return "manifest unreachable, the current show goes on; retrying in the background (logged once)"
            case .reachableAgain(let failures):
                return "manifest reachable again after \(failures) failed poll\(failures == 1 ? "" : "s")"
            }
        }

        /// The error of an ``unreachable(error:atBoot:)`` note.
        public var error: ContentError? {
            if case .unreachable(let error, _) = self { return error }
            return nil
        }

        public var description: String { what + (error.map { ": \($0)" } ?? "") }
    }

    public let configuration: Configuration
    /// When the next poll is due, on the caller's clock.
    public private(set) var nextPoll: Duration
    /// Failed polls in a row.
    public private(set) var consecutiveFailures = 0
    /// True once a poll has worked.
    public private(set) var hasSucceeded = false
    private let random: @Sendable () -> Double

    /// - Parameters:
    ///   - now: the caller's clock now; the first poll is due then.
    ///   - random: uniform in [0, 1); tests pass a fixed sequence.
    public init(configuration: Configuration = Configuration(), now: Duration,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.configuration = configuration
        self.nextPoll = now
        self.random = random
    }

    /// True when a poll is due at `now`.
    public func isDue(at now: Duration) -> Bool { now >= nextPoll }

    /// Time from `now` until the next poll (zero when due).
    public func delay(from now: Duration) -> Duration { max(.zero, nextPoll - now) }

    /// A poll requested at once (SIGHUP).
    public mutating func pollNow(at now: Duration) { nextPoll = min(nextPoll, now) }

    /// A poll worked (200 or 304, or an answer whose manifest was refused: the server is up).
    public mutating func succeeded(at now: Duration) -> PollNote? {
        let note: PollNote? = consecutiveFailures > 0 ? .reachableAgain(failures: consecutiveFailures) : nil
        let spread = !hasSucceeded || consecutiveFailures > 0
        consecutiveFailures = 0
        hasSucceeded = true
        nextPoll = now + (spread ? configuration.interval * (0.5 + random()) : jittered(configuration.interval))
        return note
    }

    /// A poll failed (no answer, an HTTP error status, a timeout).
    public mutating func failed(at now: Duration, error: ContentError) -> PollNote? {
        consecutiveFailures += 1
        var delay = jittered(backoff(afterFailures: consecutiveFailures))
        if case .httpStatus(_, _, let retryAfter?, _) = error {
            delay = max(delay, min(retryAfter, configuration.backoffCap))
        }
        nextPoll = now + delay
        return consecutiveFailures == 1 ? .unreachable(error: error, atBoot: !hasSucceeded) : nil
    }

    /// The delay before jitter after `failures` failures in a row: start · 2^(failures−1), capped.
    public func backoff(afterFailures failures: Int) -> Duration {
        var delay = configuration.backoffStart
        var n = 1
        while n < failures && delay < configuration.backoffCap {
            delay *= 2
            n += 1
        }
        return min(delay, configuration.backoffCap)
    }

    private func jittered(_ base: Duration) -> Duration {
        let factor = 1 + configuration.jitter * (2 * random() - 1)
        return base * factor
    }
}
