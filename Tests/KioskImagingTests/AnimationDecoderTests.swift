// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
@testable import KioskImaging
import Testing

/// Animated GIF and WebP (Tests/Fixtures/animations, made by gifsicle, img2webp and cwebp:
/// README.md there): frames composed with their disposal, their durations, the limits.
@Suite struct AnimationDecoderTests {
    static let background = RGBColor(red: 10, green: 20, blue: 30)
    static let red: UInt32 = 0xFFFF_0000, green: UInt32 = 0xFF00_FF00, blue: UInt32 = 0xFF00_00FF
    static let yellow: UInt32 = 0xFFFF_FF00
    static var bg: UInt32 { background.xrgb }

    /// Every frame of `decoder` placed 1:1 into a frame of its canvas's size, with its duration,
    /// up to `count` frames.
    static func frames(_ decoder: AnimationDecoder, _ count: Int) throws -> [(Bitmap, Int, Bool)] {
        var out: [(Bitmap, Int, Bool)] = []
        for _ in 0..<count {
            let frame = Bitmap(width: decoder.canvasWidth, height: decoder.canvasHeight)
            guard let (ms, newPass) = try decoder.placeNext(into: frame, fit: .fit, background: background) else {
                break
            }
            out.append((frame, ms, newPass))
        }
        return out
    }

    /// The pixel at `x`, `y` of each canvas the fixture's four frames make (README.md): red,
    /// then a green quadrant, cleared by disposal method 2, then a blue one restored by method 3.
    static func expectedDisposal(_ index: Int, _ x: Int, _ y: Int) -> UInt32 {
        let topLeft = x < 4 && y < 4, bottomRight = x >= 4 && y >= 4
        switch index {
        case 0: return red
        case 1: return topLeft ? green : red
        case 2: return topLeft ? bg : bottomRight ? blue : red
        default: return topLeft ? bg : (x >= 6 && y < 2) ? yellow : red
        }
    }

    @Test func gifDisposalMethodsAndDelays() throws {
        let path = Fixtures.path("animations", "disposal.gif")
        let decoder = try #require(try AnimationDecoder.open(path: path))
        #expect(decoder.canvasWidth == 8 && decoder.canvasHeight == 8 && decoder.loopCount == 0)
        let frames = try Self.frames(decoder, 6)
        #expect(frames.map(\.1) == [100, 200, 100, 300, 100, 200], "delays in ms; 0 cs is 100 ms")
        #expect(frames.map(\.2) == [false, false, false, false, true, false], "the fifth frame starts a pass")
        for (i, (frame, _, _)) in frames.enumerated() {
            for y in 0..<8 {
                for x in 0..<8 where frame[x, y] != Self.expectedDisposal(i % 4, x, y) {
                    Issue.record("frame \(i) at \(x),\(y): \(String(frame[x, y], radix: 16))")
                }
            }
        }
    }

    /// The still decoder's first frame of an animated GIF is the animation's first frame, and it
    /// says the file is animated (no warning: it plays).
    @Test func gifFirstFrameIsTheStillPathsFrame() throws {
        let path = Fixtures.path("animations", "disposal.gif")
        let still = Bitmap(width: 8, height: 8)
        let fitted = try ImageDecoder.decodeFitted(path: path, into: still, fit: .fit, background: Self.background)
        #expect(fitted.animated && fitted.warnings.isEmpty)
        let first = try Self.frames(try #require(try AnimationDecoder.open(path: path)), 1)[0].0
        #expect((0..<64).allSatisfy { still.pixels[$0] == first.pixels[$0] })
    }

    /// A frame larger than the screen is clipped, one wholly off it draws nothing; delays of 5
    /// and 1 cs are 50 and 100 ms; with no loop extension it plays once.
    @Test func gifFramesOffTheScreenAndPlayedOnce() throws {
        let decoder = try #require(try AnimationDecoder.open(path: Fixtures.path("animations", "offscreen.gif")))
        #expect(decoder.canvasWidth == 4 && decoder.canvasHeight == 4 && decoder.loopCount == 1)
        let frames = try Self.frames(decoder, 5)
        #expect(frames.map(\.1) == [50, 100])
        #expect(frames.allSatisfy { f in (0..<16).allSatisfy { f.0.pixels[$0] == Self.red } })
    }

    @Test func webpFramesAndDurations() throws {
        let decoder = try #require(try AnimationDecoder.open(path: Fixtures.path("animations", "rgb.webp")))
        #expect(decoder.canvasWidth == 16 && decoder.frameCount == 3 && decoder.loopCount == 0)
        let frames = try Self.frames(decoder, 4)
        #expect(frames.map(\.1) == [100, 250, 50, 100])
        #expect(frames.map { $0.0[5, 5] } == [Self.red, Self.green, Self.blue, Self.red])
        #expect(frames.map(\.2) == [false, false, false, true])
    }

    /// The first frame of an animated WebP is shown (it was refused), and it is marked animated.
    @Test func animatedWebPShowsItsFirstFrame() throws {
        let frame = Bitmap(width: 32, height: 32)
        let fitted = try ImageDecoder.decodeFitted(path: Fixtures.path("animations", "rgb.webp"), into: frame,
                                                   fit: .fit, background: Self.background)
        #expect(fitted.animated && fitted.format == .webp)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == Self.red })
    }

    /// A one-frame "animated" WebP is a still: shown, not animated, no animation decoder.
    @Test func oneFrameAnimatedWebPIsAStill() throws {
        let path = Fixtures.path("animations", "one-frame.webp")
        let frame = Bitmap(width: 16, height: 16)
        let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: Self.background)
        #expect(!fitted.animated)
        #expect((0..<frame.pixelCount).allSatisfy { frame.pixels[$0] == Self.red })
        #expect(try AnimationDecoder.open(path: path) == nil)
        let whole = try ImageDecoder.decode(path: path)
        #expect(whole.bitmap.width == 16 && whole.bitmap.pixels[0] == Self.red)
    }

    /// Stills are not animations.
    @Test func stillsOpenNoAnimation() throws {
        let gif = Bitmap(width: 8, height: 8)
        _ = try ImageDecoder.decodeFitted(path: Fixtures.path("animations", "disposal.gif"), into: gif, fit: .fit,
                                          background: Self.background)
        #expect(try AnimationDecoder.open(path: Fixtures.path("pngsuite", "basn2c08.png")) == nil)
    }

    /// The disposal GIF's frames repeated `count` times (its four frame records between the
    /// header with its loop extension and the trailer).
    static func longGIF(frames count: Int) throws -> [UInt8] {
        let bytes = try Fixtures.bytes("animations", "disposal.gif")
        let gce: [UInt8] = [0x21, 0xF9, 0x04]
        let start = try #require(bytes.firstRange(of: gce)).lowerBound
        let body = Array(bytes[start..<(bytes.count - 1)])
        var out = Array(bytes[..<start])
        for _ in 0..<(count / 4) { out += body }
        return out + [0x3B]
    }

    /// 80,000 frames: played within a fixed memory (the canvas), a pass cut at 65535 frames.
    @Test func thousandsOfGIFFramesPlayInFixedMemory() throws {
        let bytes = try Self.longGIF(frames: 80_000)
        try bytes.withUnsafeBytes { buffer in
            let decoder = try #require(try AnimationDecoder.open(bytes: buffer, name: "long.gif",
                                                                 options: DecodeOptions()))
            #expect(decoder.heldBytes < 1 << 20)
            let frame = Bitmap(width: 8, height: 8)
            var passes = 0
            for _ in 0..<(AnimationDecoder.maxFrames + 10) {
                let next = try #require(try decoder.placeNext(into: frame, fit: .fit, background: Self.background))
                if next.newPass { passes += 1 }
            }
            #expect(passes == 1 && decoder.frameIndex == 9)
        }
    }

    /// A WebP of more than 65535 frames is refused naming the file and the count.
    @Test func webpOfTooManyFramesIsRefused() throws {
        let bytes = try Fixtures.bytes("animations", "rgb.webp")
        // The ANMF chunks start after VP8X (18 bytes) and ANIM (14): the first repeated.
        let first = 12 + 18 + 14
        let size = 8 + Int(bytes[first + 4]) | Int(bytes[first + 5]) << 8
        let anmf = Array(bytes[first..<(first + size + (size & 1))])
        var out = Array(bytes[..<first])
        for _ in 0..<70_000 { out += anmf }
        let riff = out.count - 8
        out.replaceSubrange(4..<8, with: (0..<4).map { UInt8(truncatingIfNeeded: riff >> (8 * $0)) })
        let error = out.withUnsafeBytes { buffer in
            Result { () throws(ImageError) in try AnimationDecoder.open(bytes: buffer, name: "many.webp",
                                                                         options: DecodeOptions()) }.failure
        }
        guard case .unsupported(let path, let reason) = error else {
            Issue.record("70,000 frames gave \(String(describing: error))")
            return
        }
        #expect(path == "many.webp" && reason.contains("70000 ANMF"), "\(reason)")
    }

    /// A GIF screen whose canvas and its copies pass the budget is refused from its header.
    @Test func hugeCanvasIsRefusedFromTheHeader() throws {
        var bytes = try Fixtures.bytes("animations", "disposal.gif")
        bytes.replaceSubrange(6..<10, with: [0x40, 0x1F, 0x40, 0x1F])  // 8000x8000
        let error = bytes.withUnsafeBytes { buffer in
            Result { () throws(ImageError) in try AnimationDecoder.open(bytes: buffer, name: "huge.gif",
                                                                         options: DecodeOptions()) }.failure
        }
        guard case .overMemoryBudget(let path, _, _, let reason) = error else {
            Issue.record("an 8000x8000 screen gave \(String(describing: error))")
            return
        }
        #expect(path == "huge.gif" && reason.contains("canvas"), "\(reason)")
    }

    /// An AVIF image sequence plays through libavif: the still decoder's first frame (libheif's
    /// primary image) says it is animated, with no note; the frames come red, green, blue at the
    /// track's 100 ms, and the sequence starts again (libavif 0.11 gives no loop count: forever).
    @Test func avifSequencePlaysItsFrames() throws {
        let path = Fixtures.path("animations", "sequence.avif")
        let frame = Bitmap(width: 64, height: 64)
        let first = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: Self.background)
        #expect(first.warnings.isEmpty && first.animated, "\(first.warnings)")
        let decoder = try #require(try AnimationDecoder.open(path: path))
        #expect(decoder.format == .avif && decoder.canvasWidth == 64 && decoder.canvasHeight == 64)
        #expect(decoder.frameCount == 3 && decoder.loopCount == 0)
        let frames = try Self.frames(decoder, 4)
        #expect(frames.map(\.1) == [100, 100, 100, 100])
        #expect(frames.map(\.2) == [false, false, false, true], "the fourth frame starts a pass")
        let channels = frames.map { f in
            let p = f.0[32, 32]
            return [Int((p >> 16) & 0xFF), Int((p >> 8) & 0xFF), Int(p & 0xFF)]
        }
        let expected = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 0]]
        for (got, want) in zip(channels, expected) {
            #expect(zip(got, want).allSatisfy { abs($0 - $1) <= 16 }, "lossy frame: \(got), wanted \(want)")
        }
    }

    /// A sequence's ICC profile is applied to every frame: Display P3 patches (the values of
    /// Tests/Fixtures/cases/display-p3-patches.expected.json, Little CMS's perceptual intent)
    /// come out as the still PNG's do, the second frame mirrored.
    @Test func avifSequenceFramesAreColourManaged() throws {
        let path = Fixtures.path("animations", "p3-sequence.avif")
        let still = Bitmap(width: 192, height: 96)
        _ = try ImageDecoder.decodeFitted(path: Fixtures.path("cases", "display-p3-patches.png"), into: still,
                                          fit: .fit, background: Self.background)
        let decoder = try #require(try AnimationDecoder.open(path: path))
        let frames = try Self.frames(decoder, 2)
        #expect(frames.map(\.1) == [200, 200])
        try #require(frames.count == 2)
        var worst = 0
        for (y, x) in [(24, 32), (24, 96), (24, 160), (72, 32), (72, 96), (72, 160)] {
            let want = still[x, y]
            for (index, got) in [frames[0].0[x, y], frames[1].0[191 - x, y]].enumerated() {
                for shift in [16, 8, 0] {
                    let d = abs(Int((got >> UInt32(shift)) & 0xFF) - Int((want >> UInt32(shift)) & 0xFF))
                    worst = max(worst, d)
                    let what = "frame \(index) at \(x),\(y): \(String(got, radix: 16)) vs \(String(want, radix: 16))"
                    #expect(d <= 2, "\(what)")
                }
            }
        }
        // Not the stored values: the conversion changed them (P3 red 200,40,40 -> sRGB 218,0,26).
        let stored = try ImageDecoder.decode(path: Fixtures.path("cases", "display-p3-patches.png"),
                                             options: DecodeOptions(colour: .off))
        #expect(stored.bitmap[32, 24] != frames[0].0[32, 24], "the profile was applied (worst \(worst))")
    }

    /// A 10-bit PQ sequence is tone-mapped from its 16-bit samples as a still PQ AVIF is: its
    /// frames through libavif against its primary image (the same picture) through libheif.
    @Test func avifPQSequenceIsToneMappedAsItsStill() throws {
        let still = Bitmap(width: 128, height: 80)
        let first = try ImageDecoder.decodeFitted(path: Fixtures.path("animations", "pq-sequence.avif"), into: still,
                                                  fit: .fit, background: Self.background)
        #expect(first.animated)
        let decoder = try #require(try AnimationDecoder.open(path: Fixtures.path("animations", "pq-sequence.avif")))
        let frames = try Self.frames(decoder, 2)
        #expect(frames.map(\.1) == [500, 500])
        try #require(frames.count == 2)
        var worst = 0
        for y in Swift.stride(from: 2, to: 80, by: 7) {
            for x in Swift.stride(from: 2, to: 128, by: 7) {
                let got = frames[1].0[x, y], want = still[x, y]
                for shift: UInt32 in [16, 8, 0] {
                    worst = max(worst, abs(Int((got >> shift) & 0xFF) - Int((want >> shift) & 0xFF)))
                }
            }
        }
        #expect(worst <= 6, "largest difference from the tone-mapped still: \(worst)")
        let grey = still[64, 40] & 0xFF
        #expect(grey > 150, "the still is tone-mapped, not washed out (\(grey))")
    }

    /// The fuzzer's GIF whose pass ends at a damaged extension: once over, no frame comes again.
    @Test func anAnimationOverGivesNoFrameAgain() throws {
        let path = Fixtures.path("fuzz", "animation/frames-after-the-end.gif")
        let decoder = try #require(try AnimationDecoder.open(path: path))
        let frame = Bitmap(width: 8, height: 8)
        var played = 0
        while try decoder.placeNext(into: frame, fit: .fit, background: Self.background) != nil { played += 1 }
        #expect(played >= 1)
        #expect(try decoder.placeNext(into: frame, fit: .fit, background: Self.background) == nil)
    }

    /// A GIF cut in its third frame's data: two frames, then the damage named, then nothing.
    @Test func damageMidAnimationIsNamedAndEndsIt() throws {
        let bytes = Array(try Fixtures.bytes("animations", "disposal.gif").prefix(0x74))
        try bytes.withUnsafeBytes { buffer in
            let decoder = try #require(try AnimationDecoder.open(bytes: buffer, name: "cut.gif",
                                                                 options: DecodeOptions()))
            #expect(try Self.frames(decoder, 2).count == 2)
            let frame = Bitmap(width: 8, height: 8)
            let error = Result { () throws(ImageError) in
                try decoder.placeNext(into: frame, fit: .fit, background: Self.background)
            }.failure
            guard case .corrupt(let path, let reason) = error else {
                Issue.record("the cut frame gave \(String(describing: error))")
                return
            }
            #expect(path == "cut.gif" && reason.contains("truncated"), "\(reason)")
            #expect(try decoder.placeNext(into: frame, fit: .fit, background: Self.background) == nil)
        }
    }

    /// Firefox's rule for short delays.
    @Test func shortDelaysAreAHundredMilliseconds() {
        #expect([0, 1, 10, 11, 20, 655_350].map(AnimationDecoder.effectiveDuration) == [100, 100, 100, 11, 20, 655_350])
    }
}
