// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
import KioskSystem
@testable import KioskApp

// A display that comes back at another size (another monitor, simpledrm handing over to the
// real driver): the real frame loop, decoder, renderer and carousel on virtual time, with a
// test display standing in for the DRM card (ReconnectingDisplay, as ReopeningDRMDisplay is).

/// Goes away and comes back at set show times, at the sizes given; keeps a copy of every frame.
private final class ResizingDisplay: ReconnectingDisplay {
    private(set) var width: Int, height: Int
    var panelWidth: Int { width }
    var panelHeight: Int { height }
    var summary: String { "test display \(width)x\(height)" }
    var pacesFrames: Bool { false }
    var isLost = false
    var wakeDescriptor: Int32? { nil }
    var retryAt: Duration? { script.first?.at }
    /// nil: lost at that time; a size: back at it.
    private var script: [(at: Duration, size: (width: Int, height: Int)?)]
    /// Every frame presented, with its show time in ms.
    private(set) var frames: [(at: Int64, frame: Bitmap)] = []
    /// Frames whose size was not the display's.
    private(set) var wrongSize: [String] = []

    init(width: Int, height: Int, script: [(at: Duration, size: (width: Int, height: Int)?)]) {
        self.width = width; self.height = height; self.script = script
    }
    func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        if frame.width != width || frame.height != height {
            wrongSize.append("\(frame.width)x\(frame.height) on \(width)x\(height)")
        }
        if !isLost { frames.append((showTime, frame.copy())) }
    }
    func restore() {}
    func service(now: Duration) throws(DisplayError) -> [DisplayChange] {
        var changes: [DisplayChange] = []
        while let first = script.first, first.at <= now {
            script.removeFirst()
            if let size = first.size {
                (width, height) = size
                isLost = false
                changes.append(.reopened(summary: summary))
            } else {
                isLost = true
                changes.append(.lost(reason: "test: unplugged"))
            }
        }
        return changes
    }
}

/// A feed with no touches that remembers the panel sizes it is told.
private final class PanelFeed: TouchFeed {
    var wakeDescriptor: Int32 { -1 }
    var panels: [String] = []
    func take() -> [TouchFeedEvent] { [] }
    func setPanelSize(width: Int, height: Int) { panels.append("\(width)x\(height)") }
}

@Test func theShowGoesOnAtItsImageAtTheNewSizeWhenTheDisplayComesBackAtAnotherSize() throws {
    let dir = frameTestDirectory("resize")
    defer { for f in ["a.png", "b.png"] { unlink("\(dir)/\(f)") }; rmdir(dir) }
    let a = "\(dir)/a.png", b = "\(dir)/b.png"
    try writePattern(a, colours: [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF, 0xFFFF_FFFF])
    try writePattern(b, colours: [0xFF80_8000, 0xFF00_8080, 0xFF80_0080, 0xFF40_4040])
    // 160x100 until 600 ms, nothing until 900 ms, then a portrait 90x120.
    let display = ResizingDisplay(width: 160, height: 100,
                                  script: [(.milliseconds(600), nil), (.milliseconds(900), (90, 120))])
    let driver = VirtualTimeDriver()
    var fds: [Int32] = [-1, -1]
    pipe(&fds)
    defer { close(fds[0]) }
    _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
    let events = EventWriter(descriptor: fds[1])
    let feed = PanelFeed()
    let preparer = try SlotPreparer(width: 160, height: 100, fit: .fit, background: .black, maxPixels: 1 << 20)
    var configuration = FrameLoop.Configuration(events: events, runFor: .milliseconds(2000))
    configuration.touch = feed
    let loop = FrameLoop(display: display, driver: driver,
                         carousel: Carousel(items: [PlaylistItem(source: a), PlaylistItem(source: b)],
                                            config: CarouselConfig(interval: .seconds(30), fade: .zero,
                                                                   screenWidth: 160)),
                         preparer: preparer, configuration: configuration)
    _ = try loop.run()
    events.flush()
    close(fds[1])
    var bytes = [UInt8](repeating: 0, count: 65536)
    let n = read(fds[0], &bytes, bytes.count)
    let lines = String(decoding: bytes[0..<max(0, n)], as: UTF8.self).split(separator: "\n").map(String.init)

    #expect(display.wrongSize.isEmpty, "\(display.wrongSize)")
    // One frame at the start, none while lost, one when it is back: the same image, fitted anew
    // at the new size (its decode done before time moved on; never the old frame stretched).
    #expect(display.frames.map(\.at) == [0, 900])
    #expect(try same(#require(display.frames.first).frame, expected(a, 160, 100)),
            "the first image before the display went")
    #expect(try same(#require(display.frames.last).frame, expected(a, 90, 120)), "the image on screen at the end")
    // Dark while lost, and announced again once on screen at the new size; the show did not move on.
    let written = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    #expect(describe(written) == "shown 0 @0; display off device @600; display on device @900; shown 0 @900",
            "\(lines)")
    // Laid out for the new size: status, swipes, touch, frames prepared.
    guard case .object(let status) = loop.statusData(at: driver.clock.now) else {
        Issue.record("status is no object")
        return
    }
    #expect(status["width"] == .int(90) && status["height"] == .int(120), "\(status)")
    #expect(loop.carousel.config.screenWidth == 90)
    #expect(feed.panels == ["90x120"])
    #expect(preparer.width == 90 && preparer.height == 120)
    #expect(preparer.memoryCacheUsage.bytes % (90 * 120 * 4) == 0 && preparer.memoryCacheUsage.frames >= 1)
}

@Test func framesOfTheOldSizeAreNotHandedOutAfterAResize() throws {
    let dir = frameTestDirectory("resize")
    defer { unlink("\(dir)/a.png"); rmdir(dir) }
    let a = "\(dir)/a.png"
    try writePattern(a, colours: [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF, 0xFFFF_FFFF])
    let preparer = try SlotPreparer(width: 160, height: 100, fit: .fit, background: .black, maxPixels: 1 << 20)
    let job = SlotPreparer.Job(slot: 0, ticket: 1, item: 0, path: a)
    guard case .frame(let first) = preparer.prepare(job).outcome else { Issue.record("no frame"); return }
    #expect(first.width == 160 && preparer.memoryCacheUsage.frames == 1)
    preparer.resize(width: 90, height: 120)
    #expect(preparer.memoryCacheUsage.frames == 0, "the frames of the old size are dropped")
    guard case .frame(let second) = preparer.prepare(job).outcome else { Issue.record("no frame"); return }
    #expect(try same(second, expected(a, 90, 120)))
    #expect(preparer.memoryCacheUsage.bytes == 90 * 120 * 4)
}
