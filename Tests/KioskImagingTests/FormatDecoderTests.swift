// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
@testable import KioskImaging
import Testing

/// WebP, HEIF/HEIC, AVIF and GIF: real files made from the project's photo by the reference
/// encoders (make_formats.py: cwebp, heif-enc, Pillow, gifsicle), each compared with the
/// reference decoders' output (dwebp, heif-convert, Pillow) placed the same way.
enum FormatFiles {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("make_formats.py").path

    /// The folder make_formats.py wrote into, made once per test run.
    static let folder: Result<String, Failure> = {
        let out = NSTemporaryDirectory() + "kc-formats-\(UUID().uuidString)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, Fixtures.path("photos", "volna-5120x2880.jpg"),
                             Fixtures.root + "/exif-orientation", out]
        let err = Pipe()
        process.standardError = err
        do { try process.run() } catch { return .failure(Failure(description: "cannot run make_formats.py: \(error)")) }
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(Failure(description: "make_formats.py failed (deploy/apt-deps.sh --tests installs its tools): \(message)"))
        }
        return .success(out)
    }()

    static func path(_ name: String) throws -> String { try folder.get() + "/" + name }
}

/// Peak signal-to-noise ratio of the R, G, B samples of two same-size frames, in dB
/// (infinity when equal).
func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
    precondition(a.width == b.width && a.height == b.height)
    var sum = 0.0
    for i in 0..<a.pixelCount {
        let p = a.pixels[i], q = b.pixels[i]
        for shift in [0, 8, 16] as [UInt32] {
            let d = Double(Int((p >> shift) & 0xFF) - Int((q >> shift) & 0xFF))
            sum += d * d
        }
    }
    let mse = sum / Double(a.pixelCount * 3)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

private let background = RGBColor(red: 200, green: 40, blue: 90)

/// The frame our decoder draws for `path`.
private func shown(_ path: String, _ w: Int, _ h: Int, _ fit: FitMode) throws -> (Bitmap, FittedImage) {
    let frame = Bitmap(width: w, height: h)
    let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: fit, background: background)
    return (frame, fitted)
}

/// The frame of a reference decoder's PNG (read with libpng, straight alpha) placed the same way.
private func reference(_ png: String, _ w: Int, _ h: Int, _ fit: FitMode) throws -> Bitmap {
    let decoded = try ImageDecoder.decode(path: png)
    let frame = Bitmap(width: w, height: h)
    Compositor.place(decoded.bitmap, into: frame, fit: fit, background: background)
    return frame
}

@Suite struct WebPDecoderTests {
    @Test(arguments: ["photo.webp", "alpha.webp", "alpha-lossless.webp"], FitMode.allCases)
    func matchesDwebp(_ name: String, _ fit: FitMode) throws {
        let path = try FormatFiles.path(name)
        let (frame, fitted) = try shown(path, 640, 400, fit)
        let ref = try reference(path + ".ref.png", 640, 400, fit)
        let db = psnr(frame, ref)
        #expect(db >= 40, "\(name) \(fit): \(db) dB against dwebp")
        #expect(fitted.format == .webp)
        // Decoded straight at the placed size, not at the stored size.
        #expect(fitted.decodedWidth < fitted.sourceWidth && fitted.decodedHeight < fitted.sourceHeight)
    }

    /// Decoded at a placed size under 3/4 of the stored one on both axes, libwebp skips its
    /// in-loop deblocking filter and upsamples chroma simply (it sets `bypass_filtering` and
    /// clears fancy upsampling itself when scaling: `WebPIoInitFromOptions`, src/dec/webp_dec.c),
    /// which is what a caller's `bypass_filtering` and `no_fancy_upsampling` would ask: the
    /// pixels of `dwebp -nofilter -nofancy -scale`, still at least 40 dB from dwebp's full decode
    /// placed the same way. Shrunk less, the filter is kept: `dwebp -scale`'s pixels, not those
    /// of `dwebp -nofilter -scale`.
    @Test func aShrunkDecodeSkipsTheFilterAsLibwebpDecides() throws {
        let path = try FormatFiles.path("photo.webp")  // 1600x900
        func decoded(_ w: Int, _ h: Int) throws -> Bitmap {
            let options = DecodeOptions(targetWidth: w, targetHeight: h, fit: .fit)
            let bitmap = try ImageDecoder.decode(path: path, options: options).bitmap
            #expect(bitmap.width == w && bitmap.height == h)
            return bitmap
        }
        func png(_ name: String) throws -> Bitmap { try ImageDecoder.decode(path: try FormatFiles.path(name)).bitmap }
        let shrunk = try decoded(640, 360)  // 0.4 of each side
        #expect(psnr(shrunk, try png("photo.webp.nofilter-640x360.png")) == .infinity)
        let frame = Bitmap(width: 640, height: 360)
        Compositor.place(shrunk, into: frame, fit: .fit, background: background)
        let db = psnr(frame, try reference(path + ".ref.png", 640, 360, .fit))
        #expect(db >= 40, "\(db) dB against dwebp's full decode")
        let mild = try decoded(1280, 720)  // 0.8 of each side
        #expect(psnr(mild, try png("photo.webp.1280x720.png")) == .infinity)
        #expect(psnr(mild, try png("photo.webp.nofilter-1280x720.png")) < 60)
    }

    /// Alpha is composited over the background: the transparent left edge is the background.
    @Test func alphaIsCompositedOverTheBackground() throws {
        let (frame, _) = try shown(try FormatFiles.path("alpha-lossless.webp"), 800, 450, .stretch)
        #expect(frame.pixels[200 * 800] & 0xFFFFFF == 0xC8285A)  // alpha 0 at x = 0
        let decoded = try ImageDecoder.decode(path: try FormatFiles.path("alpha-lossless.webp"))
        #expect(decoded.bitmap.hasAlpha && decoded.bitmap.pixels[0] >> 24 == 0)
    }

    /// A lossy WebP's compressed (lossless-coded) alpha plane is counted at 5 bytes per pixel:
    /// the plane and the VP8L decoder's ARGB buffer, which libwebp allocates unless the alpha
    /// stream happens to be colour-indexed without a colour cache; an uncompressed plane at 1.
    @Test func aLossyWebPsAlphaPlaneIsCountedByItsCompression() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try FormatFiles.path("alpha.webp"))))
        let alph = try #require(bytes.firstRange(of: Array("ALPH".utf8)))
        #expect(bytes[alph.upperBound + 4] & 3 == 1, "cwebp compresses the alpha plane")
        func needed(_ bytes: [UInt8]) -> Int? {
            let result = Result { () throws(ImageError) in
                try ImageDecoder.decode(bytes: bytes, name: "alpha.webp", options: DecodeOptions(maxDecoderBytes: 1))
            }
            guard case .overMemoryBudget(_, let needed, _, _) = result.failure else { Issue.record("\(result)"); return nil }
            return needed
        }
        let (w, h) = (800, 450)
        let compressed = try #require(needed(bytes))
        // libwebp's rows, the alpha plane and its decoder with its cache rows, the decoded image
        // (the bytes are the caller's, not held by the decoder).
        #expect(compressed == 128 * w + (5 * w * h + 128 * w) + 4 * w * h, "\(compressed)")
        // The same header declaring an uncompressed plane: 4 bytes per pixel less.
        bytes[alph.upperBound + 4] &= ~3
        let plain = try #require(needed(bytes))
        #expect(compressed - plain == 4 * w * h + 128 * w, "\(compressed) - \(plain)")
    }

    /// The EXIF chunk's orientation is applied: each orient-N.webp (a lossless copy of the
    /// EXIF test image test_N.jpg, its EXIF kept) shows what libjpeg-turbo shows of test_N.jpg.
    @Test(arguments: 1...8) func exifOrientation(_ n: Int) throws {
        let webp = try ImageDecoder.decode(path: try FormatFiles.path("orient-\(n).webp"))
        let jpeg = try ImageDecoder.decode(path: Fixtures.path("exif-orientation", "test_\(n).jpg"))
        #expect(webp.orientation.rawValue == n)
        #expect(webp.bitmap.width == jpeg.bitmap.width && webp.bitmap.height == jpeg.bitmap.height)
        if webp.bitmap.width == jpeg.bitmap.width && webp.bitmap.height == jpeg.bitmap.height {
            #expect(psnr(webp.bitmap, jpeg.bitmap) >= 40, "orientation \(n)")
        }
    }

    @Test func truncatedFileNamesTheFileAndTheReason() throws {
        let path = try FormatFiles.path("photo.webp")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let cut = try FormatFiles.path("cut.webp")
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: cut))
        let error = Result { () throws(ImageError) in try ImageDecoder.decode(path: cut) }.failure
        guard case .corrupt(let where_, let reason) = error else {
            Issue.record("a half WebP gave \(String(describing: error))")
            return
        }
        #expect(where_ == cut && reason.contains("truncated"), "\(reason)")
    }

    /// A WebP whose VP8X canvas claims 60000x60000 in 30 bytes, and a lossless one claiming
    /// 16384x16384: refused from the header.
    @Test func bombsAreRefusedFromTheHeader() throws {
        #expect(throws: ImageError.tooLarge(path: "vp8x", width: 60000, height: 60000, limit: 100_000_000)) {
            try ImageDecoder.decode(bytes: WebPBombs.canvas(60000, 60000), name: "vp8x")
        }
        #expect(throws: ImageError.tooLarge(path: "vp8l", width: 16384, height: 16384, limit: 100_000_000)) {
            try ImageDecoder.decode(bytes: WebPBombs.lossless(16384, 16384), name: "vp8l")
        }
    }
}

/// Tiny WebP headers claiming huge images (WebP container, RFC 9649 sections 2.5 and 2.7).
enum WebPBombs {
    static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    static func le24(_ v: Int) -> [UInt8] { (0..<3).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    static func riff(_ chunks: [UInt8]) -> [UInt8] { Array("RIFF".utf8) + le32(4 + chunks.count) + Array("WEBP".utf8) + chunks }
    /// A VP8L chunk: signature 0x2F, 14-bit width-1 and height-1, then a few bytes of data.
    static func vp8l(_ w: Int, _ h: Int) -> [UInt8] {
        let bits = (w - 1) | (h - 1) << 14
        let payload: [UInt8] = [0x2F] + le32(bits) + [0, 0, 0]
        return Array("VP8L".utf8) + le32(payload.count) + payload
    }
    static func canvas(_ w: Int, _ h: Int) -> [UInt8] {
        let header: [UInt8] = Array("VP8X".utf8) + le32(10) + [0, 0, 0, 0]
        return riff(header + le24(w - 1) + le24(h - 1) + vp8l(16, 16))
    }
    static func lossless(_ w: Int, _ h: Int) -> [UInt8] { riff(vp8l(w, h)) }
}

@Suite struct HEIFDecoderTests {
    /// 8-bit HEIC, 10-bit HEIC (reduced to 8 bits: at most 1 level from heif-convert's 16-bit
    /// output cut to its high byte), AVIF, and AVIF with alpha.
    @Test(arguments: ["photo.heic", "photo10.heic", "photo.avif", "alpha.avif"], FitMode.allCases)
    func matchesHeifConvert(_ name: String, _ fit: FitMode) throws {
        let path = try FormatFiles.path(name)
        let (frame, fitted) = try shown(path, 640, 400, fit)
        let ref = try reference(path + ".ref.png", 640, 400, fit)
        let db = psnr(frame, ref)
        #expect(db >= 40, "\(name) \(fit): \(db) dB against heif-convert")
        #expect(fitted.format == (name.hasSuffix(".avif") ? .avif : .heif))
    }

    /// A HEIC whose picture is stored turned a quarter anticlockwise, with an irot box turning
    /// it a quarter clockwise AND an EXIF orientation 6 saying the same: shown upright, once.
    @Test func irotAndEXIFOrientationTurnOnce() throws {
        let path = try FormatFiles.path("irot-exif6.heic")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // The file really has both: an irot box with angle 3, and the Exif orientation entry
        // (tag 0x0112, SHORT, count 1, value 6; big-endian "MM", as Pillow writes it).
        #expect(bytes.firstRange(of: Array("irot".utf8) + [3]) != nil)
        #expect(bytes.firstRange(of: [0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06]) != nil)
        let decoded = try ImageDecoder.decode(path: path)
        #expect(decoded.bitmap.width == 300 && decoded.bitmap.height == 400)
        #expect(decoded.orientation == .topLeft)
        let upright = try ImageDecoder.decode(path: try FormatFiles.path("upright.png"))
        if decoded.bitmap.width == 300 && decoded.bitmap.height == 400 {
            #expect(psnr(decoded.bitmap, upright.bitmap) >= 35)
        }
        let (frame, _) = try shown(path, 300, 400, .fit)
        #expect(psnr(frame, try reference(try FormatFiles.path("upright.png"), 300, 400, .fit)) >= 35)
    }

    @Test func truncatedFileNamesTheFileAndTheReason() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try FormatFiles.path("photo.heic"))))
        for (n, keep) in [bytes.count / 2, 600].enumerated() {
            let cut = try FormatFiles.path("cut-\(n).heic")
            try Data(bytes.prefix(keep)).write(to: URL(fileURLWithPath: cut))
            let error = Result { () throws(ImageError) in try ImageDecoder.decode(path: cut) }.failure
            guard case .corrupt(let where_, let reason) = error else {
                Issue.record("a cut HEIC gave \(String(describing: error))")
                continue
            }
            #expect(where_ == cut && reason.contains("truncated") && reason.contains("libheif"), "\(reason)")
        }
    }

    /// photo.heic with its ispe boxes saying 60000x60000: refused from the header.
    @Test func bombIsRefusedFromTheHeader() throws {
        let bytes = HEIFBomb.make(try FormatFiles.path("photo.heic"), width: 60000, height: 60000)
        #expect(throws: ImageError.tooLarge(path: "bomb", width: 60000, height: 60000, limit: 100_000_000)) {
            try ImageDecoder.decode(bytes: bytes, name: "bomb")
        }
    }
}

extension HEIFDecoderTests {
    /// photo.heic with its ispe boxes saying 16x16 while its HEVC stream codes the whole photo:
    /// libheif would decode the coded size past every limit checked from the ispe, so the SPS's
    /// size is compared first and the file refused as corrupt.
    @Test func anIspeThatUnderstatesTheCodedSizeIsRefused() throws {
        let bytes = HEIFBomb.make(try FormatFiles.path("photo.heic"), width: 16, height: 16)
        let refused = HEIFBomb.refusal(bytes, name: "liar")
        #expect(refused?.path == "liar" && refused?.reason.contains("HEVC stream codes") == true
                && refused?.reason.contains("16x16 its ispe box declares") == true, "\(String(describing: refused))")
        // The file as made still decodes: its ispe and its SPS agree.
        _ = try ImageDecoder.decode(path: try FormatFiles.path("photo.heic"))
    }
}

extension HEIFDecoderTests {
    /// photo.avif with its ispe boxes saying 16x16 while its AV1 stream codes the whole photo:
    /// the sequence header's max_frame_width/height are read and the file refused as corrupt
    /// before libheif decodes it. libheif writes an av1C without configOBUs, so the sequence
    /// header read is the one in the item data (found through iinf and iloc), which is also
    /// the one dav1d decodes by.
    @Test func anAVIFWhoseIspeUnderstatesTheCodedSizeIsRefused() throws {
        let real = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try FormatFiles.path("photo.avif"))))
        let av1C = try #require(real.firstRange(of: Array("av1C".utf8)))
        #expect(real[av1C.lowerBound - 4..<av1C.lowerBound] == [0, 0, 0, 12], "av1C carries no configOBUs")
        let liar = HEIFBomb.make(try FormatFiles.path("photo.avif"), width: 16, height: 16)
        let refused = HEIFBomb.refusal(liar, name: "liar")
        #expect(refused?.path == "liar" && refused?.reason.contains("AV1 stream codes") == true
                && refused?.reason.contains("16x16 its ispe box declares") == true, "\(String(describing: refused))")
        // Claiming more than the stream codes is no lie that costs memory: the real file decodes.
        #expect(try ImageDecoder.decode(bytes: real, name: "real").bitmap.width > 16)
    }

    /// Sequence headers as the AV1 specification lays them out (section 5.5.1): the reduced
    /// still-picture form and the full form with timing and decoder model information.
    @Test func av1SequenceHeadersGiveTheirMaximumFrameSize() {
        // Bits written most significant first.
        func bits(_ fields: [(Int, Int)]) -> [UInt8] {
            var out: [UInt8] = [], current = 0, used = 0
            for (value, count) in fields {
                for i in stride(from: count - 1, through: 0, by: -1) {
                    current = current << 1 | (value >> i) & 1
                    used += 1
                    if used == 8 { out.append(UInt8(current)); current = 0; used = 0 }
                }
            }
            if used > 0 { out.append(UInt8(current << (8 - used))) }
            return out
        }
        // seq_profile 0, still_picture 1, reduced 1, seq_level_idx 31, 16-bit sizes 6000x4000.
        let reduced = bits([(0, 3), (1, 1), (1, 1), (31, 5), (15, 4), (15, 4), (5999, 16), (3999, 16)])
        #expect(ISOMediaCodedSize.parseSequenceHeader(reduced[...]).map { [$0.width, $0.height] } == [6000, 4000])
        // Full form: timing info with equal_picture_interval (uvlc 0 = "1"), decoder model info
        // (buffer_delay_length_minus_1 = 4), initial display delay, two operating points (the
        // second at level 9, so with seq_tier), 12-bit sizes 640x400.
        var full: [(Int, Int)] = [(0, 3), (0, 1), (0, 1), (1, 1), (1, 32), (30, 32), (1, 1), (1, 1)]
        full += [(1, 1), (4, 5), (1, 32), (4, 5), (4, 5)]  // decoder_model_info_present, decoder_model_info()
        full += [(1, 1), (1, 5)]  // initial_display_delay_present_flag, operating_points_cnt_minus_1
        full += [(0, 12), (5, 5), (1, 1), (3, 5), (2, 5), (0, 1), (1, 1), (9, 4)]
        full += [(1, 12), (9, 5), (1, 1), (0, 1), (0, 1)]
        full += [(11, 4), (11, 4), (639, 12), (399, 12)]
        #expect(ISOMediaCodedSize.parseSequenceHeader(bits(full)[...]).map { [$0.width, $0.height] } == [640, 400])
        // Cut short: nothing, and no trap.
        #expect(ISOMediaCodedSize.parseSequenceHeader(bits(full).prefix(10)) == nil)
        // Walked as OBUs: a temporal delimiter (type 2, size 0), then the sequence header.
        let obus: [UInt8] = [0x12, 0x00, 0x0A, UInt8(reduced.count)] + reduced
        #expect(ISOMediaCodedSize.sequenceHeaderSize(obus).map { [$0.width, $0.height] } == [6000, 4000])
    }
}

extension HEIFDecoderTests {
    /// The hvcC array that holds the SPS relabelled (its NAL_unit_type byte 33 -> 48) while the
    /// SPS NAL unit itself is left whole: libde265 reads the unit's own header, so must we.
    /// With the ispe saying 16x16 the file is refused; with the SPS unit's own header changed
    /// too there is no SPS left to read a size from, and the file is refused for that.
    @Test func anSPSIsKnownByItsOwnNALHeaderNotByItsArray() throws {
        var bytes = HEIFBomb.make(try FormatFiles.path("photo.heic"), width: 16, height: 16)
        let hvcC = try #require(bytes.firstRange(of: Array("hvcC".utf8)))
        var p = hvcC.upperBound + 22
        let arrays = Int(bytes[p])
        p += 1
        var spsAt: Int?
        for _ in 0..<arrays {
            let type = bytes[p], count = Int(bytes[p + 1]) << 8 | Int(bytes[p + 2])
            if type & 0x3F == 33 { bytes[p] = (type & 0xC0) | 48; spsAt = p + 3 + 2 }
            p += 3
            for _ in 0..<count { p += 2 + (Int(bytes[p]) << 8 | Int(bytes[p + 1])) }
        }
        let sps = try #require(spsAt)
        #expect((bytes[sps] >> 1) & 0x3F == 33, "the SPS unit itself still says SPS")
        func reason(_ bytes: [UInt8]) -> String { HEIFBomb.refusal(bytes, name: "relabelled")?.reason ?? "not refused as corrupt" }
        #expect(reason(bytes).contains("HEVC stream codes"), "\(reason(bytes))")
        bytes[sps] = (bytes[sps] & 0x81) | (48 << 1)
        #expect(reason(bytes).contains("no sequence parameter set"), "\(reason(bytes))")
    }

    /// 100,001 padding OBUs before the sequence header (a walk that gave up after 100,000 saw
    /// none, and the file was decoded at its coded size): every OBU is walked.
    @Test func aSequenceHeaderAfterAnyNumberOfPaddingOBUsIsRead() {
        // Reduced still-picture header, 16-bit sizes 6000x4000 (see the test above).
        let header: [UInt8] = [0x1F, 0xFF, 0xC5, 0xDB, 0xC3, 0xE7, 0xC0]
        let padding: [UInt8] = (0..<200_002).map { $0 % 2 == 0 ? 0x7A : 0x00 }
        let size = ISOMediaCodedSize.sequenceHeaderSize(padding + [0x0A, UInt8(header.count)] + header)
        #expect(size.map { [$0.width, $0.height] } == [6000, 4000])
    }
}

enum HEIFBomb {
    /// Where and why `bytes` were refused as corrupt, or nil when they decoded or failed otherwise.
    static func refusal(_ bytes: [UInt8], name: String) -> (path: String, reason: String)? {
        let result = Result { () throws(ImageError) in try ImageDecoder.decode(bytes: bytes, name: name) }
        guard case .corrupt(let path, let reason) = result.failure else { return nil }
        return (path, reason)
    }

    /// The file at `path` with every ispe property's size replaced.
    static func make(_ path: String, width: Int, height: Int) -> [UInt8] {
        var bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        let be32 = { (v: Int) -> [UInt8] in (0..<4).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        var from = bytes.startIndex
        while let r = bytes[from...].firstRange(of: Array("ispe".utf8)) {
            bytes.replaceSubrange((r.upperBound + 4)..<(r.upperBound + 12), with: be32(width) + be32(height))
            from = r.upperBound
        }
        return bytes
    }
}

@Suite struct GIFDecoderTests {
    /// The first frame, its transparent colour composited: exactly Pillow's pixels over the
    /// same background (a GIF is lossless).
    @Test func matchesPillow() throws {
        let path = try FormatFiles.path("still.gif")
        let decoded = try ImageDecoder.decode(path: path)
        let ref = try ImageDecoder.decode(path: path + ".ref.png")
        #expect(decoded.bitmap.hasAlpha && decoded.bitmap.width == 320 && decoded.bitmap.height == 180)
        Compositor.flattenAlpha(decoded.bitmap, over: background)
        Compositor.flattenAlpha(ref.bitmap, over: background)
        #expect(psnr(decoded.bitmap, ref.bitmap) == .infinity)
        #expect(decoded.bitmap.pixels[70 * 320 + 10] & 0xFFFFFF == 0xC8285A)  // the transparent band
        let (frame, _) = try shown(path, 640, 400, .fill)
        #expect(psnr(frame, try reference(path + ".ref.png", 640, 400, .fill)) == .infinity)
    }

    /// An animated GIF's frame for the slot is its first, marked animated (it plays: no warning).
    @Test func animatedGivesItsFirstFrameMarkedAnimated() throws {
        let first = try shown(try FormatFiles.path("anim.gif"), 640, 400, .fit)
        #expect(first.1.warnings.isEmpty && first.1.animated)
        #expect(psnr(first.0, try shown(try FormatFiles.path("still.gif"), 640, 400, .fit).0) == .infinity)
        #expect(try !shown(try FormatFiles.path("still.gif"), 640, 400, .fit).1.animated)
    }

    @Test func truncatedFileNamesTheFileAndTheReason() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try FormatFiles.path("still.gif"))))
        let cut = try FormatFiles.path("cut.gif")
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: cut))
        let error = Result { () throws(ImageError) in try ImageDecoder.decode(path: cut) }.failure
        guard case .corrupt(let where_, let reason) = error else {
            Issue.record("a half GIF gave \(String(describing: error))")
            return
        }
        #expect(where_ == cut && reason.contains("truncated"), "\(reason)")
    }

    /// A 13-byte GIF header declaring a 65535x65535 logical screen.
    @Test func bombIsRefusedFromTheHeader() throws {
        #expect(throws: ImageError.tooLarge(path: "bomb", width: 65535, height: 65535, limit: 100_000_000)) {
            try ImageDecoder.decode(bytes: GIFBomb.bytes, name: "bomb")
        }
    }
}

enum GIFBomb {
    /// GIF89a, screen 65535x65535, a 2-colour global table, an image descriptor of the same size.
    static let bytes: [UInt8] = Array("GIF89a".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        + [0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 2, 2, 0x4C, 0x01, 0, 0x3B]
}
