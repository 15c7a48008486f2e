// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskImaging
@testable import KioskApp
import Testing

/// Animations played in their slot by the real frame loop, decoder and offscreen display on
/// virtual time (Tests/Fixtures/animations, made by gifsicle, img2webp and avifenc: README.md there):
/// each frame reaches the screen at its exact show time, the fade shows the current frame.
@Suite struct AnimationPlaybackTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/animations").path

    /// A show of `items` on a `size` x `size` offscreen display for `seconds`: the frames written,
    /// by show time (ms), decoded.
    static func run(_ items: [PlaylistItem], size: Int = 16, seconds: Int, interval: Duration = .seconds(60),
                    fade: Duration = .zero, directory: String) throws -> [(Int, Bitmap)] {
        let display = try OffscreenDisplay(directory: directory + "/frames", width: size, height: size)
        let preparer = try SlotPreparer(width: size, height: size, fit: .fit, background: .black, maxPixels: 1 << 22)
        let null = open("/dev/null", O_WRONLY)
        defer { close(null) }
        let configuration = FrameLoop.Configuration(events: EventWriter(descriptor: null),
                                                    runFor: .seconds(seconds))
        let loop = FrameLoop(display: display, driver: VirtualTimeDriver(),
                             carousel: Carousel(items: items, config: CarouselConfig(interval: interval, fade: fade)),
                             preparer: preparer, configuration: configuration)
        _ = try loop.run()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory + "/frames").sorted()
        return try names.filter { $0.hasPrefix("frame-") }.map { name in
            let time = Int(name.dropFirst(6).dropLast(4))!
            return (time, try ImageDecoder.decode(path: directory + "/frames/" + name).bitmap)
        }
    }

    static func rgb(_ p: UInt32) -> UInt32 { p & 0xFF_FFFF }

    /// disposal.gif (frames of 100, 200, 100 (a delay of 0) and 300 ms, looping) on a 16x16
    /// screen: a frame at each of its times, each with its disposal's pixels.
    @Test func gifFramesReachTheScreenAtTheirDelays() throws {
        let directory = frameTestDirectory("anim-gif")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let frames = try Self.run([PlaylistItem(source: Self.folder + "/disposal.gif")], seconds: 2,
                                  directory: directory)
        #expect(frames.map(\.0) == [0, 100, 300, 400, 700, 800, 1000, 1100, 1400, 1500, 1700, 1800])
        for (index, (time, frame)) in frames.enumerated() {
            // The centres of the quadrants (2x enlarged) and of the yellow square.
            let topLeft = Self.rgb(frame[3, 3]), bottomRight = Self.rgb(frame[12, 12])
            let topRight = Self.rgb(frame[14, 1])
            let want: (UInt32, UInt32, UInt32)
            switch index % 4 {
            case 0: want = (0xFF0000, 0xFF0000, 0xFF0000)
            case 1: want = (0x00FF00, 0xFF0000, 0xFF0000)
            case 2: want = (0x000000, 0x0000FF, 0xFF0000)
            default: want = (0x000000, 0xFF0000, 0xFFFF00)
            }
            #expect(topLeft == want.0 && bottomRight == want.1 && topRight == want.2,
                    "frame at \(time) ms: \([topLeft, bottomRight, topRight].map { String($0, radix: 16) })")
        }
    }

    /// rgb.webp (red 100 ms, green 250, blue 50, looping) plays through libwebp's animation decoder.
    @Test func webpFramesReachTheScreenAtTheirDurations() throws {
        let directory = frameTestDirectory("anim-webp")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let frames = try Self.run([PlaylistItem(source: Self.folder + "/rgb.webp")], seconds: 1, directory: directory)
        #expect(frames.map(\.0) == [0, 100, 350, 400, 500, 750, 800, 900])
        #expect(frames.map { Self.rgb($0.1[8, 8]) } == [0xFF0000, 0x00FF00, 0x0000FF, 0xFF0000, 0x00FF00, 0x0000FF,
                                                           0xFF0000, 0x00FF00])
    }

    /// sequence.avif (red, green, blue, 100 ms each, looping) plays through libavif: a frame every
    /// 100 ms, each of its colour (lossy AV1: near the pure colours).
    @Test func avifSequenceFramesReachTheScreenAtTheirDurations() throws {
        let directory = frameTestDirectory("anim-avif")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let frames = try Self.run([PlaylistItem(source: Self.folder + "/sequence.avif")], seconds: 1,
                                  directory: directory)
        #expect(frames.map(\.0) == [0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000])
        let dominant = frames.map { f -> Int in
            let p = f.1[8, 8]
            let c = [(p >> 16) & 0xFF, (p >> 8) & 0xFF, p & 0xFF]
            return c.firstIndex(of: c.max()!)!
        }
        #expect(dominant == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1], "red 0, green 1, blue 2")
    }

    /// A one-frame animated WebP is a still: one frame, red.
    @Test func oneFrameAnimatedWebPIsShownAsAStill() throws {
        let directory = frameTestDirectory("anim-one")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let frames = try Self.run([PlaylistItem(source: Self.folder + "/one-frame.webp")], seconds: 2,
                                  directory: directory)
        #expect(frames.map(\.0) == [0])
        #expect(frames.first.map { Self.rgb($0.1[8, 8]) } == 0xFF0000)
    }

    /// The fades out of and into an animation show its current frame. Interval 1 s with a fade
    /// of 400 ms: the fade to the still (green) runs from 600 to 1000 ms, over frame 3 (top left
    /// transparent: black), frame 0 from 700 ms (red), frame 1 from 800 ms (green); the animation
    /// stands still off screen and goes on in the fade back from 1600 ms: frame 2 (bottom right
    /// blue), frame 3 from 1700 ms (red there), frame 0 at 2000 ms.
    @Test func theFadesShowTheCurrentFrame() throws {
        let directory = frameTestDirectory("anim-fade")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let still = directory + "/green.png"
        try PNGWriter.write(Bitmap(width: 16, height: 16, fill: 0xFF00_FF00), to: still)
        let frames = try Self.run([PlaylistItem(source: Self.folder + "/disposal.gif"), PlaylistItem(source: still)],
                                  seconds: 2, interval: .milliseconds(1000), fade: .milliseconds(400),
                                  directory: directory)
        func channels(_ p: UInt32) -> (Int, Int, Int) { (Int(p >> 16) & 0xFF, Int(p >> 8) & 0xFF, Int(p & 0xFF)) }
        let out = frames.filter { $0.0 > 600 && $0.0 < 1000 }, back = frames.filter { $0.0 > 1600 && $0.0 < 2000 }
        #expect(out.count > 10 && back.count > 10, "\(frames.map(\.0))")
        for (time, frame) in out {
            let (r, g, b) = channels(frame[3, 3])
            let right = time < 700 ? r == 0 && g > 0 && g < 255
                : time < 800 ? r > 0 && g > 0 : g == 255 && r == 0
            #expect(right && b == 0, "top left at \(time) ms: \(r) \(g) \(b)")
        }
        for (time, frame) in back {
            let (r, g, b) = channels(frame[12, 12])
            #expect(time < 1700 ? r == 0 && b > 0 && g > 0 : r > 0 && b == 0 && g > 0,
                    "bottom right at \(time) ms: \(r) \(g) \(b)")
        }
        #expect(frames.last.map { [$0.0, Int(Self.rgb($0.1[3, 3]))] } == [2000, 0xFF0000])
    }

    /// The animations playing share one decoder budget: each stream's bytes are counted while it
    /// lives and given back when it goes.
    @Test func animationsShareOneBudgetAndGiveItBack() throws {
        let preparer = try SlotPreparer(width: 160, height: 100, fit: .fit, background: .black, maxPixels: 1 << 22)
        let path = Self.folder + "/disposal.gif"
        var results = (0..<3).map { preparer.prepare(.init(slot: $0, ticket: $0 + 1, item: 0, path: path)) }
        let each = try #require(results[0].animation).heldBytes
        #expect(each >= 160 * 100 * 4 && results.allSatisfy { $0.animation != nil })
        #expect(preparer.animationBytes == 3 * each)
        results.removeAll()
        #expect(preparer.animationBytes == 0)
        let still = preparer.prepare(.init(slot: 0, ticket: 9, item: 0, path: Self.folder + "/one-frame.webp"))
        #expect(still.animation == nil && preparer.animationBytes == 0)
    }

    /// A GIF cut in its third frame's data: the first two frames play, the animation stops on the
    /// second (one log line), the show goes on to the next item.
    @Test func damageMidAnimationStopsItAndTheShowGoesOn() throws {
        let directory = frameTestDirectory("anim-cut")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.folder + "/disposal.gif"))
        let cut = directory + "/cut.gif", still = directory + "/green.png"
        try bytes.prefix(0x74).write(to: URL(fileURLWithPath: cut))
        try PNGWriter.write(Bitmap(width: 16, height: 16, fill: 0xFF00_FF00), to: still)
        let frames = try Self.run([PlaylistItem(source: cut), PlaylistItem(source: still)], seconds: 1,
                                  interval: .milliseconds(1000), directory: directory)
        #expect(frames.map(\.0) == [0, 100, 1000])
        #expect(frames.map { Self.rgb($0.1[3, 3]) } == [0xFF0000, 0x00FF00, 0x00FF00])
    }

    /// A GIF whose screen the still decoder admits (20 megapixels, 80 MB) but whose animation
    /// would hold it three times, past the budget: its first frame, and a warning saying why the
    /// rest does not play.
    @Test func anAnimationOverTheBudgetShowsItsFirstFrameAndSaysWhy() throws {
        let directory = frameTestDirectory("anim-budget")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.folder + "/disposal.gif")))
        bytes.replaceSubrange(6..<10, with: [0x88, 0x13, 0xA0, 0x0F])  // 5000x4000
        let path = directory + "/wide.gif"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let preparer = try SlotPreparer(width: 160, height: 100, fit: .fit, background: .black,
                                        maxPixels: 100_000_000)
        let result = preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path))
        guard case .frame = result.outcome else {
            Issue.record("no first frame: \(result.outcome)")
            return
        }
        #expect(result.animation == nil && preparer.animationBytes == 0)
        #expect(result.warnings.count == 1 && result.warnings[0].hasPrefix("the animation is not played")
                && result.warnings[0].contains("canvas"), "\(result.warnings)")
    }

    /// A warning is said once per version of its file: a show of an animation that cannot play
    /// and a still prepares the animation again at every turn (both neighbour slots, every
    /// pass; its first frame is not kept in the memory cache), and the log said "the animation
    /// is not played" each time.
    @Test func anImagesWarningIsSaidOncePerVersionOfItsFile() throws {
        let directory = frameTestDirectory("anim-warn-once")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.folder + "/disposal.gif")))
        bytes.replaceSubrange(6..<10, with: [0x88, 0x13, 0xA0, 0x0F])  // 5000x4000: over the budget
        let gif = directory + "/wide.gif", still = directory + "/green.png"
        try Data(bytes).write(to: URL(fileURLWithPath: gif))
        try PNGWriter.write(Bitmap(width: 16, height: 16, fill: 0xFF00_FF00), to: still)
        func run() throws -> [String] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: kioskExecutable())
            process.arguments = ["--display", "offscreen:" + directory + "/frames", "--size", "64x40", "--run-for", "8",
                                 "--interval", "1", "--fade", "0", gif, still]
            let err = Pipe()
            process.standardError = err
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text.split(separator: "\n").map(String.init).filter { $0.contains("animation is not played") }
        }
        let lines = try run()
        #expect(lines.count == 1 && lines[0].contains("wide.gif"), "\(lines)")
    }

    /// A second copy of an animation that plays in another slot (both neighbours of a two-item
    /// show hold the same file) and cannot fit beside it: its first frame, with no warning that
    /// "the animation is not played" (it is, in the other slot). A copy that fits plays too.
    @Test func aSecondCopyOfAPlayingAnimationSaysNothing() throws {
        let directory = frameTestDirectory("anim-second-copy")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.folder + "/disposal.gif")))
        bytes.replaceSubrange(6..<10, with: [0xAC, 0x0D, 0xAC, 0x0D])  // 3500x3500: over half the budget
        let path = directory + "/big.gif"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let preparer = try SlotPreparer(width: 160, height: 100, fit: .fit, background: .black,
                                        maxPixels: 100_000_000)
        var first = preparer.prepare(.init(slot: 1, ticket: 1, item: 0, path: path))
        #expect(first.animation != nil && first.warnings.isEmpty, "\(first.warnings)")
        let held = preparer.animationBytes
        #expect(held > DecodeOptions.defaultMaxDecoderBytes / 2, "\(held)")
        let second = preparer.prepare(.init(slot: 2, ticket: 2, item: 0, path: path))
        guard case .frame = second.outcome else {
            Issue.record("no first frame: \(second.outcome)")
            return
        }
        #expect(second.animation == nil && second.warnings.isEmpty, "\(second.warnings)")
        #expect(preparer.animationBytes == held)
        // Another file over what is left still says why.
        let other = directory + "/other.gif"
        try Data(bytes).write(to: URL(fileURLWithPath: other))
        let third = preparer.prepare(.init(slot: 0, ticket: 3, item: 1, path: other))
        #expect(third.animation == nil && third.warnings.first?.hasPrefix("the animation is not played") == true,
                "\(third.warnings)")
        // The playing copy released: the same file plays again.
        first.animation = nil
        #expect(preparer.animationBytes == 0)
        let again = preparer.prepare(.init(slot: 2, ticket: 4, item: 0, path: path))
        #expect(again.animation != nil, "\(again.warnings)")
    }
}
