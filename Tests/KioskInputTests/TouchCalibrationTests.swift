// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskInput

@Suite struct TouchCalibrationTests {
    func close(_ p: (x: Double, y: Double), _ x: Double, _ y: Double) -> Bool {
        abs(p.x - x) < 1e-12 && abs(p.y - y) < 1e-12
    }

    @Test func matrixAsLibinputWritesIt() throws {
        // LIBINPUT_CALIBRATION_MATRIX for a panel turned 90 degrees clockwise (libinput's docs).
        let m = try TouchCalibration.parse("0 1 0 -1 0 1")
        #expect(m == TouchCalibration(0, 1, 0, -1, 0, 1))
        #expect(close(m.apply(x: 0.25, y: 0.75), 0.75, 0.75))
        #expect(try TouchCalibration.parse("  1 0 0\t0 1 0 ") == .identity)
        let scaled = try TouchCalibration.parse("1.1 0 -0.05 0 1.2 -0.1")
        #expect(close(scaled.apply(x: 0.5, y: 0.5), 0.5, 0.5))
        #expect(close(scaled.apply(x: 0, y: 0), -0.05, -0.1))
    }

    @Test func shorthands() throws {
        #expect(try TouchCalibration.parse("swap-xy") == .swapXY)
        #expect(try TouchCalibration.parse("invert-x") == .invertX)
        #expect(try TouchCalibration.parse("invert-y") == .invertY)
        #expect(close(try TouchCalibration.parse("invert-x, invert-y").apply(x: 0.2, y: 0.7), 0.8, 0.3))
        // Swap first, then invert (xf86-input-evdev), whatever the order written.
        let a = try TouchCalibration.parse("swap-xy,invert-x"), b = try TouchCalibration.parse("invert-x,swap-xy")
        #expect(a == b)
        #expect(close(a.apply(x: 0.2, y: 0.7), 0.3, 0.2))
        #expect(close(try TouchCalibration.parse("SWAP-XY,invert-y").apply(x: 0.2, y: 0.7), 0.7, 0.8))
    }

    @Test func commasMaySeparateTheSixNumbers() throws {
        #expect(try TouchCalibration.parse("0,1,0, 1,0,0") == .swapXY)
    }

    @Test(arguments: [
        ("", "empty value"),
        ("   ", "empty value"),
        ("1 0 0 0 1", "5 numbers, not 6"),
        ("1 0 0 0 1 0 0", "7 numbers, not 6"),
        ("1 0 0 0 1 x", "'x' is not a finite number"),
        ("1 0 0 0 1 nan", "'nan' is not a finite number"),
        ("nan 0 0 0 1 0", "'nan' is not a finite number"),
        ("1 0 0 0 1 inf", "'inf' is not a finite number"),
        ("0 0 0 0 0 0", "singular"),
        ("1 1 0 1 1 0", "singular"),
        ("flip-x", "unknown word 'flip-x'"),
        ("swap-xy,,invert-x", "empty item"),
        ("invert-x,invert-x", "'invert-x' given twice"),
        ("1,0,0,0,1", "5 numbers, not 6"),
        ("1e200 1e200 0 1e200 1e200 0", "out of range"),
        ("1e-300 0 0 0 1e300 0", "out of range"),
        ("0.0001 0 0 0 1 0", "singular"),
    ])
    func parseErrorsNameTheValue(_ value: String, _ reason: String) {
        #expect {
            _ = try TouchCalibration.parse(value)
        } throws: { error in
            guard let error = error as? InputError, case .invalidCalibration(let v, let r) = error else { return false }
            let text = error.description
            return v == value && r.contains(reason) && text.contains("'\(value)'")
                && text.contains("--touch-calibration") && text.contains("swap-xy")
        }
    }
}
