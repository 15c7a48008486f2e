// SPDX-License-Identifier: Apache-2.0
/// Turns a ``Scene`` into pixels: picks or blends the slot frames, draws the placeholder and
/// "no images" screens and the page dots. Pure: no clock, no device.
///
/// All frames are XRGB8888 at the renderer's size (the display's logical size).
public final class SceneRenderer {
    /// Frame width and height in pixels.
    public let width: Int, height: Int
    /// The letterbox / placeholder colour.
    public let background: RGBColor
    /// Draws the words of the placeholder and "no images" screens (nil: plain background).
    public let painter: (any TextPainter)?
    /// Blended into every frame rendered (``FrameOverlay``); nil: none.
    public var frameOverlay: (any FrameOverlay)?
    /// Text on a slot whose image is not ready yet.
    public static let placeholderText = "Loading\u{2026}"
    /// Text of the screen shown when the playlist is empty: the formats shown by the names their
    /// files go by (``ImageFormat/shown``: "Add JPEG, PNG, WebP, HEIC, AVIF or GIF").
    public static let noImagesText = "No images to show\n\nAdd "
        + ImageFormat.listed(ImageFormat.shown.map { $0.alias ?? $0.title }, "or") + "\nfiles to the show's sources"
    /// The empty screen's words while a remote manifest was never had (none fetched in this run,
    /// none stored): the show waits for it, retrying as docs/manifest.md says.
    public static let waitingForManifestText = "Waiting for the show\n\nIts manifest could not be\nfetched yet; trying again"
    /// The empty screen's words when the playlist has items but none of them could be shown
    /// (each failed to read, download or decode; each is tried again, and the log says why).
    public static let noneShownText = "No image could be shown\n\nThe show's images could not be\nloaded: see the log"
    /// Text of that screen when the playlist has items but none is in its schedule now.
    public static let nothingScheduledText = "Nothing is scheduled now\n\nThe show's items are outside\ntheir schedules"
    /// The empty screen's words when a SOURCE does not exist: what is missing (`folder` false:
    /// an image file), its `path`, the `reason` when it is not simply absent (`stat`'s error,
    /// "Permission denied"), and that the show starts by itself once it is there.
    /// `heading`: the first line when the SOURCE is there but cannot be used (permission
    /// denied, a symbolic link loop); nil: "Folder not found" / "Image file not found".
    public static func missingSourceText(path: String, folder: Bool, reason: String? = nil,
                                         heading: String? = nil) -> String {
        (heading ?? (folder ? "Folder not found" : "Image file not found")) + "\n\n" + path
            + (reason.map { "\n" + $0 } ?? "")
            + "\n\nThe show starts when it appears"
    }
    /// What the "no images" screen says (``noImagesText``, ``waitingForManifestText``,
    /// ``noneShownText``, ``nothingScheduledText`` or ``missingSourceText(path:folder:reason:)``).
    public var noImagesMessage = noImagesText {
        didSet { if noImagesMessage != oldValue { noImagesFrame = nil } }
    }

    /// Splits the full-frame kernels (blend, slide) by rows across cores; nil: the caller's thread.
    public var rows: RowSplitter?

    /// The page-dot strips made for the plane path (``layers(_:slots:)``), one per highlighted dot.
    var dotStrips: [(count: Int, current: Int, layer: FrameLayer)] = []

    private var placeholderFrame: Bitmap?
    private var noImagesFrame: Bitmap?
    /// Scratch frame for blends and dots; allocated on first need, dropped by ``releaseScratch()``.
    private var scratch: Bitmap?
    /// Second scratch frame: the blended picture of a slide (a finger caught a cross-fade).
    private var pictureScratch: Bitmap?
    /// The Ken Burns views drawn for the frame being rendered and the last one, by slot: the
    /// layer each shows and its screen-sized frame (at most three: a drag shows the picture, a
    /// fade caught in it and the neighbour).
    private var kenBurnsViews: [Int: (layer: Scene.Layer, frame: Bitmap)] = [:]

    public init(width: Int, height: Int, background: RGBColor, painter: (any TextPainter)? = nil) {
        self.width = width
        self.height = height
        self.background = background
        self.painter = painter
    }

    /// Renders `scene` and returns the frame to present. `slots[i]` is the prepared frame of
    /// physical slot `i` (nil when it has none). The result is either one of those frames
    /// itself (a plain image on screen costs no copy) or the renderer's scratch frame; it is
    /// valid until the next call. A slot the scene names but `slots` lacks draws as the placeholder.
    public func render(_ scene: Scene, slots: [Bitmap?]) -> Bitmap {
        let sliding = scene.offset != 0
        let base = frame(for: scene.base, slots: slots)
        var out = base
        if let overlay = scene.overlay, scene.weight > 0 {
            let top = frame(for: overlay, slots: slots)
            if scene.weight >= 256 {
                out = top
            } else {
                let s = sliding ? pictureFrame() : scratchFrame()
                Compositor.blend(base, top, weight: scene.weight, into: s, rows: rows)
                out = s
            }
        }
        if sliding {
            let s = scratchFrame()
            let neighbour = scene.neighbour.map { frame(for: $0, slots: slots) } ?? placeholder()
            Compositor.slide(out, neighbour: neighbour, offset: scene.offset, into: s, rows: rows)
            out = s
        }
        if let dots = scene.dots, dots.count > 1 {
            let s = scratchFrame()
            if out !== s { s.pixels.update(from: out.pixels, count: s.pixelCount) }
            Compositor.drawPageDots(into: s, count: dots.count, current: dots.current)
            out = s
        }
        if let frameOverlay {
            let s = scratchFrame()
            if out !== s { s.pixels.update(from: out.pixels, count: s.pixelCount) }
            frameOverlay.blend(into: s)
            out = s
        }
        return out
    }

    /// Draws the placeholder and "no images" screens again on their next use (their painter can
    /// now draw words it could not before).
    public func forgetMessageFrames() { placeholderFrame = nil; noImagesFrame = nil }

    /// Frees the scratch frame (the frame loop calls this while nothing animates, to keep the
    /// resident memory down to the slot frames).
    public func releaseScratch() { scratch = nil; pictureScratch = nil; kenBurnsViews = [:] }

    private func pictureFrame() -> Bitmap {
        if let s = pictureScratch { return s }
        let s = Bitmap(uninitializedWidth: width, height: height)  // every use overwrites it whole
        pictureScratch = s
        return s
    }

    private func scratchFrame() -> Bitmap {
        if let s = scratch { return s }
        let s = Bitmap(uninitializedWidth: width, height: height)  // every use overwrites it whole
        scratch = s
        return s
    }

    func frame(for layer: Scene.Layer, slots: [Bitmap?]) -> Bitmap {
        switch layer {
        case .slot(let i):
            if i < slots.count, let b = slots[i], b.width == width, b.height == height { return b }
            return placeholder()
        case .kenBurns(let i, let seed, let progress):
            guard i < slots.count, let source = slots[i] else { return placeholder() }
            if let view = kenBurnsViews[i], view.layer == layer { return view.frame }
            let frame = kenBurnsViews[i]?.frame ?? Bitmap(uninitializedWidth: width, height: height)
            let window = KenBurns.window(seed: seed, progress: progress, sourceWidth: source.width,
                                         sourceHeight: source.height, screenWidth: width, screenHeight: height)
            Compositor.resampleBilinear(source, window: window, into: frame, rows: rows)
            kenBurnsViews[i] = (layer, frame)
            return frame
        case .placeholder:
            return placeholder()
        case .noImages:
            if let f = noImagesFrame { return f }
            let f = Bitmap(width: width, height: height)
            Compositor.drawMessage(into: f, noImagesMessage, background: background, painter: painter)
            noImagesFrame = f
            return f
        }
    }

    func placeholder() -> Bitmap {
        if let f = placeholderFrame { return f }
        let f = Bitmap(width: width, height: height)
        Compositor.drawMessage(into: f, Self.placeholderText, background: background, painter: painter)
        placeholderFrame = f
        return f
    }
}
