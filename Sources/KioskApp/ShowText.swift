// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem
import KioskText

/// The show's text stack, set up on the first use of text, not at start: the fonts fontconfig
/// finds (``FontLibrary``), and a ``TextRenderer`` per thread that draws (the frame loop's for
/// the status screens and the clock, the decode worker's for captions). Until then FreeType,
/// HarfBuzz and fontconfig are not even loaded (they are opened with dlopen), so a show of
/// photos without words never maps them. Without the libraries or any font the show goes on
/// without words, after one log line.
public final class ShowText: @unchecked Sendable {
    /// nil until the first ``library()``; then the fonts, or nil when text cannot be set up.
    private let state = Locked<FontLibrary??>(nil)

    /// Points fontconfig's cache under `cacheDirectory` (the unit's CacheDirectory, see
    /// ``FontLibrary/useCacheDirectory(_:)``; at start, before other threads read the
    /// environment). Nothing is loaded yet.
    public static func start(cacheDirectory: String) -> ShowText {
        FontLibrary.useCacheDirectory(cacheDirectory)
        return ShowText()
    }

    public init() {}

    /// The fonts: the first call loads the libraries and asks fontconfig (logged either way);
    /// nil, then and on every later call, when that failed.
    public func library() -> FontLibrary? {
        state.withLock { (state: inout FontLibrary??) -> FontLibrary? in
            if let known = state { return known }
            do throws(TextError) {
                let library = try FontLibrary()
                Log.info("fonts", detail: "\(library.fonts[0].family) (\(library.fonts[0].path)) and \(counted(library.fonts.count - 1, "fallback"))")
                state = .some(library)
                return library
            } catch {
                Log.warning("no text on screen", reason: error.description)
                state = .some(nil)
                return nil
            }
        }
    }

    /// A renderer for one thread; nil when there is no text (logged once by ``library()``) or
    /// FreeType cannot start (logged).
    public func renderer() -> TextRenderer? {
        guard let library = library() else { return nil }
        do { return try TextRenderer(library: library) } catch {
            Log.warning("no text on screen", reason: error.description)
            return nil
        }
    }

    /// The status screens' painter, for the frame loop's thread: it sets up text when it first
    /// draws (a placeholder or "no images" screen), not before.
    public func messagePainter() -> any TextPainter { LazyMessagePainter(text: self) }
}

/// A ``MessagePainter`` made on the first ``drawMessage(_:into:color:)``; when text cannot be
/// set up, the screens stay without words (the frame is already filled with the background).
final class LazyMessagePainter: TextPainter {
    private let text: ShowText
    private var painter: MessagePainter??

    init(text: ShowText) { self.text = text }

    func drawMessage(_ message: String, into frame: Bitmap, color: RGBColor) {
        if painter == nil { painter = .some(text.renderer().map(MessagePainter.init)) }
        painter??.drawMessage(message, into: frame, color: color)
    }
}
