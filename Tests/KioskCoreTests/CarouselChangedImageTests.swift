// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// A file changed under the same name, on the virtual clock: prepared again before its next
/// turn, never cut on screen; in a show of one image its new picture fades in at the next interval.
@Suite struct CarouselChangedImageTests {
    let config = CarouselConfig(interval: .seconds(5), fade: .milliseconds(500))

    @Test func aChangedImageOnScreenStaysUntilTheNextMoveThenIsPreparedAgain() {
        var h = Harness(count: 3, config: config)
        h.start()
        let onScreen = h.carousel.currentSlot!
        let scene = h.carousel.scene(at: .seconds(2))
        let before = h.prepares.count
        h.record(h.carousel.imageChanged(item: 0, at: .seconds(2)))
        // Nothing prepared into the slot on screen, the picture unchanged.
        #expect(h.prepares.count == before)
        #expect(h.carousel.scene(at: .seconds(2)) == scene)
        #expect(h.carousel.currentSlot == onScreen)
        // The next move cross-fades from that (old) picture to item 1 as usual.
        h.run(to: .milliseconds(4500))
        h.run(to: .milliseconds(4750))
        #expect(h.carousel.scene(at: .milliseconds(4750)).base == .slot(onScreen))
        h.run(to: .seconds(5))
        #expect(h.shown.map(\.item) == [0, 1])
        // Off screen now: item 0 (the previous role) is prepared again from its new file.
        #expect(h.prepares.dropFirst(before).map(\.item) == [0])
        #expect(h.carousel.previousSlot != nil)
        #expect(h.carousel.item(inSlot: h.carousel.previousSlot!) == 0)
    }

    @Test func aChangedImageOffScreenIsPreparedAgainAtOnce() {
        var h = Harness(count: 3, config: config)
        h.start()
        let nextSlot = h.carousel.nextSlot!
        let before = h.prepares.count
        h.record(h.carousel.imageChanged(item: 1, at: .seconds(1)))
        let again = Array(h.prepares.dropFirst(before))
        #expect(again.map(\.item) == [1])
        #expect(h.carousel.status(ofSlot: again[0].slot) == .pending(ticket: again[0].ticket))
        // An item in no slot needs nothing (it is prepared from its file when its turn comes).
        h.record(h.carousel.imageChanged(item: 7, at: .seconds(1)))
        #expect(h.prepares.count == before + 1)
        h.prepareAll(at: .seconds(1))
        #expect(h.carousel.item(inSlot: h.carousel.nextSlot!) == 1)
        _ = nextSlot
    }

    @Test func inAShowOfOneImageTheNewPictureCrossFadesInAtTheNextInterval() {
        var h = Harness(count: 1, config: config)
        h.start()
        #expect(h.shown.map(\.at) == [.zero])
        #expect(h.carousel.wake == .idle)
        let old = h.carousel.currentSlot!
        // Changed at 2 s: its new picture is prepared in another slot, the old one stays.
        h.record(h.carousel.imageChanged(item: 0, at: .seconds(2)))
        let refresh = h.prepares.last!
        #expect(refresh.item == 0 && refresh.slot != old)
        #expect(h.carousel.wake == .idle)        // nothing to do until the new picture is ready
        h.prepareAll(at: .milliseconds(2100))
        #expect(h.carousel.wake == .at(.milliseconds(4500)))   // the next interval, fade included
        h.run(to: .seconds(3))
        #expect(h.carousel.scene(at: .seconds(3)) == Scene(base: .slot(old)))
        h.run(to: .milliseconds(4500))
        let mid = h.carousel.scene(at: .milliseconds(4750))
        #expect(mid.base == .slot(old) && mid.overlay == .slot(refresh.slot) && mid.weight > 0 && mid.weight < 256)
        h.run(to: .seconds(5))
        #expect(h.shown.map(\.at) == [.zero, .seconds(5)])
        #expect(h.carousel.scene(at: .seconds(5)) == Scene(base: .slot(refresh.slot)))
        #expect(h.carousel.wake == .idle)
        // Changed again long after its advance time had passed: the new picture waits for the
        // next multiple of the interval (shown at 20 s), never fades in mid-interval.
        h.record(h.carousel.imageChanged(item: 0, at: .milliseconds(16_200)))
        h.prepareAll(at: .milliseconds(16_300))
        #expect(h.carousel.wake == .at(.milliseconds(19_500)))
        h.run(to: .milliseconds(19_500))
        h.run(to: .seconds(20))
        #expect(h.shown.map(\.at) == [.zero, .seconds(5), .seconds(20)])
        #expect(h.shown.map(\.item) == [0, 0, 0])
    }

    /// In a show of one image, a file truncated (or caught half-written) does not decode: its
    /// old picture stays on screen, nothing is dropped, and when the file changes again and
    /// decodes, the new picture cross-fades in at the next interval as usual.
    @Test func aChangedFileThatDoesNotDecodeLeavesTheOldPictureOnScreen() {
        var h = Harness(count: 1, config: config)
        h.start()
        let old = h.carousel.currentSlot!
        h.record(h.carousel.imageChanged(item: 0, at: .seconds(2)))
        h.prepareAll(at: .milliseconds(2100), failing: [0])
        #expect(h.dropped.isEmpty)
        #expect(h.carousel.scene(at: .seconds(3)) == Scene(base: .slot(old)))
        #expect(h.carousel.readySlots(ofItem: 0) == [old])
        // Nothing is asked for until the file changes again; no move, no flash.
        let before = h.prepares.count
        h.run(to: .seconds(8))
        #expect(h.prepares.count == before)
        #expect(h.carousel.scene(at: .seconds(8)) == Scene(base: .slot(old)))
        #expect(h.shown.map(\.item) == [0])
        // Written whole now: prepared again, and faded in at the next interval mark.
        h.record(h.carousel.imageChanged(item: 0, at: .seconds(9)))
        let refresh = h.prepares.last!
        #expect(refresh.item == 0 && refresh.slot != old)
        h.prepareAll(at: .milliseconds(9100))
        h.run(to: .milliseconds(9500))
        h.run(to: .seconds(10))
        #expect(h.carousel.scene(at: .seconds(10)) == Scene(base: .slot(refresh.slot)))
        #expect(h.shown.count == 2 && h.dropped.isEmpty)
    }
}
