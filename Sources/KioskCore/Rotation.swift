/// Clockwise rotation of the picture on a screen mounted in portrait or upside down
/// (`--rotate`, SPEC section 1). The compositor draws at the *logical* size (width and height
/// swapped for 90 and 270); the display rotates while copying to scanout.
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
}
