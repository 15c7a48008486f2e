// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

// The Ken Burns geometry, its resampler and the carousel's moving views (docs/carousel.md "Ken Burns").

private let shapes = [(1600, 1200), (1200, 1600), (4000, 1000), (1920, 1080), (1000, 1000), (300, 2000)]

@Test func theWindowsStayInsideTheSourceAtTheScreensAspect() {
    for (iw, ih) in shapes {
        for (w, h) in [(1920, 1080), (1080, 1920), (800, 480)] {
            let (sw, sh) = KenBurns.sourceSize(imageWidth: iw, imageHeight: ih, screenWidth: w, screenHeight: h)
            // Never smaller than the screen times the zoom; never past the extent along the long axis.
            #expect(Double(min(sw * h, sh * w)) >= Double(w * h) * KenBurns.zoom - Double(w + h) * 2,
                    "\(iw)x\(ih) on \(w)x\(h)")
            #expect(sw * sh * 4 <= KenBurns.sourceBytes(screenWidth: w, screenHeight: h) + 4 * (sw + sh))
            for seed in (0..<64).map({ KenBurns.seed(source: "/photos/\($0).jpg") }) {
                let (a, b) = KenBurns.path(seed: seed, sourceWidth: sw, sourceHeight: sh,
                                           screenWidth: w, screenHeight: h)
                for p in stride(from: 0.0, through: 1.0, by: 0.05) {
                    let v = a.interpolated(to: b, p)
                    #expect(v.x >= -1e-9 && v.y >= -1e-9 && v.x + v.width <= Double(sw) + 1e-9
                            && v.y + v.height <= Double(sh) + 1e-9, "\(v) in \(sw)x\(sh)")
                    #expect(abs(v.width / v.height - Double(w) / Double(h)) < 1e-9)
                }
                // One end is the largest window, the other the zoom times smaller.
                let ratio = max(a.width, b.width) / min(a.width, b.width)
                #expect(abs(ratio - KenBurns.zoom) < 1e-9)
                #expect(max(a.width, b.width) >= Double(sw) - 1e-9 || max(a.height, b.height) >= Double(sh) - 1e-9)
            }
        }
    }
}

@Test func theMotionIsTheSameForTheSameItemAndPansAlongTheLongAxis() {
    let s = KenBurns.seed(source: "/photos/beach.jpg")
    #expect(s == KenBurns.seed(source: "/photos/beach.jpg") && s != KenBurns.seed(source: "/photos/beach2.jpg"))
    // A panorama pans sideways, a portrait up or down.
    let wide = KenBurns.sourceSize(imageWidth: 4000, imageHeight: 1000, screenWidth: 1920, screenHeight: 1080)
    #expect(wide == (2870, 1242), "1242 high (1080 x 1.15), 1.3 times the screen's aspect wide")
    var panned = 0
    for seed in (0..<32).map({ KenBurns.seed(source: "\($0)") }) {
        let (a, b) = KenBurns.path(seed: seed, sourceWidth: wide.width, sourceHeight: wide.height,
                                   screenWidth: 1920, screenHeight: 1080)
        if abs(a.x - b.x) > 400 { panned += 1 }
        let tall = KenBurns.sourceSize(imageWidth: 1200, imageHeight: 1600, screenWidth: 1920, screenHeight: 1080)
        let (c, d) = KenBurns.path(seed: seed, sourceWidth: tall.width, sourceHeight: tall.height,
                                   screenWidth: 1920, screenHeight: 1080)
        #expect(abs(c.y - d.y) > 100 && abs(c.x - d.x) < abs(c.y - d.y), "\(c) → \(d)")
    }
    #expect(panned == 32)
}

@Test func theBilinearResamplerKeepsASameSizeWindowAndInterpolatesBetweenPixels() {
    let source = Bitmap(width: 8, height: 4)
    for y in 0..<4 { for x in 0..<8 { source.row(y)[x] = 0xFF00_0000 | UInt32(x * 32) << 16 | UInt32(y * 64) } }
    let out = Bitmap(width: 8, height: 4)
    Compositor.resampleBilinear(source, window: .init(x: 0, y: 0, width: 8, height: 4), into: out, rows: nil)
    #expect((0..<32).allSatisfy { out.pixels[$0] == source.pixels[$0] })
    // Half a pixel to the right: each red the mean of two neighbours (the last clamped to the edge).
    Compositor.resampleBilinear(source, window: .init(x: 0.5, y: 0, width: 7.5, height: 4), into: out, rows: nil)
    let reds = (0..<8).map { Int((out[$0, 0] >> 16) & 0xFF) }
    #expect(reds.first! > 0 && zip(reds.dropFirst(), reds).allSatisfy { $0 > $1 } && reds.last! <= 224, "\(reds)")
    // Never a pixel outside the source: a window in the right half of the last column gives
    // that column (the taps clamped to its centre).
    Compositor.resampleBilinear(source, window: .init(x: 7.5, y: 0, width: 0.5, height: 4), into: out, rows: nil)
    #expect((0..<8).allSatisfy { (out[$0, 1] >> 16) & 0xFF == 224 && out[$0, 1] & 0xFF == 64 })
}

@Test func theCarouselMovesEachPictureFromTheStartOfItsMoveInToTheEndOfItsMoveOut() {
    var config = CarouselConfig(interval: .seconds(5), fade: .milliseconds(500), screenWidth: 1000)
    config.kenBurns = true
    var h = Harness(count: 3, config: config)
    h.start()
    let first = h.carousel.currentSlot!, next = h.carousel.nextSlot!
    let seed0 = KenBurns.seed(source: "/photos/0.jpg"), seed1 = KenBurns.seed(source: "/photos/1.jpg")
    #expect(h.carousel.wake == .animating, "frames at the display's rate while the picture moves")
    h.run(to: .seconds(1))
    #expect(h.carousel.scene(at: .seconds(1)) == Scene(base: .kenBurns(slot: first, seed: seed0, progress: 1 / 5.5)))
    // The fade: both pictures move, the next from the start of its motion.
    h.run(to: .milliseconds(4750))
    let fade = h.carousel.scene(at: .milliseconds(4750))
    #expect(fade.base == .kenBurns(slot: first, seed: seed0, progress: 4.75 / 5.5))
    #expect(fade.overlay == .kenBurns(slot: next, seed: seed1, progress: 0.25 / 5.5) && fade.weight == 128)
    h.run(to: .seconds(5))
    #expect(h.carousel.scene(at: .seconds(5)).base == .kenBurns(slot: next, seed: seed1, progress: 0.5 / 5.5))
    // A single picture stops at its end and the loop idles.
    var one = Harness(count: 1, config: config)
    one.start()
    one.run(to: .seconds(6))
    #expect(one.carousel.wake == .idle)
    #expect(one.carousel.scene(at: .seconds(6)).base == .kenBurns(slot: one.carousel.currentSlot!,
                                                                  seed: seed0, progress: 1))
}

@Test func aDraggedInNeighbourStartsItsMotionWhereItCameToRest() {
    var config = CarouselConfig(interval: .seconds(5), fade: .milliseconds(500), screenWidth: 1000)
    config.kenBurns = true
    var h = Harness(count: 3, config: config)
    h.start()
    h.record(h.carousel.touchBegan(at: .seconds(1)))
    h.carousel.touchDragged(offset: -600, at: .milliseconds(1100))
    let dragged = h.carousel.scene(at: .milliseconds(1100))
    guard case .kenBurns(let slot, _, let p)? = dragged.neighbour else { Issue.record("\(dragged)"); return }
    #expect(p == 0)
    h.record(h.carousel.touchEnded(velocity: 0, at: .milliseconds(1100)))
    h.run(to: .milliseconds(1350))
    #expect(h.carousel.currentSlot == slot)
    let seed = KenBurns.seed(source: "/photos/1.jpg")
    #expect(h.carousel.scene(at: .milliseconds(1350)).base == .kenBurns(slot: slot, seed: seed, progress: 0))
}
