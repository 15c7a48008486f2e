// SPDX-License-Identifier: Apache-2.0
import KioskContent
import Testing

/// A fixed sequence of "random" numbers in [0, 1).
private final class FixedRandom: @unchecked Sendable {
    var values: [Double]; var i = 0
    init(_ v: [Double]) { values = v }
    func next() -> Double { defer { i += 1 }; return values[i % values.count] }
}

private let down = ContentError.transport(url: "http://x/show.json", reason: "Couldn't connect to server", receivedBytes: 0)

@Test func pollsEveryIntervalWithTenPercentJitter() {
    let rng = FixedRandom([0.0, 0.5, 0.999999])
    var s = PollSchedule(now: .seconds(100), random: { rng.next() })
    #expect(s.isDue(at: .seconds(100)))  // at once at start
    #expect(s.succeeded(at: .seconds(100)) == nil)
    #expect(s.nextPoll == .seconds(154))  // 60 * 0.9
    #expect(!s.isDue(at: .seconds(153)))
    _ = s.succeeded(at: .seconds(154))
    #expect(s.nextPoll == .seconds(214))  // 60 * 1.0
    _ = s.succeeded(at: .seconds(214))
    #expect(s.nextPoll > .milliseconds(279_999) && s.nextPoll <= .seconds(280))  // 60 * 1.1
    // Over many polls every delay stays within ±10 %.
    var t = PollSchedule(now: .zero)
    var now = Duration.zero
    for _ in 0..<1000 {
        _ = t.succeeded(at: now)
        let delay = t.nextPoll - now
        #expect(delay >= .seconds(54) && delay <= .seconds(66))
        now = t.nextPoll
    }
}

@Test func sighupPollsAtOnce() {
    var s = PollSchedule(now: .zero, random: { 0.5 })
    _ = s.succeeded(at: .zero)
    #expect(!s.isDue(at: .seconds(10)))
    s.pollNow(at: .seconds(10))
    #expect(s.isDue(at: .seconds(10)))
    #expect(s.delay(from: .seconds(10)) == .zero)
}

@Test func failuresBackOffExponentiallyUpToACapThenTheIntervalAgain() {
    var s = PollSchedule(now: .zero, random: { 0.5 })  // no jitter at 0.5
    var now = Duration.zero
    var delays: [Duration] = []
    for _ in 0..<12 {
        _ = s.failed(at: now, error: down)
        delays.append(s.nextPoll - now)
        now = s.nextPoll
    }
    #expect(delays.map { $0.components.seconds } == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300])
    _ = s.succeeded(at: now)
    #expect(s.nextPoll - now == .seconds(60))
    #expect(s.consecutiveFailures == 0)
}

@Test func noNetworkAtBootIsLoggedOnceAndTheRecoveryOnce() {
    var s = PollSchedule(now: .zero, random: { 0.5 })
    var notes: [PollSchedule.PollNote] = []
    var now = Duration.zero
    for _ in 0..<20 {
        if let n = s.failed(at: now, error: down) { notes.append(n) }
        now = s.nextPoll
    }
    #expect(notes == [.unreachable(error: down, atBoot: true)])
    #expect(notes[0].description.hasPrefix("manifest unreachable at start, showing the cached show"))
    #expect(s.succeeded(at: now) == .reachableAgain(failures: 20))
    #expect(s.succeeded(at: now) == nil)
    // A later outage is logged once too, not as "at boot".
    #expect(s.failed(at: now, error: down) == .unreachable(error: down, atBoot: false))
    #expect(s.failed(at: now, error: down) == nil)
}
