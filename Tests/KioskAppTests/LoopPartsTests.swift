// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskDisplay
import KioskImaging
import KioskSystem
@testable import KioskApp

// The frame loop's parts on their own (docs/frame-loop.md): the drivers, touch routing,
// display supervision, show output, slot frames and frame making, on real displays, files and
// sockets, with virtual time where time matters.

private func scratch() -> String {
    var template = Array("/tmp/kc-parts-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

// MARK: Drivers

@Test func virtualTimeJumpsToTheNextDeadlineThatKeepsTheShowGoing() {
    let driver = VirtualTimeDriver()
    var deadlines = Deadlines<LoopDuty>()
    deadlines[.carousel] = ms(500)
    deadlines[.retry] = ms(100)     // a retry alone does not move time
    deadlines[.schedule] = ms(200)  // nor a schedule without --run-for
    #expect(driver.wait(for: deadlines, wakeDescriptors: [], now: .zero))
    #expect(driver.clock.now == ms(500))
    // With --run-for the schedule counts; the overlay clock is visited on the way, but alone ends it.
    deadlines = Deadlines()
    deadlines[.runFor] = ms(5000)
    deadlines[.schedule] = ms(900)
    deadlines[.overlay] = ms(700)
    #expect(driver.wait(for: deadlines, wakeDescriptors: [], now: driver.clock.now) && driver.clock.now == ms(700))
    deadlines[.overlay] = nil
    #expect(driver.wait(for: deadlines, wakeDescriptors: [], now: driver.clock.now) && driver.clock.now == ms(900))
    deadlines = Deadlines()
    deadlines[.retry] = ms(60_000)
    deadlines[.overlay] = ms(1000)
    #expect(!driver.wait(for: deadlines, wakeDescriptors: [], now: driver.clock.now), "nothing keeps the show going")
    #expect(driver.clock.now == ms(900))
    // Things scheduled keep it going, and are done in order when their time comes.
    var done: [String] = []
    driver.at(ms(1500)) { done.append("b") }
    driver.at(ms(1200)) { done.append("a") }
    driver.at(ms(1500)) { done.append("c") }
    #expect(driver.wait(for: Deadlines(), wakeDescriptors: [], now: driver.clock.now) && driver.clock.now == ms(1200))
    #expect(driver.wait(for: Deadlines(), wakeDescriptors: [], now: driver.clock.now) && driver.clock.now == ms(1500))
    #expect(done == ["a", "b", "c"])
    #expect(!driver.wait(for: Deadlines(), wakeDescriptors: [], now: driver.clock.now))
    // No world outside the show, and frames when the scene changes.
    #expect(driver.worldDeadline(ms(3)) == nil && driver.displayScheduleTimer() == nil)
    #expect(driver.nextFrame(after: ms(40)) == ms(40) && driver.scheduleRecheck == nil)
}

@Test func virtualWallTimeRunsWithShowTimeFromItsStart() {
    let driver = VirtualTimeDriver(wallStart: .seconds(1_000_000), zone: FixedOffsetZone(seconds: 3600))
    driver.virtualClock.advance(to: .seconds(90))
    let (wall, zone) = driver.readWallTime()
    #expect(wall == .seconds(1_000_090) && zone.utcOffset(atEpochSecond: 0) == 3600)
}

@Test func theRealClockPacesFramesKeepsTheWorldsDutiesAndWakesForADescriptor() throws {
    let driver = RealTimeDriver()
    #expect(driver.nextFrame(after: ms(100)) == ms(100) + .nanoseconds(16_666_667))
    #expect(driver.worldDeadline(ms(3)) == ms(3) && driver.scheduleRecheck == .seconds(60))
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    #expect(abs(driver.readWallTime().sinceEpoch.components.seconds - Int64(ts.tv_sec)) <= 1)
    // A readable descriptor ends the wait long before its 60 s deadline.
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    defer { close(fds[0]); close(fds[1]) }
    var byte: UInt8 = 1
    #expect(write(fds[1], &byte, 1) == 1)
    var deadlines = Deadlines<LoopDuty>()
    deadlines[.carousel] = .seconds(60)
    let start = driver.clock.now
    #expect(driver.wait(for: deadlines, wakeDescriptors: [fds[0]], now: start))
    #expect(driver.clock.now - start < .seconds(30))
}

// MARK: Touch routing

private final class Feed: TouchFeed {
    var wakeDescriptor: Int32 { -1 }
    var events: [TouchFeedEvent] = []
    func take() -> [TouchFeedEvent] { defer { events = [] }; return events }
}

@Test func touchRoutingLetsAStuckFingerGoAndReportsTheOldestTouchAFrameShows() {
    let clock = VirtualClock()
    let feed = Feed()
    var latencies: [(Duration, Duration?)] = []
    let router = TouchRouter(feed: feed, clock: clock, screenWidth: 320, stuckLimit: ms(500),
                             presented: { latencies.append(($0, $1)) })
    var gestures: [Gesture] = []
    clock.advance(to: ms(100))
    feed.events = [.sample(TouchSample(.down, x: 10, y: 10, time: ms(95))),
                   .sample(TouchSample(.move, x: 11, y: 10, time: ms(99)))]
    router.take(screenWidth: 320, admit: { _ in true }, apply: { gestures.append($0) })
    #expect(gestures == [.pressed(at: ms(95))] && router.isTouching && router.stuckDeadline == ms(600))
    router.framePresented(at: ms(110))
    router.framePresented(at: ms(127))
    #expect(latencies.map(\.0) == [ms(110), ms(127)] && latencies.map(\.1) == [ms(95), nil])
    // No report for the limit: let go at 600 ms, not before.
    #expect(router.releaseStuck(at: ms(599)).isEmpty)
    #expect(router.releaseStuck(at: ms(600)) == [.cancelled(at: ms(600))] && !router.isTouching
            && router.stuckDeadline == nil)
    // A sample the display supervision does not admit (a dark screen) goes nowhere.
    feed.events = [.sample(TouchSample(.down, x: 10, y: 10, time: ms(700)))]
    router.take(screenWidth: 320, admit: { _ in false }, apply: { gestures.append($0) })
    #expect(gestures == [.pressed(at: ms(95))] && !router.isTouching)
}

// MARK: Display supervision

@Test func displaySupervisionPausesForAScreenOffAndSaysWhatTheShowMustDo() throws {
    let dir = scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let display = try OffscreenDisplay(directory: dir, width: 8, height: 8)
    let driver = VirtualTimeDriver()
    let supervisor = DisplaySupervisor(display: display, console: nil, schedule: nil, wakeDuration: .seconds(120),
                                       clock: driver.clock, driver: driver)
    var carousel = Carousel(items: [PlaylistItem(source: "/a.jpg")])
    driver.virtualClock.advance(to: ms(250))
    #expect(supervisor.setPower(on: false, reason: "test", carousel: &carousel)
            == [.visibility(on: false, reason: "control", at: ms(250))])
    #expect(carousel.isPaused && !supervisor.canDraw)
    #expect(supervisor.setPower(on: false, reason: "again", carousel: &carousel).isEmpty, "already off")
    // A touch on a screen off by hand (no schedule) goes nowhere, to its end.
    #expect(supervisor.admits(TouchSample(.down, x: 1, y: 1, time: ms(260)), carousel: &carousel) == (false, []))
    supervisor.pauseAsked(carousel: &carousel)  // paused while off: it stays paused when lit
    #expect(supervisor.setPower(on: true, reason: "test", carousel: &carousel)
            == [.visibility(on: true, reason: "control", at: ms(250)), .redraw])
    #expect(carousel.isPaused && supervisor.canDraw)
    #expect(supervisor.admits(TouchSample(.up, x: 1, y: 1, time: ms(270)), carousel: &carousel) == (false, []),
            "the rest of the touch that fell on the dark screen")
    #expect(supervisor.admits(TouchSample(.down, x: 1, y: 1, time: ms(280)), carousel: &carousel) == (true, []))
    // The VT: dark while switched away, lit and redrawn when back.
    #expect(supervisor.releaseForVT() == [.visibility(on: false, reason: "vt", at: ms(250))] && !supervisor.canDraw)
    #expect(supervisor.acquireForVT() == [.visibility(on: true, reason: "vt", at: ms(250)), .redraw])
    #expect(try supervisor.serviceDevice(carousel: &carousel).isEmpty && !supervisor.isLost, "offscreen stays")
}

// MARK: Show output

private final class Recorder: ShowEventSink {
    var got: [ShowEvent] = []
    var turns = 0
    func publish(_ event: ShowEvent) { got.append(event) }
    func service() { turns += 1 }
}

@Test func showOutputGivesEverySinkEveryEventStdoutFirst() throws {
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    defer { close(fds[0]) }
    let events = EventWriter(descriptor: fds[1])
    let output = ShowOutput(events: events, notifier: nil, control: nil, tapCommand: nil, startupTrace: nil)
    let recorder = Recorder()
    output.subscribe(recorder)
    output.publish(.shown(index: 1, source: "/b.jpg", at: ms(1234), playlistLength: 3))
    output.publish(.tap(index: 1, source: "/b.jpg", at: ms(1300), x: 5, y: 6))
    output.publish(.display(on: false, reason: "vt", at: ms(1400)))
    output.service()
    events.flush()
    close(fds[1])
    let written = String(decoding: FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile(), as: UTF8.self)
    #expect(written == #"{"event":"shown","index":1,"src":"/b.jpg","t":1234}"# + "\n"
            + #"{"event":"tap","index":1,"src":"/b.jpg","x":5,"y":6,"t":1300}"# + "\n"
            + #"{"event":"display","state":"off","reason":"vt","t":1400}"# + "\n")
    #expect(recorder.got == [.shown(index: 1, source: "/b.jpg", at: ms(1234), playlistLength: 3),
                             .tap(index: 1, source: "/b.jpg", at: ms(1300), x: 5, y: 6),
                             .display(on: false, reason: "vt", at: ms(1400))])
    #expect(recorder.turns == 1)
}

// MARK: Slot frames

@Test func aFileBehindASlotThatChangesUnderItsNameIsReportedOnce() throws {
    let dir = scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/a.png"
    try PNGWriter.write(Bitmap(width: 8, height: 8, fill: 0xFF11_2233), to: path)
    let preparer = try SlotPreparer(width: 8, height: 8, fit: .fill, background: .black, maxPixels: 1 << 20)
    let slots = SlotFrames(preparer: preparer, checkInterval: .seconds(1))
    var carousel = Carousel(items: [PlaylistItem(source: path)])
    var prepares: [(slot: Int, ticket: Int)] = []
    for case .prepare(let slot, let item, let ticket) in carousel.start(at: .zero) {
        slots.prepare(slot: slot, ticket: ticket, index: item, item: carousel.items[item])
        prepares.append((slot, ticket))
    }
    for r in preparer.waitForResults() {
        guard case .frame(let frame) = r.outcome else { Issue.record("\(r.outcome)"); continue }
        slots.ready(slot: r.slot, frame: frame, ticket: r.ticket, source: path, identity: r.identity)
        _ = carousel.imageReady(ticket: r.ticket, at: .zero)
    }
    #expect(slots.frames.compactMap { $0 }.count == prepares.count)
    // Virtual time: no file checks. The real clock: one a second.
    slots.scheduleCheck(at: .zero, driver: VirtualTimeDriver())
    #expect(slots.nextCheck == nil)
    slots.scheduleCheck(at: .zero, driver: RealTimeDriver())
    #expect(slots.nextCheck == .seconds(1))
    // Rewritten under the same name (another size: another identity): the check reports it.
    try PNGWriter.write(Bitmap(width: 9, height: 8, fill: 0xFF44_5566), to: path)
    slots.checkFilesIfDue(at: .seconds(1), driver: RealTimeDriver())
    #expect(slots.nextCheck == .seconds(2))
    #expect(preparer.changedFiles.waitForValues(timeout: .seconds(10), interrupt: -1) == .ready)
    #expect(slots.changedItems(carousel) == [0])
    #expect(slots.changedItems(carousel).isEmpty, "once")
    slots.resize(width: 4, height: 4)
    #expect(slots.frames.allSatisfy { $0 == nil } && preparer.width == 4)
}

// MARK: Frame making

@Test func theFrameMakerPresentsAChangedSceneAndTheEmptyScreensWordsRedrawIt() throws {
    let dir = scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let display = try OffscreenDisplay(directory: dir, width: 16, height: 10)
    let frames = FrameMaker(display: display, driver: VirtualTimeDriver(), background: RGBColor(hex: "204060")!,
                            painter: nil, text: nil, overlayFormat: nil)
    let scene = Scene(base: .noImages)
    #expect(frames.needsFrame(scene))
    try frames.present(scene, slots: [nil, nil, nil], at: ms(40), trace: nil)
    frames.presented(scene, at: ms(40))
    #expect(!frames.needsFrame(scene) && frames.framesPresented == 1 && frames.lastPresentAt == ms(40))
    #expect(try ImageDecoder.decode(path: display.path(showTime: 40)).bitmap[3, 3] == 0xFF20_4060)
    frames.setNoImagesMessage(SceneRenderer.nothingScheduledText)
    #expect(frames.needsFrame(scene), "other words: drawn again")
    frames.presented(scene, at: ms(50))
    frames.setNoImagesMessage(SceneRenderer.nothingScheduledText)
    #expect(!frames.needsFrame(scene), "the same words")
    frames.resize(width: 8, height: 20)
    #expect(frames.width == 8 && frames.height == 20 && frames.needsFrame(scene))
}

/// Takes layers on planes when `takesLayers` (as DRM with atomic KMS does, or refuses them as a
/// TEST_ONLY commit that says no): what went out which way, and each split of the scanout copy.
private final class PlanesDisplay: Display {
    let width = 16, height = 10
    var panelWidth: Int { width }
    var panelHeight: Int { height }
    var summary: String { "test planes 16x10" }
    var pacesFrames: Bool { false }
    var takesLayers: Bool
    var presentsLayers: Bool { true }
    /// `layers N @t` or `frame @t`, in order.
    private(set) var presented: [String] = []
    private(set) var prepared = 0
    private(set) var rowsGiven = 0

    init(takesLayers: Bool) { self.takesLayers = takesLayers }
    func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) { presented.append("frame @\(showTime)") }
    func present(layers: [FrameLayer], background: RGBColor, showTime: Int64) throws(DisplayError) -> Bool {
        guard takesLayers else { return false }
        presented.append("layers \(layers.count) @\(showTime)")
        return true
    }
    func prepareLayer(_ bitmap: Bitmap) { prepared += 1 }
    func convertRows(with splitter: RowSplitter) { rowsGiven += 1 }
    func restore() {}
}

/// The one place a scene goes to the screen (docs/planes.md): as layers where the display takes
/// them and the driver allows planes (the real clock), composed where the display refuses them,
/// and always composed on virtual time, whose frames are the reference.
@Test func aSceneGoesOutAsLayersOnlyWhereTheDisplayTakesThemAndTheDriverAllows() throws {
    let image = Bitmap(width: 16, height: 10, fill: 0xFF00_FF00)
    let fade = Scene(base: .slot(0), overlay: .slot(1), weight: 128)
    func show(_ display: PlanesDisplay, planes: Bool) throws -> FrameMaker {
        let frames = FrameMaker(display: display, driver: PartlyRealDriver(VirtualTimeDriver(), planes: planes),
                                background: .black, painter: nil, text: nil, overlayFormat: nil)
        try frames.present(Scene(base: .slot(0)), slots: [image, nil, nil], at: ms(10), trace: nil)
        try frames.present(fade, slots: [image, image, nil], at: ms(20), trace: nil)
        return frames
    }
    let onPlanes = PlanesDisplay(takesLayers: true)
    let planes = try show(onPlanes, planes: true)
    #expect(onPlanes.presented == ["layers 1 @10", "layers 2 @20"], "a cross-fade: two layers, one at half alpha")
    #expect(onPlanes.prepared == 3, "each slot frame made ready for its plane after the frame")
    #expect(planes.presenter.planeFrames == 2 && planes.presenter.composedFrames == 0)
    #expect(onPlanes.rowsGiven == 1, "the thread team is given once")

    let refusing = PlanesDisplay(takesLayers: false)
    let composed = try show(refusing, planes: true)
    #expect(refusing.presented == ["frame @10", "frame @20"] && refusing.prepared == 0)
    #expect(composed.presenter.lastOnPlanes == false && composed.presenter.composedFrames == 2)

    let virtual = PlanesDisplay(takesLayers: true)
    _ = try show(virtual, planes: false)
    #expect(virtual.presented == ["frame @10", "frame @20"], "virtual time: the composed reference")
}
