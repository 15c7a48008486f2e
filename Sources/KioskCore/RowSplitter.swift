// SPDX-License-Identifier: Apache-2.0
/// Runs per-row work on several cores: the frame kernels (``Compositor/blend(_:_:weight:into:rows:)``,
/// ``Compositor/slide(_:neighbour:offset:into:rows:)``, the displays' scanout conversion) hand it
/// the number of rows and a body that does a band of them; it calls the body with disjoint bands
/// that together cover `0 ..< rows`, some on other threads, and returns when all are done.
///
/// KioskCore owns no threads: the threads are the conformer's (KioskSystem's `ParallelRows`, made
/// to conform in KioskApp). A kernel given no splitter runs on the caller's thread alone.
public protocol RowSplitter: AnyObject {
    /// How many bands a call splits into at most: the threads, the caller's included (1: no split).
    var parallelism: Int { get }
    /// Calls `body` for disjoint bands of `0 ..< rows` whose bounds are multiples of `granularity`
    /// rows (except the end), in parallel, and returns when every band is done. `body` must only
    /// write what its band owns; it is `@escaping` because other threads call it, and the
    /// conformer must not keep it after returning.
    func splitRows(_ rows: Int, granularity: Int, _ body: @escaping (Range<Int>) -> Void)
}

public extension RowSplitter {
    func splitRows(_ rows: Int, _ body: @escaping (Range<Int>) -> Void) { splitRows(rows, granularity: 1, body) }
}

/// Calls `body` with `0 ..< rows` on the caller's thread, or through `splitter` when there is one
/// that splits.
@inline(__always)
func forEachBand(_ rows: Int, granularity: Int = 1, _ splitter: RowSplitter?, _ body: @escaping (Range<Int>) -> Void) {
    if let splitter, splitter.parallelism > 1, rows > granularity {
        splitter.splitRows(rows, granularity: granularity, body)
    } else if rows > 0 {
        body(0 ..< rows)
    }
}
