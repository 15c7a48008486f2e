// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// Draws an item's caption into its prepared slot frame, so that the cross-fade fades it with
/// the picture: a band at the bottom, the frame darkened under it (a translucent black strip,
/// ``stripOpacity``) and the words in white over a soft shadow, centred, at most two lines of
/// at most 90 % of the width (``TextRenderer/layout(_:pixelSize:maxWidth:maxLines:)``: wrapped,
/// the rest cut and ended with "…"). The font size is ``shareOfHeight`` of the frame height
/// (40 px on 1080 lines).
///
/// Runs on the thread that owns its renderer (the decode worker's).
public final class CaptionPainter {
    /// The font size as a share of the frame height: 1/27.
    public static let shareOfHeight = 1.0 / 27
    /// How much the strip darkens the picture under the caption, out of 256 (0.55).
    public static let stripOpacity = 141
    /// Most lines of a caption.
    public static let maxLines = 2
    public let renderer: TextRenderer

    public init(renderer: TextRenderer) { self.renderer = renderer }

    /// The font size for a frame `height` pixels high.
    public static func pixelSize(height: Int) -> Int { max(10, Int((Double(height) * shareOfHeight).rounded())) }

    /// The rows the band covers in a frame of `height` for `layout`: from the top of the strip
    /// to the frame's bottom.
    public static func bandTop(height: Int, layout: TextRenderer.Layout, pixelSize: Int) -> Int {
        max(0, height - layout.height - pixelSize)
    }

    /// Draws `caption` into `frame` (XRGB8888, the whole prepared slot). Blank captions (white
    /// space and characters that draw nothing only, ``TextRenderer/drawsNothing(_:)``) draw
    /// nothing. Returns the layout drawn (nil for a
    /// blank caption).
    @discardableResult
    public func draw(_ caption: String, into frame: Bitmap) -> TextRenderer.Layout? {
        // Blank: only white space and what draws nothing (BEL, ESC, RLO, U+200B ...).
        func drawn(_ s: Unicode.Scalar) -> Bool { !s.properties.isWhitespace && !TextRenderer.drawsNothing(s) }
        guard caption.unicodeScalars.contains(where: drawn) else { return nil }
        // Blank lines would take one of the two lines the band has: they are dropped (a line
        // break is any of "\n", "\r\n", "\r", U+2028; the rest of the text is kept).
        let caption = caption.split(whereSeparator: \.isNewline)
            .filter { $0.unicodeScalars.contains(where: drawn) }.joined(separator: "\n")
        let size = Self.pixelSize(height: frame.height)
        let layout = renderer.layout(caption, pixelSize: size, maxWidth: frame.width * 9 / 10, maxLines: Self.maxLines)
        let top = Self.bandTop(height: frame.height, layout: layout, pixelSize: size)
        let keep = UInt32(256 - Self.stripOpacity)
        for y in top..<frame.height {
            let row = frame.row(y)
            for x in 0..<frame.width {
                let v = row[x]
                let r = (((v >> 16) & 0xFF) * keep) >> 8, g = (((v >> 8) & 0xFF) * keep) >> 8,
                    b = ((v & 0xFF) * keep) >> 8
                row[x] = 0xFF00_0000 | r << 16 | g << 8 | b
            }
        }
        let textTop = top + size / 2
        let shadow = max(1, size / 20)
        renderer.draw(layout, into: frame, x: shadow, y: textTop + shadow, width: frame.width, color: .black,
                      opacity: 160)
        renderer.draw(layout, into: frame, x: 0, y: textTop, width: frame.width, color: .white)
        return layout
    }
}
