// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// Long random sequences of everything that can happen to a show (ticks, images ready or failed,
/// new playlists, moves, goto, pause and resume, fingers, changed files), with a fixed seed:
/// every index the carousel hands out (prepare, shown, dropped, the current item, each slot's
/// item) must be an index of its items at that moment. The virtual-clock soak (docs/soak.md)
/// crashed the frame loop with a `prepare` of an item past the end of a new, shorter playlist.
@Suite struct CarouselSequenceTests {
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func indicesStayInsideThePlaylist(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let pool = (0..<12).map { PlaylistItem(source: "/p/\($0).png") }
        func playlist() -> [PlaylistItem] {
            var items = pool
            for i in items.indices.reversed() { items.swapAt(i, rng.next(i + 1)) }
            return Array(items.prefix(rng.next(6) == 0 ? rng.next(3) : 1 + rng.next(pool.count)))
        }
        var carousel = Carousel(items: playlist(),
                                config: CarouselConfig(interval: .seconds(1), fade: .milliseconds(500)))
        var now: Duration = .zero
        var pending: [Int] = []
        var log: [String] = []
        func check(_ actions: [CarouselAction], _ what: String) {
            log.append(what)
            let n = carousel.items.count
            for action in actions {
                switch action {
                case .prepare(_, let item, let ticket):
                    #expect(item < n, "prepare \(item) of \(n) after \(log.suffix(12))")
                    pending.append(ticket)
                case .shown(let item, _, _):
                    #expect(item < n, "shown \(item) of \(n) after \(log.suffix(12))")
                case .dropped(let item, _):
                    #expect(item < n, "dropped \(item) of \(n) after \(log.suffix(12))")
                }
            }
            if let c = carousel.currentItem { #expect(c < n, "current \(c) of \(n) after \(log.suffix(12))") }
            for s in 0..<3 {
                if let i = carousel.item(inSlot: s) {
                    #expect(i < n, "slot \(s) holds \(i) of \(n) after \(log.suffix(12))")
                }
            }
        }
        check(carousel.start(at: now), "start")
        for _ in 0..<4000 {
            switch rng.next(14) {
            case 0, 1, 2:
                now += .milliseconds(50 * (1 + rng.next(20)))
                check(carousel.tick(at: now), "tick \(now)")
            case 3, 4:
                if !pending.isEmpty {
                    let t = pending.remove(at: rng.next(pending.count))
                    check(carousel.imageReady(ticket: t, at: now), "ready \(t)")
                }
            case 5:
                if !pending.isEmpty {
                    let t = pending.remove(at: rng.next(pending.count))
                    check(carousel.imageFailed(ticket: t, at: now), "failed \(t)")
                }
            case 6:
                let items = playlist()
                check(carousel.replaceItems(items, at: now), "replace \(items.count)")
            case 7:
                check(carousel.move(rng.next(2) == 0 ? .forward : .backward, at: now), "move")
            case 8:
                let item = rng.next(pool.count + 1)
                check(carousel.goto(item: item, at: now), "goto \(item)")
            case 9:
                if rng.next(2) == 0 {
                    carousel.pause(at: now); log.append("pause")
                } else {
                    carousel.resume(at: now); log.append("resume")
                }
            case 10:
                check(carousel.touchBegan(at: now), "touch")
            case 11:
                let offset = Double(rng.next(1200)) - 600
                carousel.touchDragged(offset: offset, at: now)
                log.append("drag \(offset)")
            case 12:
                let v: Double? = rng.next(3) == 0 ? nil : Double(rng.next(6000)) - 3000
                check(carousel.touchEnded(velocity: v, at: now, cancelled: rng.next(10) == 0),
                      "release \(v.map { "\($0)" } ?? "nil")")
            default:
                let item = rng.next(pool.count)
                check(carousel.imageChanged(item: item, at: now), "changed \(item)")
            }
        }
    }
}
