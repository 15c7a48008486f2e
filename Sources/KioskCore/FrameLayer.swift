// SPDX-License-Identifier: Apache-2.0
/// One picture of a frame described as layers (``SceneRenderer/layers(_:slots:)``), for a display
/// whose controller stacks and blends them itself (KMS planes, docs/planes.md): the bitmap, where
/// it goes, and how much of it is seen. The layers of a frame stack bottom to top; each covers
/// its rectangle, blended over what is below it by ``alpha`` (and, for ``premultiplied``
/// layers, by each pixel's own alpha).
///
/// The bitmap is borrowed: it is never written again while a layer names it (slot frames are not
/// written once prepared; the renderer's dot strips are made anew for each change), so a display
/// may keep a copy of it (a framebuffer) keyed by the bitmap's identity.
public struct FrameLayer {
    /// The pixels: XRGB8888 (opaque, the top byte ignored), or ARGB8888 with premultiplied alpha
    /// when ``premultiplied`` (bytes B, G, R, A in memory; each colour already multiplied by A/255).
    public var bitmap: Bitmap
    /// Where the bitmap's top-left pixel lands in the frame, logical pixels from the frame's
    /// top-left corner; may be negative or past the edge (a picture sliding out).
    public var x: Int, y: Int
    /// The size it is drawn at, pixels: the bitmap's own size, or another (scaled).
    public var width: Int, height: Int
    /// How much of the layer is seen: 0 (not at all) ... 0xFFFF (wholly), as the KMS plane
    /// property "alpha" (drm_blend.c): `out = layer × alpha + below × (1 − alpha)`.
    public var alpha: UInt16
    /// The bitmap carries premultiplied per-pixel alpha (ARGB8888).
    public var premultiplied: Bool

    /// Fully opaque.
    public static let opaque: UInt16 = 0xFFFF

    public init(bitmap: Bitmap, x: Int = 0, y: Int = 0, width: Int? = nil, height: Int? = nil,
                alpha: UInt16 = FrameLayer.opaque, premultiplied: Bool = false) {
        self.bitmap = bitmap
        self.x = x; self.y = y
        self.width = width ?? bitmap.width
        self.height = height ?? bitmap.height
        self.alpha = alpha
        self.premultiplied = premultiplied
    }

    /// The plane alpha for a cross-fade weight (0...256, ``Compositor/blend(_:_:weight:into:)``):
    /// `weight × 0xFFFF / 256`, rounded, so 0 and 256 map to 0 and 0xFFFF and 128 to 0x8000.
    public static func alpha(forWeight weight: Int) -> UInt16 {
        let w = min(256, max(0, weight))
        return UInt16((w * 0xFFFF + 128) / 256)
    }

    /// True when the layer is its bitmap's size at (0, 0) of a `width` x `height` frame, opaque:
    /// it alone makes the whole frame.
    public func coversFrame(width: Int, height: Int) -> Bool {
        x == 0 && y == 0 && self.width == width && self.height == height && !premultiplied && alpha == Self.opaque
    }
}

/// How the layers of a frame give the same picture as the composed frame
/// (``SceneRenderer/render(_:slots:)``): the reference for the tests and for a display that
/// cannot stack them (the layers composed on the CPU, in the renderer's formulas).
public enum LayerComposer {
    /// Composes `layers` over `background` into `frame` (XRGB8888): an opaque layer at full alpha
    /// is copied, one at partial alpha is blended with ``Compositor/blend(_:_:weight:into:)``'s
    /// formula (alpha taken back to a 0...256 weight), a premultiplied layer is composed with
    /// `out = src + dst × (255 − srcA) / 255`, rounded. Scaled layers are not composed (the caller
    /// does not make them): such a layer is skipped.
    public static func compose(_ layers: [FrameLayer], background: RGBColor, into frame: Bitmap) {
        frame.fill(background.xrgb)
        for layer in layers where layer.width == layer.bitmap.width && layer.height == layer.bitmap.height {
            let x0 = max(0, layer.x), x1 = min(frame.width, layer.x + layer.width)
            let y0 = max(0, layer.y), y1 = min(frame.height, layer.y + layer.height)
            guard x0 < x1, y0 < y1 else { continue }
            let weight = (Int(layer.alpha) * 256 + 0x7FFF) / 0xFFFF
            for y in y0..<y1 {
                let dst = frame.row(y), src = layer.bitmap.row(y - layer.y)
                for x in x0..<x1 {
                    let s = src[x - layer.x]
                    if layer.premultiplied {
                        dst[x] = over(s, dst[x])
                    } else if weight >= 256 {
                        dst[x] = 0xFF00_0000 | s
                    } else {
                        dst[x] = Compositor.blendPixel(dst[x], s, UInt32(256 - weight), UInt32(weight))
                    }
                }
            }
        }
    }

    /// Premultiplied "over" of one ARGB8888 pixel onto an opaque XRGB8888 one.
    @inline(__always)
    static func over(_ s: UInt32, _ d: UInt32) -> UInt32 {
        let k = 255 &- (s >> 24)
        func ch(_ shift: UInt32) -> UInt32 {
            let v = ((s >> shift) & 0xFF) &+ (((d >> shift) & 0xFF) &* k &+ 127) / 255
            return min(255, v) << shift
        }
        return 0xFF00_0000 | ch(16) | ch(8) | ch(0)
    }
}
