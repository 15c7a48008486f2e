// SPDX-License-Identifier: Apache-2.0

/// When to try the broker again after a connection failed or was lost (pure: times are given).
///
/// The wait doubles from ``first`` after each failure in a row up to ``cap`` and is multiplied
/// by a factor drawn uniformly from 1 ± ``jitter``, so a fleet that lost its broker together
/// does not come back in step. A connection that stayed up for ``stableAfter`` resets it: a
/// broker that accepts and drops at once (a client ID in use twice, an ACL refusing) is not
/// tried every second.
public struct ReconnectBackoff: Sendable {
    public var first: Duration = .seconds(1)
    public var cap: Duration = .seconds(60)
    /// Relative jitter, 0 ≤ x < 1.
    public var jitter = 0.25
    public var stableAfter: Duration = .seconds(30)
    /// Failures since the last stable connection.
    public private(set) var failures = 0

    public init() {}

    /// The wait before the next try after a failure; `connectedFor` is how long the connection
    /// that just ended had been up (nil: it never came up). `random` is a number in 0..<1.
    public mutating func delay(connectedFor: Duration?, random: Double) -> Duration {
        if let connectedFor, connectedFor >= stableAfter { failures = 0 }
        failures += 1
        var base = first
        for _ in 1..<min(failures, 32) where base < cap { base = base * 2 }
        base = min(base, cap)
        return base * (1 - jitter + 2 * jitter * random)
    }
}
