// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

// replaceItems(_:showing:at:): a schedule limits the rotation; indices stay the playlist's.

private func ms(_ v: Int) -> Duration { .milliseconds(v) }
private let items = ["a", "b", "c", "d"].map { PlaylistItem(source: "/p/\($0).jpg") }

@Test func theRotationSkipsItemsOutsideItAndEventsKeepPlaylistIndices() {
    var h = Harness(names: ["a", "b", "c", "d"])
    h.record(h.carousel.replaceItems(items, showing: [1, 3], at: .zero))   // before the start
    h.start()
    for t in stride(from: 100, through: 15_000, by: 100) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [1, 3, 1, 3])
    #expect(!h.carousel.isInShow(item: 0) && h.carousel.isInShow(item: 3))
}

@Test func anImageThatLeavesTheRotationRetiresAndAnEmptyRotationShowsNoImages() {
    var h = Harness(names: ["a", "b", "c", "d"])
    h.start()
    h.run(to: ms(100))                                  // a on screen
    let slotOfA = h.carousel.currentSlot!
    h.record(h.carousel.replaceItems(items, showing: [2], at: ms(1000)))
    h.prepareAll(at: ms(1000))
    #expect(h.carousel.currentItem == nil)              // a stays on screen until the next move
    #expect(h.carousel.scene(at: ms(1000)) == Scene(base: .slot(slotOfA)))
    h.record(h.carousel.move(.forward, at: ms(1000)))
    for t in stride(from: 1100, through: 2000, by: 100) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0, 2])
    #expect(h.carousel.items.count == 4)
    // The image on screen is kept in a new rotation that still has it.
    h.record(h.carousel.replaceItems(items, showing: [0, 2], at: ms(2000)))
    #expect(h.carousel.currentItem == 2)
    h.record(h.carousel.replaceItems(items, showing: [], at: ms(2100)))
    #expect(h.carousel.currentItem == nil)
    #expect(h.carousel.scene(at: ms(2100)) == Scene(base: .noImages))
}
