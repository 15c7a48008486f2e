// SPDX-License-Identifier: Apache-2.0
/// The carousel's settings (docs/carousel.md).
public struct CarouselConfig: Equatable, Sendable {
    /// Time from one image being fully shown to the next being fully shown (default 5 s); an
    /// item's own ``PlaylistItem/duration`` overrides it. The cross-fade is part of it.
    public var interval: Duration
    /// Length of a cross-fade, and of the fade-in of a late image (default 500 ms, eased in
    /// and out). Clamped to the interval.
    public var fade: Duration
    /// Which way auto-advance goes.
    public var direction: Direction
    /// Whether scenes carry page dots.
    public var showDots: Bool
    /// The logical screen width in pixels: how far a completed swipe moves the picture.
    public var screenWidth: Int
    /// How long the picture takes to settle after a finger lets go (to the neighbour or back):
    /// 250 ms, eased out (``Easing/easeOutFraction(elapsed:total:)``).
    public var settle: Duration
    /// The first image of the show, ready within this of the start, appears at once instead of
    /// fading in over the placeholder (2 s: natively its decode takes under 100 ms, under QEMU's
    /// TCG 0.85-0.95 s on a quiet host and more on a loaded one; past the grace the placeholder's
    /// words load the text libraries and the photo then fades in over it, which delayed the
    /// first photo by 0.6-2.5 s more than the decode under TCG: docs/boot.md).
    public var startGrace: Duration = .seconds(2)
    /// How long an item whose turn came may take to be ready (its download, its decode) before
    /// the show goes on past it to one that is ready (2 s, as ``startGrace``: longer than a slow
    /// decode under emulation; docs/carousel.md "Ready first"). The next item is asked for a
    /// whole interval ahead, so only one that is slow waits that long.
    public var readyWait: Duration = .seconds(2)
    /// A release faster than this (logical pixels per second, sideways) is a flick and completes
    /// the move however short the drag; nil means a third of ``screenWidth`` per second, at
    /// least 300 px/s.
    public var flickVelocity: Double?
    /// How a move goes (`--transition`): fade, slide or cut; an item's own
    /// (``PlaylistItem/transition``) wins for the move that brings it on screen.
    public var transition: TransitionStyle = .fade
    /// `--ken-burns`: each picture pans and zooms slowly while it is on screen
    /// (``KenBurns``, docs/carousel.md "Ken Burns"); the scene then names the moving view of
    /// each slot (``Scene/Layer/kenBurns(slot:seed:progress:)``).
    public var kenBurns = false

    public init(interval: Duration = .seconds(5), fade: Duration = .milliseconds(500),
                direction: Direction = .forward, showDots: Bool = false,
                screenWidth: Int = 1920, settle: Duration = .milliseconds(250), flickVelocity: Double? = nil) {
        self.interval = interval
        self.fade = fade
        self.direction = direction
        self.showDots = showDots
        self.screenWidth = screenWidth
        self.settle = settle
        self.flickVelocity = flickVelocity
    }

    /// The seconds an interval or an item's duration may take, wherever it comes from (the
    /// command line, a manifest, a playlist): 50 ms to a day. Shorter would ask for moves
    /// faster than frames; zero would ask for endless moves at one instant.
    public static let intervalRange: ClosedRange<Double> = 0.05...86_400

    /// ``flickVelocity`` or its default.
    public var effectiveFlickVelocity: Double { flickVelocity ?? max(300, Double(screenWidth) / 3) }

    /// The fade as run: ``fade``, but never longer than ``interval`` (the one place that rule
    /// is kept, with ``applyOverrides(interval:fade:)``).
    public var effectiveFade: Duration { min(fade, interval) }

    /// Applies a manifest's show-wide `interval` and `fade` over these settings (nil keeps the
    /// current one; the interval first); a fade given is cut to the interval then in force.
    public mutating func applyOverrides(interval: Duration?, fade: Duration?) {
        if let interval { self.interval = max(interval, .milliseconds(Int64(Self.intervalRange.lowerBound * 1000))) }
        if let fade { self.fade = min(fade, self.interval) }
    }
}
