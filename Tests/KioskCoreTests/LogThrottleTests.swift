// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// A flood logged at most once a second, with its count, on a virtual clock.
@Suite struct LogThrottleTests {
    @Test func aFloodIsOneLineASecondWithItsCount() {
        var t = LogThrottle()
        var lines: [(at: Duration, count: Int)] = []
        // 1000 refusals over 2.5 s (one every 2.5 ms).
        for i in 0..<1000 {
            let now = Duration.microseconds(2500 * i)
            if let n = t.flush(at: now) { lines.append((now, n)) }
            if let n = t.note(at: now) { lines.append((now, n)) }
        }
        if let n = t.flush(at: .seconds(4)) { lines.append((.seconds(4), n)) }
        #expect(lines.map(\.count).reduce(0, +) == 1000)
        #expect(lines.count == 4)
        #expect(lines.first?.count == 1)   // the first one at once
        for (a, b) in zip(lines, lines.dropFirst()) { #expect(b.at - a.at >= .seconds(1)) }
        #expect(t.flushDeadline == nil)
    }

    @Test func aLoneOccurrenceIsLoggedAtOnceEachTime() {
        var t = LogThrottle()
        #expect(t.note(at: .seconds(1)) == 1)
        #expect(t.flushDeadline == nil)
        #expect(t.note(at: .seconds(5)) == 1)
        #expect(t.note(at: .milliseconds(5500)) == nil)
        #expect(t.flushDeadline == .seconds(6))
        #expect(t.flush(at: .milliseconds(5900)) == nil)
        #expect(t.flush(at: .seconds(6)) == 1)
    }
}
