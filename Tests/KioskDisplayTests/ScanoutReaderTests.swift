// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore
@testable import KioskDisplay

/// ScanoutReader: what ScanoutWriter wrote (no dither, no rotation) reads back as the frame,
/// exactly for 8-bit channels and with each short channel's bits repeated for 16 bpp.
@Suite struct ScanoutReaderTests {
    @Test(arguments: [ScanoutFormat.xrgb8888, .xbgr8888, .argb8888, .rgb888, .bgr888, .rgb565, .bgr565])
    func writtenThenReadGivesTheFrame(format: ScanoutFormat) {
        let frame = patternFrame(width: 37, height: 11)
        let stride = 37 * format.bytesPerPixel + 12  // padded rows, as fbdev's line_length may be
        var memory = [UInt8](repeating: 0xAB, count: stride * 11)
        memory.withUnsafeMutableBytes { raw in
            ScanoutWriter.copy(frame, to: raw.baseAddress!, stride: stride, format: format, rotation: .none,
                               dither: false, swapRedBlue: false)
        }
        let read = memory.withUnsafeBytes {
            ScanoutReader.read(from: $0.baseAddress!, stride: stride, format: format, width: 37, height: 11)
        }
        #expect(read.width == 37 && read.height == 11)
        for y in 0..<11 {
            for x in 0..<37 {
                let p = frame[x, y]
                var expected: UInt32 = 0xFF00_0000
                for (shift, field) in [(16, format.red), (8, format.green), (0, format.blue)] {
                    let top = (p >> UInt32(shift)) & 0xFF & ~UInt32((1 << (8 - field.length)) - 1)
                    // The field's n bits repeated down to 8 bits (n = 5: abcde -> abcdeabc).
                    let widened = field.length == 8 ? top : top | top >> UInt32(field.length)
                    expected |= (widened & 0xFF) << UInt32(shift)
                }
                #expect(read[x, y] == expected,
                        "\(format) (\(x), \(y)): \(String(read[x, y], radix: 16)) vs \(String(expected, radix: 16))")
            }
        }
    }

    @Test func fullAndEmptyChannelsStayFullAndEmpty() {
        var pixels: [UInt16] = [0xFFFF, 0x0000, 0xF800, 0x07E0]  // RGB565: white, black, red, green
        let read = pixels.withUnsafeMutableBytes {
            ScanoutReader.read(from: $0.baseAddress!, stride: 8, format: .rgb565, width: 4, height: 1)
        }
        #expect([read[0, 0], read[1, 0], read[2, 0], read[3, 0]]
                == [0xFFFF_FFFF, 0xFF00_0000, 0xFFFF_0000, 0xFF00_FF00])
    }
}
