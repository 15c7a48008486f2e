// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
@testable import KioskSystem

@Test func bandsCoverTheRowsInOrderOnGranularityBounds() {
    #expect(ParallelRows.bands(rows: 10, parts: 3, granularity: 1) == [0..<3, 3..<6, 6..<10])
    #expect(ParallelRows.bands(rows: 2160, parts: 4, granularity: 16).map(\.count) == [528, 544, 544, 544])
    #expect(ParallelRows.bands(rows: 2160, parts: 4, granularity: 16).allSatisfy { $0.lowerBound % 16 == 0 })
    #expect(ParallelRows.bands(rows: 5, parts: 8, granularity: 1) == [0..<1, 1..<2, 2..<3, 3..<4, 4..<5])
    #expect(ParallelRows.bands(rows: 20, parts: 4, granularity: 16) == [0..<16, 16..<20])
    #expect(ParallelRows.bands(rows: 0, parts: 4, granularity: 1).isEmpty)
}

@Test func everyRowIsDoneOnceAcrossTheTeamsThreads() {
    let team = ParallelRows(threads: 4)
    #expect(team.parallelism == 4)
    let rows = 1001
    let marks = UnsafeMutablePointer<Int>.allocate(capacity: rows)
    marks.initialize(repeating: 0, count: rows)
    defer { marks.deallocate() }
    let threads = Locked(Set<UInt>())
    for _ in 0..<200 {
        team.splitRows(rows, granularity: 1) { band in
            threads.withLock { _ = $0.insert(UInt(pthread_self())) }
            for r in band { marks[r] += 1 }
        }
    }
    #expect((0..<rows).allSatisfy { marks[$0] == 200 })
    #expect(threads.withLock { $0.count } == 4)   // the caller's thread and the three helpers
}

@Test func aTeamOfOneRunsOnTheCallersThread() {
    let team = ParallelRows(threads: 1)
    #expect(team.parallelism == 1)
    var seen: [Range<Int>] = []
    team.splitRows(7, granularity: 1) { seen.append($0) }
    #expect(seen == [0..<7])
}
