// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore
import KioskImaging

/// The codec table: a row for every format shown, in the format table's order, and the
/// libraries `--version` lists from it.
@Suite struct ImageCodecTests {
    @Test func everyFormatShownHasOneCodec() {
        #expect(ImageCodec.table.map(\.format) == ImageFormat.shown)
        for format in ImageFormat.table {
            #expect((ImageCodec.codec(for: format) != nil) == format.isShown, "\(format)")
        }
    }

    @Test func theLibrariesAreListedLinkedFirstEachOnce() {
        #expect(ImageCodec.libraryVersions.map(\.name)
                == ["libjpeg-turbo", "libpng", "libwebp", "libwebpdemux", "giflib", "libheif", "libde265"])
        #expect(ImageCodec.codec(for: .heif)?.libraries.map(\.name) == ["libheif", "libde265"])
        #expect(ImageCodec.codec(for: .avif)?.libraries.map(\.name) == ["libheif"])
        #expect(ImageCodec.table.flatMap(\.libraries).filter { !$0.isLinked }.map(\.name)
                == ["libheif", "libde265", "libheif"])
    }

    /// Each row's library is the one installed and in use: the linked ones are found among the
    /// loaded objects, the dlopen ones open.
    @Test func eachLibraryReportsWhereItWasLoadedFrom() {
        for version in ImageCodec.libraryVersions {
            #expect(version.notInstalled == nil, "\(version.name): \(version.notInstalled ?? "")")
            #expect(version.loadedFile?.contains("/lib") == true, "\(version.name): \(version)")
        }
    }
}
