// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

/// A frame whose every pixel encodes its own column (and which frame it is), so a shifted copy
/// can be checked pixel by pixel.
private func columns(_ tag: UInt32, width: Int = 16, height: Int = 3) -> Bitmap {
    let b = Bitmap(width: width, height: height)
    for y in 0..<height { for x in 0..<width { b[x, y] = 0xFF00_0000 | tag << 16 | UInt32(x) } }
    return b
}

@Test func slideLeftShowsTheNeighboursLeftPartAtTheRightEdge() {
    let picture = columns(1), neighbour = columns(2), out = Bitmap(width: 16, height: 3)
    Compositor.slide(picture, neighbour: neighbour, offset: -5, into: out)
    for y in 0..<3 {
        for x in 0..<11 { #expect(out[x, y] == picture[x + 5, y], "(\(x), \(y))") }
        for x in 11..<16 { #expect(out[x, y] == neighbour[x - 11, y], "(\(x), \(y))") }
    }
}

@Test func slideRightShowsTheNeighboursRightPartAtTheLeftEdge() {
    let picture = columns(1), neighbour = columns(2), out = Bitmap(width: 16, height: 3)
    Compositor.slide(picture, neighbour: neighbour, offset: 4, into: out)
    for y in 0..<3 {
        for x in 0..<4 { #expect(out[x, y] == neighbour[x + 12, y], "(\(x), \(y))") }
        for x in 4..<16 { #expect(out[x, y] == picture[x - 4, y], "(\(x), \(y))") }
    }
}

@Test func slideByAWholeWidthOrMoreIsTheNeighbour() {
    let picture = columns(1), neighbour = columns(2), out = Bitmap(width: 16, height: 3)
    for offset in [-16, -40, 16, 99] {
        Compositor.slide(picture, neighbour: neighbour, offset: offset, into: out)
        #expect((0..<out.pixelCount).allSatisfy { out.pixels[$0] == neighbour.pixels[$0] }, "offset \(offset)")
    }
}

@Test func rendererSlidesABlendedPictureWhenAFingerCaughtAFade() {
    let r = SceneRenderer(width: 16, height: 3, background: RGBColor(red: 0, green: 0, blue: 0))
    let a = Bitmap(width: 16, height: 3, fill: 0xFF00_0000), b = Bitmap(width: 16, height: 3, fill: 0xFFFF_FFFF)
    let c = columns(3)
    let scene = Scene(base: .slot(0), overlay: .slot(1), weight: 128, offset: -6, neighbour: .slot(2))
    let out = r.render(scene, slots: [a, b, c])
    let grey = Compositor.blendPixel(0xFF00_0000, 0xFFFF_FFFF, 128, 128)
    for x in 0..<10 { #expect(out[x, 1] == grey, "x \(x)") }
    for x in 10..<16 { #expect(out[x, 1] == c[x - 10, 1], "x \(x)") }
    // The slot frames themselves are untouched.
    #expect(a[0, 0] == 0xFF00_0000 && b[0, 0] == 0xFFFF_FFFF)
}
