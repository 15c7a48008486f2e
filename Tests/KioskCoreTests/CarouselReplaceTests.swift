// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

private func ms(_ v: Int) -> Duration { .milliseconds(v) }
private func playlist(_ names: [String]) -> [PlaylistItem] { names.map { PlaylistItem(source: "/p/\($0).jpg") } }

extension Harness {
    init(names: [String], config: CarouselConfig = CarouselConfig()) {
        carousel = Carousel(items: playlist(names), config: config)
    }
    mutating func replace(_ names: [String], at t: Int) {
        record(carousel.replaceItems(playlist(names), at: ms(t)))
        prepareAll(at: ms(t))
    }
    var currentSource: String? { carousel.currentItem.map { carousel.items[$0].source } }
}

@Test func aNewListThatStillHasTheCurrentImageGoesOnFromIt() {
    var h = Harness(names: ["a", "b", "c", "d"])
    h.start()
    h.run(to: ms(5000))                         // b is on screen
    let slotOfB = h.carousel.currentSlot!
    let preparesBefore = h.prepares.count
    h.replace(["x", "b", "c", "y"], at: 6000)     // b and its neighbour c are kept
    #expect(h.currentSource == "/p/b.jpg")
    #expect(h.carousel.currentItem == 1)
    #expect(h.carousel.currentSlot == slotOfB)
    // Only the previous slot changed (a -> x): one prepare, not three.
    #expect(h.prepares.count == preparesBefore + 1)
    #expect(h.prepares.last?.item == 0)
    // No frame without the image: the scene is still b.
    #expect(h.carousel.scene(at: ms(6000)) == Scene(base: .slot(slotOfB)))
    // The timing is kept: c at 10 s, with its new index 2.
    for t in stride(from: 6100, through: 10_000, by: 100) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0, 1, 2])
    #expect(h.shown.last?.at == ms(10_000))
}

@Test func aNewListWithoutTheCurrentImageKeepsItOnScreenThenGoesToTheFirstItem() {
    var h = Harness(names: ["a", "b", "c"])
    h.start()
    h.run(to: ms(5000))                          // b on screen
    let slotOfB = h.carousel.currentSlot!
    h.replace(["p", "q", "r"], at: 6000)
    #expect(h.carousel.currentItem == nil)       // what is on screen is not in the list
    #expect(h.carousel.currentSlot == slotOfB)
    #expect(h.carousel.scene(at: ms(6000)) == Scene(base: .slot(slotOfB)))
    #expect(h.carousel.item(inSlot: h.carousel.nextSlot!) == 0)       // p comes next
    #expect(h.carousel.item(inSlot: h.carousel.previousSlot!) == 2)   // r before it
    for t in stride(from: 6100, through: 15_000, by: 100) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0, 1, 0, 1])       // a, b, then p at 10 s, q at 15 s
    #expect(h.shown.suffix(2).map(\.at) == [ms(10_000), ms(15_000)])
    #expect(h.carousel.items.count == 3)
    #expect(h.currentSource == "/p/q.jpg")
}

@Test func aRetiringImageCanBeLeftBackwardsToTheLastItem() {
    var h = Harness(names: ["a", "b"], config: CarouselConfig(fade: .zero))
    h.start()
    h.replace(["p", "q", "r"], at: 1000)
    h.record(h.carousel.move(.backward, at: ms(1500)))
    h.prepareAll(at: ms(1500))
    #expect(h.currentSource == "/p/r.jpg")
    #expect(h.shown.last?.item == 2)
}

@Test func aRetiringImageMovesOnEvenToASingleNewItem() {
    var h = Harness(names: ["a", "b"])
    h.start()
    h.replace(["only"], at: 1000)
    for t in stride(from: 1100, through: 5000, by: 100) { h.run(to: ms(t)) }
    #expect(h.currentSource == "/p/only.jpg")
    #expect(h.shown.last?.at == ms(5000))
    // Then it just stays.
    #expect(h.carousel.wake == .idle)
}

@Test func aNewListDuringAFadeWaitsForTheFadeToEnd() {
    var h = Harness(names: ["a", "b", "c"])
    h.start()
    h.run(to: ms(4700))                          // fading a -> b
    let fading = h.carousel.scene(at: ms(4700))
    h.replace(["z", "b"], at: 4700)              // b still listed
    #expect(h.carousel.scene(at: ms(4700)) == fading)   // untouched mid-fade
    h.run(to: ms(5000))                          // b fully shown, then the new list applies
    #expect(h.shown.map(\.item) == [0, 1])
    #expect(h.carousel.items.map(\.source) == ["/p/z.jpg", "/p/b.jpg"])
    #expect(h.currentSource == "/p/b.jpg")
    for t in stride(from: 5100, through: 10_000, by: 100) { h.run(to: ms(t)) }
    #expect(h.currentSource == "/p/z.jpg")
    #expect(h.shown.map(\.item) == [0, 1, 0])
}

/// A new list during a fade that no longer has the image fading in (deleted, say): the fade
/// turns back from where it is (the same blend: no jump), the image it left stays on screen as
/// a retiring one, and the show goes on to the new list's first item; the image dropped is
/// never announced.
@Test func aNewListWithoutTheIncomingImageTurnsTheFadeBack() {
    var h = Harness(names: ["a", "b", "c"])
    h.start()
    h.run(to: ms(4700))                          // fading a -> b, 200 ms in
    let fading = h.carousel.scene(at: ms(4700))
    h.replace(["z"], at: 4700)
    let back = h.carousel.scene(at: ms(4700))
    #expect(back.base == fading.overlay && back.overlay == fading.base)
    #expect(abs(back.weight - (256 - fading.weight)) <= 1)
    h.run(to: ms(4900))                          // back on a after as long as it had run
    #expect(h.shown.map(\.item) == [0])
    #expect(h.carousel.items.map(\.source) == ["/p/z.jpg", "/p/a.jpg"])   // a retiring
    #expect(h.carousel.scene(at: ms(4900)).base == fading.base)
    for t in stride(from: 4950, through: 6000, by: 50) { h.run(to: ms(t)) }
    #expect(h.currentSource == "/p/z.jpg")
    #expect(h.shown.map(\.item) == [0, 0])
    #expect(h.shown.last?.at == ms(5400))
}

@Test func anEmptyListGivesTheNoImagesScreen() {
    var h = Harness(names: ["a", "b"])
    h.start()
    h.replace([], at: 1000)
    #expect(h.carousel.scene(at: ms(1000)) == Scene(base: .noImages))
    #expect((0..<3).allSatisfy { h.carousel.status(ofSlot: $0) == .empty })
    h.replace(["c"], at: 2000)
    #expect(h.currentSource == "/p/c.jpg")
    #expect(h.shown.last?.item == 0 && h.shown.last?.at == ms(2000))
}

@Test func beforeTheStartANewListSimplyReplacesTheOld() {
    var h = Harness(names: ["a"])
    h.record(h.carousel.replaceItems(playlist(["x", "y"]), at: .zero))
    h.start()
    #expect(h.prepares.map(\.item) == [0, 1, 1])
    #expect(h.currentSource == "/p/x.jpg")
}

// MARK: pause, resume, goto

@Test func pauseStopsAutoAdvanceAndResumeGivesAFullInterval() {
    var h = Harness(names: ["a", "b", "c"])
    h.start()
    h.carousel.pause(at: ms(1000))
    #expect(h.carousel.wake == .idle)
    for t in stride(from: 1100, through: 20_000, by: 100) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0])
    // A move asked for still happens while paused.
    h.record(h.carousel.move(.forward, at: ms(20_000)))
    h.run(to: ms(20_500))
    #expect(h.shown.map(\.item) == [0, 1])
    h.carousel.resume(at: ms(21_000))
    for t in stride(from: 21_100, through: 26_000, by: 100) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0, 1, 2])
    #expect(h.shown.last?.at == ms(26_000))
}

@Test func gotoFarItemPreparesItInTheNextSlotThenFades() {
    var h = Harness(names: ["a", "b", "c", "d", "e", "f"])
    h.start()
    let before = h.prepares.count
    h.record(h.carousel.goto(item: 3, at: ms(1000)))
    // d was not prepared: it is asked for (in the next role's slot), the fade waits for it.
    #expect(h.prepares.count == before + 1 && h.prepares.last?.item == 3)
    #expect(h.carousel.wake == .idle)   // nothing animates before d is ready; its decode ends the wait
    h.prepareAll(at: ms(1200))                  // d ready at 1.2 s: the cross-fade starts
    #expect(h.carousel.wake == .animating)
    h.run(to: ms(1700))
    #expect(h.shown.map(\.item) == [0, 3])
    // Then the show goes on from d: e next, c before.
    #expect(h.carousel.item(inSlot: h.carousel.nextSlot!) == 4)
    #expect(h.carousel.item(inSlot: h.carousel.previousSlot!) == 2)
    for t in stride(from: 1800, through: 6700, by: 100) { h.run(to: ms(t)) }
    #expect(h.shown.map(\.item) == [0, 3, 4])
}

@Test func gotoANeighbourIsAPlainMoveAndGotoTheCurrentOrAMissingItemDoesNothing() {
    var h = Harness(names: ["a", "b", "c", "d"])
    h.start()
    #expect(h.carousel.goto(item: 0, at: ms(100)).isEmpty)
    #expect(h.carousel.goto(item: 17, at: ms(100)).isEmpty)
    h.record(h.carousel.goto(item: 3, at: ms(100)))   // the previous one
    h.run(to: ms(600))
    #expect(h.shown.map(\.item) == [0, 3])
}

/// A manifest applied at any moment of the start (before the first image is decoded, while it
/// fades in, while the next one is prepared, mid cross-fade) keeps the order: folder items 0...4
/// then, once the manifest's two items are appended, 0...6, each `shown` the successor of the
/// one before, never a jump (as seen on a booted system: 5 folder photos, 2 from the manifest).
@Test func aManifestAppendedDuringTheStartNeverMakesAutoAdvanceJump() {
    let folder = (0..<5).map { PlaylistItem(source: "/img/\($0).jpg") }
    let withManifest = folder + [PlaylistItem(source: "http://m/a.jpg"), PlaylistItem(source: "http://m/b.jpg")]
    for replaceAt in stride(from: 0, through: 11_000, by: 250) {
        for decode in [50, 400, 1200] {
            var c = Carousel(items: folder)
            var pending: [(ticket: Int, at: Int)] = []
            var shown: [(item: Int, at: Int)] = []
            func record(_ actions: [CarouselAction], _ t: Int) {
                for a in actions {
                    if case .prepare(_, _, let ticket) = a { pending.append((ticket, t + decode)) }
                    if case .shown(let item, _, _) = a { shown.append((item, t)) }
                }
            }
            record(c.start(at: .zero), 0)
            for t in stride(from: 0, through: 20_000, by: 10) {
                if t == replaceAt { record(c.replaceItems(withManifest, at: ms(t)), t) }
                let due = pending.filter { $0.at <= t }
                pending.removeAll { $0.at <= t }
                for p in due { record(c.imageReady(ticket: p.ticket, at: ms(t)), t) }
                record(c.tick(at: ms(t)), t)
            }
            #expect(shown.first?.item == 0)
            for (before, after) in zip(shown, shown.dropFirst()) {
                let count = after.at >= replaceAt ? 7 : 5
                // Item 4 is followed by 0 when the manifest came later, by 5 when it was applied.
                let ok = after.item == (before.item + 1) % count || (before.item == 4 && after.item == 0)
                #expect(ok, "manifest at \(replaceAt) ms, decodes \(decode) ms: \(shown.map(\.item))")
            }
        }
    }
}

/// An item whose caption or fit changed under the same source is drawn differently: its
/// prepared slot is not reused. The next image (c, its caption changed) is prepared again; the
/// one on screen (b, its fit changed) stays until the next move, like an item that left.
@Test func aNewCaptionOrFitUnderTheSameSourceIsPreparedAgain() {
    var h = Harness(names: ["a", "b", "c"])
    h.start()
    h.run(to: ms(5000))                          // b on screen, c prepared next
    let preparesBefore = h.prepares.count
    var items = playlist(["a", "b", "c"])
    items[1].fit = .blur
    items[2].caption = "New price"
    h.record(h.carousel.replaceItems(items, at: ms(6000)))
    h.prepareAll(at: ms(6000))
    #expect(h.carousel.currentItem == nil, "the b on screen is the old look of b")
    #expect(h.prepares.suffix(h.prepares.count - preparesBefore).contains { $0.item == 2 }, "c prepared again: \(h.prepares)")
    // Unchanged items keep their slot: a new list equal to the last prepares nothing.
    for t in stride(from: 6100, through: 16_000, by: 100) { h.run(to: ms(t)) }
    let settled = h.prepares.count
    h.record(h.carousel.replaceItems(items, at: ms(16_100)))
    h.prepareAll(at: ms(16_100))
    #expect(h.prepares.count == settled)
}
