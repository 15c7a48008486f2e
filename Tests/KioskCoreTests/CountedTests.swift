// SPDX-License-Identifier: Apache-2.0
import KioskCore
import Testing

@Test func aCountOfOneTakesTheSingularAndEveryOtherThePlural() {
    #expect(counted(1, "item") == "1 item")
    #expect(counted(2, "item") == "2 items")
    #expect(counted(0, "item") == "0 items")
    #expect(counted(-1, "byte") == "-1 bytes")
    #expect(counted(1, "entry", "entries") == "1 entry")
    #expect(counted(3, "entry", "entries") == "3 entries")
    #expect(counted(1, "fallback item") == "1 fallback item")
}
