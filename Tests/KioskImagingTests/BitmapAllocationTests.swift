// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskImaging
import Testing

/// Bitmap(allocatingWidth:height:hasAlpha:), KioskImaging's fallible allocation for sizes read
/// from files: nil instead of a trap for sizes that overflow or memory that cannot be had.
@Suite struct BitmapAllocationTests {
    @Test func allocatesAWritableBitmap() throws {
        let bitmap = try #require(Bitmap(allocatingWidth: 300, height: 200, hasAlpha: true))
        #expect(bitmap.width == 300 && bitmap.height == 200 && bitmap.hasAlpha)
        #expect(bitmap.byteCount == 240_000)
        bitmap.fill(0x1234_5678)
        bitmap[299, 199] = 7
        #expect(bitmap[0, 0] == 0x1234_5678 && bitmap[299, 199] == 7)
        let copy = bitmap.copy()
        #expect(copy[299, 199] == 7)
    }

    @Test func impossibleSizesGiveNil() {
        #expect(Bitmap(allocatingWidth: 0, height: 10) == nil)
        #expect(Bitmap(allocatingWidth: 10, height: -1) == nil)
        // width * height overflows; width * height * 4 overflows.
        #expect(Bitmap(allocatingWidth: Int.max, height: 2) == nil)
        #expect(Bitmap(allocatingWidth: 1 << 31, height: 1 << 31) == nil)
        // 2^62 bytes: no machine has them, malloc says no.
        #expect(Bitmap(allocatingWidth: 1 << 40, height: 1 << 20) == nil)
    }
}
