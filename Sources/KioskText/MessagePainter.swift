// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// The status screens' words (placeholder, "no images") drawn with a ``TextRenderer``: the
/// font's size is ``shareOfHeight`` of the frame's height (54 px on a 1080-line screen, 24
/// on 480, 108 on 2160), reduced until every line fits 90 % of the width; the block is
/// centred both ways. Lines are never wrapped or cut: the sentences are the program's own.
///
/// Runs on the thread that owns its renderer (the frame loop's).
public final class MessagePainter: TextPainter {
    /// The font size as a share of the frame height: 1/20.
    public static let shareOfHeight = 1.0 / 20
    public let renderer: TextRenderer

    public init(renderer: TextRenderer) { self.renderer = renderer }

    /// The pixel size ``drawMessage(_:into:color:)`` uses for `text` in a `width` x `height` frame.
    public func pixelSize(for text: String, width: Int, height: Int) -> Int {
        var size = max(8, Int((Double(height) * Self.shareOfHeight).rounded()))
        let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
        while size > 8 {
            let l = renderer.layout(text, pixelSize: size, maxWidth: .max, maxLines: lineCount)
            if l.width <= width * 9 / 10 && l.height <= height * 9 / 10 { break }
            size = size * 9 / 10
        }
        return size
    }

    public func drawMessage(_ text: String, into frame: Bitmap, color: RGBColor) {
        let size = pixelSize(for: text, width: frame.width, height: frame.height)
        let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
        let layout = renderer.layout(text, pixelSize: size, maxWidth: .max, maxLines: lineCount)
        renderer.draw(layout, into: frame, x: 0, y: (frame.height - layout.height) / 2, width: frame.width,
                      color: color)
    }
}
