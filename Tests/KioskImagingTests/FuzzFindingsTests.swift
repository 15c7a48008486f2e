// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskImaging
import Testing

/// The inputs the image fuzz targets found (Tests/fuzz, docs/fuzzing.md), minimised, in
/// Tests/Fixtures/fuzz/FORMAT/: each is decoded whole and into a 48x32 frame with every fit, as
/// the targets do; each must end in a result or an ``ImageError``, never a trap, and a frame
/// that decodes is written whole.
@Suite struct FuzzFindingsTests {
    static let formats = ["jpeg", "png", "webp", "gif", "heif"]

    static func findings() throws -> [(folder: String, name: String)] {
        formats.flatMap { folder in
            ((try? Fixtures.files("fuzz/" + folder, suffix: "")) ?? []).map { (folder, $0) }
        }
    }

    @Test func everyFindingDecodesOrIsRefused() throws {
        let found = try Self.findings()
        #expect(!found.isEmpty)
        for (folder, name) in found {
            let path = Fixtures.path("fuzz/" + folder, name)
            _ = try? ImageDecoder.decode(path: path)
            for fit in FitMode.allCases {
                let frame = Bitmap(width: 48, height: 32, fill: 0x0012_3456)
                guard (try? ImageDecoder.decodeFitted(path: path, into: frame, fit: fit,
                                                      background: RGBColor(red: 0, green: 0, blue: 0))) != nil else {
                    continue
                }
                #expect((0 ..< frame.pixelCount).allSatisfy { frame.pixels[$0] >> 24 == 0xFF }, "\(name) \(fit)")
            }
        }
    }

    /// An hvcC box whose SPS NAL unit is shorter than its 2-byte header: reading the coded size
    /// from it trapped (a range with its lower bound past its upper) and took the program down.
    @Test func anHEVCParameterSetShorterThanItsHeaderIsRefused() throws {
        #expect(throws: ImageError.self) {
            try ImageDecoder.decode(path: Fixtures.path("fuzz/heif", "hvcc-sps-shorter-than-its-header.heic"))
        }
    }

    /// A grid whose one 64x64 tile is placed on a 544x32 canvas: libheif 1.15 leaves what no
    /// tile covers as allocated, so two decodes of the file differed (the fuzz target's streamed
    /// and whole decodes disagreed at one pixel). Refused before libheif decodes it.
    @Test func aGridWhoseTilesDoNotCoverItsImageIsRefused() throws {
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decode(path: Fixtures.path("fuzz/heif", "grid-uncovered.heic"))
        }
        guard case .corrupt(_, let reason) = result.failure else { Issue.record("\(result)"); return }
        #expect(reason == "its grid's 1x1 tiles of 64x64 do not cover its 544x32 image", "\(reason)")
    }

    /// A grid whose one tile is the grid itself: libheif 1.15 decoded it within itself until it
    /// could start no more threads, and the process aborted (an uncaught std::system_error,
    /// 777 MB). Refused before libheif decodes it.
    @Test func aGridThatIsItsOwnTileIsRefused() throws {
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decode(path: Fixtures.path("fuzz/heif", "grid-tile-is-itself.heic"))
        }
        guard case .corrupt(_, let reason) = result.failure else { Issue.record("\(result)"); return }
        #expect(reason == "its grid's tiles are not all HEVC or AV1 images", "\(reason)")
    }

    /// An overlay (`iovl`) of 32x32 by its `ispe` whose descriptor asks libheif 1.15 for a
    /// 136 MB canvas (the fuzz target's 96 MB malloc limit stopped it). Refused before libheif
    /// decodes it.
    @Test func anOverlayImageIsRefused() throws {
        let result = Result { () throws(ImageError) in
            try ImageDecoder.decode(path: Fixtures.path("fuzz/heif", "overlay-canvas-past-its-ispe.avif"))
        }
        guard case .corrupt(_, let reason) = result.failure else { Issue.record("\(result)"); return }
        #expect(reason == "its primary image is an overlay (iovl), not shown", "\(reason)")
    }
}
