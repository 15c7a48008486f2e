// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// A frame whose pixels differ everywhere (so a misplaced layer shows), `seed` choosing which.
private func picture(_ seed: UInt32, width: Int = 40, height: Int = 24) -> Bitmap {
    let b = Bitmap(width: width, height: height)
    var x = seed &* 2_654_435_761 | 1
    for i in 0..<b.pixelCount {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5
        b.pixels[i] = 0xFF00_0000 | (x & 0xFF_FFFF)
    }
    return b
}

/// The largest difference of one channel between two frames.
private func maxChannelDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
    var worst = 0
    for i in 0..<a.pixelCount {
        for shift in [0, 8, 16] as [UInt32] {
            worst = max(worst, abs(Int((a.pixels[i] >> shift) & 0xFF) - Int((b.pixels[i] >> shift) & 0xFF)))
        }
    }
    return worst
}

/// The layers of a scene, stacked as a display controller does, give the frame the renderer
/// composes (the offscreen reference): exactly for a still, a fade and a slide; within rounding
/// (one or two levels) with page dots, whose strip is premultiplied.
@Test func layersStackedGiveTheRenderedFrame() throws {
    let slots: [Bitmap?] = [picture(1), picture(2), picture(3)]
    let renderer = SceneRenderer(width: 40, height: 24, background: RGBColor(red: 10, green: 20, blue: 30))
    let scenes: [(Scene, Int)] = [
        (Scene(base: .slot(0)), 0),
        (Scene(base: .slot(0), overlay: .slot(1), weight: 77), 0),
        (Scene(base: .slot(0), overlay: .slot(1), weight: 256), 0),
        (Scene(base: .slot(1), offset: -13, neighbour: .slot(2)), 0),
        (Scene(base: .slot(1), offset: 9, neighbour: .slot(0)), 0),
        (Scene(base: .slot(0), dots: .init(count: 3, current: 1)), 2),
        (Scene(base: .slot(0), overlay: .slot(1), weight: 200, dots: .init(count: 4, current: 3)), 2),
    ]
    for (scene, tolerance) in scenes {
        let rendered = renderer.render(scene, slots: slots).copy()
        let layers = try #require(renderer.layers(scene, slots: slots))
        let stacked = Bitmap(width: 40, height: 24)
        LayerComposer.compose(layers, background: renderer.background, into: stacked)
        #expect(maxChannelDifference(rendered, stacked) <= tolerance, "\(scene)")
    }
}

/// A fade is two layers: the base frame, and the overlay's slot frame itself above it at the
/// fade's alpha; the CPU blends nothing for it.
@Test func aFadeIsTheTwoSlotFramesWithTheUpperOnesAlpha() throws {
    let a = picture(1), b = picture(2)
    let renderer = SceneRenderer(width: 40, height: 24, background: .black)
    let layers = try #require(renderer.layers(Scene(base: .slot(0), overlay: .slot(1), weight: 128),
                                              slots: [a, b, nil]))
    #expect(layers.count == 2)
    #expect(layers[0].bitmap === a && layers[0].alpha == FrameLayer.opaque
                && layers[0].coversFrame(width: 40, height: 24))
    #expect(layers[1].bitmap === b && layers[1].alpha == 0x8000 && !layers[1].premultiplied)
    #expect(FrameLayer.alpha(forWeight: 0) == 0 && FrameLayer.alpha(forWeight: 256) == 0xFFFF)
}

/// A drag moves the layers: the picture at the offset, the neighbour beside it, no copy.
@Test func aSlideMovesThePictureAndItsNeighbour() throws {
    let a = picture(1), b = picture(2)
    let renderer = SceneRenderer(width: 40, height: 24, background: .black)
    let left = try #require(renderer.layers(Scene(base: .slot(0), offset: -15, neighbour: .slot(1)),
                                            slots: [a, b, nil]))
    #expect(left.map(\.x) == [-15, 25] && left[0].bitmap === a && left[1].bitmap === b)
    let right = try #require(renderer.layers(Scene(base: .slot(0), offset: 6, neighbour: .slot(1)), slots: [a, b, nil]))
    #expect(right.map(\.x) == [6, -34])
}

/// An overlay with no layer form sends the frame to the CPU path.
@Test func anOverlayWithoutALayerFormHasNoLayers() {
    final class Stamp: FrameOverlay { func blend(into frame: Bitmap) { frame[0, 0] = 0xFFFF_FFFF } }
    let renderer = SceneRenderer(width: 40, height: 24, background: .black)
    renderer.frameOverlay = Stamp()
    #expect(renderer.layers(Scene(base: .slot(0)), slots: [picture(1), nil, nil]) == nil)
}
