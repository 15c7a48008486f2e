// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

// The screen changed size: every frame is prepared again, the show stays at its image.

@Test func aResizePreparesEverySlotAgainCurrentFirstAndStaysAtTheImage() {
    var h = Harness(count: 5, config: CarouselConfig(interval: .seconds(5), fade: .milliseconds(500)))
    h.start()
    h.run(to: .seconds(5))   // at 2 now
    #expect(h.shown.map(\.item) == [0, 1])
    let before = h.prepares.count
    h.record(h.carousel.resized(at: .seconds(6)))
    let again = Array(h.prepares[before...])
    #expect(again.map(\.item) == [1, 2, 0], "current, next, previous prepared again")
    #expect(again.allSatisfy { h.carousel.status(ofSlot: $0.slot) == .pending(ticket: $0.ticket) })
    // Until the current one is ready: the placeholder, not a frame of the old size.
    #expect(h.carousel.scene(at: .seconds(6)) == Scene(base: .placeholder))
    // No move while the image is being prepared; at the end of its ready wait the show would
    // go on to a ready neighbour (docs/carousel.md "Ready first"), but every slot is prepared again.
    #expect(h.carousel.wake == .at(.seconds(8)), "no move while the image is being prepared")
    // Ready later: it fades in and is announced again when it is fully on screen.
    h.prepareAll(at: .milliseconds(6100))
    h.run(to: .milliseconds(6600))
    #expect(h.shown.map(\.item) == [0, 1, 1])
    #expect(h.shown.last!.at == .milliseconds(6600))
    #expect(h.carousel.scene(at: .milliseconds(6600)) == Scene(base: .slot(h.carousel.currentSlot!)))
    // The interval counts from then.
    h.run(to: .milliseconds(11_599))
    #expect(h.shown.count == 3)
    h.run(to: .milliseconds(11_600))
    #expect(h.shown.map(\.item) == [0, 1, 1, 2])
}

@Test func aResizeDuringACrossFadeLandsItWithoutAShownAtTheOldSize() {
    var h = Harness(count: 3, config: CarouselConfig(interval: .seconds(5), fade: .milliseconds(500)))
    h.start()
    h.run(to: .milliseconds(4700))   // the fade from 0 to 1 runs
    #expect(h.carousel.isAnimating)
    h.record(h.carousel.resized(at: .milliseconds(4700)))
    #expect(h.shown.map(\.item) == [0], "1 is announced once shown at the new size")
    #expect(h.carousel.currentItem == 1)
    h.prepareAll(at: .milliseconds(4700))
    #expect(h.shown.map(\.item) == [0, 1])
}
