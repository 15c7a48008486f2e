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

    /// An AVIF image sequence shows its first frame (libheif 1.15 has no sequence API) and says
    /// so once per file.
    @Test func avifSequenceShowsItsFirstFrameAndSaysSoOnce() throws {
        let path = NSTemporaryDirectory() + "kc-sequence-\(UUID().uuidString).avif"
        try FileManager.default.copyItem(atPath: Fixtures.path("animations", "sequence.avif"), toPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let frame = Bitmap(width: 64, height: 64)
        let first = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: Self.background)
        #expect(first.warnings.count == 1 && first.warnings[0].hasPrefix("an animated AVIF shows its first frame"),
                "\(first.warnings)")
        let (r, g, b) = ((frame[32, 32] >> 16) & 0xFF, (frame[32, 32] >> 8) & 0xFF, frame[32, 32] & 0xFF)
        #expect(r > 240 && g < 16 && b < 16, "lossy red: \(r) \(g) \(b)")
        let again = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: Self.background)
        #expect(again.warnings.isEmpty && !again.animated)
        #expect(try AnimationDecoder.open(path: path) == nil)
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
