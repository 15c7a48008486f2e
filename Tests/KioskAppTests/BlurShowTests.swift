// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing

/// `"fit": "blur"` on one item of a local `.json` playlist, end to end: the real program, the
/// offscreen backend. The item's letterbox is filled (not the background colour), its picture
/// is the `fit` frame's exactly; the other item keeps the show's `fit`.
@Test func aPlaylistItemWithFitBlurFillsItsLetterboxWithItself() throws {
    let photo = controlTestPhotos[0], other = controlTestPhotos[2]
    func firstFrame(_ fit: String) throws -> Bitmap {
        let dir = controlTestDirectory()
        let playlist = "\(dir)/show.json"
        try #"{"items":[{"src":"\#(photo)","fit":"\#(fit)"},{"src":"\#(other)"}]}"#
            .write(toFile: playlist, atomically: true, encoding: .utf8)
        let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "120x200", "--fade", "0",
                                    "--interval", "1", "--run-for", "1.5", playlist])
        #expect(waitFor(30) { !child.process.isRunning }, "the show did not end")
        #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
        return try ImageDecoder.decode(path: "\(dir)/frames/frame-00000000.png").bitmap
    }
    let blurred = try firstFrame("blur"), fitted = try firstFrame("fit")
    // 1920x1200 into 120x200: 120x75 at y = 62, letterboxed above and below.
    let rect = FitMode.fit.placement(imageWidth: 1920, imageHeight: 1200, frameWidth: 120, frameHeight: 200)
    #expect(rect == PixelRect(x: 0, y: 62, width: 120, height: 75))
    var letterbox = 0, black = 0
    for y in 0..<200 {
        for x in 0..<120 {
            if (rect.y..<rect.y + rect.height).contains(y) {
                #expect(blurred[x, y] == fitted[x, y], "(\(x), \(y))")
            } else {
                letterbox += 1
                if blurred[x, y] & 0xFF_FFFF == 0 { black += 1 }
                #expect(fitted[x, y] & 0xFF_FFFF == 0, "the fit frame's bar is the background (\(x), \(y))")
            }
        }
    }
    #expect(letterbox == 120 * 125 && black == 0, "\(black) of \(letterbox) letterbox pixels are black")
}
