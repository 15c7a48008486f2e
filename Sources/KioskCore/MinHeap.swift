// SPDX-License-Identifier: Apache-2.0
/// A binary min-heap (smallest element first): O(log n) ``push(_:)`` and ``pop()``, O(1)
/// ``min``. Used where the least recently used of many entries is wanted again and again
/// without sorting them all each time (the disk cache's eviction).
public struct MinHeap<Element: Comparable>: Sendable where Element: Sendable {
    private var nodes: [Element] = []

    public init() {}

    /// Builds a heap of `elements` in O(n).
    public init(_ elements: [Element]) {
        nodes = elements
        var i = nodes.count / 2 - 1
        while i >= 0 { siftDown(i); i -= 1 }
    }

    /// Number of elements.
    public var count: Int { nodes.count }
    public var isEmpty: Bool { nodes.isEmpty }
    /// The smallest element, or nil when empty.
    public var min: Element? { nodes.first }

    /// Adds `element`: O(log n).
    public mutating func push(_ element: Element) {
        nodes.append(element)
        var i = nodes.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard nodes[i] < nodes[parent] else { break }
            nodes.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the smallest element (nil when empty): O(log n).
    public mutating func pop() -> Element? {
        guard !nodes.isEmpty else { return nil }
        nodes.swapAt(0, nodes.count - 1)
        let smallest = nodes.removeLast()
        if !nodes.isEmpty { siftDown(0) }
        return smallest
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < nodes.count, nodes[l] < nodes[m] { m = l }
            if r < nodes.count, nodes[r] < nodes[m] { m = r }
            if m == i { return }
            nodes.swapAt(i, m)
            i = m
        }
    }
}
