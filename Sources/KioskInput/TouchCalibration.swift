// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// A calibration of the touch panel against the display: a 2x3 affine matrix applied to
/// *normalized* device coordinates (0...1 across each axis's range), exactly like libinput's
/// `LIBINPUT_CALIBRATION_MATRIX` udev property:
///
///     x' = a * x + b * y + c
///     y' = d * x + e * y + f
///
/// The result is the position on the panel, normalized (0...1 across the panel's width and
/// height, before `--rotate` is undone). `--touch-calibration` takes either the six numbers
/// (`"0 1 0 -1 0 1"`) or the shorthands `swap-xy`, `invert-x`, `invert-y`, comma separated
/// (xf86-input-evdev's SwapAxes / InvertX / InvertY: the swap comes first, then the inversions,
/// whatever the order written).
public struct TouchCalibration: Equatable, Sendable, CustomStringConvertible {
    public var a: Double, b: Double, c: Double
    public var d: Double, e: Double, f: Double

    public init(_ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double, _ f: Double) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.e = e; self.f = f
    }

    /// `1 0 0 0 1 0`: the panel lies exactly on the display.
    public static let identity = TouchCalibration(1, 0, 0, 0, 1, 0)
    /// Device x runs along the panel's y and vice versa.
    public static let swapXY = TouchCalibration(0, 1, 0, 1, 0, 0)
    /// Device x runs right to left.
    public static let invertX = TouchCalibration(-1, 0, 1, 0, 1, 0)
    /// Device y runs bottom to top.
    public static let invertY = TouchCalibration(1, 0, 0, 0, -1, 1)

    /// Applies the matrix to a normalized device position; returns the normalized panel position.
    public func apply(x: Double, y: Double) -> (x: Double, y: Double) {
        (a * x + b * y + c, d * x + e * y + f)
    }

    /// `self` after `first`: the calibration that applies `first`, then `self`.
    public func after(_ first: TouchCalibration) -> TouchCalibration {
        TouchCalibration(a * first.a + b * first.d, a * first.b + b * first.e, a * first.c + b * first.f + c,
                         d * first.a + e * first.d, d * first.b + e * first.e, d * first.c + e * first.f + f)
    }

    /// The six numbers, `a b c d e f`.
    public var description: String {
        func number(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v) }
        return [a, b, c, d, e, f].map(number).joined(separator: " ")
    }

    /// Parses a `--touch-calibration` value: six finite numbers separated by white space or
    /// commas (`"-1 0 1 0 1 0"`), or one or more of `swap-xy`, `invert-x`, `invert-y` separated
    /// by commas.
    ///
    /// - Throws: ``InputError/invalidCalibration(value:reason:)`` with the value as given: an
    ///   empty value, an unknown or repeated word, a count other than six, a number that does not
    ///   parse or is not finite, or a matrix whose 2x2 part is singular (it would squash every
    ///   touch onto a line).
    public static func parse(_ text: String) throws(InputError) -> TouchCalibration {
        func fail(_ reason: String) -> InputError { .invalidCalibration(value: text, reason: reason) }
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty { throw fail("empty value") }
        // Six numbers (white space or commas between them), else a list of shorthands.
        let tokens = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
        if !tokens.contains(where: { Double($0) != nil }) {
            var seen: Set<String> = []
            for rawWord in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
                let word = String(rawWord).trimmingWhitespace().lowercased()
                guard ["swap-xy", "invert-x", "invert-y"].contains(word) else {
                    throw fail(word.isEmpty ? "empty item in the list" : "unknown word '\(word)'")
                }
                guard seen.insert(word).inserted else { throw fail("'\(word)' given twice") }
            }
            var result = TouchCalibration.identity
            if seen.contains("swap-xy") { result = .swapXY }
            if seen.contains("invert-x") { result = TouchCalibration.invertX.after(result) }
            if seen.contains("invert-y") { result = TouchCalibration.invertY.after(result) }
            return result
        }
        let words = tokens
        guard words.count == 6 else { throw fail("\(counted(words.count, "number")), not 6") }
        var numbers: [Double] = []
        for word in words {
            guard let value = Double(word), value.isFinite else { throw fail("'\(word)' is not a finite number") }
            numbers.append(value)
        }
        let result = TouchCalibration(numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
        // Real calibrations are near ±1 with offsets within the screen; beyond ±100 every touch
        // would land on an edge or a corner.
        if let wild = numbers.first(where: { abs($0) > 100 }) {
            throw fail("\(wild) is out of range (each number must be within -100...100)")
        }
        let determinant = result.a * result.e - result.b * result.d
        if !(abs(determinant) >= 1e-3) {
            throw fail("the matrix is singular or nearly so (a*e - b*d = \(determinant))")
        }
        return result
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[start ... end])
    }
}
