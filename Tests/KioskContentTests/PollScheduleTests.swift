// SPDX-License-Identifier: Apache-2.0
import KioskContent
import Testing

/// A fixed sequence of "random" numbers in [0, 1).
private final class FixedRandom: @unchecked Sendable {
    var values: [Double]; var i = 0
    init(_ v: [Double]) { values = v }
    func next() -> Double { defer { i += 1 }; return values[i % values.count] }
}

private let down = ContentError.transport(url: "http://x/show.json", reason: "Couldn't connect to server",
                                          receivedBytes: 0)

@Test func pollsEveryIntervalWithTenPercentJitter() {
    let rng = FixedRandom([0.5, 0.0, 0.5, 0.999999])
    var s = PollSchedule(now: .seconds(100), random: { rng.next() })
    #expect(s.isDue(at: .seconds(100)))  // at once at start
    #expect(s.succeeded(at: .seconds(100)) == nil)
    #expect(s.nextPoll == .seconds(160))  // the first: 60 * (0.5 + 0.5)
    _ = s.succeeded(at: .seconds(160))
    #expect(s.nextPoll == .seconds(214))  // 60 * 0.9
    #expect(!s.isDue(at: .seconds(213)))
    _ = s.succeeded(at: .seconds(214))
    #expect(s.nextPoll == .seconds(274))  // 60 * 1.0
    _ = s.succeeded(at: .seconds(274))
    #expect(s.nextPoll > .milliseconds(339_999) && s.nextPoll <= .seconds(340))  // 60 * 1.1
    // Over many polls every delay after the first stays within ±10 %.
    var t = PollSchedule(now: .zero)
    var now = Duration.zero
    _ = t.succeeded(at: now)
    now = t.nextPoll
    for _ in 0..<1000 {
        _ = t.succeeded(at: now)
        let delay = t.nextPoll - now
        #expect(delay >= .seconds(54) && delay <= .seconds(66))
        now = t.nextPoll
    }
}

/// A fleet powered on together: with ±10 % alone its polls stayed bunched for minutes (100
/// kiosks at a 10 s interval on loopback nginx, Tests/fleet/run.sh: a 10 s wave of 1 to 23
/// polls a second, peak 2.3 times the mean); the first delay drawn over a whole interval
/// spreads them evenly at once (peak 1.9 and 2.0 times the mean in two runs, as independent
/// draws give at 10 polls a second), and again after an outage.
@Test func aFleetStartedTogetherSpreadsItsPollsOverTheWholeInterval() {
    var kiosks = (0..<1000).map { _ in PollSchedule(now: .zero) }
    var buckets = [Int](repeating: 0, count: 10)  // second polls by tenth of the interval
    for i in kiosks.indices {
        _ = kiosks[i].succeeded(at: .zero)
        let delay = kiosks[i].nextPoll
        #expect(delay >= .seconds(30) && delay < .seconds(90))
        buckets[Int((delay - .seconds(30)) / .seconds(6))] += 1
    }
    // Uniform: 100 a tenth; a bunched fleet (±10 %) would put them all in the middle two.
    #expect(buckets.allSatisfy { $0 > 50 && $0 < 150 }, "\(buckets)")
    // After an outage, the first success spreads again; the next ones are ±10 %.
    var s = PollSchedule(now: .zero, random: { 0.0 })
    _ = s.succeeded(at: .zero)
    #expect(s.nextPoll == .seconds(30))
    _ = s.succeeded(at: .seconds(30))
    #expect(s.nextPoll == .seconds(84))
    _ = s.failed(at: .seconds(84), error: down)
    _ = s.succeeded(at: .seconds(85))
    #expect(s.nextPoll == .seconds(115))
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

/// A busy server's `Retry-After` (a 503 or 429) is waited for, up to the backoff cap; without
/// one, or on a transport error, the backoff is as before.
@Test func retryAfterIsWaitedForUpToTheCap() {
    var s = PollSchedule(now: .zero, random: { 0.5 })
    let busy = { (seconds: Int64) in
        ContentError.httpStatus(url: "http://x/show.json", status: 503, retryAfter: .seconds(seconds))
    }
    _ = s.failed(at: .zero, error: busy(120))
    #expect(s.nextPoll == .seconds(120))
    _ = s.failed(at: .seconds(120), error: busy(1))  // shorter than the backoff (2 s): the backoff
    #expect(s.nextPoll == .seconds(122))
    _ = s.failed(at: .seconds(122), error: busy(86_400))
    #expect(s.nextPoll == .seconds(422))  // capped at 5 min
    _ = s.failed(at: .seconds(422), error: .httpStatus(url: "http://x/show.json", status: 429))
    #expect(s.nextPoll == .seconds(430))  // no Retry-After: 8 s
    #expect(busy(7).description == "http://x/show.json: HTTP status 503 (Retry-After 7 s)")
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
    #expect(notes[0].what
            == "manifest unreachable at start, showing the cached show; retrying in the background (logged once)")
    #expect(notes[0].error == down)
    #expect(s.succeeded(at: now) == .reachableAgain(failures: 20))
    #expect(s.succeeded(at: now) == nil)
    // A later outage is logged once too, not as "at boot".
    #expect(s.failed(at: now, error: down) == .unreachable(error: down, atBoot: false))
    #expect(s.failed(at: now, error: down) == nil)
}
