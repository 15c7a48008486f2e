// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing
@testable import KioskApp

// `--transition slide|cut` and a manifest item's `transition`, end to end: the real program on
// virtual time with the offscreen backend, its PNG frames read back and compared with each
// picture fitted alone (docs/carousel.md "Transitions").

/// The frames a show wrote, by show time in milliseconds (the names `frame-MS.png`), in order.
func showFrames(_ directory: String) throws -> [(ms: Int, frame: Bitmap)] {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        .filter { $0.hasPrefix("frame-") && $0.hasSuffix(".png") }.sorted()
    return try names.map { name in
        let ms = Int(name.dropFirst(6).dropLast(4))!
        return (ms, try ImageDecoder.decode(path: "\(directory)/\(name)").bitmap)
    }
}

/// The frame the show's decode worker makes of the photo at `path` at `width` x `height`
/// (fitted, letterboxed on black): the picture shown alone.
func fitted(_ path: String, _ width: Int, _ height: Int) throws -> Bitmap {
    let preparer = try SlotPreparer(width: width, height: height, fit: .fit, background: .black, maxPixels: 100_000_000)
    guard case .frame(let frame) = preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path)).outcome else {
        throw ControlTestFailure("\(path) did not prepare")
    }
    return frame
}

/// Runs the program offscreen at `width` x `height` with `arguments`, to its end; the frames.
func runOffscreenShow(_ arguments: [String], width: Int = 160, height: Int = 100) throws -> [(ms: Int, frame: Bitmap)] {
    let dir = controlTestDirectory()
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "\(width)x\(height)"]
                               + arguments.map { $0.replacingOccurrences(of: "{dir}", with: dir) })
    #expect(waitFor(60) { !child.process.isRunning }, "the show did not end")
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
    return try showFrames("\(dir)/frames")
}

/// The offset `o` (1 ..< width) for which `frame` is `picture` moved `o` pixels to the left with
/// `next` beside it on the right, pixel for pixel (no blended pixel anywhere), or nil.
func slideOffset(_ frame: Bitmap, picture: Bitmap, next: Bitmap) -> Int? {
    let w = frame.width
    return (1..<w).first { o in
        (0..<frame.height).allSatisfy { y in
            (0..<w).allSatisfy { x in frame[x, y] == (x < w - o ? picture[x + o, y] : next[x - (w - o), y]) }
        }
    }
}

/// Mid-slide frames hold both pictures side by side, each column exactly one picture's as it is
/// fitted alone; the next comes in from the right, further on each frame, eased (slow at both ends).
@Test func aSlideHoldsBothPicturesSideBySideWithNoBlend() throws {
    let a = controlTestPhotos[0], b = controlTestPhotos[1]
    let frames = try runOffscreenShow(["--interval", "1", "--fade", "500", "--transition", "slide",
                                       "--run-for", "1.2", a, b])
    let first = try #require(frames.first { $0.ms == 0 }?.frame)
    let second = try #require(frames.first { $0.ms == 1000 }?.frame)
    let fa = try fitted(a, 160, 100), fb = try fitted(b, 160, 100)
    #expect(same(first, fa) && same(second, fb))
    let moving = frames.filter { $0.ms > 500 && $0.ms < 1000 }
    #expect(moving.count >= 20, "a frame per 1/60 s over the 500 ms: \(moving.count)")
    var offsets: [Int] = []
    for (ms, frame) in moving {
        let o = slideOffset(frame, picture: first, next: second)
        #expect(o != nil, "frame at \(ms) ms is not the two pictures side by side")
        offsets.append(o ?? 0)
    }
    #expect(offsets == offsets.sorted() && Set(offsets).count == offsets.count, "moving on: \(offsets)")
    // Half-way (750 ms) it is exactly half-way; the steps are smaller at the ends than in the middle.
    #expect(moving.first { $0.ms == 750 }.flatMap { slideOffset($0.frame, picture: first, next: second) } == 80)
    let steps = zip(offsets.dropFirst(), offsets).map { $0 - $1 }
    #expect(steps.first! < steps[steps.count / 2] && steps.last! < steps[steps.count / 2], "eased: \(steps)")
}

/// `--transition cut`: no frame between the two pictures, and `shown` one interval apart as with a fade.
@Test func aCutHasNoFrameBetweenThePictures() throws {
    let a = controlTestPhotos[0], b = controlTestPhotos[1]
    let frames = try runOffscreenShow(["--interval", "1", "--fade", "500", "--transition", "cut",
                                       "--run-for", "2.2", a, b])
    #expect(frames.map(\.ms) == [0, 1000, 2000], "\(frames.map(\.ms))")
    let fa = try fitted(a, 160, 100), fb = try fitted(b, 160, 100)
    #expect(frames.count == 3 && same(frames[0].frame, fa) && same(frames[1].frame, fb))
}

/// A `.json` playlist's items set their own transition over `--transition fade`: a slide to the
/// second (its frames side by side), a cut to the third (no frame between), the show's fade back
/// to the first (a frame half-way is the blend of the two).
@Test func aManifestItemsTransitionTakesEffect() throws {
    let a = controlTestPhotos[0], b = controlTestPhotos[1], c = controlTestPhotos[2]
    let dir = controlTestDirectory()
    try #"{"items":[{"src":"\#(a)"},{"src":"\#(b)","transition":"slide"},{"src":"\#(c)","transition":"cut"}]}"#
        .write(toFile: "\(dir)/show.json", atomically: true, encoding: .utf8)
    let frames = try runOffscreenShow(["--interval", "1", "--fade", "500", "--run-for", "3.2", "\(dir)/show.json"])
    let fa = try fitted(a, 160, 100), fb = try fitted(b, 160, 100), fc = try fitted(c, 160, 100)
    let slide = frames.filter { $0.ms > 500 && $0.ms < 1000 }
    #expect(!slide.isEmpty && slide.allSatisfy { slideOffset($0.frame, picture: fa, next: fb) != nil })
    #expect(frames.filter { $0.ms > 1000 && $0.ms < 2000 }.isEmpty, "a cut to the third")
    #expect(frames.contains { $0.ms == 2000 && same($0.frame, fc) })
    let half = try #require(frames.first { $0.ms == 2750 }?.frame, "the fade back half-way")
    let blend = Bitmap(width: 160, height: 100)
    Compositor.blend(fc, fa, weight: 128, into: blend)
    #expect(same(half, blend))
}
