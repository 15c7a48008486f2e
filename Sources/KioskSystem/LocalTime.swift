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

    /// What is wrong with the `TZ` value `tz` (nil: unset or empty, /etc/localtime decides), or
    /// nil when glibc can use it: a zone file (`:Europe/Berlin`, `Europe/Berlin`, an absolute
    /// path) under `zoneDirectory` (`$TZDIR`, else /usr/share/zoneinfo, Debian's tzdata), or a
    /// POSIX TZ string with an offset (`CET-1CEST,M3.5.0,M10.5.0/3`, `<+03>-3`, `UTC0`;
    /// tzset(3)). Anything else glibc takes silently as UTC: the words say so.
    public static func problem(tz: String?, zoneDirectory: String = defaultZoneDirectory) -> String? {
        guard var name = tz, !name.isEmpty else { return nil }
        if name.hasPrefix(":") { name.removeFirst() }
        let file = name.hasPrefix("/") ? name : zoneDirectory + "/" + name
        if !name.isEmpty, !name.contains(".."), access(file, R_OK) == 0 { return nil }
        if isPOSIXRule(name) { return nil }
        return "TZ=\(tz!) is neither a zone of \(zoneDirectory) (tzdata) nor a POSIX TZ string such as"
            + " CET-1CEST,M3.5.0,M10.5.0/3: libc uses UTC"
    }

    /// `$TZDIR`, else /usr/share/zoneinfo.
    public static var defaultZoneDirectory: String {
        getenv("TZDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/share/zoneinfo"
    }

    /// Whether `s` starts as a POSIX TZ rule does (POSIX.1-2017 section 8.3): a zone name of at
    /// least three letters, or `<...>` quoted, then an offset `[+-]hh[:mm[:ss]]`.
    static func isPOSIXRule(_ s: String) -> Bool {
        var rest = Substring(s)
        if rest.hasPrefix("<") {
            guard let close = rest.firstIndex(of: ">"), rest.distance(from: rest.startIndex, to: close) >= 4 else {
                return false
            }
            rest = rest[rest.index(after: close)...]
        } else {
            let letters = rest.prefix { $0.isASCII && $0.isLetter }
            guard letters.count >= 3 else { return false }
            rest = rest.dropFirst(letters.count)
        }
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        let hours = rest.prefix { $0.isASCII && $0.isNumber }
        guard (1...2).contains(hours.count), let h = Int(hours), h <= 24 else { return false }
        return true
    }

    /// Seconds east of UTC at `epochSecond` (`tm_gmtoff` of localtime_r; 0 if it fails).
    public func utcOffset(atEpochSecond epochSecond: Int64) -> Int {
        var t = time_t(epochSecond)
        var parts = tm()
        guard localtime_r(&t, &parts) != nil else { return 0 }
        return Int(parts.tm_gmtoff)
    }
}
