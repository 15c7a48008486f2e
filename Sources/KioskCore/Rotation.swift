// SPDX-License-Identifier: Apache-2.0
/// Clockwise rotation of the picture on a screen mounted in portrait or upside down
/// (`--rotate`, docs/displays.md). The compositor draws at the *logical* size (width and height
/// swapped for 90 and 270); the display turns the frame by the rotation's angle while copying it
/// to the *panel* (scanout), and touch positions on the panel are turned back the other way.
///
/// Both directions are here, in pixels and in normalized coordinates (0...1 across the frame).
/// With `.clockwise90` the logical frame's top row ends up along the panel's *right* edge (its
/// top-left pixel in the panel's top-right corner); with `.clockwise270` along the *left* edge
/// (top-left pixel in the panel's bottom-left corner); with `.upsideDown` along the bottom edge,
/// mirrored both ways. In panel pixels (`px`, `py`) of a `Pw` x `Ph` panel, the logical pixel
/// (`x`, `y`) lands at:
///
/// | rotation        | px         | py         |
/// |-----------------|------------|------------|
/// | `.none`         | x          | y          |
/// | `.clockwise90`  | Pw - 1 - y | x          |
/// | `.upsideDown`   | Pw - 1 - x | Ph - 1 - y |
/// | `.clockwise270` | y          | Ph - 1 - x |
///
/// So `.clockwise90` is the right setting for a panel that has itself been turned 90 degrees
/// counter-clockwise (its own top edge now at the viewer's left); the sense is the one fbcon calls
/// FB_ROTATE_CW (`fbcon=rotate:1`).
public enum Rotation: Int, CaseIterable, Sendable {
    case none = 0
    case clockwise90 = 90
    case upsideDown = 180
    case clockwise270 = 270

    /// True for 90 and 270, where the logical width is the panel's height.
    public var swapsAxes: Bool { self == .clockwise90 || self == .clockwise270 }

    /// The logical (drawing) size for a panel of `width` x `height` pixels.
    public func logicalSize(panelWidth width: Int, panelHeight height: Int) -> (width: Int, height: Int) {
        swapsAxes ? (height, width) : (width, height)
    }

    /// The panel size, pixels, that shows a logical frame of `width` x `height` pixels.
    public func panelSize(logicalWidth width: Int, logicalHeight height: Int) -> (width: Int, height: Int) {
        swapsAxes ? (height, width) : (width, height)
    }

    // MARK: Pixels (the copy to scanout)

    /// Where the logical pixel (`x`, `y`) lands on a panel of `panelWidth` x `panelHeight`
    /// pixels (the table above).
    public func panelPixel(x: Int, y: Int, panelWidth pw: Int, panelHeight ph: Int) -> (x: Int, y: Int) {
        switch self {
        case .none: return (x, y)
        case .clockwise90: return (pw - 1 - y, x)
        case .upsideDown: return (pw - 1 - x, ph - 1 - y)
        case .clockwise270: return (y, ph - 1 - x)
        }
    }

    /// The logical pixel shown at panel pixel (`x`, `y`) of a `panelWidth` x `panelHeight` panel:
    /// the inverse of ``panelPixel(x:y:panelWidth:panelHeight:)``.
    public func logicalPixel(x px: Int, y py: Int, panelWidth pw: Int, panelHeight ph: Int) -> (x: Int, y: Int) {
        switch self {
        case .none: return (px, py)
        case .clockwise90: return (py, pw - 1 - px)
        case .upsideDown: return (pw - 1 - px, ph - 1 - py)
        case .clockwise270: return (ph - 1 - py, px)
        }
    }

    /// How a copy to the panel walks a row-major logical frame of `width` x `height` pixels:
    /// the index (in pixels, `y * width + x`) of the logical pixel at panel (0, 0), and how far
    /// the index moves for one step right (`stepX`) and one step down (`stepY`) on the panel.
    public func scan(logicalWidth width: Int, logicalHeight height: Int) -> (origin: Int, stepX: Int, stepY: Int) {
        let panel = panelSize(logicalWidth: width, logicalHeight: height)
        func index(_ px: Int, _ py: Int) -> Int {
            let p = logicalPixel(x: px, y: py, panelWidth: panel.width, panelHeight: panel.height)
            return p.y * width + p.x
        }
        let origin = index(0, 0)
        return (origin, index(1, 0) - origin, index(0, 1) - origin)
    }

    // MARK: Normalized positions (touch)

    /// The normalized logical position (0...1 across the logical frame) shown at the normalized
    /// panel position (`x`, `y`) (0...1 across the panel): the way back from a touch on the panel.
    /// For `.clockwise90` logical x = panel y and logical y = 1 - panel x.
    public func logicalPosition(panelX x: Double, panelY y: Double) -> (x: Double, y: Double) {
        switch self {
        case .none: return (x, y)
        case .clockwise90: return (y, 1 - x)
        case .upsideDown: return (1 - x, 1 - y)
        case .clockwise270: return (1 - y, x)
        }
    }

    /// The normalized panel position where the normalized logical position (`x`, `y`) is shown:
    /// the inverse of ``logicalPosition(panelX:panelY:)``.
    public func panelPosition(logicalX x: Double, logicalY y: Double) -> (x: Double, y: Double) {
        switch self {
        case .none: return (x, y)
        case .clockwise90: return (1 - y, x)
        case .upsideDown: return (1 - x, 1 - y)
        case .clockwise270: return (y, 1 - x)
        }
    }
}
