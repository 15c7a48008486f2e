// SPDX-License-Identifier: Apache-2.0
/// The Ken Burns effect (`--ken-burns`, docs/carousel.md "Ken Burns"): a slow pan and zoom over a
/// still picture while it is on screen. Pure geometry, no pixels: the decode worker prepares
/// each picture as a *source* a little larger than the screen
/// (``sourceSize(imageWidth:imageHeight:screenWidth:screenHeight:)``, the picture centre-cropped to
/// an aspect between its own and the screen's), and every frame shows a *window* of that source
/// (``window(seed:progress:sourceWidth:sourceHeight:screenWidth:screenHeight:)``) resampled to the
/// screen (``Compositor/resampleBilinear(_:window:into:rows:)``).
///
/// The window always has the screen's aspect and lies inside the source, so the picture covers
/// the screen on every frame: no letterbox bar and nothing past the picture's edge. It moves in a
/// straight line, at constant speed, from a start to an end window chosen from the source's shape
/// and the item's seed (``seed(source:)``, the same for the same source on every run):
/// - zoom: one end is the largest window the source holds, the other ``zoom`` times smaller
///   (zooming in or out by the seed's lowest bit);
/// - pan: along the source's longer free axis (across a wide picture, down or up a tall one), from
///   one end to the other (the seed's next bit says which); across the other axis the window
///   keeps a place the seed chooses.
public enum KenBurns {
    /// How much the window's side changes between the ends of the motion: 1.15 (15 %, as
    /// slideshow programs' Ken Burns defaults go: slow enough to read as a drift).
    public static let zoom = 1.15
    /// The most the source extends beyond the screen's aspect along the picture's long axis:
    /// 1.3 (the picture's aspect, cut to 1.3 times the screen's or 1/1.3 of it), which bounds both
    /// the pan and the source's memory (``sourceBytes(screenWidth:screenHeight:)``).
    public static let maxExtent = 1.3

    /// A rectangle of the source, in source pixels (continuous: pixel (x, y) spans x...x+1).
    public struct Window: Equatable, Sendable, CustomStringConvertible {
        public var x: Double, y: Double, width: Double, height: Double
        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x; self.y = y; self.width = width; self.height = height
        }
        public var description: String { "\(width)x\(height)+\(x)+\(y)" }
        /// The window `f` (0...1) of the way from `self` to `other`, each side linearly.
        public func interpolated(to other: Window, _ f: Double) -> Window {
            Window(x: x + (other.x - x) * f, y: y + (other.y - y) * f,
                   width: width + (other.width - width) * f, height: height + (other.height - height) * f)
        }
    }

    /// A stable 64-bit seed for the motion of the item with `source` (its path or URL): FNV-1a
    /// over its UTF-8 bytes (Fowler, Noll, Vo; the 64-bit offset basis and prime of the
    /// reference), then SplitMix64's finaliser so every bit depends on every byte.
    public static func seed(source: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in source.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        var z = h &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The size in pixels of the source prepared for a picture of `imageWidth` x `imageHeight`
    /// (upright) on a `screenWidth` x `screenHeight` screen: the screen times ``zoom`` along the
    /// picture's short axis (so the smallest window is the screen's size: never enlarged), and
    /// along its long axis as far as the picture's aspect goes, at most ``maxExtent`` times the
    /// screen's. The picture is placed into it as `fill` (centre-cropped).
    public static func sourceSize(imageWidth: Int, imageHeight: Int, screenWidth: Int,
                                  screenHeight: Int) -> (width: Int, height: Int) {
        let screenAspect = Double(screenWidth) / Double(screenHeight)
        let imageAspect = imageHeight > 0 && imageWidth > 0 ? Double(imageWidth) / Double(imageHeight) : screenAspect
        let w = Double(screenWidth) * zoom, h = Double(screenHeight) * zoom
        if imageAspect >= screenAspect {
            let aspect = min(imageAspect, screenAspect * maxExtent)
            return (max(1, Int((h * aspect).rounded())), max(1, Int(h.rounded())))
        }
        let aspect = max(imageAspect, screenAspect / maxExtent)
        return (max(1, Int(w.rounded())), max(1, Int((w / aspect).rounded())))
    }

    /// The most bytes a source takes on a `screenWidth` x `screenHeight` screen (XRGB8888, 4 bytes
    /// a pixel): the screen's bytes times ``zoom``² times ``maxExtent``.
    public static func sourceBytes(screenWidth: Int, screenHeight: Int) -> Int {
        Int((Double(screenWidth * screenHeight * 4) * zoom * zoom * maxExtent).rounded(.up))
    }

    /// The start and end windows of the motion with `seed` over a `sourceWidth` x `sourceHeight`
    /// source on a `screenWidth` x `screenHeight` screen (see ``KenBurns``).
    public static func path(seed: UInt64, sourceWidth: Int, sourceHeight: Int, screenWidth: Int,
                            screenHeight: Int) -> (start: Window, end: Window) {
        let sw = Double(max(1, sourceWidth)), sh = Double(max(1, sourceHeight))
        let aspect = Double(max(1, screenWidth)) / Double(max(1, screenHeight))
        // The largest window of the screen's aspect, and the smallest.
        let (lw, lh) = sw / sh >= aspect ? (sh * aspect, sh) : (sw, sw / aspect)
        let large = (w: lw, h: lh), small = (w: lw / zoom, h: lh / zoom)
        let zoomIn = seed & 1 == 0
        let forward = (seed >> 1) & 1 == 0
        // The cross axis keeps one place, 0.2 ... 0.8 of its free room.
        let cross = 0.2 + 0.6 * Double((seed >> 8) & 0xFFFF) / 65535
        let horizontal = sw - small.w >= sh - small.h
        func place(_ size: (w: Double, h: Double), along f: Double) -> Window {
            let fx = horizontal ? f : cross, fy = horizontal ? cross : f
            return Window(x: (sw - size.w) * fx, y: (sh - size.h) * fy, width: size.w, height: size.h)
        }
        let a = place(zoomIn ? large : small, along: forward ? 0 : 1)
        let b = place(zoomIn ? small : large, along: forward ? 1 : 0)
        return (a, b)
    }

    /// The window at `progress` (0...1, clamped) of the motion
    /// (``path(seed:sourceWidth:sourceHeight:screenWidth:screenHeight:)``): linear in progress, so
    /// the picture drifts at a constant speed.
    public static func window(seed: UInt64, progress: Double, sourceWidth: Int, sourceHeight: Int,
                              screenWidth: Int, screenHeight: Int) -> Window {
        let (start, end) = path(seed: seed, sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                                screenWidth: screenWidth, screenHeight: screenHeight)
        let p = progress.isFinite ? min(1, max(0, progress)) : 0
        return start.interpolated(to: end, p)
    }
}
