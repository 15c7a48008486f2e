// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

private func ms(_ v: Int) -> Duration { .milliseconds(v) }

/// A 1000 px wide show of `count` items: interval 5 s, fade 500 ms, settle 250 ms.
private func touchHarness(count: Int = 5, direction: Direction = .forward) -> Harness {
    var h = Harness(count: count, config: CarouselConfig(direction: direction, screenWidth: 1000))
    h.start()
    return h
}

extension Harness {
    mutating func down(_ t: Int) { record(carousel.touchBegan(at: ms(t))); prepareAll(at: ms(t)) }
    mutating func drag(_ offset: Double, _ t: Int) { carousel.touchDragged(offset: offset, at: ms(t)) }
    mutating func up(_ t: Int, velocity: Double?) {
        record(carousel.touchEnded(velocity: velocity, at: ms(t))); prepareAll(at: ms(t))
    }
}

@Test func aDragPausesAutoAdvanceAndTheReleaseGivesAFullInterval() {
    var h = touchHarness()
    h.run(to: ms(3000))
    h.down(3000)
    #expect(h.carousel.wake == .idle)
    h.drag(-100, 3100)
    // Held for 10 s: no auto-advance, however long.
    for t in stride(from: 3200, through: 13_000, by: 200) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0])
    // A short slow drag springs back: 13.0 s + 250 ms settle, then a full 5 s interval.
    h.up(13_000, velocity: 0)
    #expect(h.carousel.wake == .animating)
    h.run(to: ms(13_250))
    #expect(h.carousel.scene(at: ms(13_250)) == Scene(base: .slot(h.carousel.currentSlot!)))
    #expect(h.carousel.wake == .at(ms(13_250 + 4500)))
    for t in stride(from: 13_300, through: 18_250, by: 50) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0, 1])
    #expect(h.shown.last?.at == ms(18_250))
}

@Test func theCurrentImageFollowsTheFingerAndTheNeighbourSlidesInFromThatSide() {
    var h = touchHarness()
    let current = h.carousel.currentSlot!, next = h.carousel.nextSlot!, previous = h.carousel.previousSlot!
    h.down(1000)
    h.drag(-240, 1016)
    #expect(h.carousel.scene(at: ms(1016))
            == Scene(base: .slot(current), weight: 0, offset: -240, neighbour: .slot(next)))
    h.drag(130, 1032)
    #expect(h.carousel.scene(at: ms(1032))
            == Scene(base: .slot(current), weight: 0, offset: 130, neighbour: .slot(previous)))
    // Never further than a whole width.
    h.drag(-5000, 1048)
    #expect(h.carousel.scene(at: ms(1048)).offset == -1000)
}

@Test func aDragPastAThirdCompletesWithAnEaseOutAndAutoAdvanceFollowsTheSwipe() {
    var h = touchHarness(count: 5, direction: .forward)
    let previous = h.carousel.previousSlot!
    h.down(1000)
    h.drag(400, 1200)  // towards the right: the previous image comes in from the left
    h.up(1200, velocity: 0)
    // Ease-out: more than half the remaining 600 px is covered in the first third of 250 ms.
    let early = h.carousel.scene(at: ms(1283)).offset
    #expect(early > 400 + 300 && early < 1000)
    h.run(to: ms(1450))
    #expect(h.carousel.currentItem == 4)
    #expect(h.carousel.currentSlot == previous)
    #expect(h.shown.map(\.item) == [0, 4])
    #expect(h.shown.last?.at == ms(1450))
    #expect(h.carousel.scene(at: ms(1450)) == Scene(base: .slot(previous)))
    // Auto-advance now goes backwards, the way of the swipe, one full interval later.
    for t in stride(from: 1500, through: 11_450, by: 50) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0, 4, 3, 2])
    #expect(h.shown.map(\.at) == [ms(0), ms(1450), ms(6450), ms(11_450)])
    #expect(h.carousel.config.direction == .backward)
}

@Test func aFastFlickCompletesEvenWhenShort() {
    var h = touchHarness()
    h.down(1000)
    h.drag(-60, 1040)
    h.up(1050, velocity: -2000)  // 2000 px/s > 1000/3 px/s
    h.run(to: ms(1300))
    #expect(h.shown.map(\.item) == [0, 1])
    #expect(h.carousel.config.direction == .forward)
}

@Test func aFlickAgainstTheDragSpringsBack() {
    var h = touchHarness()
    h.down(1000)
    h.drag(-300, 1100)
    h.up(1150, velocity: 2000)  // thrown back to the right while the next image showed
    h.run(to: ms(1400))
    #expect(h.shown.map(\.item) == [0])
    #expect(h.carousel.scene(at: ms(1400)) == Scene(base: .slot(h.carousel.currentSlot!)))
}

@Test func aCancelledDragSpringsBackEvenPastAThird() {
    var h = touchHarness()
    h.down(1000)
    h.drag(-700, 1100)
    h.record(h.carousel.touchEnded(velocity: -5000, at: ms(1100), cancelled: true))
    h.run(to: ms(1400))
    #expect(h.shown.map(\.item) == [0])
    #expect(h.carousel.scene(at: ms(1400)).offset == 0)
}

@Test func aSlowShortDragSpringsBack() {
    var h = touchHarness()
    h.down(1000)
    h.drag(-330, 1500)   // just under a third of 1000
    h.up(1600, velocity: -100)
    let mid = h.carousel.scene(at: ms(1700)).offset
    #expect(mid < 0 && mid > -330)
    h.run(to: ms(1850))
    #expect(h.shown.map(\.item) == [0])
    #expect(h.carousel.scene(at: ms(1850)).offset == 0)
}

@Test func aFingerDuringAFadeHoldsTheBlendAndATapResumesItWithoutAJump() {
    var h = touchHarness()
    h.run(to: ms(4700))  // the fade runs 4500 ... 5000
    let before = h.carousel.scene(at: ms(4700))
    #expect(before.overlay != nil && before.weight > 0 && before.weight < 256)
    h.down(4700)
    // Held: the same blend, however long the finger stays.
    h.run(to: ms(6000))
    #expect(h.carousel.scene(at: ms(6000)) == Scene(base: before.base, overlay: before.overlay, weight: before.weight))
    #expect(h.shown.map(\.item) == [0])
    // Released without a drag: the fade picks up from the same blend and ends 300 ms later.
    h.up(6000, velocity: nil)
    #expect(h.carousel.scene(at: ms(6000)).weight == before.weight)
    h.run(to: ms(6300))
    #expect(h.shown.map(\.item) == [0, 1])
    #expect(h.shown.last?.at == ms(6300))
}

@Test func aFingerDuringAFadeCanDragTheBlendedPicture() {
    var h = touchHarness()
    h.run(to: ms(4750))
    let blend = h.carousel.scene(at: ms(4750))
    h.down(4750)
    h.drag(-500, 4800)
    let s = h.carousel.scene(at: ms(4800))
    #expect(s.base == blend.base && s.overlay == blend.overlay && s.weight == blend.weight)
    #expect(s.offset == -500)
    h.up(4800, velocity: 0)
    h.run(to: ms(5050))
    #expect(h.shown.map(\.item) == [0, 1])
    #expect(h.carousel.scene(at: ms(5050)) == Scene(base: .slot(h.carousel.currentSlot!)))
}

@Test func aFingerDuringASettleTakesOverFromWhereThePictureIs() {
    var h = touchHarness()
    h.down(1000)
    h.drag(-200, 1100)
    h.up(1100, velocity: 0)           // springs back from -200
    let caught = h.carousel.scene(at: ms(1150)).offset
    #expect(caught < 0 && caught > -200)
    h.down(1150)
    #expect(h.carousel.scene(at: ms(1150)).offset == caught)   // no jump
    h.drag(-250, 1200)                 // from where it was, 250 px further left
    #expect(h.carousel.scene(at: ms(1200)).offset == caught - 250)
    h.up(1200, velocity: 0)            // past a third now: completes
    h.run(to: ms(1450))
    #expect(h.shown.map(\.item) == [0, 1])
}

@Test func aTapOnASteadyImageRestartsTheIntervalAndKeepsTheImage() {
    var h = touchHarness()
    h.run(to: ms(4000))
    h.down(4000)
    h.up(4100, velocity: nil)
    for t in stride(from: 4150, through: 9100, by: 50) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0, 1])
    #expect(h.shown.last?.at == ms(9100))
}

@Test func oneImageDoesNotMoveUnderTheFinger() {
    var h = touchHarness(count: 1)
    h.down(100)
    h.drag(-600, 200)
    #expect(h.carousel.scene(at: ms(200)).offset == 0)
    h.up(250, velocity: -5000)
    h.run(to: ms(1000))
    #expect(h.shown.map(\.item) == [0])
}

@Test func signalsAreIgnoredWhileAFingerIsDown() {
    var h = touchHarness()
    h.down(100)
    #expect(h.carousel.move(.forward, at: ms(200)).isEmpty)
    h.run(to: ms(1000))
    #expect(h.shown.map(\.item) == [0])
}

@Test func pageDotsFollowTheDragPastHalfTheWidth() {
    var h = Harness(count: 4, config: CarouselConfig(showDots: true, screenWidth: 1000))
    h.start()
    h.down(100)
    h.drag(-400, 150)
    #expect(h.carousel.scene(at: ms(150)).dots == Scene.PageDots(count: 4, current: 0))
    h.drag(-600, 200)
    #expect(h.carousel.scene(at: ms(200)).dots == Scene.PageDots(count: 4, current: 1))
}
