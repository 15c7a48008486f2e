// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import KioskCore
import KioskImaging
import KioskSystem
@testable import KioskDisplay

private func temporaryDirectory() -> String {
    var template = Array("/tmp/kc-offscreen-test-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

@Suite struct OffscreenDisplayTests {
    /// A frame presented at show time 1234 ms is DIR/frame-00001234.png, and decoding that file
    /// (libpng through ImageDecoder) gives back the frame's pixels exactly.
    @Test func writesTheFrameNamedByShowTime() throws {
        let directory = temporaryDirectory() + "/frames/run1"  // parents created like mkdir -p
        let display = try OffscreenDisplay(directory: directory, width: 61, height: 37)
        #expect(display.framesWritten == 0)
        #expect(!display.pacesFrames)
        let frame = patternFrame(width: 61, height: 37, seed: 99)
        try display.present(frame, showTime: 1234)
        #expect(display.framesWritten == 1)
        let path = directory + "/frame-00001234.png"
        #expect(display.path(showTime: 1234) == path)
        let decoded = try ImageDecoder.decode(path: path).bitmap
        #expect(decoded.width == 61 && decoded.height == 37)
        var mismatches = 0
        for y in 0 ..< 37 {
            for x in 0 ..< 61 where decoded[x, y] & 0xFF_FFFF != frame[x, y] & 0xFF_FFFF { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    /// `pixelBrightness` below full: the PNG holds the frame dimmed (PixelBrightness's table on
    /// every channel), the frame handed in is left as it is; back at full, the frame as it is.
    @Test func framesAreWrittenDimmed() throws {
        let directory = temporaryDirectory()
        let display = try OffscreenDisplay(directory: directory, width: 40, height: 9)
        let frame = patternFrame(width: 40, height: 9, seed: 3)
        let copy = (0..<360).map { frame.pixels[$0] }
        display.pixelBrightness = PixelBrightness(permille: 250)
        try display.present(frame, showTime: 1)
        let table = display.pixelBrightness.table!
        let dim = try ImageDecoder.decode(path: directory + "/frame-00000001.png").bitmap
        var wrong = 0
        for i in 0..<360 {
            let p = copy[i]
            let want =
                UInt32(table[Int(p >> 16 & 0xFF)]) << 16 | UInt32(table[Int(p >> 8 & 0xFF)]) << 8
                | UInt32(table[Int(p & 0xFF)])
            if dim.pixels[i] & 0xFF_FFFF != want { wrong += 1 }
        }
        #expect(wrong == 0)
        #expect((0..<360).allSatisfy { frame.pixels[$0] == copy[$0] })
        display.pixelBrightness = .full
        try display.present(frame, showTime: 2)
        let full = try ImageDecoder.decode(path: directory + "/frame-00000002.png").bitmap
        #expect((0..<360).allSatisfy { full.pixels[$0] & 0xFF_FFFF == copy[$0] & 0xFF_FFFF })
    }

    /// The screen read back is the last frame written (from its PNG: the backend keeps no
    /// copy), and a clear error before the first frame or once that file is gone.
    @Test func theScreenIsTheLastFrameWritten() throws {
        let directory = temporaryDirectory()
        let display = try OffscreenDisplay(directory: directory, width: 23, height: 11)
        #expect { try display.screenImage() } throws: { "\($0)".hasSuffix("no frame was presented yet") }
        let first = patternFrame(width: 23, height: 11, seed: 1), second = patternFrame(width: 23, height: 11, seed: 2)
        try display.present(first, showTime: 0)
        try display.present(second, showTime: 40)
        first.pixels.update(repeating: 0, count: first.pixelCount)  // the caller reuses its frames
        second.pixels.update(repeating: 0, count: second.pixelCount)
        let screen = try display.screenImage()
        let expected = patternFrame(width: 23, height: 11, seed: 2)
        #expect(screen.width == 23 && screen.height == 11)
        var mismatches = 0
        for y in 0 ..< 11 {
            for x in 0 ..< 23 where screen[x, y] & 0xFF_FFFF != expected[x, y] & 0xFF_FFFF { mismatches += 1 }
        }
        #expect(mismatches == 0)
        unlink(display.path(showTime: 40))
        #expect { try display.screenImage() } throws: { "\($0)".contains("the last frame written cannot be read back") }
    }

    @Test func eachPresentIsItsOwnFile() throws {
        let directory = temporaryDirectory()
        let display = try OffscreenDisplay(directory: directory, width: 4, height: 4)
        for t: Int64 in [0, 16, 33, 123_456_789] { try display.present(Bitmap(width: 4, height: 4), showTime: t) }
        #expect(display.framesWritten == 4)
        #expect(exists(directory + "/frame-00000000.png"))
        #expect(exists(directory + "/frame-00000016.png"))
        #expect(exists(directory + "/frame-00000033.png"))
        #expect(exists(directory + "/frame-123456789.png"))
    }

    /// An existing directory is used as it is: what is in it stays, the frames go beside it, and
    /// a trailing slash names the same directory.
    @Test func anExistingDirectoryIsUsedAsItIs() throws {
        let directory = temporaryDirectory()
        let kept = directory + "/notes.txt"
        close(open(kept, O_CREAT | O_WRONLY, 0o600))
        var before = stat()
        #expect(stat(directory, &before) == 0)
        let display = try OffscreenDisplay(directory: directory, width: 2, height: 2)
        try display.present(Bitmap(width: 2, height: 2, fill: 0xFF12_3456), showTime: 3)
        let slashed = try OffscreenDisplay(directory: directory + "/", width: 2, height: 2)
        try slashed.present(Bitmap(width: 2, height: 2, fill: 0xFF65_4321), showTime: 7)
        var after = stat()
        #expect(stat(directory, &after) == 0 && after.st_ino == before.st_ino, "the same directory, not made again")
        #expect(after.st_mode & 0o777 == before.st_mode & 0o777, "its mode left as it was")
        #expect(exists(kept))
        #expect(try ImageDecoder.decode(path: directory + "/frame-00000003.png").bitmap[1, 1] == 0xFF12_3456)
        #expect(try ImageDecoder.decode(path: directory + "/frame-00000007.png").bitmap[1, 1] == 0xFF65_4321)
        #expect(try listDirectory(directory).compactMap(\.name).filter { !$0.hasPrefix(".") }.sorted()
                == ["frame-00000003.png", "frame-00000007.png", "notes.txt"])
    }

    @Test func aFileInTheWayIsAClearError() throws {
        let directory = temporaryDirectory()
        let file = directory + "/not-a-dir"
        close(open(file, O_CREAT | O_WRONLY, 0o600))
        #expect { try OffscreenDisplay(directory: file + "/frames", width: 2, height: 2) }
            throws: { "\($0)" == "mkdir \(file): Not a directory (errno 20)" }
    }

    @Test func aWriteFailureNamesTheFile() throws {
        let directory = temporaryDirectory()
        let display = try OffscreenDisplay(directory: directory, width: 2, height: 2)
        rmdir(directory)
        #expect { try display.present(Bitmap(width: 2, height: 2), showTime: 5) }
            throws: { error in
                guard case .write(let path, _) = error as? DisplayError else { return false }
                return path == directory + "/frame-00000005.png"
            }
        #expect(display.framesWritten == 0)
    }

    @Test func sizeMustBePositive() {
        #expect(throws: DisplayError.self) {
            try OffscreenDisplay(directory: temporaryDirectory(), width: 0, height: 10)
        }
    }
}

@Test func framesOfAnEarlierRunAreRemovedAndNothingElse() throws {
    let dir = temporaryDirectory()
    for name in ["frame-00000000.png", "frame-00012345.png", "frame-123.png", "frame-0000000x.png",
                 "notes.txt", "photo.png"] {
        let fd = open("\(dir)/\(name)", O_CREAT | O_WRONLY, 0o644)
        close(fd)
    }
    let display = try OffscreenDisplay(directory: dir, width: 16, height: 16)
    #expect(display.removeOldFrames() == 2)
    #expect(!exists("\(dir)/frame-00000000.png") && !exists("\(dir)/frame-00012345.png"))
    for kept in ["frame-123.png", "frame-0000000x.png", "notes.txt", "photo.png"] { #expect(exists("\(dir)/\(kept)")) }
}
