// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// A SOURCE flipped between an image file and a folder faster than a fade (docs/content.md), on
/// the virtual clock: playlists and file changes arrive mid-fade. The screen never fades into the
/// placeholder while a picture it had is still valid, a `shown` never names an image the playlist
/// no longer lists (nor an index past its end), and a picture whose file left the playlist never
/// goes on fading in.
@Suite struct CarouselKindFlipTests {
    let config = CarouselConfig(interval: .seconds(5), fade: .milliseconds(500))

    private func ms(_ v: Int) -> Duration { .milliseconds(v) }
    private func items(_ names: [String]) -> [PlaylistItem] { names.map { PlaylistItem(source: "/s/\($0)") } }

    /// Every layer the scene draws at `t`.
    private func layers(_ h: Harness, at t: Duration) -> [Scene.Layer] {
        let s = h.carousel.scene(at: t)
        return [s.base] + (s.overlay.map { [$0] } ?? [])
    }

    /// How much of `layer` the scene shows, 0...256.
    private func share(of layer: Scene.Layer?, in s: Scene) -> Int {
        guard let layer else { return 0 }
        if s.overlay == layer { return s.weight }
        return s.base == layer ? 256 - (s.overlay == nil ? 0 : s.weight) : 0
    }

    /// A one-image show whose file changed (its new picture cross-fading in at the next interval)
    /// and changed again during that cross-fade: the fade goes on between the two pictures it had,
    /// never into "Loading…", and no picture cuts in after it.
    @Test func aFileChangedAgainDuringItsRefreshFadeNeverFadesIntoThePlaceholder() {
        var h = Harness(count: 1, config: config)
        h.start()
        h.record(h.carousel.imageChanged(item: 0, at: .seconds(2)))
        h.prepareAll(at: ms(2100))
        h.run(to: ms(4500))                               // the refresh cross-fade starts
        #expect(h.carousel.isAnimating)
        h.record(h.carousel.imageChanged(item: 0, at: ms(4700)))
        // Decodes take their time (nothing is prepared until 5 s): the fade is drawn meanwhile.
        for t in stride(from: 4700, through: 4950, by: 50) {
            h.record(h.carousel.tick(at: ms(t)))
            #expect(!layers(h, at: ms(t)).contains(.placeholder), "at \(t) ms: \(h.carousel.scene(at: ms(t)))")
        }
        for t in stride(from: 5000, through: 12_000, by: 50) {
            h.run(to: ms(t))
            #expect(!layers(h, at: ms(t)).contains(.placeholder), "at \(t) ms: \(h.carousel.scene(at: ms(t)))")
        }
        // The picture that came in is shown at 5 s; the newest one cross-fades in at 10 s.
        #expect(h.shown.map(\.at) == [.zero, .seconds(5), .seconds(10)])
        #expect(h.dropped.isEmpty)
    }

    /// The report's case: a file SOURCE on screen, its refresh cross-fade under way, becomes a
    /// folder of two images. No `shown` names an index past the new list's end or the old file,
    /// and the old file's picture that was fading in fades back out instead of landing.
    @Test func aFileBecomingAFolderMidFadeNeverAnnouncesTheOldFile() {
        var h = Harness(count: 1, config: config)
        h.record(h.carousel.replaceItems(items(["show"]), at: .zero))
        h.start()
        h.record(h.carousel.imageChanged(item: 0, at: .seconds(2)))
        h.prepareAll(at: ms(2100))
        h.run(to: ms(4500))
        let incoming = h.carousel.scene(at: ms(4700))
        #expect(incoming.overlay != nil)
        h.record(h.carousel.replaceItems(items(["show/blue.png", "show/cyan.png"]), at: ms(4700)))
        h.prepareAll(at: ms(4700))
        var last = share(of: incoming.overlay, in: incoming)
        for t in stride(from: 4750, through: 15_000, by: 50) {
            h.run(to: ms(t))
            let s = h.carousel.scene(at: ms(t))
            if t < 4900 {   // back by 4.9 s; then its slot takes another picture
                #expect(share(of: incoming.overlay, in: s) <= last, "at \(t) ms: \(s)")
                last = share(of: incoming.overlay, in: s)
            }
            #expect(!layers(h, at: ms(t)).contains(.placeholder), "at \(t) ms: \(s)")
        }
        #expect(h.shown.count >= 3)
        for (i, shown) in h.shown.enumerated().dropFirst() {
            #expect(shown.item < 2, "shown #\(i): index \(shown.item) of a playlist of 2")
        }
        #expect(h.carousel.items.map(\.source) == ["/s/show/blue.png", "/s/show/cyan.png"])
    }

    /// A folder of three removed (`rm -r`) while a fade into its second image runs: the list that
    /// comes empty is taken up at once; that image never goes on fading in, nor is it announced.
    @Test func aDeletedImageNeverFadesInAfterItsDeletionWasTakenUp() {
        var h = Harness(count: 3, config: config)
        h.start()
        h.run(to: ms(4500))
        let fading = h.carousel.scene(at: ms(4700))
        #expect(fading.overlay != nil && fading.weight > 0 && fading.weight < 256)
        h.record(h.carousel.replaceItems([], at: ms(4700)))
        var last = share(of: fading.overlay, in: fading)
        for t in stride(from: 4700, through: 8000, by: 50) {
            h.run(to: ms(t))
            let s = h.carousel.scene(at: ms(t))
            #expect(share(of: fading.overlay, in: s) <= last, "at \(t) ms: \(s)")
            last = share(of: fading.overlay, in: s)
        }
        #expect(h.shown.map(\.item) == [0], "item 1 was never announced: \(h.shown)")
        #expect(h.carousel.scene(at: ms(8000)) == Scene(base: .noImages))
    }

    /// A new list during a fade that still has the image fading in: the fade goes on and lands
    /// there, as before.
    @Test func aNewListThatKeepsTheIncomingImageLetsTheFadeLand() {
        var h = Harness(count: 3, config: config)
        h.start()
        h.run(to: ms(4500))
        h.record(h.carousel.replaceItems([PlaylistItem(source: "/photos/1.jpg"), PlaylistItem(source: "/x.jpg")],
                                         at: ms(4700)))
        h.run(to: ms(5000))
        h.prepareAll(at: ms(5000))
        #expect(h.shown.map(\.item) == [0, 0])
        #expect(h.carousel.currentItem == 0)
        #expect(h.carousel.items.map(\.source) == ["/photos/1.jpg", "/x.jpg"])
    }
}

extension CarouselKindFlipTests {
    /// A one-image show whose file changed, handed the same playlist again before its new picture
    /// came in (a missing SOURCE appeared): the new picture still cross-fades in at the next interval.
    @Test func theSameListAgainKeepsAWaitingRefresh() {
        var h = Harness(count: 1, config: CarouselConfig(interval: .seconds(2), fade: .milliseconds(200)))
        h.start()
        h.record(h.carousel.imageChanged(item: 0, at: ms(1000)))
        h.prepareAll(at: ms(1100))
        h.record(h.carousel.replaceItems([PlaylistItem(source: "/photos/0.jpg")], at: ms(1200)))
        h.prepareAll(at: ms(1200))
        for t in stride(from: 1300, through: 6000, by: 100) { h.run(to: ms(t)) }
        #expect(h.shown.map(\.at) == [.zero, .seconds(2)])
    }
}
