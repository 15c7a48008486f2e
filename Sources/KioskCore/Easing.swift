// SPDX-License-Identifier: Apache-2.0
/// Timing curves for transitions.
public enum Easing {
    /// The blend weight (0...256, for ``Compositor/blend(_:_:weight:into:)``) at `elapsed` of a
    /// transition lasting `total`, both in the same unit (nanoseconds, say; any magnitude).
    ///
    /// Curve: the cubic ease-in-out `3p² − 2p³` with `p = elapsed / total` (the cubic Hermite
    /// "smoothstep" of GLSL's `smoothstep(0, 1, p)`): zero slope at both ends, point-symmetric
    /// about the midpoint, so `weight(t) + weight(total − t)` is 256 within rounding and the
    /// midpoint is exactly 128. Rounded to the nearest integer.
    ///
    /// `elapsed <= 0` gives 0; `elapsed >= total` (or `total <= 0`) gives 256.
    public static func easeInOutWeight(elapsed: Int64, total: Int64) -> Int {
        if total <= 0 || elapsed >= total { return 256 }
        if elapsed <= 0 { return 0 }
        // Doubles hold the ratio to 53 bits, far finer than the 1/256 steps of the result.
        let p = Double(elapsed) / Double(total)
        let eased = p * p * (3 - 2 * p)
        return min(256, max(0, Int((eased * 256).rounded())))
    }

    /// The fraction (0...1) of the way at `elapsed` of a transition lasting `total` (same unit),
    /// on the curve of ``easeInOutWeight(elapsed:total:)`` (`3p² − 2p³`) unrounded: a slide's
    /// distance covered (docs/carousel.md "Transitions").
    ///
    /// `elapsed <= 0` gives 0; `elapsed >= total` (or `total <= 0`) gives 1.
    public static func easeInOutFraction(elapsed: Int64, total: Int64) -> Double {
        if total <= 0 || elapsed >= total { return 1 }
        if elapsed <= 0 { return 0 }
        let p = Double(elapsed) / Double(total)
        return p * p * (3 - 2 * p)
    }

    /// The fraction (0...1) of the distance covered at `elapsed` of a settle lasting `total`
    /// (same unit): the cubic ease-out `1 − (1 − p)³` with `p = elapsed / total` (Robert
    /// Penner's easeOutCubic): it leaves at three times the mean speed, so a released finger's
    /// motion carries on, and comes to rest with zero slope.
    ///
    /// `elapsed <= 0` gives 0; `elapsed >= total` (or `total <= 0`) gives 1.
    public static func easeOutFraction(elapsed: Int64, total: Int64) -> Double {
        if total <= 0 || elapsed >= total { return 1 }
        if elapsed <= 0 { return 0 }
        let q = 1 - Double(elapsed) / Double(total)
        return 1 - q * q * q
    }
}
