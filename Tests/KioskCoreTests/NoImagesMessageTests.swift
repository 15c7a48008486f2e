// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore

/// A painter that writes down what it was asked to draw and marks the frame with the text's
/// length, so that a frame drawn for one text differs from one drawn for another.
private final class RecordingPainter: TextPainter {
    var texts: [String] = []
    func drawMessage(_ text: String, into frame: Bitmap, color: RGBColor) {
        texts.append(text)
        frame.pixels[0] = UInt32(text.count)
    }
}

/// The "no images" screen says why: no images at all, or nothing in its schedule now; a change
/// of the words draws the screen again (the frame drawn once is kept otherwise).
@Test func theNoImagesScreenSaysWhetherNothingIsScheduled() {
    let painter = RecordingPainter()
    let renderer = SceneRenderer(width: 32, height: 20, background: .black, painter: painter)
    let empty = renderer.render(Scene(base: .noImages), slots: [])
    #expect(painter.texts == [SceneRenderer.noImagesText])
    #expect(empty.pixels[0] == UInt32(SceneRenderer.noImagesText.count))
    _ = renderer.render(Scene(base: .noImages), slots: [])
    #expect(painter.texts.count == 1, "kept, not drawn again")
    renderer.noImagesMessage = SceneRenderer.nothingScheduledText
    let unscheduled = renderer.render(Scene(base: .noImages), slots: [])
    #expect(painter.texts == [SceneRenderer.noImagesText, SceneRenderer.nothingScheduledText])
    #expect(unscheduled.pixels[0] == UInt32(SceneRenderer.nothingScheduledText.count))
}
