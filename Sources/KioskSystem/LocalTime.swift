// SPDX-License-Identifier: Apache-2.0
import Glibc

/// The device's wall clock: `CLOCK_REALTIME` (clock_gettime(2)), set by NTP or `date -s`.
public final class RealtimeClock {
    public init() {}
    /// Time since 1970-01-01T00:00:00Z.
    public var sinceEpoch: Duration {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
    }
}

/// The device's time zone as libc knows it: `TZ` when set, else /etc/localtime (tzset(3)),
/// read with localtime_r(3). ``refresh()`` calls tzset again, so a changed `TZ` or
/// /etc/localtime is taken up (localtime_r alone need not look).
public struct LocalTimeZone: Sendable {
    public init() { tzset() }

    /// Reads the zone again (tzset(3)).
    public func refresh() { tzset() }

    /// Seconds east of UTC at `epochSecond` (`tm_gmtoff` of localtime_r; 0 if it fails).
    public func utcOffset(atEpochSecond epochSecond: Int64) -> Int {
        var t = time_t(epochSecond)
        var parts = tm()
        guard localtime_r(&t, &parts) != nil else { return 0 }
        return Int(parts.tm_gmtoff)
    }
}
