// SPDX-License-Identifier: Apache-2.0
/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014; the constants of Vigna's reference splitmix64.c): a small generator whose
/// sequence is fixed by its seed, for the soak and the tests that replay the same random
/// choices every run. Not for anything that must be unpredictable.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's whole state: the seed plus the golden-ratio increment per step.
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The next 64 bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound (`bound` > 0), by the remainder (its slight bias is of no matter
    /// for a soak or a test).
    public mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
