// SPDX-License-Identifier: Apache-2.0
import Glibc
@testable import KioskSystem
import Testing

/// `TZ` values glibc can use (a zone of Debian's tzdata, a POSIX rule) and ones it takes
/// silently as UTC, which the show says once at its start.
@Test func aTimeZoneThatLibcCannotReadIsNamedAndOnesItCanAreNot() {
    for good in [nil, "", "Europe/Berlin", ":Europe/Berlin", "/usr/share/zoneinfo/Asia/Tokyo", "UTC",
                 "CET-1CEST,M3.5.0,M10.5.0/3", "<+03>-3", "EST5EDT", "UTC0"] {
        #expect(LocalTimeZone.problem(tz: good, zoneDirectory: "/usr/share/zoneinfo") == nil, "\(good ?? "nil")")
    }
    for bad in ["Mars/Olympus", "Europe/Berlinn", "berlin", ":nowhere", "/etc/passwd-not-there", "XY", "ABC"] {
        let problem = LocalTimeZone.problem(tz: bad, zoneDirectory: "/usr/share/zoneinfo")
        #expect(problem == "TZ=\(bad) is neither a zone of /usr/share/zoneinfo (tzdata) nor a POSIX TZ string such as"
                + " CET-1CEST,M3.5.0,M10.5.0/3: libc uses UTC", "\(bad): \(problem ?? "nil")")
    }
}
