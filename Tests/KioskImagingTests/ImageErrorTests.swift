// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskImaging
import Testing

/// ImageError: every case's log line names the path and the reason.
@Suite struct ImageErrorTests {
    @Test func descriptionsAreTheLogLines() {
        let cases: [(ImageError, String)] = [
            (.unreadable(path: "/p/a.jpg", errno: EACCES), "/p/a.jpg: cannot read: Permission denied (errno 13)"),
            (.otherFormat(path: "/p/b.jpg", format: FileFormat(.tiff)),
             "/p/b.jpg: a TIFF image (not shown: only JPEG, PNG, WebP, HEIF, AVIF and GIF are supported)"),
            (.corrupt(path: "/p/c.png", reason: "IDAT: CRC error"), "/p/c.png: corrupt image: IDAT: CRC error"),
            (.unsupported(path: "/p/d.jpg", reason: "12-bit JPEG (data precision 12) is not supported"),
             "/p/d.jpg: unsupported image: 12-bit JPEG (data precision 12) is not supported"),
            (.tooLarge(path: "/x/big.jpg", width: 65500, height: 65500, limit: 100_000_000),
             "/x/big.jpg: 65500x65500 pixels (4290250000) exceeds the pixel limit of 100000000"),
            (.outOfMemory(path: "/p/e.jpg", reason: "Insufficient memory (case 4)"),
             "/p/e.jpg: out of memory: Insufficient memory (case 4)"),
            (.writeFailed(path: "/o/f.png", reason: "write: No space left on device (errno 28)"),
             "/o/f.png: cannot write PNG: write: No space left on device (errno 28)"),
            (.notRegularFile(path: "/p/x.jpg", kind: "FIFO"),
             "/p/x.jpg: not a regular file (a FIFO): only regular image files are read"),
            (.sideTooLong(path: "/p/banner.png", width: 20_000_000, height: 1, limit: 65535),
             "/p/banner.png: 20000000x1 pixels: a side longer than 65535 pixels is refused"),
            (.overMemoryBudget(path: "/p/big.jpg", needed: 300_105_000, limit: 192 << 20,
                               reason: "the DCT coefficients ..."),
             "/p/big.jpg: needs 286.2 MiB of decoder memory, over the limit of 192 MiB: the DCT coefficients ..."),
            (.overMemoryBudget(path: "/p/big.jpg", needed: 1000, limit: 1000, reason: "libjpeg's ..."),
             "/p/big.jpg: needs more than the decoder memory limit of 1000 bytes: libjpeg's ..."),
            (.outOfMemory(path: "/p/g.png", reason: "cannot allocate 40000000000 bytes for a 100000x100000 image"),
             "/p/g.png: out of memory: cannot allocate 40000000000 bytes for a 100000x100000 image"),
        ]
        for (error, line) in cases {
            #expect(error.description == line)
            #expect(error.path == line.split(separator: ":").first.map(String.init))
            #expect("\(error)" == line)
        }
    }

    /// Sizes in messages: bytes below 1 KiB, then KiB, MiB, GiB with one decimal, whole
    /// numbers without it; products that overflow are said to.
    @Test func sizesReadWell() {
        let cases: [(Int, String)] = [(512, "512 bytes"), (1024, "1 KiB"), (43_008, "42 KiB"), (20_000, "19.5 KiB"),
                                      (192 << 20, "192 MiB"), (300_000_000, "286.1 MiB"), (17_179_344_900, "16 GiB")]
        for (bytes, text) in cases {
            let error = ImageError.overMemoryBudget(path: "p", needed: bytes + 1, limit: bytes, reason: "r")
            #expect(error.reason.hasSuffix("over the limit of \(text): r"), "\(bytes): \(error.reason)")
        }
        #expect(ImageError.tooLarge(path: "p", width: Int.max, height: 2, limit: 1).reason
                    .contains("more than \(Int.max)"))
    }

    @Test func equalityComparesTheContext() {
        let gif = FileFormat(.gif)
        #expect(ImageError.otherFormat(path: "a", format: gif) == .otherFormat(path: "a", format: gif))
        #expect(ImageError.otherFormat(path: "a", format: gif) != .otherFormat(path: "b", format: gif))
        #expect(ImageError.otherFormat(path: "a", format: gif) != .otherFormat(path: "a", format: FileFormat(.webp)))
        #expect(ImageError.tooLarge(path: "a", width: 1, height: 2, limit: 1)
                    != .tooLarge(path: "a", width: 2, height: 1, limit: 1))
    }
}
