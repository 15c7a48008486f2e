// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
@testable import KioskApp

// The `first frame` line's phases: the process's start read from the kernel (/proc/self/stat)
// and put on CLOCK_MONOTONIC, and the summary built from real marks.

private func monotonicNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

@Test func processStartIsBeforeNowAndAfterTheTestRunnerStarted() throws {
    let start = try #require(StartupTrace.processStartMonotonic())
    let now = monotonicNow()
    #expect(start <= now)
    // The test runner started this process less than an hour ago (10 ms steps of the kernel's clock).
    #expect(now - start < 3_600 * 1_000_000_000)
    // Read twice, the same start within one clock tick and rounding.
    let again = try #require(StartupTrace.processStartMonotonic())
    #expect(again > start ? again - start < 20_000_000 : start - again < 20_000_000)
}

@Test func summaryNamesTheMarkedPhasesInOrderAndTheFirstMarkCounts() throws {
    let trace = StartupTrace()
    trace.mark(.main)
    trace.mark(.displayOpened)
    trace.mark(.decodeStarted)
    usleep(30_000)
    trace.mark(.decodeEnded)
    let firstEnd = try #require(trace.seconds(.decodeEnded))
    usleep(20_000)
    trace.mark(.decodeEnded)  // a later mark of the same phase is ignored
    #expect(trace.seconds(.decodeEnded) == firstEnd)
    let started = try #require(trace.seconds(.decodeStarted))
    #expect(firstEnd - started >= 0.03)
    #expect(trace.seconds(.presented) == nil)
    let text = trace.summary()
    #expect(text.hasPrefix("not shown yet: main "))
    #expect(text.contains("display opened "))
    #expect(text.contains("first decode "))
    #expect(!text.contains("presented"))
    let main = try #require(text.range(of: "main ")), opened = try #require(text.range(of: "display opened "))
    #expect(main.lowerBound < opened.lowerBound)
}
