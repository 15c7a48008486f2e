// SPDX-License-Identifier: Apache-2.0
import KioskCore
import Synchronization
import Testing

/// Bitmap sizes computed without overflow, and bitmaps over memory allocated elsewhere.
@Suite struct BitmapTests {
    @Test func byteCountIsOverflowSafe() {
        #expect(Bitmap.byteCount(width: 1920, height: 1080) == 8_294_400)
        #expect(Bitmap.byteCount(width: 65535, height: 65535) == 17_179_344_900)
        #expect(Bitmap.byteCount(width: 2_147_483_647, height: 2_147_483_647) == nil)  // * 4 overflows
        #expect(Bitmap.byteCount(width: Int.max, height: 2) == nil)
        #expect(Bitmap.byteCount(width: 0, height: 5) == nil)
        #expect(Bitmap.byteCount(width: 5, height: -5) == nil)
    }

    @Test func adoptedMemoryIsFreedByItsDeallocator() {
        let freed = Atomic<Int>(0)
        do {
            let memory = UnsafeMutablePointer<UInt32>.allocate(capacity: 12)
            memory.initialize(repeating: 0xFF11_2233, count: 12)
            let bitmap = Bitmap(adopting: memory, width: 4, height: 3, hasAlpha: false) { pointer in
                pointer.deallocate()
                freed.add(1, ordering: .relaxed)
            }
            #expect(bitmap.pixels == memory)
            #expect(bitmap[3, 2] == 0xFF11_2233 && bitmap.pixelCount == 12)
            #expect(freed.load(ordering: .relaxed) == 0)
        }
        #expect(freed.load(ordering: .relaxed) == 1)
    }
}
