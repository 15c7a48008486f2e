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
}
