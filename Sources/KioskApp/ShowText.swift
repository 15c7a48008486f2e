// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem
import KioskText

/// The show's text stack, set up once at start: the fonts fontconfig finds (``FontLibrary``),
/// and a ``TextRenderer`` per thread that draws (the frame loop's for the status screens and
/// the clock, the decode worker's for captions). Without any font the show goes on without
/// words, after one log line.
public final class ShowText {
    public let library: FontLibrary

    /// Sets up fontconfig with its cache under `cacheDirectory` (the unit's CacheDirectory,
    /// see ``FontLibrary/useCacheDirectory(_:)``) and finds the fonts; nil (logged) when there
    /// is none.
    public static func start(cacheDirectory: String) -> ShowText? {
        FontLibrary.useCacheDirectory(cacheDirectory)
        do {
            let library = try FontLibrary()
            Log.info("fonts", detail: "\(library.fonts[0].family) (\(library.fonts[0].path)) and \(library.fonts.count - 1) fallbacks")
            return ShowText(library: library)
        } catch {
            Log.warning("no text on screen", reason: error.description)
            return nil
        }
    }

    public init(library: FontLibrary) { self.library = library }

    /// A renderer for one thread; nil (logged) when FreeType cannot start.
    public func renderer() -> TextRenderer? {
        do { return try TextRenderer(library: library) } catch {
            Log.warning("no text on screen", reason: error.description)
            return nil
        }
    }

    /// The status screens' painter, for the frame loop's thread.
    public func messagePainter() -> MessagePainter? { renderer().map(MessagePainter.init) }
}
