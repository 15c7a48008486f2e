// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskDisplay
import KioskText

/// Makes the frames the show presents (docs/frame-loop.md): the renderer at the display's
/// logical size, the words on screen and the `--overlay` clock, and what was presented last.
/// ``present(_:slots:at:trace:)`` is the one place a scene goes to the display, through the
/// ``ScenePresenter``: as layers on the display's planes where it takes them (real time only:
/// ``LoopDriver/allowsPlanes``), else rendered here on the CPU and handed over as a bitmap.
///
/// The words (status screens, `--overlay`) come from ``ShowText``, loaded on a thread of its
/// own: the loop never waits for FreeType, HarfBuzz or fontconfig. Until the load is done the
/// screens are drawn without words (the background, or the photo without the clock); the load's
/// end wakes the loop (``ShowText/ready``) and the frame on screen is drawn again with them. On
/// virtual time the loop waits for a load under way instead, as it waits for a decode
/// (``LoopDriver/settle(_:interrupt:)``), so the same inputs always give the same frames.
///
/// The clock is formatted again at the start of each minute (a deadline, ``overlayAt``, not a
/// poll) and, when its text changed, the frame on screen is drawn again with it; between
/// changes it is only blended into the frames a fade or a slide presents anyway.
///
/// Runs on the frame loop's thread.
final class FrameMaker {
    let display: Display
    private let driver: LoopDriver
    /// Draws scenes at the display's logical size (made again when the display changes size).
    private(set) var renderer: SceneRenderer
    /// Draw scenes at the other outputs' sizes (``KioskDisplay/OutputSet/frameSizes`` after the
    /// first; docs/displays.md "Several outputs"), with the slot frames of those sizes.
    private(set) var outputRenderers: [SceneRenderer] = []
    /// The `--overlay` clock of each of ``outputRenderers``, laid out for its size.
    private var outputClocks: [ClockOverlay] = []
    /// Puts each scene on planes or has it rendered on the CPU, on every core (docs/planes.md).
    let presenter = ScenePresenter()
    /// The scene last presented (nil: draw the next one whatever it is).
    private(set) var lastScene: Scene?
    /// When the last frame was presented.
    private(set) var lastPresentAt: Duration?
    /// Frames presented so far.
    private(set) var framesPresented = 0
    /// The words on screen, loaded off the loop; nil: none are loaded.
    let text: ShowText?
    /// `--overlay`: the clock's strftime format; the clock is made once ``text`` is loaded.
    let overlayFormat: String?
    /// `--overlay`: the clock blended into every frame.
    private(set) var clockOverlay: ClockOverlay? { didSet { renderer.frameOverlay = clockOverlay; overlayAt = nil } }
    /// When the clock's text is formatted again (the start of the next minute).
    private(set) var overlayAt: Duration?
    private let words: WordsOnTheirWay

    init(display: Display, driver: LoopDriver, background: RGBColor, painter: (any TextPainter)?, text: ShowText?,
         overlayFormat: String?) {
        self.display = display
        self.driver = driver
        renderer = SceneRenderer(width: display.width, height: display.height, background: background, painter: painter)
        self.text = text
        self.overlayFormat = overlayFormat
        words = WordsOnTheirWay(text: text)
        words.painter = renderer.painter as? DeferredMessagePainter
        outputRenderers = Self.otherSizes(of: display).map {
            SceneRenderer(width: $0.width, height: $0.height, background: background, painter: painter)
        }
    }

    /// The sizes of `display`'s other outputs that need frames of their own.
    static func otherSizes(of display: Display) -> [FrameSize] {
        Array((display.outputSet?.frameSizes ?? []).dropFirst())
    }

    /// Readable when the words have loaded.
    var wakeDescriptor: Int32? { text?.ready.wakeDescriptor }
    var width: Int { renderer.width }
    var height: Int { renderer.height }

    /// Whether `scene` differs from what is on screen.
    func needsFrame(_ scene: Scene) -> Bool { scene != lastScene }

    /// What is on screen is no longer the show's (another VT drew, the screen was off, its
    /// words changed): the next scene is drawn whatever it is.
    func invalidate() { lastScene = nil }

    /// Presents `scene` with the slot frames `slots` at show time `now` (milliseconds in the
    /// display's `showTime`): as layers on the display's planes, or rendered and handed to the
    /// display as a bitmap. On virtual time a status screen rendered before its words came waits
    /// for them and is rendered again. Call ``presented(_:at:)`` once the display kept it.
    /// Throws what the display throws.
    /// `outputSlots`: the slot frames at the other outputs' sizes (``SlotFrames/outputFrames``):
    /// with a display of several sizes the scene is rendered once per size and the frames go
    /// out together (``KioskDisplay/OutputSet/present(frames:showTime:)``).
    func present(_ scene: Scene, slots: [Bitmap?], outputSlots: [[Bitmap?]] = [], at now: Duration,
                 trace: StartupTrace?) throws(DisplayError) {
        if let set = display.outputSet, !outputRenderers.isEmpty {
            if renderer.rows == nil { renderer.rows = presenter.rows }
            var frame = renderer.render(scene, slots: slots)
            if driver.holdsTime(for: words) {
                takeWords()
                if words.painter?.painter != nil { frame = renderer.render(scene, slots: slots) }
            }
            var frames = [frame]
            for (i, other) in outputRenderers.enumerated() {
                if other.rows == nil { other.rows = presenter.rows }
                // A drag's offset is in the first output's pixels: each output moves by the same
                // share of its own width.
                var own = scene
                own.offset = Self.offset(scene.offset, from: renderer.width, to: other.width)
                frames.append(other.render(own, slots: i < outputSlots.count ? outputSlots[i] : [nil, nil, nil]))
            }
            trace?.mark(.rendered)
            try set.present(frames: frames, showTime: now.wholeMilliseconds)
            trace?.mark(.presented)
            return
        }
        try presenter.present(scene, renderer: renderer, slots: slots, display: display,
                              showTime: now.wholeMilliseconds, useLayers: driver.allowsPlanes) {
            var frame = renderer.render(scene, slots: slots)
            if driver.holdsTime(for: words) {
                takeWords()
                if words.painter?.painter != nil { frame = renderer.render(scene, slots: slots) }
            }
            trace?.mark(.rendered)
            return frame
        }
        trace?.mark(.rendered)  // on planes: nothing rendered, the layers went out
        trace?.mark(.presented)
    }

    /// A sideways ``Scene/offset`` of `offset` pixels on a frame `width` pixels wide, as the same
    /// share of a frame `otherWidth` pixels wide (rounded to the nearest pixel; -width and
    /// width map to -otherWidth and otherWidth).
    static func offset(_ offset: Int, from width: Int, to otherWidth: Int) -> Int {
        guard width > 0, width != otherWidth else { return offset }
        return Int((Double(offset) * Double(otherWidth) / Double(width)).rounded())
    }

    /// The display kept the frame of `scene` presented at `now`.
    func presented(_ scene: Scene, at now: Duration) {
        framesPresented += 1
        lastScene = scene
        lastPresentAt = now
    }

    /// The "no images" screen's words; a change redraws it at once.
    func setNoImagesMessage(_ message: String) {
        guard renderer.noImagesMessage != message else { return }
        renderer.noImagesMessage = message
        for other in outputRenderers { other.noImagesMessage = message }
        lastScene = nil
    }

    /// Text will be needed soon (a status screen is likely): start loading it, off the loop.
    func textWillBeNeeded() {
        text?.startLoading(frameWidth: renderer.width, frameHeight: renderer.height)
    }

    /// Takes the loaded words once the load is done (on virtual time, waits for a load under
    /// way first): the status screens get them and the `--overlay` clock is made
    /// (``overlayFormat``); the frame on screen is drawn again when it lacked them.
    func takeWords() {
        guard let text else { return }
        driver.settle(words, interrupt: -1)
        guard let loaded = text.ready.take().last else { return }
        var redraw = false
        if let painter = words.painter, painter.adopt(loaded.renderer) {
            renderer.forgetMessageFrames()
            for other in outputRenderers { other.forgetMessageFrames() }
            redraw = true
        }
        if let overlayFormat, clockOverlay == nil {
            clockOverlay = ClockOverlay(format: overlayFormat, renderer: loaded.renderer, frameWidth: renderer.width,
                                        frameHeight: renderer.height)
            makeOutputClocks()
            redraw = true
        }
        if redraw { lastScene = nil }
    }

    /// Updates the clock's text when ``overlayAt`` is due (or it has none yet) and sets the next.
    func updateOverlay(at now: Duration) {
        guard let overlay = clockOverlay else { overlayAt = nil; return }
        guard overlayAt.map({ now >= $0 }) ?? true else { return }
        let ns = driver.readWallTime().sinceEpoch.wholeNanoseconds
        let seconds = Int(ns / 1_000_000_000)
        if overlay.update(epochSeconds: seconds) { lastScene = nil }  // draw the frame again with it
        for clock in outputClocks { _ = clock.update(epochSeconds: seconds) }
        let next = Int64(ClockOverlay.nextChange(after: seconds)) * 1_000_000_000
        overlayAt = now + .nanoseconds(next - ns)
    }

    /// The display changed size: scenes, the "Loading…" and "no images" screens and the
    /// `--overlay` clock are laid out for `width` x `height` from now on.
    /// `outputSizes`: the other outputs' sizes (``KioskDisplay/OutputSet/frameSizes`` after the first).
    func resize(width: Int, height: Int, outputSizes: [FrameSize] = []) {
        let old = renderer
        renderer = SceneRenderer(width: width, height: height, background: old.background, painter: old.painter)
        renderer.noImagesMessage = old.noImagesMessage
        outputRenderers = outputSizes.map {
            let r = SceneRenderer(width: $0.width, height: $0.height, background: old.background, painter: old.painter)
            r.noImagesMessage = old.noImagesMessage
            return r
        }
        if let overlay = clockOverlay {  // its didSet hands it to the new renderer and formats it again
            clockOverlay = ClockOverlay(format: overlay.format, renderer: overlay.renderer, frameWidth: width,
                                        frameHeight: height)
        }
        makeOutputClocks()
        lastScene = nil
    }

    /// The other outputs' sizes the frames are made for now.
    var outputSizes: [FrameSize] { outputRenderers.map { FrameSize(width: $0.width, height: $0.height) } }

    /// An `--overlay` clock for each of ``outputRenderers``, like ``clockOverlay`` (none without it).
    private func makeOutputClocks() {
        outputClocks = clockOverlay.map { overlay in
            outputRenderers.map {
                ClockOverlay(format: overlay.format, renderer: overlay.renderer, frameWidth: $0.width,
                             frameHeight: $0.height)
            }
        } ?? []
        for (r, clock) in zip(outputRenderers, outputClocks) { r.frameOverlay = clock }
        overlayAt = nil
    }

    /// The show is still (no fade, no finger): the renderer's scratch frames go back.
    func releaseScratch() {
        renderer.releaseScratch()
        for other in outputRenderers { other.releaseScratch() }
    }
}

/// The words as off-loop work the loop waits for on virtual time: a load started whose words
/// the status screens' painter does not have yet.
private final class WordsOnTheirWay: OffLoopWork {
    let text: ShowText?
    /// The renderer's painter, when it is ``ShowText``'s.
    var painter: DeferredMessagePainter?
    init(text: ShowText?) { self.text = text }

    var outstanding: Int { text?.started == true && painter?.painter == nil ? 1 : 0 }
    func waitForAnswers(interrupt: Int32) { text?.waitWhileLoading() }
}
