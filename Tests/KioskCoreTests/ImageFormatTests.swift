// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore

/// The format table: its rows are consistent, and what the program says and lists by them is
/// what it said when each place had its own list.
@Suite struct ImageFormatTests {
    @Test func theRowsAreConsistent() {
        #expect(ImageFormat.table.map(\.name) == ["jpeg", "png", "webp", "heif", "avif", "gif",
                                                  "bmp", "tiff", "jpegXL", "jpeg2000", "ico", "pdf", "svg"])
        #expect(Set(ImageFormat.table.map(\.name)).count == ImageFormat.table.count, "names are unique")
        #expect(ImageFormat.shown == [.jpeg, .png, .webp, .heif, .avif, .gif])
        for format in ImageFormat.table {
            #expect(!format.magic.isEmpty, "\(format) has a signature")
            #expect(format.isShown != format.extensions.isEmpty, "\(format): extensions exactly for the formats shown")
            #expect(format.extensions.allSatisfy { $0 == $0.lowercased() && !$0.hasPrefix(".") }, "\(format)")
        }
        let extensions = ImageFormat.shown.flatMap(\.extensions)
        #expect(Set(extensions).count == extensions.count, "an extension names one format")
        #expect(ImageFormat.imageExtensions == ["jpg", "jpeg", "jpe", "png", "webp", "heic", "heif", "avif", "gif"])
    }

    @Test func aFileNameGivesTheFormatShown() {
        #expect(ImageFormat.shown(byFileName: "IMG_0001.HEIC") == .heif)
        #expect(ImageFormat.shown(byFileName: "scan.Jpe") == .jpeg)
        #expect(ImageFormat.shown(byFileName: "a.b.avif") == .avif)
        #expect(ImageFormat.shown(byFileName: "notes.txt") == nil)
        #expect(ImageFormat.shown(byFileName: "drawing.svg") == nil, "recognised, not shown")
        #expect(ImageFormat.shown(byFileName: "gif") == nil, "no extension")
        #expect(ImageFormat.shown(byFileName: "photo.") == nil)
    }

    @Test func theWordsNamingTheFormatsComeFromTheTable() {
        #expect(SceneRenderer.noImagesText
                == "No images to show\n\nAdd JPEG, PNG, WebP, HEIC, AVIF or GIF\nfiles to the show's sources")
        #expect(ImageFormat.listed(["A"], "and") == "A")
        #expect(ImageFormat.listed(["A", "B"], "or") == "A or B")
        #expect(ImageFormat.listed([], "or") == "")
        #expect(FileFormat(.ico).description == "an ICO icon")
        #expect(FileFormat(.avif).description == "an AVIF image")
        #expect(FileFormat.unknown(firstBytes: []).description == "an empty file")
        #expect(FileFormat.unknown(firstBytes: Array(0...20)).firstBytes == Array(0...7), "at most 8 bytes kept")
    }

    /// HEIF defers to AVIF wherever an AVIF brand appears; the brand reported is the major one
    /// when it names HEIF, else the first compatible one that does; a signature of a later row
    /// that an earlier one also matches goes to the earlier (an `ftyp` box whose size reads
    /// as an ICO header is HEIF, as it always was).
    @Test func isoBrandsAndTableOrder() {
        func ftyp(_ major: String, _ compatible: [String], size: UInt8? = nil) -> [UInt8] {
            [0, 0, size ?? 0, size == nil ? UInt8(16 + 4 * compatible.count) : 0] + Array(("ftyp" + major).utf8)
                + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) }
        }
        #expect(FileFormat.identify(ftyp("heic", ["mif1", "avif"])) == FileFormat(.avif))
        #expect(FileFormat.identify(ftyp("msf1", ["isom", "hevc"])) == .heif(brand: "msf1"))
        #expect(FileFormat.identify(ftyp("isom", ["isom", "heix"])) == .heif(brand: "heix"))
        #expect(FileFormat.identify(ftyp("avis", [])) == FileFormat(.avif))
        #expect(FileFormat.identify(ftyp("mif1", ["heic"], size: 1)) == .heif(brand: "mif1"))
        #expect(FileFormat.identify(Array("ftypheic".utf8)) == .unknown(firstBytes: Array("ftypheic".utf8)))
    }
}
