// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore

/// `--overlay clock|date`: the local time (or date) in the top right corner, formatted with
/// strftime(3) in the display's own time zone (`TZ`, else /etc/localtime: localtime_r(3)).
/// The words are rendered once per change into two small coverage masks (the white text and a
/// dark outline around it, ``outlineShare`` of the font size wide, so the time stays legible
/// on a white sky as on a black night); ``blend(into:)`` only blends those masks into the frame
/// being presented, so a frame costs no glyph work. The text changes at most once a minute with the default formats:
/// ``nextChange(after:)`` is the start of the next minute, the deadline the frame loop wakes for.
///
/// Runs on the frame loop's thread (its renderer is that thread's).
public final class ClockOverlay: FrameOverlay {
    public enum Kind: String, CaseIterable, Sendable {
        case clock, date
        /// The strftime format when `--overlay-format` is not given: "14:05" or "Tue 1 Dec 14:05".
        public var defaultFormat: String { self == .clock ? "%H:%M" : "%a %-d %b  %H:%M" }
    }

    /// The font size as a share of the frame height: 1/18 (60 px on 1080 lines).
    public static let shareOfHeight = 1.0 / 18
    /// The outline's width as a share of the font size: 1/15 (4 px at 60 px), at least 2 px.
    public static let outlineShare = 1.0 / 15
    /// How much the outline darkens the picture under it, out of 255 (0.85: a white picture
    /// becomes (38, 38, 38) there, about 15:1 against the white text by WCAG 2's contrast ratio).
    public static let outlineOpacity: UInt32 = 217
    public let format: String
    public let renderer: TextRenderer
    /// The frame size the overlay is placed in, pixels.
    public let frameWidth: Int, frameHeight: Int
    /// The text shown now ("" before the first ``update(epochSeconds:)``).
    public private(set) var text = ""
    /// The box the masks cover in the frame: left, top, width, height in pixels.
    public private(set) var box = (x: 0, y: 0, width: 0, height: 0)
    private var textMask: [UInt8] = []
    private var outlineMask: [UInt8] = []
    /// The masks as a premultiplied ARGB8888 layer, made on first use after each change.
    private var layerBitmap: Bitmap?

    public init(format: String, renderer: TextRenderer, frameWidth: Int, frameHeight: Int) {
        self.format = format
        self.renderer = renderer
        self.frameWidth = frameWidth
        self.frameHeight = frameHeight
    }

    /// `format` applied to `epochSeconds` (seconds since 1970 UTC) in the local time zone; at
    /// most 255 bytes of it.
    public static func format(_ format: String, epochSeconds: Int) -> String {
        var t = time_t(epochSeconds), parts = tm()
        guard localtime_r(&t, &parts) != nil else { return "" }
        var out = [CChar](repeating: 0, count: 256)
        let n = strftime(&out, out.count, format, &parts)
        return String(decoding: out[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The next time the text may change after `epochSeconds`: the start of the next minute (a
    /// format with seconds in it is still redrawn only once a minute).
    public static func nextChange(after epochSeconds: Int) -> Int { (epochSeconds / 60 + 1) * 60 }

    /// Formats the time; when the text differs from the one shown, renders it again. Returns
    /// true when it changed (the frame on screen must be drawn again).
    @discardableResult
    public func update(epochSeconds: Int) -> Bool {
        let now = Self.format(format, epochSeconds: epochSeconds)
        guard now != text else { return false }
        text = now
        render()
        return true
    }

    private func render() {
        layerBitmap = nil
        let size = max(10, Int((Double(frameHeight) * Self.shareOfHeight).rounded()))
        let layout = renderer.layout(text, pixelSize: size, maxWidth: frameWidth / 2, maxLines: 1)
        let radius = max(2, Int((Double(size) * Self.outlineShare).rounded())), pad = max(radius + 1, size / 8)
        let w = min(frameWidth, layout.width + 2 * pad), h = min(frameHeight, layout.height + 2 * pad)
        let margin = frameHeight / 40
        box = (max(0, frameWidth - margin - w), min(margin, frameHeight - h), w, h)
        guard w > 0, h > 0, !layout.lines.isEmpty else { textMask = []; outlineMask = []; box.width = 0; return }
        let scratch = Bitmap(width: w, height: h, fill: 0xFF00_0000)
        renderer.draw(layout, into: scratch, x: pad, y: pad, color: .white)
        textMask = (0..<scratch.pixelCount).map { UInt8((scratch.pixels[$0] >> 8) & 0xFF) }
        outlineMask = Self.outline(textMask, width: w, height: h, radius: radius)
            .map { UInt8(UInt32($0) * Self.outlineOpacity / 255) }
    }

    /// The dilation of a coverage mask (`width` x `height`, one byte a pixel) by a disc of
    /// `radius` pixels: each pixel the greatest coverage within the disc around it, so the
    /// outline's edge is as antialiased as the glyphs'. Done once per text change (a 1080p
    /// clock: about 50 neighbours for each of 20000 pixels).
    static func outline(_ mask: [UInt8], width: Int, height: Int, radius: Int) -> [UInt8] {
        var offsets: [(dx: Int, dy: Int)] = []
        for dy in -radius...radius {
            for dx in -radius...radius where dx * dx + dy * dy <= radius * radius + radius { offsets.append((dx, dy)) }
        }
        var out = [UInt8](repeating: 0, count: mask.count)
        for y in 0..<height {
            for x in 0..<width {
                let v = mask[y * width + x]
                guard v != 0 else { continue }
                for o in offsets {
                    let nx = x + o.dx, ny = y + o.dy
                    guard nx >= 0, nx < width, ny >= 0, ny < height else { continue }
                    if out[ny * width + nx] < v { out[ny * width + nx] = v }
                }
            }
        }
        return out
    }

    /// The clock as a layer of its own (a KMS plane, docs/planes.md): a premultiplied ARGB8888
    /// bitmap of ``box``'s size at ``box``, the outline (black, coverage `s`) and the text (white,
    /// coverage `t`) in one: alpha `255 − (255 − s)(255 − t)/255`, colour `t`, so that over a
    /// picture it gives what ``blend(into:)`` draws, within rounding. A new bitmap per change of
    /// text (a layer's bitmap is never written again).
    public var layer: FrameOverlayLayer {
        guard box.width > 0, box.height > 0 else { return .empty }
        if let layerBitmap { return .layer(FrameLayer(bitmap: layerBitmap, x: box.x, y: box.y, premultiplied: true)) }
        let b = Bitmap(width: box.width, height: box.height, hasAlpha: true, fill: 0)
        for i in 0..<b.pixelCount {
            let s = UInt32(outlineMask[i]), t = UInt32(textMask[i])
            if s == 0 && t == 0 { continue }
            let a = 255 &- ((255 &- s) &* (255 &- t) &+ 127) / 255
            b.pixels[i] = a << 24 | t << 16 | t << 8 | t
        }
        layerBitmap = b
        return .layer(FrameLayer(bitmap: b, x: box.x, y: box.y, premultiplied: true))
    }

    /// Blends the outline (black) then the text (white) into `frame` (XRGB8888, the overlay's
    /// frame size) at ``box``; a frame of another size is left alone.
    public func blend(into frame: Bitmap) {
        guard box.width > 0, frame.width == frameWidth, frame.height == frameHeight else { return }
        textMask.withUnsafeBufferPointer { text in
            outlineMask.withUnsafeBufferPointer { outline in
                for y in 0..<box.height {
                    let row = frame.row(box.y + y) + box.x, m = y * box.width
                    for x in 0..<box.width {
                        let s = UInt32(outline[m + x]), t = UInt32(text[m + x])
                        if s == 0 && t == 0 { continue }
                        var v = row[x]
                        if s != 0 {
                            let k = 255 &- s
                            v = ((((v >> 16) & 0xFF) &* k / 255) << 16) | ((((v >> 8) & 0xFF) &* k / 255) << 8)
                                | ((v & 0xFF) &* k / 255)
                        }
                        if t != 0 {
                            let k = 255 &- t
                            let r = (((v >> 16) & 0xFF) &* k &+ 255 &* t) / 255
                            let g = (((v >> 8) & 0xFF) &* k &+ 255 &* t) / 255
                            let b = ((v & 0xFF) &* k &+ 255 &* t) / 255
                            v = r << 16 | g << 8 | b
                        }
                        row[x] = 0xFF00_0000 | v
                    }
                }
            }
        }
    }
}
