// SPDX-License-Identifier: Apache-2.0
import Dispatch
import KioskCore
import KioskSystem
import KioskText

/// The show's text stack, loaded off the frame loop when text is first needed, not at start:
/// the fonts fontconfig finds (``FontLibrary``), and a ``TextRenderer`` per thread that draws
/// (the frame loop's for the status screens and the clock, the decode worker's for captions).
/// Until then FreeType, HarfBuzz, fontconfig and FriBidi are not even loaded (they are opened with
/// dlopen), so a show of photos without words never maps them. Loading them and reading
/// fontconfig's cache is disk work (tens to hundreds of milliseconds on a slow board, seconds
/// under emulation): ``startLoading(frameWidth:frameHeight:)`` does it on a thread of its own,
/// and hands the frame loop its renderer through ``ready``, whose descriptor wakes the loop;
/// meanwhile the loop draws its screens without words. Without the libraries or any font the
/// show goes on without words, after one log line.
public final class ShowText: @unchecked Sendable {
    /// Finds the fonts (the libraries are opened by the first call); runs on the loading thread.
    public typealias Loader = @Sendable () throws(TextError) -> FontLibrary

    /// The frame loop's renderer, made and warmed on the loading thread; ownership passes to
    /// the one who takes it from ``ready`` (a renderer is one thread's at a time).
    public struct LoopRenderer: @unchecked Sendable {
        public let renderer: TextRenderer
    }

    private enum Phase { case idle, loading, done(FontLibrary?) }
    private let phase = Locked<Phase>(.idle)
    private let loader: Loader
    /// Entered while a load runs: ``waitWhileLoading()`` waits on it.
    private let loading = DispatchGroup()
    private let queue = DispatchQueue(label: "kiosk-carousel.text")
    /// The frame loop's renderer, posted once when the load succeeded (nothing is posted when
    /// it failed: that is logged).
    public let ready: Mailbox<LoopRenderer>

    /// Points fontconfig's cache under `cacheDirectory` (the unit's CacheDirectory, see
    /// ``FontLibrary/useCacheDirectory(_:)``; at start, before other threads read the
    /// environment). Nothing is loaded yet.
    /// - Throws: ``SystemError`` when the wake-up pipe of ``ready`` cannot be made.
    public static func start(cacheDirectory: String) throws(SystemError) -> ShowText {
        FontLibrary.useCacheDirectory(cacheDirectory)
        return try ShowText()
    }

    /// `loader`: how the fonts are found (default: ``FontLibrary/init(family:)`` for
    /// `sans-serif`); a test gives one that holds the load until it lets it go.
    /// - Throws: ``SystemError`` when the wake-up pipe of ``ready`` cannot be made.
    public init(
        loader: @escaping Loader = { () throws(TextError) -> FontLibrary in try FontLibrary() }
    ) throws(SystemError) {
        self.loader = loader
        ready = try Mailbox()
    }

    /// True once a load was started (it may have finished).
    public var started: Bool { phase.withLock { if case .idle = $0 { false } else { true } } }

    /// Starts loading the libraries and the fonts on the loading thread, once (later calls do
    /// nothing); never blocks. The frame loop's renderer is warmed for a frame of
    /// `frameWidth` x `frameHeight` pixels when given: the default font is opened at the size
    /// of the status screens' words there (``MessagePainter/pixelSize(for:width:height:)``).
    public func startLoading(frameWidth: Int? = nil, frameHeight: Int? = nil) {
        let starts = phase.withLock { (phase: inout Phase) -> Bool in
            guard case .idle = phase else { return false }
            phase = .loading
            loading.enter()  // under the lock: a waiter that sees `.loading` also sees the group entered
            return true
        }
        guard starts else { return }
        queue.async { [self] in
            defer { loading.leave() }
            let library = load()
            phase.withLock { $0 = .done(library) }
            guard let renderer = makeRenderer(library) else { return }
            if let frameWidth, let frameHeight, frameWidth > 0, frameHeight > 0 {
                _ = MessagePainter(renderer: renderer).pixelSize(for: SceneRenderer.placeholderText, width: frameWidth,
                                                                 height: frameHeight)
            }
            ready.post(LoopRenderer(renderer: renderer))
        }
    }

    /// Waits for a load under way to end (at once when none runs).
    public func waitWhileLoading() { loading.wait() }

    private func load() -> FontLibrary? {
        do throws(TextError) {
            let library = try loader()
            Log.info("fonts", detail: "\(library.fonts[0].family) (\(library.fonts[0].path)) "
                         + "and \(counted(library.fonts.count - 1, "fallback"))")
            return library
        } catch {
            Log.warning("no text on screen", reason: error.description)
            return nil
        }
    }

    private func makeRenderer(_ library: FontLibrary?) -> TextRenderer? {
        guard let library else { return nil }
        do { return try TextRenderer(library: library) } catch {
            Log.warning("no text on screen", reason: error.description)
            return nil
        }
    }

    /// The fonts, waiting for the load (started here when it was not): for threads that may
    /// wait (the decode worker), never the frame loop. nil when it failed (logged once).
    public func library() -> FontLibrary? {
        startLoading()
        waitWhileLoading()
        return phase.withLock { if case .done(let library) = $0 { library } else { nil } }
    }

    /// A renderer for a thread that may wait for the load (the decode worker's, for captions);
    /// nil when there is no text (logged once) or FreeType cannot start (logged).
    public func renderer() -> TextRenderer? { makeRenderer(library()) }

    /// A status screens' painter that waits for the load on its first draw (for a thread that
    /// may wait, such as a test's).
    public func messagePainter() -> any TextPainter { DeferredMessagePainter(text: self, waits: true) }

    /// The frame loop's status screens' painter: until the loop hands it its renderer
    /// (``FrameLoop`` takes it from ``ready``), it starts the load and draws no words.
    public func loopPainter() -> any TextPainter { DeferredMessagePainter(text: self, waits: false) }
}

/// The status screens' words: a ``MessagePainter`` once the frame loop has its renderer. Until
/// then a draw starts the load (off the loop) and leaves the frame without words (it is already
/// filled with the background), noting it (``drewWithoutWords``) so the screen is drawn again
/// when the words come; `waits`: the draw waits for the load instead (and makes its own renderer).
final class DeferredMessagePainter: TextPainter {
    private let text: ShowText
    private let waits: Bool
    /// Set by the frame loop once the load finished (FrameMaker.takeWords).
    var painter: MessagePainter?
    /// A screen was drawn without its words since the painter came.
    private(set) var drewWithoutWords = false

    init(text: ShowText, waits: Bool) {
        self.text = text
        self.waits = waits
    }

    func drawMessage(_ message: String, into frame: Bitmap, color: RGBColor) {
        if painter == nil {
            if waits {
                painter = text.renderer().map(MessagePainter.init)
            } else {
                text.startLoading(frameWidth: frame.width, frameHeight: frame.height)
            }
        }
        guard let painter else { drewWithoutWords = !waits; return }
        painter.drawMessage(message, into: frame, color: color)
    }

    /// The loop gave the painter its renderer: true when a screen on show lacks its words.
    func adopt(_ renderer: TextRenderer) -> Bool {
        painter = MessagePainter(renderer: renderer)
        defer { drewWithoutWords = false }
        return drewWithoutWords
    }
}
