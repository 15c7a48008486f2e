// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

// Ready first (docs/carousel.md "Ready first") and moves asked for during a fade or a settle
// (docs/control-socket.md "Moves during a fade"), on a virtual time line: frames are prepared
// only for the items a test lets through, so the others stay late (downloading, decoding).

extension Harness {
    /// Completes the outstanding prepares of `items` at `now` (the others stay pending).
    mutating func prepare(items: Set<Int>, at now: Duration) {
        while let p = prepares.first(where: {
            items.contains($0.item) && carousel.status(ofSlot: $0.slot) == .pending(ticket: $0.ticket)
        }) {
            record(carousel.imageReady(ticket: p.ticket, at: now))
        }
    }

    /// Ticks every `step` from `from` through `to`, letting `ready` items' frames through at
    /// each tick; returns every scene seen.
    mutating func follow(from: Duration, to: Duration, step: Duration = .milliseconds(50),
                         ready: Set<Int>) -> [Scene] {
        var scenes: [Scene] = []
        var t = from
        while t <= to {
            record(carousel.tick(at: t))
            prepare(items: ready, at: t)
            record(carousel.tick(at: t))
            scenes.append(carousel.scene(at: t))
            t += step
        }
        return scenes
    }
}

/// Whether a scene shows the placeholder anywhere (under a fade, over it, beside a drag).
private func showsPlaceholder(_ scene: Scene) -> Bool {
    scene.base == .placeholder || scene.overlay == .placeholder || scene.neighbour == .placeholder
}

/// Six items that never get ready ahead of one that is: at the start the ready one takes the
/// first turn once the first item has waited its ready wait (2 s), at once (no fade from the
/// placeholder, nothing having been shown yet), and stays while the others are late.
@Test func aReadyItemTakesTheTurnOfLateOnesAtTheStart() {
    var h = Harness(count: 7)
    h.record(h.carousel.start(at: .zero))
    h.prepare(items: [6], at: .milliseconds(50))   // the previous role's item: the good one
    _ = h.follow(from: .milliseconds(50), to: .milliseconds(1950), ready: [6])
    #expect(h.shown.isEmpty)                         // the first item still has its wait
    #expect(h.carousel.wake == .at(.seconds(2)))
    let scenes = h.follow(from: .seconds(2), to: .seconds(40), ready: [6])
    #expect(h.shown.first?.item == 6 && h.shown.first?.at == .seconds(2), "\(h.shown)")
    #expect(h.shown.map(\.item) == [6], "the late items are passed over: \(h.shown)")
    #expect(!scenes.contains(where: showsPlaceholder), "a placeholder with a ready picture on hand")
    // And the late ones are tried in turn, each given its wait (asked again, one at a time).
    #expect(Set(h.prepares.map(\.item)).isSuperset(of: [0, 1, 2, 3, 4, 5]))
    #expect(h.carousel.wake == .idle && h.carousel.passedOver.count == 5, "\(h.carousel.wake)")
}

/// Item 2 is late when its turn comes (its download still trickles): the show passes over it
/// to 3 after its wait instead of fading to the placeholder, and 2 comes back at its next turn.
@Test func aLateNextItemIsPassedOverAndComesBackAtItsNextTurn() {
    var h = Harness(count: 4)
    h.start()
    let late = h.follow(from: .milliseconds(50), to: .seconds(12), ready: [0, 1, 3])
    #expect(h.shown.map(\.item) == [0, 1, 3], "\(h.shown)")
    // 2 was asked for at 5 s (when 1 landed), due at 9.5 s: passed over at once, 3 asked then
    // and ready at the next tick; the move to 3 lands a fade later.
    #expect(h.shown.last?.at == .seconds(10), "\(h.shown)")
    #expect(!late.contains(where: showsPlaceholder))
    // 2 is ready now: it has its turn after 0 and 1 again, in the playlist's order.
    _ = h.follow(from: .milliseconds(12_050), to: .seconds(30), ready: [0, 1, 2, 3])
    #expect(h.shown.map(\.item).prefix(7) == [0, 1, 3, 0, 1, 2, 3], "\(h.shown)")
}

/// Two items, one late: the ready one stays on screen (no fade to the placeholder) and the
/// late one comes as soon as its frame is ready.
@Test func withNothingElseTheShowWaitsOnTheImageOnScreenForTheLateOne() {
    var h = Harness(count: 2)
    h.record(h.carousel.start(at: .zero))
    h.prepare(items: [0], at: .zero)
    let waiting = h.follow(from: .zero, to: .seconds(20), ready: [0])
    #expect(h.shown.map(\.item) == [0])
    #expect(!waiting.contains(where: showsPlaceholder))
    #expect(h.carousel.wake == .idle)                // only the decode's answer ends the wait
    h.prepare(items: [1], at: .milliseconds(20_020))
    h.record(h.carousel.tick(at: .milliseconds(20_020)))
    #expect(h.carousel.isAnimating)
    h.record(h.carousel.tick(at: .milliseconds(20_520)))
    #expect(h.shown.map(\.item) == [0, 1] && h.shown.last?.at == .milliseconds(20_520), "\(h.shown)")
}

/// An item that failed and comes back at its retry (the playlist given again) is prepared
/// before its turn: the image on screen stays until the frame is ready, never a placeholder.
@Test func aRetriedItemIsPreparedBeforeItsTurn() {
    var h = Harness(count: 2)
    h.start(failing: [1])
    #expect(h.carousel.activeCount == 1)
    _ = h.follow(from: .zero, to: .seconds(59), step: .seconds(1), ready: [0])
    // The retry: the playlist again; its decode takes 300 ms.
    h.record(h.carousel.replaceItems(h.carousel.items, at: .seconds(60)))
    let scenes = h.follow(from: .seconds(60), to: .milliseconds(60_250), ready: [])
    #expect(!scenes.contains(where: showsPlaceholder), "the retried item on screen before its frame")
    h.prepare(items: [1], at: .milliseconds(60_300))
    let fade = h.follow(from: .milliseconds(60_300), to: .seconds(61), ready: [0, 1])
    #expect(!fade.contains(where: showsPlaceholder))
    #expect(h.shown.map(\.item) == [0, 1] && h.shown.last?.at == .milliseconds(60_800), "\(h.shown)")
}

/// Nothing ready: the placeholder, and the first item to be ready is shown as it comes.
@Test func withNothingReadyThePlaceholderShowsUntilAnyItemIs() {
    var h = Harness(count: 3)
    h.record(h.carousel.start(at: .zero))
    let nothing = h.follow(from: .zero, to: .seconds(3), ready: [])
    #expect(nothing.allSatisfy { $0.base == .placeholder && $0.overlay == nil })
    _ = h.follow(from: .milliseconds(3050), to: .seconds(4), ready: [2])
    #expect(h.shown.first?.item == 2 && h.shown.first?.at == .milliseconds(3050), "\(h.shown)")
}

// MARK: Moves during a fade or a settle

/// A `next` while a goto waits for its target's frame is made after the goto, from its target.
@Test func aNextWhileAGotoWaitsForItsFrameComesAfterIt() {
    var h = Harness(count: 6)
    h.start()
    h.record(h.carousel.goto(item: 3, at: .seconds(1)))         // 3 is asked for now
    h.record(h.carousel.move(.forward, at: .milliseconds(1100)))
    _ = h.follow(from: .milliseconds(1200), to: .seconds(3), ready: [0, 1, 2, 3, 4, 5])
    #expect(h.shown.map(\.item) == [0, 3, 4], "\(h.shown)")
}

/// Three `next`s in one fade go three images on past the fade's target, although each new
/// neighbour is asked for only as the move before it lands (it went two on: a move asked for
/// while another waited for its neighbour's frame was merged into it). A finger down drops
/// the moves still waiting: the person at the screen wins.
@Test func threeNextsInOneFadeGoThreeImagesOn() {
    var h = Harness(count: 8)
    h.start()
    h.run(to: .milliseconds(4600))                               // fading 0 -> 1 (4500 ... 5000)
    for t in [4600, 4650, 4700] { h.record(h.carousel.move(.forward, at: .milliseconds(t))) }
    _ = h.follow(from: .milliseconds(4750), to: .seconds(7), ready: Set(0..<8))
    #expect(h.shown.map(\.item) == [0, 1, 2, 3, 4], "\(h.shown)")
    #expect(h.shown.last?.at == .milliseconds(6100), "\(h.shown)")

    var touched = Harness(count: 8)
    touched.start()
    touched.run(to: .milliseconds(4600))
    for t in [4600, 4650, 4700] { touched.record(touched.carousel.move(.forward, at: .milliseconds(t))) }
    touched.record(touched.carousel.touchBegan(at: .milliseconds(4720)))
    touched.record(touched.carousel.touchEnded(velocity: 0, at: .milliseconds(4740)))
    _ = touched.follow(from: .milliseconds(4750), to: .seconds(7), ready: Set(0..<8))
    #expect(touched.shown.map(\.item) == [0, 1], "\(touched.shown)")
}

/// A `next` during a settle that hands back the fade a finger caught: that fade lands (on 1),
/// and the next goes on from there (to 2) instead of replacing it.
@Test func aNextDuringASettleThatResumesACaughtFadeIsNotLost() {
    var h = Harness(count: 4)
    h.start()
    h.run(to: .milliseconds(4600))                               // fading 0 -> 1 (4500 ... 5000)
    h.record(h.carousel.touchBegan(at: .milliseconds(4600)))
    h.carousel.touchDragged(offset: -10, at: .milliseconds(4650))
    h.record(h.carousel.touchEnded(velocity: 0, at: .milliseconds(4700)))   // springs back
    h.record(h.carousel.move(.forward, at: .milliseconds(4800)))            // during the settle
    _ = h.follow(from: .milliseconds(4850), to: .seconds(6), ready: [0, 1, 2, 3])
    #expect(h.shown.map(\.item) == [0, 1, 2], "\(h.shown)")
}

/// A goto to the item the fade under way goes to: it lands there now, and no second fade runs.
@Test func aGotoToTheFadesTargetLandsItNow() {
    var h = Harness(count: 5)
    h.start()
    h.run(to: .milliseconds(4600))
    h.record(h.carousel.goto(item: 1, at: .milliseconds(4700)))
    #expect(h.shown.map(\.item) == [0, 1] && h.shown.last?.at == .milliseconds(4700), "\(h.shown)")
    #expect(!h.carousel.isAnimating)
    _ = h.follow(from: .milliseconds(4750), to: .seconds(10), ready: [0, 1, 2, 3, 4])
    #expect(h.shown.map(\.item) == [0, 1, 2] && h.shown.last?.at == .milliseconds(9700), "\(h.shown)")
}

/// Every image had failed (the empty screen); at the retry they come back: the empty screen
/// stays until one is ready, which then comes at once, never a placeholder frame in between.
@Test func afterEveryImageFailedARetriedOneReplacesTheEmptyScreenOnlyWhenReady() {
    var h = Harness(count: 2)
    h.start(failing: [0, 1])
    #expect(h.carousel.scene(at: .seconds(1)) == Scene(base: .noImages))
    h.record(h.carousel.replaceItems(h.carousel.items, at: .seconds(60)))
    let waiting = h.follow(from: .seconds(60), to: .milliseconds(60_250), ready: [])
    #expect(waiting.allSatisfy { $0 == Scene(base: .noImages) }, "\(waiting)")
    h.prepare(items: [0], at: .milliseconds(60_300))
    #expect(h.shown.map(\.item) == [0] && h.shown.first?.at == .milliseconds(60_300), "\(h.shown)")
    #expect(h.carousel.scene(at: .milliseconds(60_300)) == Scene(base: .slot(h.carousel.currentSlot!)))
}

/// A manual `next` (SIGUSR1, the control socket) onto a neighbour that is not ready, with a
/// ready picture on hand, never fades to the placeholder: the picture on screen stays while the
/// neighbour has its wait, then the move passes over it to a ready one, as auto-advance does
/// (it faded to the placeholder for 3 s: 6.05 ... 9.0 s here, then on to 3 at 9.05 s).
@Test func aManualNextOntoALateNeighbourKeepsThePictureThenPassesOverIt() {
    var h = Harness(count: 4)
    h.start()
    _ = h.follow(from: .milliseconds(50), to: .seconds(6), ready: [0, 1, 3])
    #expect(h.shown.map(\.item) == [0, 1], "\(h.shown)")
    h.record(h.carousel.move(.forward, at: .milliseconds(6_010)))   // onto 2, asked at 5 s and still late
    let after = h.follow(from: .milliseconds(6_050), to: .seconds(12), ready: [0, 1, 3])
    #expect(!after.contains(where: showsPlaceholder), "a placeholder with a ready picture on hand")
    #expect(h.shown.map(\.item) == [0, 1, 3], "\(h.shown)")
    // 2 was asked for at 5 s: its wait ends at 7 s, and the move to 3 lands a fade later.
    #expect(h.shown.last.map { $0.at <= .milliseconds(7_550) } == true, "\(h.shown)")
    // A ready neighbour: the move is made at once, as before.
    var ready = Harness(count: 4)
    ready.start()
    _ = ready.follow(from: .milliseconds(50), to: .seconds(6), ready: [0, 1, 2, 3])
    ready.record(ready.carousel.move(.forward, at: .milliseconds(6_010)))
    _ = ready.follow(from: .milliseconds(6_050), to: .seconds(7), ready: [0, 1, 2, 3])
    #expect(ready.shown.map(\.item) == [0, 1, 2] && ready.shown.last?.at == .milliseconds(6_510), "\(ready.shown)")
}
