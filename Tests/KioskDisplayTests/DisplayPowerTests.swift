// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import KioskCore
import KioskSystem
@testable import KioskDisplay

// fakeFramebuffer(size:) and fileBytes(_:) come from FramebufferDisplayTests.swift.

private func removeFake(_ path: String) {
    unlink(path)
    rmdir(String(path.dropLast("/fb0".count)))
}

/// Display power (FBIOBLANK) and VT release / acquire on the fbdev path, against a regular file.
@Suite struct DisplayPowerTests {
    let geometry = FramebufferGeometry(xres: 32, yres: 16, format: .xrgb8888, lineLength: 128)

    /// FBIOBLANK on a regular file fails with ENOTTY: setPower throws a ``DisplayError/system(_:)``
    /// naming the ioctl and errno 25 (the frame loop logs it as a warning), the display records
    /// the state anyway (nothing drawn while "off") and keeps working once switched on.
    @Test func blankOnARegularFileIsAnErrorToLogNotAFailure() throws {
        let path = fakeFramebuffer(size: geometry.memoryLength)
        defer { removeFake(path) }
        let display = try FramebufferDisplay.open(path: path, geometry: geometry, rotation: .none, swapRedBlue: false,
                                                  dither: false)
        var off: DisplayError?
        do { try display.setPower(on: false) } catch { off = error }
        guard case .system(let error, _)? = off else {
            Issue.record("expected DisplayError.system, got \(String(describing: off))")
            return
        }
        #expect(error.operation.contains("FBIOBLANK FB_BLANK_POWERDOWN"))
        #expect(error.errno == ENOTTY)
        #expect(display.isPoweredOff)

        // Off: a frame is not written.
        let red = Bitmap(width: 32, height: 16, fill: 0xFFFF_0000)
        try display.present(red, showTime: 0)
        #expect(fileBytes(path).allSatisfy { $0 == 0xAA })

        // On again (the unblank fails the same way), then frames are written.
        var on: DisplayError?
        do { try display.setPower(on: true) } catch { on = error }
        #expect(on?.description.contains("FBIOBLANK FB_BLANK_UNBLANK") == true)
        #expect(!display.isPoweredOff)
        try display.present(red, showTime: 1)
        #expect(Array(fileBytes(path)[0..<3]) == [0x00, 0x00, 0xFF])
        display.restore()
    }

    /// VT switched away: nothing is written (the console owns the memory); switched back: the
    /// next frame is written whole again.
    @Test func releasedDisplayDrawsNothingUntilAcquired() throws {
        let g = FramebufferGeometry(xres: 32, yres: 16, yresVirtual: 32, format: .xrgb8888, lineLength: 128)
        let path = fakeFramebuffer(size: g.memoryLength)
        defer { removeFake(path) }
        let display = try FramebufferDisplay.open(path: path, geometry: g, rotation: .none, swapRedBlue: false,
                                                  dither: false)
        #expect(display.isPageFlipping)
        try display.present(Bitmap(width: 32, height: 16, fill: 0xFF00_00FF), showTime: 0)
        let before = fileBytes(path)
        let page = display.visibleYOffset
        try display.release()
        try display.release()   // idempotent
        #expect(display.isReleased)
        try display.present(Bitmap(width: 32, height: 16, fill: 0xFFFF_0000), showTime: 1)
        #expect(fileBytes(path) == before)
        #expect(display.visibleYOffset == page)
        try display.acquire()
        #expect(!display.isReleased)
        try display.present(Bitmap(width: 32, height: 16, fill: 0xFF00_FF00), showTime: 2)
        let top = display.visibleYOffset * 128
        #expect(Array(fileBytes(path)[top ..< top + 3]) == [0x00, 0xFF, 0x00])
        try display.acquire()   // not released: nothing happens
        display.restore()
    }

    /// The offscreen backend has no screen to give up or switch off: the calls do nothing and
    /// frames keep coming.
    @Test func offscreenIgnoresReleaseAndPower() throws {
        var template = Array("/tmp/kc-offscreen-power-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        let display = try OffscreenDisplay(directory: dir, width: 16, height: 16)
        try display.release()
        try display.setPower(on: false)
        try display.present(Bitmap(width: 16, height: 16), showTime: 0)
        try display.acquire()
        try display.setPower(on: true)
        #expect(display.framesWritten == 1)
        _ = display.removeOldFrames()
        rmdir(dir)
    }
}
