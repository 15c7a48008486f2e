// SPDX-License-Identifier: Apache-2.0
/// What the screen should show at one instant: a description the compositor turns into pixels.
/// Two scenes that compare equal give the same pixels, so the frame loop draws only when the
/// scene changes.
public struct Scene: Equatable, Sendable {
    /// One full-screen layer.
    public enum Layer: Equatable, Sendable {
        /// The prepared frame in physical slot 0, 1 or 2.
        case slot(Int)
        /// The Ken Burns view of the source prepared in physical slot `slot` (``KenBurns``):
        /// the window of the motion with `seed` at `progress` (0...1), resampled to the screen.
        case kenBurns(slot: Int, seed: UInt64, progress: Double)
        /// The slot's image is not ready yet (decoding, downloading).
        case placeholder
        /// The playlist is empty: a screen that says so.
        case noImages
    }

    /// The row of page dots: `count` dots, the one at `current` highlighted.
    public struct PageDots: Equatable, Sendable {
        public var count: Int
        public var current: Int
    }

    /// The layer underneath.
    public var base: Layer
    /// The layer cross-faded over ``base`` with ``weight``, or nil.
    public var overlay: Layer?
    /// How much of ``overlay`` is seen, 0...256 (256 = only the overlay); eased, not linear.
    public var weight: Int
    /// Page dots to draw on top, or nil.
    public var dots: PageDots?
    /// Sideways shift of the picture (``base`` with ``overlay`` blended in) in logical pixels,
    /// -width ... width; negative = moved towards the left. Non-zero while a finger drags the
    /// show or the picture settles after a release (docs/touch.md).
    public var offset: Int
    /// The layer that slides in beside the shifted picture: on its right when ``offset`` < 0
    /// (the next image), on its left when ``offset`` > 0 (the previous one). Ignored at offset 0.
    public var neighbour: Layer?

    public init(base: Layer, overlay: Layer? = nil, weight: Int = 0, dots: PageDots? = nil,
                offset: Int = 0, neighbour: Layer? = nil) {
        self.base = base
        self.overlay = overlay
        self.weight = weight
        self.dots = dots
        self.offset = offset
        self.neighbour = neighbour
    }
}
