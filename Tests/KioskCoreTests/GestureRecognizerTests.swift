// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

private func ms(_ v: Int) -> Duration { .milliseconds(v) }

/// Feeds a touch as (ms, x, y) points: the first is the down, the last the up.
private func gestures(_ points: [(Int, Double, Double)], config: GestureConfig = GestureConfig(slop: 20)) -> [Gesture] {
    var r = GestureRecognizer(config: config)
    var out: [Gesture] = []
    for (i, p) in points.enumerated() {
        let phase: TouchSample.Phase = i == 0 ? .down : (i == points.count - 1 ? .up : .move)
        out += r.feed(TouchSample(phase, x: p.1, y: p.2, time: ms(p.0)))
    }
    #expect(!r.isTouching)
    return out
}

@Test func slopIsTwoAndAHalfMillimetresOrOnePointFivePercent() {
    // 10 px/mm (a 1920 px panel 192 mm wide): 25 px.
    #expect(GestureConfig.slop(screenWidth: 1920, pixelsPerMillimetre: 10) == 25)
    // No resolution reported: 1.5 % of 1920 = 28.8 px.
    #expect(abs(GestureConfig.slop(screenWidth: 1920, pixelsPerMillimetre: nil) - 28.8) < 1e-9)
    #expect(GestureConfig.slop(screenWidth: 1920, pixelsPerMillimetre: 0)
            == GestureConfig.slop(screenWidth: 1920, pixelsPerMillimetre: nil))
    // Never under 8 px, even on a tiny screen.
    #expect(GestureConfig.slop(screenWidth: 320, pixelsPerMillimetre: nil) == 8)
}

@Test func aShortStillTouchIsATapAtTheLandingPoint() {
    let g = gestures([(0, 500, 300), (80, 501, 300), (120, 500, 301)])
    #expect(g == [.pressed(at: ms(0)), .tap(x: 500, y: 300, at: ms(120))])
}

@Test func aTenPixelDriftDuringATapIsStillATap() {
    // Fingers drift 10-20 px during a tap (field reports); the default slop on 1920 is 28.8 px.
    let config = GestureConfig.standard(screenWidth: 1920)
    let g = gestures([(0, 900, 500), (40, 905, 503), (90, 910, 506), (150, 910, 506)], config: config)
    #expect(g.last == .tap(x: 900, y: 500, at: ms(150)))
}

@Test func aLongPressIsNoTap() {
    let g = gestures([(0, 500, 300), (301, 500, 300)])
    #expect(g == [.pressed(at: ms(0)), .released(at: ms(301))])
    // 300 ms exactly still is one.
    #expect(gestures([(0, 500, 300), (300, 500, 300)]).last == .tap(x: 500, y: 300, at: ms(300)))
}

@Test func aSidewaysMovePastTheSlopIsADragThatDoesNotJumpByTheSlop() {
    let g = gestures([(0, 1000, 500), (16, 990, 500), (32, 970, 501), (48, 900, 502), (64, 800, 502), (80, 800, 502)])
    // 970 is 30 px from the landing point, past the 20 px slop: the drag starts there at -10.
    #expect(g[0] == .pressed(at: ms(0)))
    #expect(g[1] == .dragged(offset: -10, at: ms(32)))
    #expect(g[2] == .dragged(offset: -80, at: ms(48)))
    #expect(g[3] == .dragged(offset: -180, at: ms(64)))
    guard case .dragEnded(let offset, let velocity, let at) = g[4] else { Issue.record("no dragEnded: \(g)"); return }
    #expect(offset == -180)
    #expect(at == ms(80))
    // Samples within 100 ms before the release: the landing at 0 ms ... 800 at 80 ms: -200 px / 0.08 s.
    #expect(abs(velocity - (-2500)) < 1e-6)
    #expect(g.count == 5)
}

@Test func aFingerThatStopsBeforeLiftingHasNoVelocity() {
    let g = gestures([(0, 1000, 500), (20, 900, 500), (40, 800, 500), (400, 800, 500)])
    guard case .dragEnded(_, let velocity, _)? = g.last else { Issue.record("no dragEnded: \(g)"); return }
    #expect(velocity == 0)
}

@Test func aVerticalDragDoesNothing() {
    let g = gestures([(0, 500, 100), (30, 505, 160), (60, 520, 400), (90, 540, 700), (120, 540, 700)])
    #expect(g == [.pressed(at: ms(0)), .released(at: ms(120))])
}

@Test func aSecondDownWithoutAnUpEndsTheFirstTouch() {
    var r = GestureRecognizer(config: GestureConfig(slop: 20))
    _ = r.feed(TouchSample(.down, x: 10, y: 10, time: ms(0)))
    let g = r.feed(TouchSample(.down, x: 300, y: 300, time: ms(50)))
    #expect(g == [.tap(x: 10, y: 10, at: ms(50)), .pressed(at: ms(50))])
    #expect(r.isTouching)
}

@Test func aCancelledTouchIsNeitherATapNorAFlick() {
    var r = GestureRecognizer(config: GestureConfig(slop: 20))
    _ = r.feed(TouchSample(.down, x: 500, y: 300, time: ms(0)))
    #expect(r.feed(TouchSample(.cancel, x: 500, y: 300, time: ms(50))) == [.cancelled(at: ms(50))])
    _ = r.feed(TouchSample(.down, x: 500, y: 300, time: ms(100)))
    _ = r.feed(TouchSample(.move, x: 100, y: 300, time: ms(120)))
    #expect(r.feed(TouchSample(.cancel, x: 100, y: 300, time: ms(130))) == [.cancelled(at: ms(130))])
    #expect(!r.isTouching)
    #expect(r.cancel(at: ms(200)).isEmpty)
}

@Test func samplesThatAreNotFiniteNumbersAreIgnored() {
    var r = GestureRecognizer(config: GestureConfig(slop: 20))
    #expect(r.feed(TouchSample(.down, x: .nan, y: 10, time: ms(0))).isEmpty)
    #expect(r.feed(TouchSample(.down, x: 10, y: 10, time: ms(0))) == [.pressed(at: ms(0))])
    #expect(r.feed(TouchSample(.move, x: -.infinity, y: 10, time: ms(10))).isEmpty)
    #expect(r.feed(TouchSample(.up, x: 11, y: 10, time: ms(20))) == [.tap(x: 10, y: 10, at: ms(20))])
}

@Test func theSlopNeverExceedsFivePercentOfTheWidth() {
    // A device claiming 1279 units/mm over 1280 units (1 mm wide) would give 3200 px of slop.
    #expect(GestureConfig.slop(screenWidth: 800, pixelsPerMillimetre: 1279 * 800 / 1280.0) == 40)
}

@Test func movesAndUpsWithoutADownAreIgnored() {
    var r = GestureRecognizer(config: GestureConfig(slop: 20))
    #expect(r.feed(TouchSample(.move, x: 10, y: 10, time: ms(0))).isEmpty)
    #expect(r.feed(TouchSample(.up, x: 10, y: 10, time: ms(5))).isEmpty)
}
