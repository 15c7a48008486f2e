// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskApp
import KioskCore
import KioskDisplay
import KioskImaging
import KioskSystem
import KioskText
import Testing

// FreeType, HarfBuzz and fontconfig load on a thread of their own: the frame loop goes on
// presenting frames while they load (its status screen without words, the photo without the
// clock) and draws the words once they are there. The load is held by the test (its loader
// waits until the first frame is presented) with the real libraries behind it, on the
// offscreen backend and the real clock (on the virtual clock the loop waits for the load, as
// for a decode).

/// A loader that holds the load until ``release()`` (or 30 s, so that a loop that waits for
/// it fails the test instead of hanging it).
private final class HeldLoad: @unchecked Sendable {
    private let gate = DispatchSemaphore(value: 0)
    /// Set when the gate was opened by ``release()`` (false: the load ran out of patience).
    let releasedInTime = Locked(false)

    func release() { gate.signal() }

    var loader: ShowText.Loader {
        { () throws(TextError) -> FontLibrary in
            let opened = self.gate.wait(timeout: .now() + 30) == .success
            self.releasedInTime.withLock { $0 = opened }
            return try FontLibrary()
        }
    }
}

/// The frames the offscreen display wrote, oldest first.
private func writtenFrames(_ directory: String) throws -> [Bitmap] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("frame-") }.sorted().map {
        try ImageDecoder.decode(path: directory + "/" + $0, options: DecodeOptions()).bitmap
    }
}

/// Runs a loop over `items` for `seconds` on the real clock with a held text load, released
/// when the first frame is presented. Returns the frames and whether the load was still held
/// when the first frame came.
private func runWithHeldText(items: [PlaylistItem], overlay: String?, seconds: Int64, directory: String)
    throws -> (frames: [Bitmap], heldAtFirstFrame: Bool) {
    let held = HeldLoad()
    let text = try ShowText(loader: held.loader)
    let null = open("/dev/null", O_WRONLY)
    defer { close(null) }
    var configuration = FrameLoop.Configuration(events: EventWriter(descriptor: null), runFor: .seconds(seconds))
    configuration.painter = text.loopPainter()
    configuration.text = text
    configuration.overlayFormat = overlay
    if overlay != nil { text.startLoading(frameWidth: 160, frameHeight: 100) }  // as the program does for --overlay
    let heldAtFirstFrame = Locked<Bool?>(nil)
    configuration.presented = { _, _ in
        heldAtFirstFrame.withLock { (first: inout Bool?) in
            guard first == nil else { return }
            first = !held.releasedInTime.withLock { $0 }
            held.release()
        }
    }
    let loop = FrameLoop(display: try OffscreenDisplay(directory: directory, width: 160, height: 100),
                         driver: RealTimeDriver(),
                         carousel: Carousel(items: items, config: CarouselConfig(interval: .seconds(60), fade: .zero)),
                         preparer: try SlotPreparer(width: 160, height: 100, fit: .fill, background: .black,
                                                    maxPixels: 1 << 24),
                         configuration: configuration)
    _ = try loop.run()
    return (try writtenFrames(directory),
            heldAtFirstFrame.withLock { $0 } == true && held.releasedInTime.withLock { $0 })
}

@Test func theStatusScreenIsPresentedWhileTheWordsLoadAndDrawnAgainWithThem() throws {
    let dir = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let run = try runWithHeldText(items: [], overlay: nil, seconds: 6, directory: dir + "/frames")
    #expect(run.heldAtFirstFrame, "the first frame waited for the text load")
    try #require(run.frames.count == 2, "\(run.frames.count) frames: one without words, one with")
    // The first: the background alone. The second: exactly the screen as the painter draws it.
    #expect((0..<run.frames[0].pixelCount).allSatisfy { run.frames[0].pixels[$0] & 0xFF_FFFF == 0 })
    let screen = Bitmap(width: 160, height: 100)
    Compositor.drawMessage(into: screen, SceneRenderer.noImagesText, background: .black,
                           painter: try ShowText().messagePainter())
    let words = (0..<screen.pixelCount).filter { screen.pixels[$0] & 0xFF_FFFF != 0 }.count
    #expect(words > 100, "the screen has words: \(words) pixels")
    #expect((0..<screen.pixelCount).allSatisfy {
        run.frames[1].pixels[$0] & 0xFF_FFFF == screen.pixels[$0] & 0xFF_FFFF
    })
}

@Test func thePhotoIsPresentedWhileTheClockLoadsAndTheClockComesAfter() throws {
    let dir = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let red = dir + "/red.png"
    try PNGWriter.write(Bitmap(width: 64, height: 40, fill: 0xFFFF_0000), to: red)
    let run = try runWithHeldText(items: [PlaylistItem(source: red)], overlay: "%H:%M", seconds: 6,
                                  directory: dir + "/frames")
    #expect(run.heldAtFirstFrame, "the first frame waited for the text load")
    try #require(run.frames.count >= 2, "\(run.frames.count) frames: the photo, then the photo with the clock")
    // The photo alone first; then the clock (white and dark pixels) in the top right corner.
    #expect((0..<run.frames[0].pixelCount).allSatisfy { run.frames[0].pixels[$0] & 0xFF_FFFF == 0xFF_0000 })
    let last = run.frames[run.frames.count - 1]
    let clockPixels = (0..<last.pixelCount).filter { last.pixels[$0] & 0xFF_FFFF != 0xFF_0000 }
    #expect(clockPixels.count > 50, "the clock was drawn: \(clockPixels.count) pixels")
    #expect(clockPixels.allSatisfy { $0 % 160 >= 80 && $0 / 160 < 50 }, "in the top right quarter")
}
