// SPDX-License-Identifier: Apache-2.0
/// Draws words into frames for the core's screens (the placeholder and "no images"): the
/// core knows what to say, not how glyphs are made. KioskText's `MessagePainter` is the one
/// the program uses (FreeType, HarfBuzz, fontconfig).
public protocol TextPainter: AnyObject {
    /// Draws `text` (lines split at "\n") into `frame` (XRGB8888), centred horizontally and
    /// vertically, in `color`, at a size that is a fixed share of the frame's height (so
    /// 800x480 and 3840x2160 look alike), smaller when a line would not fit the width.
    func drawMessage(_ text: String, into frame: Bitmap, color: RGBColor)
}

/// Something blended into every frame presented, after the scene is composed (the clock of
/// `--overlay`): it must be cheap (a small box of precomputed masks), it never draws glyphs.
public protocol FrameOverlay: AnyObject {
    /// Blends into `frame` (XRGB8888, the renderer's size), in place.
    func blend(into frame: Bitmap)
    /// The same as a layer of its own, for the plane path (default: ``FrameOverlayLayer/unavailable``).
    var layer: FrameOverlayLayer { get }
}

/// What a ``FrameOverlay`` is as a layer of its own (a KMS plane, ``SceneRenderer/layers(_:slots:)``).
public enum FrameOverlayLayer {
    /// Nothing to draw now.
    case empty
    /// This premultiplied ARGB8888 layer over the frame gives what ``FrameOverlay/blend(into:)`` draws.
    case layer(FrameLayer)
    /// It can only be blended into the frame: the frame is composed on the CPU.
    case unavailable
}

public extension FrameOverlay {
    /// The overlay as a layer; by default ``FrameOverlayLayer/unavailable``.
    var layer: FrameOverlayLayer { .unavailable }
}
