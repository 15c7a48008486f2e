// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

private func ms(_ v: Int) -> Duration { .milliseconds(v) }
private func s(_ v: Int) -> Duration { .seconds(v) }

/// A motion sensor's edges through the debouncer into ``Presence``, on a virtual clock that
/// steps from deadline to deadline as the frame loop does; records when the screen would go
/// off and on (``ScreenPowerPolicy``, no schedule).
private struct PresenceWalk {
    var debouncer: EdgeDebouncer
    var presence: Presence
    let clock = VirtualClock()
    var screenOn = true
    var changes: [(at: Duration, on: Bool)] = []

    init(timeout: Duration, debounce: Duration) {
        debouncer = EdgeDebouncer(debounce: debounce)
        presence = Presence(timeout: timeout)
    }

    /// Runs until `end` with the sensor's raw edges at their times.
    mutating func run(until end: Duration, edges: [(at: Duration, active: Bool)] = [], touches: [Duration] = []) {
        var edges = edges, touches = touches
        while true {
            let next = [
                edges.first?.at, touches.first, debouncer.deadline,
                presence.absentAt.flatMap { $0 > clock.now ? $0 : nil },
            ]
                .compactMap { $0 }.filter { $0 <= end }.min()
            guard let next else { break }
            clock.advance(to: next)
            while let e = edges.first, e.at <= clock.now { edges.removeFirst(); debouncer.edge(to: e.active, at: e.at) }
            while let t = touches.first, t <= clock.now { touches.removeFirst(); presence.touched(at: t) }
            if let settled = debouncer.settle(at: clock.now) { presence.motion(active: settled.level, at: settled.at) }
            let on = ScreenPowerPolicy.automatic(
                scheduledOff: false, woken: false, present: presence.isPresent(at: clock.now)
            ).on
            if on != screenOn { screenOn = on; changes.append((clock.now, on)) }
        }
    }
}

@Suite struct PresenceTests {
    @Test func theScreenGoesOffATimeoutAfterTheStartWhenNothingMoves() {
        var walk = PresenceWalk(timeout: s(300), debounce: ms(50))
        walk.run(until: s(3600))
        #expect(walk.changes.map { "\($0.at) \($0.on)" } == ["300.0 seconds false"])
        #expect(walk.presence.lastSign == .start)
    }

    @Test func motionKeepsItOnWhileActiveAndForTheTimeoutAfterItEnds() {
        var walk = PresenceWalk(timeout: s(60), debounce: ms(50))
        // Motion from 30 s to 100 s (a long movement), again at 400 s for 4 s.
        walk.run(until: s(1000), edges: [(s(30), true), (s(100), false), (s(400), true), (s(404), false)])
        // Off at 160 s (60 s after the motion ended, not 60 s after it began); on again at
        // 400.05 s (the debounce), off 60 s after the second motion ended.
        #expect(
            walk.changes.map { "\($0.at) \($0.on)" } == [
                "160.0 seconds false", "400.05 seconds true", "464.0 seconds false",
            ],
                "\(walk.changes)")
    }

    @Test func aMotionEdgeWakesWithinTheDebounceNotASecondLater() {
        var walk = PresenceWalk(timeout: s(10), debounce: ms(30))
        walk.run(until: s(20), edges: [(ms(15_500), true)])
        #expect(walk.changes.map(\.on) == [false, true])
        #expect(walk.changes.last!.at == ms(15_530))
    }

    @Test func pulsesShorterThanTheDebounceAreDropped() {
        var walk = PresenceWalk(timeout: s(10), debounce: ms(50))
        // Interference at 12 s: a 20 ms pulse, then a bounce of three edges within 40 ms.
        walk.run(until: s(30), edges: [(ms(12_000), true), (ms(12_020), false),
                (ms(13_000), true), (ms(13_010), false), (ms(13_030), true), (ms(13_040), false),
            ])
        #expect(walk.changes.map { "\($0.at) \($0.on)" } == ["10.0 seconds false"], "\(walk.changes)")
    }

    @Test func aBouncingEdgeCountsFromItsFirstEdge() {
        var d = EdgeDebouncer(debounce: ms(50))
        d.edge(to: true, at: ms(100))
        d.edge(to: true, at: ms(120))  // the same level again: its first time stays
        #expect(d.deadline == ms(150))
        #expect(d.settle(at: ms(149)) == nil)
        let settled = d.settle(at: ms(150))
        #expect(settled?.level == true && settled?.at == ms(100))
        #expect(d.level && d.pending == nil && d.deadline == nil)
        // Without a debounce an edge settles at once.
        var z = EdgeDebouncer(debounce: .zero)
        z.edge(to: true, at: ms(5))
        #expect(z.settle(at: ms(5))?.level == true)
    }

    @Test func touchesCountAsPresence() {
        var walk = PresenceWalk(timeout: s(30), debounce: ms(50))
        walk.run(until: s(200), touches: [s(20), s(45), s(120)])
        // On till 75 s (30 s after the touch at 45 s), on by the touch at 120 s, off at 150 s.
        #expect(
            walk.changes.map { "\($0.at) \($0.on)" } == [
                "75.0 seconds false", "120.0 seconds true", "150.0 seconds false",
            ])
        #expect(walk.presence.lastSign == .touch)
    }

    @Test func whileTheSensorIsActiveThereIsNoDeadline() {
        var p = Presence(timeout: s(5))
        p.motion(active: true, at: s(1))
        #expect(p.absentAt == nil && p.isPresent(at: s(1000)))
        p.motion(active: false, at: s(9))
        #expect(p.absentAt == s(14))
        #expect(p.isPresent(at: ms(13_999)) && !p.isPresent(at: s(14)))
        // A touch older than the motion's end does not pull the deadline back.
        p.touched(at: s(2))
        #expect(p.absentAt == s(14))
    }
}

@Suite struct ScreenPowerPolicyTests {
    @Test func theScheduleSaysWhenThePresenceWhether() {
        typealias P = ScreenPowerPolicy
        #expect(P.automatic(scheduledOff: true, woken: false, present: true) == (false, .schedule))
        #expect(P.automatic(scheduledOff: true, woken: true, present: false) == (true, .touch))
        #expect(P.automatic(scheduledOff: false, woken: false, present: false) == (false, .presence))
        #expect(P.automatic(scheduledOff: false, woken: false, present: true) == (true, .presence))
        #expect(P.automatic(scheduledOff: false, woken: false, present: nil) == (true, .schedule))
        #expect(P.decide(manual: true, scheduledOff: true, woken: false, present: false) == (true, .control))
        #expect(P.decide(manual: false, scheduledOff: false, woken: false, present: true) == (false, .control))
        #expect(P.decide(manual: nil, scheduledOff: false, woken: false, present: false) == (false, .presence))
        #expect(P.overrideEnds(given: true, now: false) && !P.overrideEnds(given: true, now: true))
    }
}
