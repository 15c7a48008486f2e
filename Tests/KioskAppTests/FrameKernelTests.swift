// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskApp
import KioskCore
import KioskDisplay
import KioskSystem

/// A frame of pseudo-random pixels (no two rows alike), `seed` choosing which.
private func noise(width: Int, height: Int, seed: UInt32) -> Bitmap {
    let b = Bitmap(width: width, height: height)
    var x = seed &* 2_654_435_761 | 1
    for i in 0..<b.pixelCount {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5
        b.pixels[i] = 0xFF00_0000 | (x & 0xFF_FFFF)
    }
    return b
}

/// The kernels split across the team give the very bytes of the kernels on one thread.
@Test func blendSlideAndScanoutOnFourThreadsMatchOneThread() {
    let team = ParallelRows(threads: 4)
    let a = noise(width: 97, height: 61, seed: 1), b = noise(width: 97, height: 61, seed: 2)
    for weight in [0, 1, 77, 128, 255, 256] {
        let one = Bitmap(width: 97, height: 61), four = Bitmap(width: 97, height: 61)
        Compositor.blend(a, b, weight: weight, into: one)
        Compositor.blend(a, b, weight: weight, into: four, rows: team)
        #expect(same(one, four), "weight \(weight)")
    }
    for offset in [-97, -40, -1, 1, 33, 97] {
        let one = Bitmap(width: 97, height: 61), four = Bitmap(width: 97, height: 61)
        Compositor.slide(a, neighbour: b, offset: offset, into: one)
        Compositor.slide(a, neighbour: b, offset: offset, into: four, rows: team)
        #expect(same(one, four), "offset \(offset)")
    }
    for rotation in Rotation.allCases {
        let (pw, ph) = rotation.panelSize(logicalWidth: 97, logicalHeight: 61)
        let stride = pw * 4 + 12
        let one = UnsafeMutableRawPointer.allocate(byteCount: stride * ph, alignment: 16)
        let four = UnsafeMutableRawPointer.allocate(byteCount: stride * ph, alignment: 16)
        defer { one.deallocate(); four.deallocate() }
        one.initializeMemory(as: UInt8.self, repeating: 0, count: stride * ph)
        four.initializeMemory(as: UInt8.self, repeating: 0, count: stride * ph)
        for format in [ScanoutFormat.xrgb8888, .rgb565] {
            ScanoutWriter.copy(a, to: one, stride: stride, format: format, rotation: rotation, dither: true,
                               swapRedBlue: false)
            ScanoutWriter.copy(a, to: four, stride: stride, format: format, rotation: rotation, dither: true,
                               swapRedBlue: false,
                               rows: team)
            #expect(memcmp(one, four, stride * ph) == 0, "\(rotation) \(format)")
        }
    }
}
