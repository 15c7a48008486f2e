// SPDX-License-Identifier: Apache-2.0
/// One image of the show (docs/content.md, docs/manifest.md): where it comes from and,
/// optionally, how long it stays on screen.
public struct PlaylistItem: Equatable, Sendable {
    /// A file path or a URL, exactly as reported in `shown` and `tap` events.
    public var source: String
    /// How long this item stays (from the moment it is fully shown to the moment the next one
    /// is fully shown); nil means the show's interval.
    public var duration: Duration?
    /// How this item is fitted to the screen; nil means the show's `--fit` (or the manifest's).
    public var fit: FitMode?
    /// The SHA-256 a manifest gives for the image's bytes, 64 lowercase hex digits: a cached
    /// download is used only when its bytes have it. Nil when none was given.
    public var sha256: String?
    /// When it is in the rotation (docs/schedules.md); nil: always.
    public var schedule: ItemSchedule?
    /// Shown only while no other item is in the rotation (`"fallback": true`).
    public var fallback = false
    /// Words drawn in a band at the bottom of the picture (docs/text.md "Captions"); nil: none.
    public var caption: String?
    /// How the show moves to this item (a manifest's `transition`, docs/manifest.md); nil: the
    /// show's ``CarouselConfig/transition``.
    public var transition: TransitionStyle?

    public init(source: String, duration: Duration? = nil, fit: FitMode? = nil, sha256: String? = nil,
                schedule: ItemSchedule? = nil, fallback: Bool = false, caption: String? = nil,
                transition: TransitionStyle? = nil) {
        self.caption = caption
        self.transition = transition
        self.source = source
        self.duration = duration
        self.fit = fit
        self.sha256 = sha256
        self.schedule = schedule
        self.fallback = fallback
    }
}
