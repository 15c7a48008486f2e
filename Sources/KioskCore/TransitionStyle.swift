// SPDX-License-Identifier: Apache-2.0
/// How the show goes from one picture to the next on its own (auto-advance) and on a move asked
/// for (a signal, the control socket, MQTT): `--transition`, the manifest's `transition`, an
/// item's own (docs/carousel.md "Transitions"). A finger's drag and settle are the same whatever
/// the style.
public enum TransitionStyle: String, CaseIterable, Sendable {
    /// A cross-fade over the fade time, eased in and out (``Easing/easeInOutWeight(elapsed:total:)``).
    case fade
    /// The next picture scrolls in sideways beside the current one over the fade time, eased in
    /// and out (``Easing/easeInOutFraction(elapsed:total:)``), in the show's direction (forward: in
    /// from the right), the two side by side with no blend: the geometry of a finger's drag.
    case slide
    /// The next picture at once: no frame between the two.
    case cut
}
