// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// Drives a Carousel by hand on a virtual time line, preparing images instantly (or late).
struct Harness {
    var carousel: Carousel
    var prepares: [(slot: Int, item: Int, ticket: Int)] = []
    var shown: [(item: Int, at: Duration)] = []
    var dropped: [Int] = []

    init(count: Int, config: CarouselConfig = CarouselConfig()) {
        carousel = Carousel(items: (0..<count).map { PlaylistItem(source: "/photos/\($0).jpg") }, config: config)
    }

    mutating func record(_ actions: [CarouselAction]) {
        for a in actions {
            switch a {
            case .prepare(let slot, let item, let ticket): prepares.append((slot, item, ticket))
            case .shown(let item, _, let at): shown.append((item, at))
            case .dropped(let item, _): dropped.append(item)
            }
        }
    }

    /// Completes every outstanding prepare at `now` (as the virtual-clock renderer does).
    mutating func prepareAll(at now: Duration, failing: Set<Int> = []) {
        while let p = prepares.first(where: { carousel.status(ofSlot: $0.slot) == .pending(ticket: $0.ticket) }) {
            let actions = failing.contains(p.item)
                ? carousel.imageFailed(ticket: p.ticket, at: now)
                : carousel.imageReady(ticket: p.ticket, at: now)
            record(actions)
        }
    }

    mutating func start(at t: Duration = .zero, failing: Set<Int> = []) {
        record(carousel.start(at: t))
        prepareAll(at: t, failing: failing)
    }

    mutating func run(to t: Duration, failing: Set<Int> = []) {
        record(carousel.tick(at: t))
        prepareAll(at: t, failing: failing)
    }
}

@Test func startPreparesCurrentThenNextThenPrevious() {
    var h = Harness(count: 5)
    h.record(h.carousel.start(at: .zero))
    #expect(h.prepares.map(\.item) == [0, 1, 4])
    #expect(Set(h.prepares.map(\.slot)) == [0, 1, 2])
    #expect(h.shown.isEmpty)  // nothing is shown before its image is ready
    h.prepareAll(at: .zero)
    #expect(h.shown.map(\.item) == [0])
    #expect(h.carousel.scene(at: .zero) == Scene(base: .slot(h.carousel.currentSlot!)))
}

@Test func shownEventsComeOneIntervalApartAndWrapForward() {
    var h = Harness(count: 3)
    h.start()
    var t = Duration.zero
    while t <= .seconds(20) {
        h.run(to: t)
        t += .milliseconds(100)
    }
    #expect(h.shown.map(\.item) == [0, 1, 2, 0, 1])
    #expect(h.shown.map(\.at) == [.zero, .seconds(5), .seconds(10), .seconds(15), .seconds(20)])
}

@Test func backwardDirectionWrapsFromFirstToLast() {
    var h = Harness(count: 4, config: CarouselConfig(direction: .backward))
    h.start()
    for ms in stride(from: 0, through: 15_000, by: 250) { h.run(to: .milliseconds(ms)) }
    #expect(h.shown.map(\.item) == [0, 3, 2, 1])
}

@Test func manualMovesWrapBothWays() {
    var h = Harness(count: 3, config: CarouselConfig(fade: .zero))
    h.start()
    h.record(h.carousel.move(.backward, at: .seconds(1)))
    h.prepareAll(at: .seconds(1))
    h.record(h.carousel.move(.backward, at: .seconds(2)))
    h.prepareAll(at: .seconds(2))
    h.record(h.carousel.move(.forward, at: .seconds(3)))
    h.prepareAll(at: .seconds(3))
    h.record(h.carousel.move(.forward, at: .seconds(4)))
    h.prepareAll(at: .seconds(4))
    h.record(h.carousel.move(.forward, at: .seconds(5)))
    #expect(h.shown.map(\.item) == [0, 2, 1, 2, 0, 1])
}

@Test func fadeProgressComesFromTheClock() {
    var h = Harness(count: 2, config: CarouselConfig(interval: .seconds(5), fade: .milliseconds(500)))
    h.start()
    let from = h.carousel.currentSlot!, to = h.carousel.nextSlot!
    // Still before the fade: 4.5 s is where it begins.
    h.run(to: .milliseconds(4499))
    #expect(h.carousel.scene(at: .milliseconds(4499)) == Scene(base: .slot(from)))
    h.run(to: .milliseconds(4500))
    #expect(h.carousel.scene(at: .milliseconds(4500)) == Scene(base: .slot(from), overlay: .slot(to), weight: 0))
    // Half way through by time, whatever number of ticks came before.
    let mid = h.carousel.scene(at: .milliseconds(4750))
    #expect(mid.base == .slot(from) && mid.overlay == .slot(to) && mid.weight == 128)
    let quarter = h.carousel.scene(at: .milliseconds(4625))
    #expect(quarter.weight > 0 && quarter.weight < 64)  // eased: slower than linear at the start
    h.run(to: .seconds(5))
    #expect(h.carousel.scene(at: .seconds(5)) == Scene(base: .slot(to)))
    #expect(h.shown.last?.item == 1 && h.shown.last?.at == .seconds(5))
}

@Test func onlyTheSlotThatCameIntoTheFarPositionIsPreparedAfterAMove() {
    var h = Harness(count: 10)
    h.start()
    #expect(h.prepares.count == 3)
    for step in 1...12 {
        let oldPrevious = h.carousel.previousSlot!
        let before = h.prepares.count
        h.run(to: .seconds(5 * Int64(step)))
        #expect(h.prepares.count == before + 1)
        let p = h.prepares.last!
        #expect(p.slot == oldPrevious)              // the old previous slot became the new next
        #expect(p.item == (step + 1) % 10)           // and holds the item after the new current
        #expect(h.carousel.currentItem == step % 10)
    }
    // Never more than three prepared frames.
    #expect((0..<3).filter { h.carousel.status(ofSlot: $0) != .empty }.count == 3)
}

@Test func oneImageStaysWithoutTransitions() {
    var h = Harness(count: 1)
    h.start()
    #expect(h.prepares.count == 1)
    for s in 1...30 { h.run(to: .seconds(Int64(s))) }
    #expect(h.shown.map(\.item) == [0])
    #expect(h.carousel.wake == .idle)
    #expect(h.carousel.scene(at: .seconds(30)).overlay == nil)
}

@Test func emptyShowIsTheNoImagesScreen() {
    var h = Harness(count: 0)
    h.start()
    #expect(h.prepares.isEmpty)
    #expect(h.carousel.scene(at: .zero) == Scene(base: .noImages))
    #expect(h.carousel.wake == .idle)
}

@Test func noFramesAreNeededWhileAnImageIsSimplyOnScreen() {
    var h = Harness(count: 3)
    h.start()
    // Between t = 0 and the fade at 4.5 s the scene never changes and the loop sleeps until 4.5 s.
    #expect(h.carousel.wake == .at(.milliseconds(4500)))
    let first = h.carousel.scene(at: .zero)
    for ms in stride(from: 0, to: 4500, by: 10) {
        h.run(to: .milliseconds(ms))
        #expect(h.carousel.scene(at: .milliseconds(ms)) == first)
        #expect(!h.carousel.isAnimating)
    }
    h.run(to: .milliseconds(4600))
    #expect(h.carousel.wake == .animating)
}

@Test func aLateImageShowsThePlaceholderThenFadesIn() {
    var h = Harness(count: 3)
    h.record(h.carousel.start(at: .zero))
    // Nothing decoded yet: the current slot is a placeholder; at the end of its ready wait the
    // show would go on to a ready neighbour (docs/carousel.md "Ready first"), but none is.
    #expect(h.carousel.scene(at: .milliseconds(100)).base == .placeholder)
    #expect(h.carousel.wake == .at(.seconds(2)))
    // The image arrives at 2100 ms, past the 2 s start grace, and fades in over 500 ms.
    h.prepareAll(at: .milliseconds(2100))
    #expect(h.shown.isEmpty)
    let mid = h.carousel.scene(at: .milliseconds(2350))
    #expect(mid.base == .placeholder && mid.overlay == .slot(h.carousel.currentSlot!) && mid.weight == 128)
    h.run(to: .milliseconds(2600))
    #expect(h.shown.map(\.item) == [0])
    #expect(h.shown.first?.at == .milliseconds(2600))
    #expect(h.carousel.scene(at: .milliseconds(2600)) == Scene(base: .slot(h.carousel.currentSlot!)))
    // Its interval counts from when it was shown.
    #expect(h.carousel.wake == .at(.milliseconds(2600 + 4500)))
}

@Test func theFirstImageReadyWithinTheStartGraceAppearsAtOnce() {
    var h = Harness(count: 3)
    h.record(h.carousel.start(at: .zero))
    h.prepareAll(at: .milliseconds(120))   // a warm start: decoded in 120 ms
    #expect(h.shown.map(\.item) == [0])
    #expect(h.shown.first?.at == .milliseconds(120))
    #expect(h.carousel.scene(at: .milliseconds(120)) == Scene(base: .slot(h.carousel.currentSlot!)))
    // A slow start (an emulator decoding for 1.3 s on a loaded host) still shows the photo as
    // it comes, with no fade-in after it: the first `shown` is the decode's time, not 500 ms later.
    var slow = Harness(count: 3)
    slow.record(slow.carousel.start(at: .zero))
    slow.prepareAll(at: .milliseconds(1300))
    #expect(slow.shown.map(\.item) == [0])
    #expect(slow.shown.first?.at == .milliseconds(1300))
    #expect(slow.carousel.wake == .at(.milliseconds(1300 + 4500)))
}

@Test func aFailedImageLeavesTheShowAndItsNeighboursTakeOver() {
    var h = Harness(count: 4)
    h.start(failing: [1])
    #expect(h.dropped == [1])
    #expect(h.carousel.activeCount == 3)
    for s in stride(from: 0, through: 15_000, by: 500) { h.run(to: .milliseconds(s)) }
    #expect(h.shown.map(\.item) == [0, 2, 3, 0])
}

@Test func aFailedFirstImageIsSkippedAtOnce() {
    var h = Harness(count: 3)
    h.start(failing: [0])
    #expect(h.shown.map(\.item) == [1])
    #expect(h.shown.first?.at == .zero)
}

@Test func everyImageFailingEndsInTheNoImagesScreen() {
    var h = Harness(count: 3)
    h.start(failing: [0, 1, 2])
    #expect(h.dropped.sorted() == [0, 1, 2])
    #expect(h.carousel.scene(at: .zero) == Scene(base: .noImages))
}

@Test func pageDotsFollowTheCurrentItem() {
    var h = Harness(count: 4, config: CarouselConfig(showDots: true))
    h.start()
    #expect(h.carousel.scene(at: .zero).dots == Scene.PageDots(count: 4, current: 0))
    h.run(to: .milliseconds(4600))
    #expect(h.carousel.scene(at: .milliseconds(4600)).dots?.current == 0)
    #expect(h.carousel.scene(at: .milliseconds(4900)).dots?.current == 1)
    h.run(to: .seconds(5))
    #expect(h.carousel.scene(at: .seconds(5)).dots == Scene.PageDots(count: 4, current: 1))
}

@Test func anItemsOwnDurationOverridesTheInterval() {
    var items = (0..<3).map { PlaylistItem(source: "\($0)") }
    items[0].duration = .seconds(2)
    var h = Harness(count: 0)
    h.carousel = Carousel(items: items)
    h.start()
    for ms in stride(from: 0, through: 7000, by: 100) { h.run(to: .milliseconds(ms)) }
    #expect(h.shown.map(\.at) == [.zero, .seconds(2), .seconds(7)])
}

@Test func aStalledLoopStartsTheOverdueFadeNowInsteadOfSkippingImages() {
    var h = Harness(count: 3)
    h.start()
    // The loop was stalled for 11 s (the fade was due at 4.5 s): the fade starts when it wakes.
    h.run(to: .seconds(11))
    #expect(h.carousel.isAnimating)
    #expect(h.carousel.currentItem == 0)
    #expect(h.carousel.scene(at: .seconds(11)).weight == 0)
    h.run(to: .milliseconds(11_500))
    #expect(h.shown.map(\.item) == [0, 1])
    #expect(h.shown.last?.at == .milliseconds(11_500))
}

@Test func aMoveAskedForDuringAFadeLandsItNowNeverInTheFuture() {
    var h = Harness(count: 4)
    h.start()
    h.run(to: .milliseconds(4600))          // fading 0 -> 1 (4500 ... 5000)
    h.record(h.carousel.move(.forward, at: .milliseconds(4600)))
    h.prepareAll(at: .milliseconds(4600))
    // Item 1 is stamped when the move cut its fade short, not at the fade's end (5000).
    #expect(h.shown.map(\.item) == [0, 1])
    #expect(h.shown.last?.at == .milliseconds(4600))
    // And the new cross-fade to 2 starts right away.
    h.run(to: .milliseconds(5100))
    #expect(h.shown.map(\.item) == [0, 1, 2])
    #expect(h.shown.last?.at == .milliseconds(5100))
}
