// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore

@Suite struct EasingTests {
    @Test func endsAndMidpoint() {
        #expect(Easing.easeInOutWeight(elapsed: 0, total: 1000) == 0)
        #expect(Easing.easeInOutWeight(elapsed: 1000, total: 1000) == 256)
        #expect(Easing.easeInOutWeight(elapsed: 500, total: 1000) == 128)
        // p = 1/4: 3/16 - 2/64 = 10/64, * 256 = 40; p = 3/4: 256 - 40 = 216
        #expect(Easing.easeInOutWeight(elapsed: 250, total: 1000) == 40)
        #expect(Easing.easeInOutWeight(elapsed: 750, total: 1000) == 216)
    }

    @Test func outOfRangeClamps() {
        #expect(Easing.easeInOutWeight(elapsed: -5, total: 1000) == 0)
        #expect(Easing.easeInOutWeight(elapsed: 5000, total: 1000) == 256)
        #expect(Easing.easeInOutWeight(elapsed: 0, total: 0) == 256)
    }

    @Test func monotonicAndSymmetric() {
        for total: Int64 in [7, 1000, 500_000_000, 86_400_000_000_000] {
            var previous = 0
            let steps: Int64 = 1000
            for step in 0...steps {
                let t = total * step / steps
                let w = Easing.easeInOutWeight(elapsed: t, total: total)
                #expect(w >= previous, "total \(total) t \(t)")
                previous = w
                let mirror = Easing.easeInOutWeight(elapsed: total - t, total: total)
                #expect(abs(w + mirror - 256) <= 1, "total \(total) t \(t)")
            }
        }
    }

    @Test func easesInAndOut() {
        // Slower than linear in the first quarter, faster in the middle.
        #expect(Easing.easeInOutWeight(elapsed: 100, total: 1000) < 26)
        #expect(Easing.easeInOutWeight(elapsed: 600, total: 1000) - Easing.easeInOutWeight(elapsed: 400, total: 1000)
                    > 51)
    }
}
