// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

// `--transition slide|cut` in the carousel (docs/carousel.md "Transitions"), on a hand-driven time line.

private func harness(_ style: TransitionStyle, count: Int = 3, width: Int = 1000) -> Harness {
    var config = CarouselConfig(interval: .seconds(5), fade: .milliseconds(500), screenWidth: width)
    config.transition = style
    return Harness(count: count, config: config)
}

@Test func aSlideScrollsTheNextPictureInFromTheRightEasedOverTheFade() {
    var h = harness(.slide)
    h.start()
    let current = h.carousel.currentSlot!, next = h.carousel.nextSlot!
    h.run(to: .milliseconds(4500))
    #expect(h.carousel.isAnimating)
    let quarter = h.carousel.scene(at: .milliseconds(4625)), half = h.carousel.scene(at: .milliseconds(4750))
    #expect(half == Scene(base: .slot(current), offset: -500, neighbour: .slot(next)))
    // Eased: 3p² − 2p³ of the width at p = 1/4 is 156.25 px.
    #expect(quarter.offset == -156 && quarter.overlay == nil && quarter.weight == 0)
    h.run(to: .seconds(5))
    #expect(h.shown.map(\.item) == [0, 1] && h.shown.last?.at == .seconds(5))
    #expect(h.carousel.scene(at: .seconds(5)) == Scene(base: .slot(next)))
}

@Test func aSlideGoesTheWayOfTheLastSwipeAndOfAMoveAskedFor() {
    var h = harness(.slide)
    h.start()
    h.record(h.carousel.move(.backward, at: .seconds(1)))
    let scene = h.carousel.scene(at: .milliseconds(1250))
    #expect(scene.offset == 500 && scene.neighbour == .slot(h.carousel.previousSlot!))
    h.run(to: .milliseconds(1500))
    #expect(h.shown.map(\.item) == [0, 2])
    // A swipe to the right makes auto-advance go backwards: the previous comes in from the left.
    h.record(h.carousel.touchBegan(at: .seconds(2)))
    h.carousel.touchDragged(offset: 600, at: .milliseconds(2100))
    h.record(h.carousel.touchEnded(velocity: 0, at: .milliseconds(2100)))
    h.run(to: .seconds(3))
    #expect(h.shown.map(\.item) == [0, 2, 1] && h.carousel.config.direction == .backward)
    h.run(to: .milliseconds(7250))
    #expect(h.carousel.scene(at: .milliseconds(7600)).offset > 0)
}

@Test func aFingerCatchesASlideWhereItIsAndItsReleaseLetsItGlideOn() {
    var h = harness(.slide)
    h.start()
    h.run(to: .milliseconds(4750))
    h.record(h.carousel.touchBegan(at: .milliseconds(4750)))
    #expect(h.carousel.scene(at: .milliseconds(4800)).offset == -500, "held where it was")
    h.record(h.carousel.touchEnded(velocity: nil, at: .milliseconds(4800)))
    h.run(to: .seconds(6))
    #expect(h.shown.map(\.item) == [0, 1])
}

@Test func aCutIsOneStepOneIntervalAfterTheLast() {
    var h = harness(.cut)
    h.start()
    #expect(h.carousel.wake == .at(.seconds(5)), "no fade to start early for")
    h.run(to: .milliseconds(4999))
    #expect(h.shown.count == 1 && !h.carousel.isAnimating)
    h.run(to: .seconds(5))
    #expect(h.shown.map(\.item) == [0, 1] && h.shown.last?.at == .seconds(5) && !h.carousel.isAnimating)
    h.record(h.carousel.move(.forward, at: .seconds(6)))
    #expect(h.shown.map(\.item) == [0, 1, 2] && h.carousel.scene(at: .seconds(6)).overlay == nil)
}

@Test func anItemsOwnTransitionIsTheMoveThatBringsItOnScreen() {
    var items = (0..<3).map { PlaylistItem(source: "/photos/\($0).jpg") }
    items[1].transition = .slide
    items[2].transition = .cut
    var h = Harness(count: 0, config: CarouselConfig(screenWidth: 1000))
    h.carousel = Carousel(items: items, config: CarouselConfig(screenWidth: 1000))
    h.start()
    h.run(to: .milliseconds(4750))
    #expect(h.carousel.scene(at: .milliseconds(4750)).offset == -500, "a slide to 1")
    h.run(to: .seconds(5))
    #expect(h.carousel.wake == .at(.seconds(10)), "a cut to 2: at the full interval")
    h.run(to: .seconds(10))
    #expect(h.shown.map(\.item) == [0, 1, 2])
    h.run(to: .milliseconds(14750))
    let back = h.carousel.scene(at: .milliseconds(14750))
    #expect(back.weight == 128 && back.offset == 0, "the show's fade back to 0")
}
