// SPDX-License-Identifier: Apache-2.0
import CKioskShim
import Glibc
import KioskSystem
import Testing

/// The output pass of a multi-scan JPEG gives back the coefficient rows it has read
/// (kc_jpeg_release_coefficients): the pixels are the very ones libjpeg gives when it keeps
/// every coefficient to the end, and most of the coefficient buffer is given back, for
/// progressive 4:4:4 and 4:2:0 photos, a multi-scan sequential file, at several DCT scales,
/// reading every row or skipping the top third first.
@Suite struct CoefficientReleaseTests {
    struct Decoded {
        var pixels: [UInt8]
        var width = 0, height = 0
        var coefficientBytes = 0, released = 0
        /// Bytes advised for huge pages, and the calling thread's minor page faults during
        /// kc_jpeg_start (where a multi-scan file is read into its coefficient arrays).
        var hugeBytes = 0, startFaults = 0
    }

    /// The calling thread's minor page faults so far (getrusage(2) RUSAGE_THREAD: other tests
    /// running at the same time do not count).
    static func threadMinorFaults() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (sys/resource.h), which Swift does not import
        return usage.ru_minflt
    }

    /// Decodes `path` at `scale`/8 through the C shim: `skip` rows skipped from the top, the
    /// rest read 7 rows at a time (as the resampler reads them); B,G,R,X bytes, 4 a pixel.
    static func decode(_ path: String, scale: Int32, release: Bool, skip: Int = 0,
                       hugePages: Bool = true) throws -> Decoded {
        let file = try #require(fopen(path, "rb"), "cannot open \(path)")
        defer { fclose(file) }
        let jpeg = try #require(kc_jpeg_create_file(file))
        defer { kc_jpeg_destroy(jpeg) }
        kc_jpeg_release_coefficients(jpeg, release ? 1 : 0)
        kc_jpeg_use_huge_pages(jpeg, hugePages ? 1 : 0)
        var header = kc_jpeg_header()
        try #require(Int(kc_jpeg_read_header(jpeg, &header)) == KC_IMG_OK, "\(String(cString: kc_jpeg_error(jpeg)))")
        var width: Int32 = 0, height: Int32 = 0
        let faults = threadMinorFaults()
        try #require(Int(kc_jpeg_start(jpeg, scale, &width, &height)) == KC_IMG_OK,
                     "\(String(cString: kc_jpeg_error(jpeg)))")
        var out = Decoded(pixels: [UInt8](repeating: 0, count: Int(width) * Int(height) * 4), width: Int(width),
                          height: Int(height), coefficientBytes: Int(header.coefficient_bytes),
                          hugeBytes: kc_jpeg_coefficients_in_huge_pages(jpeg),
                          startFaults: threadMinorFaults() - faults)
        let stride = out.width * 4
        let skipped = min(skip, out.height)
        try #require(Int(kc_jpeg_skip_rows(jpeg, Int32(skipped))) == KC_IMG_OK,
                     "\(String(cString: kc_jpeg_error(jpeg)))")
        try out.pixels.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var row = skipped
            while row < out.height {
                let count = min(7, out.height - row)
                var rows: [UnsafeMutablePointer<UInt8>?] = (0..<count).map { base + (row + $0) * stride }
                let code = rows.withUnsafeMutableBufferPointer {
                    kc_jpeg_read_rows(jpeg, $0.baseAddress!, Int32(count))
                }
                try #require(Int(code) == KC_IMG_OK, "\(String(cString: kc_jpeg_error(jpeg)))")
                row += count
            }
        }
        out.released = kc_jpeg_coefficients_released(jpeg)
        return out
    }

    static let volna = Fixtures.path("photos", "volna-5120x2880.jpg")
    static let colorfulcups = Fixtures.root + "/../../deploy/samples/colorfulcups-1920x1200.jpg"

    /// The large photos: the same pixels with and without giving back, at the scale the show
    /// uses for 1080p (3/8), at 1/8 and at full size, and most of the coefficients given back
    /// (all but the last iMCU rows, where libjpeg frees them anyway).
    static let largeCases: [(path: String, scale: Int32)] = [(volna, 3), (volna, 1), (volna, 8), (colorfulcups, 3),
                                                              (colorfulcups, 8)]

    @Test(arguments: largeCases)
    func largePhotoGivesBackItsCoefficientsWithTheSamePixels(path: String, scale: Int32) throws {
        let kept = try Self.decode(path, scale: scale, release: false)
        let given = try Self.decode(path, scale: scale, release: true)
        #expect(kept.released == 0)
        #expect(given.width == kept.width && given.height == kept.height)
        #expect(given.pixels == kept.pixels, "\(path) at \(scale)/8: the pixels differ")
        #expect(given.coefficientBytes > 0)
        #expect(given.released >= given.coefficientBytes * 9 / 10,
                "\(given.released) of \(given.coefficientBytes) coefficient bytes given back")
    }

    /// Rows skipped from the top (a fill that crops top and bottom) and then read: the same
    /// pixels both ways.
    @Test func skippedRowsThenReadGiveTheSamePixels() throws {
        for scale: Int32 in [3, 4] {
            let kept = try Self.decode(Self.volna, scale: scale, release: false, skip: 700)
            let given = try Self.decode(Self.volna, scale: scale, release: true, skip: 700)
            #expect(given.pixels == kept.pixels, "skip 700 at \(scale)/8: the pixels differ")
            #expect(given.released > given.coefficientBytes / 2)
        }
    }

    /// The small multi-scan fixtures (progressive, sequential with a scan per component):
    /// the same pixels at every scale.
    @Test(arguments: ["progressive.jpg", "multiscan.jpg"])
    func smallMultiScanFileGivesTheSamePixels(name: String) throws {
        for scale: Int32 in 1...8 {
            let path = Fixtures.path("generated", name)
            let kept = try Self.decode(path, scale: scale, release: false)
            let given = try Self.decode(path, scale: scale, release: true)
            #expect(given.pixels == kept.pixels, "\(name) at \(scale)/8")
        }
    }

    /// The kernel's transparent huge page mode (/sys/kernel/mm/transparent_hugepage/enabled,
    /// the bracketed word): "always", "madvise" or "never"; nil without THP.
    static func transparentHugePages() -> String? {
        guard let text = try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8),
              let open = text.firstIndex(of: "["), let close = text.firstIndex(of: "]") else { return nil }
        return String(text[text.index(after: open)..<close])
    }

    /// The coefficient arrays of the 14.7 MP progressive photo are advised for huge pages, and
    /// where the kernel has them that is what it gives: reading the file into them takes far
    /// fewer page faults (about 23,600 in 4 KiB pages, 3,700 with the advice when this test runs
    /// alone); the pixels are the same. How many of the arrays' 2 MiB blocks get a huge page
    /// depends on what the process did with its address space before and on the kernel: in a
    /// full test run, with other suites decoding beside this one, it saw 5,700 to 21,400 faults,
    /// and in some attempts none of the blocks got one (23,443, the count without the advice). So
    /// the pair of decodes is made up to three times, the best is kept, and it must take fewer
    /// faults than without the advice; without the advice every attempt takes the same count, so
    /// any saving is huge pages given.
    @Test func theCoefficientsOfAProgressivePhotoAreInHugePages() throws {
        // As the program does at start: blocks of 256 KiB and more are mappings of their own, so
        // libjpeg's arrays are fresh pages here too, not heap memory that tests running beside
        // this one have touched already.
        Allocator.mapLargeBlocks()
        let mode = Self.transparentHugePages()
        var best: (huge: Decoded, small: Decoded)?
        for attempt in 1...3 {
            let huge = try Self.decode(Self.volna, scale: 3, release: true, hugePages: true)
            let small = try Self.decode(Self.volna, scale: 3, release: true, hugePages: false)
            #expect(small.hugeBytes == 0)
            #expect(huge.pixels == small.pixels, "the pixels differ")
            print("CoefficientReleaseTests: THP \(mode ?? "not built in"), attempt \(attempt):"
                  + " \(huge.startFaults) page faults with the advice, \(small.startFaults) without")
            if best == nil || huge.startFaults * best!.small.startFaults < best!.huge.startFaults * small.startFaults {
                best = (huge, small)
            }
            // Only the "madvise" mode tells the two apart: in "always" the arrays may get huge
            // pages without the advice too, in "never" neither does.
            if mode != "madvise" || huge.startFaults * 4 <= small.startFaults { break }
        }
        guard let (huge, small) = best, mode == "madvise" || mode == "always" else { return }
        #expect(huge.hugeBytes >= huge.coefficientBytes * 8 / 10,
                "\(huge.hugeBytes) of \(huge.coefficientBytes) bytes advised")
        guard mode == "madvise" else { return }
        #expect(small.startFaults > huge.coefficientBytes / 4096 / 2, "4 KiB pages: \(small.startFaults) faults")
        #expect(huge.startFaults < small.startFaults,
                "page faults: \(huge.startFaults) in huge pages, \(small.startFaults) without")
    }
}
