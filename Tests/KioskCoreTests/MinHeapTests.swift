// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

@Suite struct MinHeapTests {
    @Test func popsInOrderWhateverThePushOrder() {
        var rng = SystemRandomNumberGenerator()
        let values = (0..<2000).map { _ in Int.random(in: -500...500, using: &rng) }
        var heap = MinHeap<Int>()
        for v in values { heap.push(v) }
        var out: [Int] = []
        while let v = heap.pop() { out.append(v) }
        #expect(out == values.sorted())
        var built = MinHeap(values)
        #expect(built.count == values.count && built.min == values.min())
        var again: [Int] = []
        while let v = built.pop() { again.append(v) }
        #expect(again == values.sorted())
        #expect(built.pop() == nil && built.isEmpty)
    }
}
