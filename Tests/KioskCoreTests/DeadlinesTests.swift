// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// The loop's timer set on a virtual clock: the earliest deadline decides the sleep.
@Suite struct DeadlinesTests {
    enum Duty: Hashable, Sendable { case fade, retry, watchdog }

    @Test func theEarliestDeadlineDecidesThePollTimeout() {
        var d = Deadlines<Duty>()
        #expect(d.earliest == nil)
        #expect(d.pollTimeout(from: .zero) == -1)
        d[.watchdog] = .seconds(15)
        d[.retry] = .seconds(60)
        #expect(d.earliest?.duty == .watchdog)
        #expect(d.pollTimeout(from: .seconds(10)) == 5000)
        d[.watchdog] = nil
        // One image left, nothing else timed: the retry alone wakes the loop, at 60 s.
        #expect(d.earliest?.duty == .retry)
        #expect(d.pollTimeout(from: .milliseconds(120)) == 59_880)
        // Rounded up: a sleep that ends before the deadline would only spin.
        #expect(d.pollTimeout(from: .nanoseconds(59_999_999_999)) == 1)
        #expect(d.pollTimeout(from: .seconds(61)) == 0)
    }

    @Test func dueDutiesComeEarliestFirstAndSetEarliestKeepsAnEarlierOne() {
        var d = Deadlines<Duty>()
        d.setEarliest(.retry, .seconds(60))
        d.setEarliest(.retry, .seconds(90))   // a second failure does not push the retry back
        #expect(d[.retry] == .seconds(60))
        d.setEarliest(.retry, .seconds(30))
        #expect(d[.retry] == .seconds(30))
        d[.fade] = .seconds(5)
        d[.watchdog] = .seconds(40)
        #expect(d.due(at: .seconds(4)).isEmpty)
        #expect(d.due(at: .seconds(31)) == [.fade, .retry])
        #expect(d.isDue(.retry, at: .seconds(30)))
        #expect(!d.isDue(.watchdog, at: .seconds(39)))
    }
}
