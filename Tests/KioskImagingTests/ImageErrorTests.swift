import Glibc
import KioskImaging
import Testing

/// ImageError: every case's log line names the path and the reason.
@Suite struct ImageErrorTests {
    @Test func descriptionsAreTheLogLines() {
        let cases: [(ImageError, String)] = [
            (.unreadable(path: "/p/a.jpg", errno: EACCES), "/p/a.jpg: cannot read: Permission denied (errno 13)"),
            (.notAnImage(path: "/p/b.txt"), "/p/b.txt: not an image (neither JPEG nor PNG)"),
            (.corrupt(path: "/p/c.png", reason: "IDAT: CRC error"), "/p/c.png: corrupt image: IDAT: CRC error"),
            (.unsupported(path: "/p/d.jpg", reason: "12-bit JPEG (data precision 12) is not supported"),
             "/p/d.jpg: unsupported image: 12-bit JPEG (data precision 12) is not supported"),
            (.tooLarge(path: "/x/big.jpg", width: 65500, height: 65500, limit: 100_000_000),
             "/x/big.jpg: 65500x65500 pixels (4290250000) exceeds the pixel limit of 100000000"),
            (.outOfMemory(path: "/p/e.jpg", reason: "Insufficient memory (case 4)"), "/p/e.jpg: out of memory: Insufficient memory (case 4)"),
            (.writeFailed(path: "/o/f.png", reason: "write: No space left on device (errno 28)"),
             "/o/f.png: cannot write PNG: write: No space left on device (errno 28)"),
        ]
        for (error, line) in cases {
            #expect(error.description == line)
            #expect(error.path == line.split(separator: ":").first.map(String.init))
            #expect("\(error)" == line)
        }
    }

    @Test func equalityComparesTheContext() {
        #expect(ImageError.notAnImage(path: "a") == .notAnImage(path: "a"))
        #expect(ImageError.notAnImage(path: "a") != .notAnImage(path: "b"))
        #expect(ImageError.tooLarge(path: "a", width: 1, height: 2, limit: 1) != .tooLarge(path: "a", width: 2, height: 1, limit: 1))
    }
}
