// SPDX-License-Identifier: Apache-2.0
/// One timer set for a loop with several timed duties: each duty has at most one deadline (show
/// time), and the loop sleeps until the earliest of them. Every duty that must wake the loop
/// puts its deadline here, so none is only looked at when something else happens to wake it.
///
/// A value, with no clock: the loop sets and clears deadlines as its duties change and asks
/// which are due at the time it read. Tests drive it with any times they like.
public struct Deadlines<Duty: Hashable & Sendable>: Sendable {
    private var times: [Duty: Duration] = [:]

    public init() {}

    /// The deadline of `duty`, or nil when it has none.
    public subscript(duty: Duty) -> Duration? {
        get { times[duty] }
        set { times[duty] = newValue }
    }

    /// Sets `duty`'s deadline to `time` unless it already has an earlier one.
    public mutating func setEarliest(_ duty: Duty, _ time: Duration) {
        if let old = times[duty], old <= time { return }
        times[duty] = time
    }

    /// The earliest deadline of all and its duty (ties: any of them); nil when none is set.
    public var earliest: (duty: Duty, at: Duration)? {
        var best: (duty: Duty, at: Duration)?
        for (duty, at) in times where best == nil || at < best!.at { best = (duty, at) }
        return best
    }

    /// Whether `duty` has a deadline at or before `now`.
    public func isDue(_ duty: Duty, at now: Duration) -> Bool {
        guard let at = times[duty] else { return false }
        return at <= now
    }

    /// The duties whose deadlines are at or before `now`, earliest first.
    public func due(at now: Duration) -> [Duty] {
        times.filter { $0.value <= now }.sorted { $0.value < $1.value }.map(\.key)
    }

    /// How long to sleep from `now` until the earliest deadline, in whole milliseconds rounded
    /// up (a sleep that ends early would only spin), 0 when one is due; -1 when no deadline is
    /// set (sleep until woken): the `timeout` argument of poll(2).
    public func pollTimeout(from now: Duration) -> Int32 {
        guard let at = earliest?.at else { return -1 }
        let ns = max(0, (at - now).wholeNanoseconds)
        return Int32(clamping: (ns + 999_999) / 1_000_000)
    }
}
