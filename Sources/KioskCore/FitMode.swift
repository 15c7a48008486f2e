// SPDX-License-Identifier: Apache-2.0
/// How an image is placed in the frame (`--fit`, docs/images.md).
public enum FitMode: String, CaseIterable, Sendable {
    /// The whole image, scaled to touch two edges, letterboxed (or pillarboxed) on the background colour.
    case fit
    /// The image covers the frame and is centre-cropped.
    case fill
    /// The image is scaled to the frame's size, ignoring its aspect ratio.
    case stretch
    /// Placed as ``fit``, with the letterbox filled by the same image scaled to fill the frame,
    /// strongly blurred and dimmed (``Compositor/fillLetterboxBlurred(_:imageRect:)``).
    case blur
}

/// An axis-aligned rectangle in pixels; may extend past the frame (a `fill` placement does).
public struct PixelRect: Equatable, Sendable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

extension FitMode {
    /// Where an image of `imageWidth` x `imageHeight` pixels lands in a frame of
    /// `frameWidth` x `frameHeight` pixels: the destination rectangle of the scaled image.
    /// For `fit` and `blur` it lies inside the frame (centred, the rest is letterbox); for `fill` it covers
    /// the frame and is centred (the parts outside are cropped); for `stretch` it is the frame.
    /// Sizes are rounded to the nearest pixel and never below 1.
    public func placement(imageWidth: Int, imageHeight: Int, frameWidth: Int, frameHeight: Int) -> PixelRect {
        precondition(imageWidth > 0 && imageHeight > 0 && frameWidth > 0 && frameHeight > 0)
        switch self {
        case .stretch:
            return PixelRect(x: 0, y: 0, width: frameWidth, height: frameHeight)
        case .fit, .fill, .blur:
            // Compare imageW/imageH with frameW/frameH without floating point.
            let imageWider = imageWidth * frameHeight > frameWidth * imageHeight
            let matchWidth = (self != .fill) == imageWider
            let w: Int, h: Int
            if matchWidth {
                w = frameWidth
                h = max(1, (imageHeight * frameWidth + imageWidth / 2) / imageWidth)
            } else {
                h = frameHeight
                w = max(1, (imageWidth * frameHeight + imageHeight / 2) / imageHeight)
            }
            return PixelRect(x: (frameWidth - w) / 2, y: (frameHeight - h) / 2, width: w, height: h)
        }
    }
}
