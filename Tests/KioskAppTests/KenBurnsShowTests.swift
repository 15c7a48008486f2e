// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskImaging
import KioskSystem
import Testing
@testable import KioskApp

// `--ken-burns` end to end: the real program on virtual time with the offscreen backend, every
// PNG frame read back (docs/carousel.md "Ken Burns").

/// A `width` x `height` PNG at `path`: a smooth gradient with a 16-pixel checker in blue, never
/// the magenta (FF00FF) the tests use as the background.
private func writeTexture(_ path: String, width: Int, height: Int) throws {
    let b = Bitmap(width: width, height: height)
    for y in 0..<height {
        for x in 0..<width {
            let r = UInt32(x * 255 / max(1, width - 1)), g = UInt32(60 + y * 140 / max(1, height - 1))
            let blue: UInt32 = (x / 16 + y / 16) % 2 == 0 ? 40 : 200
            b.row(y)[x] = 0xFF00_0000 | r << 16 | g << 8 | blue
        }
    }
    try PNGWriter.write(b, to: path)
}

private func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
    var sum = 0
    for i in 0..<a.pixelCount {
        let p = a.pixels[i], q = b.pixels[i]
        for shift: UInt32 in [0, 8, 16] { sum += abs(Int((p >> shift) & 0xFF) - Int((q >> shift) & 0xFF)) }
    }
    return Double(sum) / Double(a.pixelCount * 3)
}

/// A portrait and a panorama on a landscape screen: `fit` shows magenta bars beside and above
/// them; with `--ken-burns` no frame of the whole show has a single background pixel, the
/// picture moves on every frame by a little, and a frame is exactly the window the motion's
/// geometry gives at its time, resampled from the source the decode worker prepares.
@Test func kenBurnsFramesStayInThePictureAndMoveContinuously() throws {
    let dir = controlTestDirectory()
    let portrait = "\(dir)/portrait.png", panorama = "\(dir)/panorama.png"
    try writeTexture(portrait, width: 200, height: 400)
    try writeTexture(panorama, width: 900, height: 200)
    let magenta: UInt32 = 0xFFFF_00FF
    let common = ["--interval", "1", "--fade", "300", "--background", "ff00ff", "--run-for", "2.1", portrait, panorama]
    let plain = try runOffscreenShow(common)
    #expect(plain.contains { f in (0..<f.frame.pixelCount).contains { f.frame.pixels[$0] == magenta } },
            "fit letterboxes these pictures")
    let frames = try runOffscreenShow(["--ken-burns"] + common)
    #expect(frames.count > 100, "a frame per 1/60 s: \(frames.count)")
    for (ms, frame) in frames {
        let bars = (0..<frame.pixelCount).filter { frame.pixels[$0] == magenta }.count
        #expect(bars == 0, "\(bars) background pixels at \(ms) ms")
    }
    // The first picture stands from 0 to 700 ms: every frame moves, by a small step.
    let standing = frames.filter { $0.ms < 700 }
    let steps = zip(standing.dropFirst(), standing).map { meanDifference($0.frame, $1.frame) }
    #expect(steps.allSatisfy { $0 > 0 }, "moving on every frame")
    let whole = meanDifference(standing.first!.frame, standing.last!.frame)
    #expect(steps.max()! < 3 && whole > 4 * steps.max()!, "steps up to \(steps.max()!), over the stand \(whole)")
    // The frame at 500 ms (the 30th after the first, 1/60 s apart: 30 x 16,666,667 ns) is the
    // window of the portrait's motion at that time over its 1300 ms (its interval and one fade).
    let preparer = try SlotPreparer(width: 160, height: 100, fit: .fit, background: RGBColor(hex: "ff00ff")!,
                                    maxPixels: 1 << 20)
    preparer.kenBurns = true
    guard case .frame(let source) = preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: portrait)).outcome else {
        throw ControlTestFailure("the portrait did not prepare")
    }
    #expect(source.width == 184 && source.height == 150, "\(source.width)x\(source.height)")
    let window = KenBurns.window(seed: KenBurns.seed(source: portrait), progress: Double(30 * 16_666_667) / 1.3e9,
                                 sourceWidth: source.width, sourceHeight: source.height,
                                 screenWidth: 160, screenHeight: 100)
    let view = Bitmap(width: 160, height: 100)
    Compositor.resampleBilinear(source, window: window, into: view, rows: nil)
    let at500 = try #require(frames.first { $0.ms == 500 }?.frame)
    #expect(same(at500, view))
}

/// The memory check: a 4K Ken Burns show does not fit the unit's 256 MiB, a 1080p one does; no
/// limit, any fits. The limit is read from the cgroup files as the kernel lays them out.
@Test func aKenBurnsShowIsRefusedWhereItWouldNotFitTheMemoryLimit() throws {
    let limit = 256 << 20
    let k = KioskApp.kenBurnsVerdict(sizes: [FrameSize(width: 3840, height: 2160)], limit: limit)
    #expect(!k.fits && k.line?.contains("3840x2160 show needs about") == true && k.line?.contains("256 MiB") == true)
    #expect(KioskApp.kenBurnsVerdict(sizes: [FrameSize(width: 1920, height: 1080)], limit: limit).fits)
    #expect(KioskApp.kenBurnsVerdict(sizes: [FrameSize(width: 3840, height: 2160)], limit: nil).fits)
    let dir = controlTestDirectory()
    try FileManager.default.createDirectory(atPath: "\(dir)/root/system.slice/kiosk-carousel.service",
                                            withIntermediateDirectories: true)
    try "0::/system.slice/kiosk-carousel.service\n".write(toFile: "\(dir)/cgroup", atomically: true, encoding: .utf8)
    try "268435456\n".write(toFile: "\(dir)/root/system.slice/kiosk-carousel.service/memory.max", atomically: true,
                            encoding: .utf8)
    #expect(MemoryLimit.cgroupMax(root: "\(dir)/root", selfCgroup: "\(dir)/cgroup") == limit)
    try "max\n".write(toFile: "\(dir)/root/system.slice/kiosk-carousel.service/memory.max", atomically: true,
                      encoding: .utf8)
    #expect(MemoryLimit.cgroupMax(root: "\(dir)/root", selfCgroup: "\(dir)/cgroup") == nil)
}
