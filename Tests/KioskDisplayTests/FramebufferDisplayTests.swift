// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import KioskCore
import KioskSystem
@testable import KioskDisplay

/// A temporary directory for one test.
private func temporaryDirectory() -> String {
    var template = Array("/tmp/kc-fbdev-test-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

/// A regular file of `size` bytes, every byte 0xAA, standing in for /dev/fb0.
func fakeFramebuffer(size: Int) -> String {
    let path = temporaryDirectory() + "/fb0"
    let fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o600)
    precondition(fd >= 0)
    let bytes = [UInt8](repeating: 0xAA, count: size)
    precondition(write(fd, bytes, size) == size)
    close(fd)
    return path
}

/// The whole file, read with read(2) (not through the display's mapping).
func fileBytes(_ path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY)
    defer { close(fd) }
    var info = stat()
    fstat(fd, &info)
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
    let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    precondition(n == bytes.count)
    return bytes
}

/// Checks the file holds `frame` (dithered by panel position when `dither`) in the `xres` x `yres`
/// window at (`x0`, `y0`) of the geometry, and 0xAA everywhere else. Returns the number of wrong bytes
/// outside the window and of wrong pixels inside it.
private func verify(_ bytes: [UInt8], _ g: FramebufferGeometry, frame: Bitmap, format: ScanoutFormat,
                    x0: Int, y0: Int, dither: Bool) -> (pixels: Int, outside: Int) {
    let bpp = g.bitsPerPixel / 8
    var badPixels = 0, badOutside = 0
    for row in 0 ..< bytes.count / g.lineLength {
        for column in 0 ..< g.lineLength {
            let x = column / bpp - x0, y = row - y0
            let inside = column < (x0 + g.xres) * bpp && x >= 0 && x < g.xres && y >= 0 && y < g.yres
            if !inside && bytes[row * g.lineLength + column] != 0xAA { badOutside += 1 }
            if inside && column % bpp == 0 {
                let want = expectedScanoutPixel(frame[x, y], format,
                                                threshold: dither ? bayerMatrix[y & 3][x & 3] : nil)
                if littleEndianPixel(bytes, at: row * g.lineLength + column, bytesPerPixel: bpp) != want {
                    badPixels += 1
                }
            }
        }
    }
    return (badPixels, badOutside)
}

/// A 32-bit layout some drivers report with no alpha: XRGB8888 with transp length 0.
private let xrgbNoAlpha = ScanoutFormat.xrgb8888

@Suite struct FramebufferDisplayTests {
    /// The geometries real devices report (docs/testing.md), written through the same present path as
    /// /dev/fb0 into a regular file and read back with read(2): pixel-exact, line padding untouched.
    @Test(arguments: [
        (480, 800, ScanoutFormat.rgb565, 1024, true),     // portrait 16 bpp panel, 64 bytes of padding per line
        (1366, 768, .rgb565, 2752, true),                 // 1366 * 2 = 2732: 20 bytes of padding
        (800, 480, .rgb888, 2400, false),                 // 24 bpp, bytes B, G, R, no padding
        (640, 480, xrgbNoAlpha, 2560, false),             // 32 bpp, transp length 0
        (320, 240, .bgr565, 640, true),                   // BGR565
        (320, 240, .xbgr8888, 1536, false),               // XBGR8888 in a 384-pixel line
        (320, 240, .argb8888, 1280, false),               // transp length 8: written opaque
    ])
    func realGeometries(xres: Int, yres: Int, format: ScanoutFormat, lineLength: Int, dither: Bool) throws {
        let g = FramebufferGeometry(xres: xres, yres: yres, format: format, lineLength: lineLength)
        let path = fakeFramebuffer(size: g.memoryLength)
        let display = try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false,
                                                  dither: dither)
        #expect(display.width == xres && display.height == yres)
        #expect(!display.isPageFlipping)
        let frame = patternFrame(width: xres, height: yres, seed: UInt32(lineLength))
        try display.present(frame, showTime: 0)
        let result = verify(fileBytes(path), g, frame: frame, format: format, x0: 0, y0: 0, dither: dither)
        #expect(result.pixels == 0)
        #expect(result.outside == 0)
        display.restore()
    }

    /// A few pixels of the 1366x768 RGB565 case by hand: pure red, green, blue and 0x654321 land as
    /// 0xF800, 0x07E0, 0x001F, 0x6204 (0x654321) at the right byte offsets of a 2752-byte line.
    @Test func knownPixelsAtKnownOffsets() throws {
        let g = FramebufferGeometry(xres: 1366, yres: 768, format: .rgb565, lineLength: 2752)
        let path = fakeFramebuffer(size: g.memoryLength)
        let display = try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false,
                                                  dither: false)
        let frame = Bitmap(width: 1366, height: 768)
        frame[0, 0] = 0xFFFF_0000
        frame[1365, 0] = 0xFF00_FF00
        frame[0, 767] = 0xFF00_00FF
        frame[700, 300] = 0xFF65_4321
        try display.present(frame, showTime: 0)
        display.restore()
        let bytes = fileBytes(path)
        #expect(bytes[0 ..< 2] == [0x00, 0xF8])
        #expect(bytes[2730 ..< 2732] == [0xE0, 0x07])
        #expect(bytes[2732 ..< 2752].allSatisfy { $0 == 0xAA })
        #expect(bytes[767 * 2752 ..< 767 * 2752 + 2] == [0x1F, 0x00])
        #expect(bytes[300 * 2752 + 1400 ..< 300 * 2752 + 1402] == [0x04, 0x62])
    }

    /// The visible window at xoffset 8, yoffset 5 of an 80x60 virtual screen gets the frame;
    /// everything around it keeps its bytes.
    @Test func honoursXOffsetAndYOffset() throws {
        let g = FramebufferGeometry(xres: 64, yres: 48, xresVirtual: 80, yresVirtual: 60, xoffset: 8, yoffset: 5,
                                    format: .rgb565, lineLength: 192)
        let path = fakeFramebuffer(size: g.memoryLength)
        let display = try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false,
                                                  dither: true)
        #expect(!display.isPageFlipping)
        let frame = patternFrame(width: 64, height: 48)
        try display.present(frame, showTime: 0)
        #expect(display.visibleYOffset == 5)
        let result = verify(fileBytes(path), g, frame: frame, format: .rgb565, x0: 8, y0: 5, dither: true)
        #expect(result == (0, 0))
    }

    /// yres_virtual = 2 * yres on a file: the pan ioctl is skipped, but the frame goes to the hidden
    /// page and ``visibleYOffset`` moves to it, as FBIOPAN_DISPLAY would: the first frame lands in
    /// rows yres ..< 2 * yres, the second in rows 0 ..< yres with the first left alone. restore()
    /// goes back to the original page.
    @Test func twoPagesAlternate() throws {
        let g = FramebufferGeometry(xres: 40, yres: 30, yresVirtual: 60, format: .rgb565, lineLength: 96)
        let path = fakeFramebuffer(size: g.memoryLength)
        let display = try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false,
                                                  dither: false)
        #expect(display.isPageFlipping)
        #expect(display.visibleYOffset == 0)
        let first = patternFrame(width: 40, height: 30, seed: 11)
        try display.present(first, showTime: 0)
        #expect(display.visibleYOffset == 30)
        let page = 30 * 96
        var bytes = fileBytes(path)
        let single = FramebufferGeometry(xres: 40, yres: 30, format: .rgb565, lineLength: 96)
        #expect(bytes[0 ..< page].allSatisfy { $0 == 0xAA })
        #expect(verify(Array(bytes[page...]), single, frame: first, format: .rgb565, x0: 0, y0: 0,
                       dither: false) == (0, 0))

        let second = patternFrame(width: 40, height: 30, seed: 12)
        try display.present(second, showTime: 16)
        #expect(display.visibleYOffset == 0)
        bytes = fileBytes(path)
        #expect(verify(Array(bytes[..<page]), single, frame: second, format: .rgb565, x0: 0, y0: 0,
                       dither: false) == (0, 0))
        #expect(verify(Array(bytes[page...]), single, frame: first, format: .rgb565, x0: 0, y0: 0,
                       dither: false) == (0, 0))

        try display.present(first, showTime: 32)
        #expect(display.visibleYOffset == 30)
        display.restore()
        #expect(display.visibleYOffset == 0)
        display.restore()  // twice is fine
    }

    /// Starting on the second page (yoffset = yres), the first frame goes to the first page.
    @Test func twoPagesStartingOnTheSecond() throws {
        let g = FramebufferGeometry(xres: 16, yres: 8, yresVirtual: 16, yoffset: 8, format: .xrgb8888, lineLength: 64)
        let path = fakeFramebuffer(size: g.memoryLength)
        let display = try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false,
                                                  dither: false)
        let frame = patternFrame(width: 16, height: 8)
        try display.present(frame, showTime: 0)
        #expect(display.visibleYOffset == 0)
        let bytes = fileBytes(path)
        #expect(bytes[(8 * 64)...].allSatisfy { $0 == 0xAA })
        let single = FramebufferGeometry(xres: 16, yres: 8, format: .xrgb8888, lineLength: 64)
        #expect(verify(Array(bytes[..<(8 * 64)]), single, frame: frame, format: .xrgb8888, x0: 0, y0: 0,
                       dither: false) == (0, 0))
        display.restore()
        #expect(display.visibleYOffset == 8)
    }

    /// A character device that maps but cannot pan (/dev/zero): the FBIOPAN path is tried, fails,
    /// and the display falls back to one page for good, keeping the reason.
    @Test func failedPanFallsBackToOnePage() throws {
        let g = FramebufferGeometry(xres: 32, yres: 16, yresVirtual: 32, format: .rgb565, lineLength: 64)
        let display = try FramebufferDisplay.open(path: "/dev/zero", geometry: g, rotation: .none, swapRedBlue: false,
                                                  dither: true)
        #expect(display.isPageFlipping)
        try display.present(patternFrame(width: 32, height: 16), showTime: 0)
        #expect(!display.isPageFlipping)
        #expect(display.visibleYOffset == 0)
        #expect(display.panFailure.map { "\($0)" }
                == "ioctl FBIOGET_VSCREENINFO /dev/zero: Inappropriate ioctl for device (errno 25)")
        try display.present(patternFrame(width: 32, height: 16), showTime: 16)
        #expect(display.visibleYOffset == 0)
        display.restore()
    }

    /// Rotation through the display: the logical size is the panel's turned, and a 90-degree frame's
    /// top row lands down the panel's right edge.
    @Test func rotatedLogicalSizeAndPlacement() throws {
        let g = FramebufferGeometry(xres: 6, yres: 4, format: .bgr565, lineLength: 16)
        let path = fakeFramebuffer(size: g.memoryLength)
        let display = try FramebufferDisplay.open(path: path, geometry: g, rotation: .clockwise90, swapRedBlue: true,
                                                  dither: false)
        #expect((display.width, display.height) == (4, 6))
        let frame = Bitmap(width: 4, height: 6, fill: 0xFF00_0000)
        for x in 0 ..< 4 { frame[x, 0] = 0xFFFF_0000 }  // red top row
        try display.present(frame, showTime: 0)
        let bytes = fileBytes(path)
        // BGR565 with red/blue swapped is RGB565: red 0xF800 in the last panel column, black elsewhere.
        for py in 0 ..< 4 {
            for px in 0 ..< 6 {
                let want: UInt32 = px == 5 ? 0xF800 : 0
                #expect(littleEndianPixel(bytes, at: py * 16 + px * 2, bytesPerPixel: 2) == want)
            }
            #expect(bytes[py * 16 + 12 ..< py * 16 + 16].allSatisfy { $0 == 0xAA })
        }
        #expect(display.summary == "fbdev \(path): 6x4 BGR565 (16 bpp), line_length 16, single page, "
                + "rotation 90 -> 4x6, red/blue swapped")
    }

    // MARK: Errors a person can act on

    @Test func missingDeviceIsNoDisplay() {
        #expect { try FramebufferDisplay.open(path: "/dev/fb-kiosk-test-missing", rotation: .none, swapRedBlue: false) }
            throws: { error in
                guard case .noFramebuffer(let failed) = error as? DisplayError else { return false }
                return failed.errno == ENOENT
                    && "\(error)" == "open /dev/fb-kiosk-test-missing: No such file or directory (errno 2)"
            }
    }

    @Test func notAFramebufferSaysWhichIoctl() {
        #expect { try FramebufferDisplay.open(path: "/dev/null", rotation: .none, swapRedBlue: false) }
            throws: { "\($0)" == "ioctl FBIOGET_VSCREENINFO /dev/null: Inappropriate ioctl for device (errno 25)" }
    }

    /// Permission denied names the group that owns the device (root bypasses the check, so the
    /// message is built from a real file given to group `video`).
    @Test func permissionDeniedNamesTheGroup() throws {
        let path = fakeFramebuffer(size: 16)
        var entry = group(), result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        try #require(getgrnam_r("video", &entry, &buffer, buffer.count, &result) == 0 && result != nil)
        try #require(chown(path, getuid(), entry.gr_gid) == 0)
        let error = FramebufferDisplay.openError(SystemError(operation: "open", path: path, errno: EACCES))
        #expect("\(error)" == "open \(path): Permission denied (errno 13); the user needs to be in the `video` group"
                + " that owns \(path) (usermod -aG video USER, then log in again)")
    }

    @Test func unsupportedDepthGivesTheValue() {
        var g = FramebufferGeometry(xres: 8, yres: 8, format: .rgb565, lineLength: 16)
        g.bitsPerPixel = 8
        let path = fakeFramebuffer(size: g.memoryLength)
        #expect {
            try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false, dither: true)
        }
            throws: { "\($0)" == "\(path): 8 bits per pixel is not supported (16, 24 and 32 are)" }
    }

    @Test func fileShorterThanTheGeometryIsRefused() {
        let g = FramebufferGeometry(xres: 480, yres: 800, format: .rgb565, lineLength: 1024)
        let path = fakeFramebuffer(size: 1024 * 799)
        #expect {
            try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false, dither: true)
        }
            throws: { "\($0)" == "\(path): file is 818176 bytes, the geometry needs 819200" }
    }

    @Test func lineLengthShorterThanARowIsRefused() {
        let g = FramebufferGeometry(xres: 1366, yres: 768, format: .rgb565, lineLength: 2700)
        let path = fakeFramebuffer(size: g.memoryLength)
        #expect {
            try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false, dither: true)
        }
            throws: { "\($0)" == "\(path): line_length 2700 bytes is shorter than 1366 pixels of 16 bits" }
    }
}
