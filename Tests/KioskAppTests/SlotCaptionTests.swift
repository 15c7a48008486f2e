// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskApp
import KioskCore
import KioskImaging
import KioskText
import Testing

/// Captions are drawn into the prepared slot frame (so the cross-fade fades them with it) by the
/// real decoder and the real text stack.
@Suite struct SlotCaptionTests {
    func frame(_ r: SlotPreparer.Result) -> Bitmap? {
        if case .frame(let f) = r.outcome { return f } else { return nil }
    }

    @Test func theCaptionIsInThePreparedFrameAndKeyedInTheMemoryCache() throws {
        let path = NSTemporaryDirectory() + "kc-caption-\(getpid()).png"
        defer { unlink(path) }
        try PNGWriter.write(Bitmap(width: 64, height: 36, fill: 0xFF80_8080), to: path)
        let preparer = try SlotPreparer(width: 640, height: 360, fit: .fill, background: .black, maxPixels: 1 << 20)
        preparer.captions = CaptionPainter(renderer: try TextRenderer(library: try FontLibrary()))
        let plain = try #require(frame(preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path))))
        let captioned = try #require(frame(preparer.prepare(.init(slot: 1, ticket: 2, item: 0, path: path,
                                                                  caption: "Quay 7 at dusk"))))
        #expect(captioned !== plain)
        #expect(plain[320, 350] == 0xFF80_8080 && plain[5, 355] == 0xFF80_8080)
        #expect(captioned[5, 355] == 0xFF39_3939)  // the strip
        #expect(captioned[320, 20] == 0xFF80_8080)  // the picture above it
        #expect((300..<360).contains { y in (0..<640).contains { captioned[$0, y] == 0xFFFF_FFFF } })  // the words
        // The same caption again comes from memory; another caption is drawn anew.
        let again = try #require(frame(preparer.prepare(.init(slot: 2, ticket: 3, item: 0, path: path,
                                                              caption: "Quay 7 at dusk"))))
        #expect(again === captioned)
        let other = try #require(frame(preparer.prepare(.init(slot: 0, ticket: 4, item: 0, path: path,
                                                              caption: "Pier 3"))))
        #expect(other !== captioned)
    }

    /// Writes a grey 64x36 PNG to `path` with a tEXt "Description" chunk of `description`
    /// before IDAT (PNG 1.2 section 4.2.3.1; CRC over type and data).
    func writeDescribedPNG(_ path: String, description: String) throws {
        try PNGWriter.write(Bitmap(width: 64, height: 36, fill: 0xFF80_8080), to: path)
        var png = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let chunkData = Array("Description\0\(description)".utf8), type = Array("tEXt".utf8)
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in type + chunkData {
            crc ^= UInt32(byte); for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        crc ^= 0xFFFF_FFFF
        func be32(_ v: UInt32) -> [UInt8] {
            [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        }
        png.insert(contentsOf: be32(UInt32(chunkData.count)) + type + chunkData + be32(crc), at: 33)  // after IHDR
        try Data(png).write(to: URL(fileURLWithPath: path))
    }

    @Test func captionSourceExifReadsTheImagesOwnDescriptionAndOffDrawsNone() throws {
        let path = NSTemporaryDirectory() + "kc-caption-exif-\(getpid()).png"
        defer { unlink(path) }
        try writeDescribedPNG(path, description: "Lighthouse")
        #expect(ImageDescription.read(path: path) == "Lighthouse")
        let preparer = try SlotPreparer(width: 640, height: 360, fit: .fill, background: .black, maxPixels: 1 << 20,
                                        memoryCacheBytes: 0)
        preparer.captions = CaptionPainter(renderer: try TextRenderer(library: try FontLibrary()))
        preparer.captionSource = .exif
        let described = try #require(frame(preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path))))
        #expect(described[5, 355] == 0xFF39_3939)
        preparer.captionSource = .item
        #expect(try #require(frame(preparer.prepare(.init(slot: 0, ticket: 2, item: 0, path: path))))[5, 355]
                    == 0xFF80_8080)
        preparer.captionSource = .off
        #expect(try #require(frame(preparer.prepare(.init(slot: 0, ticket: 3, item: 0, path: path,
                                                          caption: "x"))))[5, 355] == 0xFF80_8080)
    }

    @Test func captionSourceNameCaptionsAPlainFolderByItsFileNames() throws {
        let dir = NSTemporaryDirectory() + "kc-caption-name-\(getpid())"
        mkdir(dir, 0o755)
        let path = dir + "/Lake Bled.png"
        defer { unlink(path); rmdir(dir) }
        try PNGWriter.write(Bitmap(width: 64, height: 36, fill: 0xFF80_8080), to: path)
        let preparer = try SlotPreparer(width: 640, height: 360, fit: .fill, background: .black, maxPixels: 1 << 20,
                                        memoryCacheBytes: 0)
        preparer.captions = CaptionPainter(renderer: try TextRenderer(library: try FontLibrary()))
        preparer.captionSource = .name
        let named = try #require(frame(preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path))))
        let written = try #require(frame(preparer.prepare(.init(slot: 0, ticket: 2, item: 0, path: path,
                                                                caption: "Lake Bled"))))
        #expect(named[5, 355] == 0xFF39_3939)
        #expect(memcmp(named.pixels, written.pixels, named.width * named.height * 4) == 0,
                "the file name's words, as if the item said them")
        preparer.captionSource = .item
        #expect(try #require(frame(preparer.prepare(.init(slot: 0, ticket: 3, item: 0, path: path))))[5, 355]
                == 0xFF80_8080)
    }

    @Test func theTitleOfASourceIsItsFileNameWithoutTheExtension() {
        #expect(CaptionSource.title(of: "/photos/Lake Bled.jpg") == "Lake Bled")
        #expect(CaptionSource.title(of: "/photos/archive.2019.06.jpeg") == "archive.2019.06")
        #expect(CaptionSource.title(of: "/photos/README") == "README")
        #expect(CaptionSource.title(of: "/photos/.hidden") == ".hidden")
        #expect(CaptionSource.title(of: "https://cdn.example/menu/Spring%20menu.jpg?v=3#x") == "Spring menu")
        #expect(CaptionSource.title(of: "/photos/.jpg") == ".jpg")
        #expect(CaptionSource.title(of: "https://cdn.example/") == nil)
    }

    /// An image description with BEL and ESC in it (a camera's or a script's) is drawn as the
    /// same words without them: the same frame as the clean caption, no box.
    @Test func controlCharactersInAnImageDescriptionDrawNothing() throws {
        let path = NSTemporaryDirectory() + "kc-caption-ctl-\(getpid()).png"
        defer { unlink(path) }
        try writeDescribedPNG(path, description: "Light\u{07}house\u{1B}[1m at dusk")
        #expect(ImageDescription.read(path: path) == "Light\u{07}house\u{1B}[1m at dusk")
        let preparer = try SlotPreparer(width: 640, height: 360, fit: .fill, background: .black, maxPixels: 1 << 20,
                                        memoryCacheBytes: 0)
        let renderer = try TextRenderer(library: try FontLibrary())
        preparer.captions = CaptionPainter(renderer: renderer)
        preparer.captionSource = .exif
        let described = try #require(frame(preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path))))
        preparer.captionSource = .item
        let job = SlotPreparer.Job(slot: 1, ticket: 2, item: 0, path: path, caption: "Lighthouse[1m at dusk")
        let clean = try #require(frame(preparer.prepare(job)))
        #expect(described[5, 355] == 0xFF39_3939)  // a caption was drawn
        let differing = (0..<clean.pixelCount).filter { described.pixels[$0] != clean.pixels[$0] }.count
        #expect(differing == 0, "\(differing) pixels differ from the caption without the control characters")
        #expect(renderer.reportedControls == [0x07, 0x1B] && renderer.reportedMissing.isEmpty)
    }
}

/// Control characters in captions and image descriptions are logged once each by the program,
/// however many texts carry them.
@Test func controlCharactersInCaptionsAreLoggedOnce() throws {
    let dir = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let photo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy/samples/path-1920x1200.jpg").path
    let playlist = dir + "/show.json"
    let items = [#"Quay\u0007 7"#, #"Pier\u0007 3\u001b"#, #"Dock\u0007\u001b 9"#]
        .map { #"{"src": "\#(photo)", "caption": "\#($0)"}"# }
    try Data(#"{"items": [\#(items.joined(separator: ", "))]}"#.utf8).write(to: URL(fileURLWithPath: playlist))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: kioskExecutable())
    process.arguments = ["--display", "offscreen:\(dir)/frames", "--size", "320x200", "--interval", "1", "--fade", "0",
                         "--run-for", "2.5", playlist]
    let err = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = err
    try process.run()
    let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(log)")
    let lines = log.split(separator: "\n").filter { $0.contains("control characters in a text are not drawn") }
    #expect(lines.count == 2, "\(lines)")
    #expect(lines.first?.contains(#"reason="U+0007 "#) == true, "\(lines)")
    #expect(lines.last?.contains(#"reason="U+001B "#) == true, "\(lines)")
    #expect(lines.first?.contains(#"detail="Quay<U+0007> 7""#) == true, "\(lines)")
    #expect(!log.contains("drawn as a box"), "\(log)")
}
