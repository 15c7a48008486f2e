// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
@testable import KioskImaging
import Testing

/// The files make_colour.py writes (Debian's encoders, profiles made with Little CMS) and the
/// pixels each must show, computed there independently (Pillow's ImageCms, the tone-map formula).
enum ColourFiles {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("make_colour.py").path

    /// The folder make_colour.py wrote into, made once per test run.
    static let folder: Result<String, Failure> = {
        let out = NSTemporaryDirectory() + "kc-colour-\(UUID().uuidString)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, out]
        let err = Pipe()
        process.standardError = err
        do { try process.run() } catch {
            return .failure(Failure(description: "cannot run make_colour.py: \(error)"))
        }
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(Failure(description: "make_colour.py failed (deploy/apt-deps.sh --tests installs its "
                                    + "tools): \(message)"))
        }
        return .success(out)
    }()

    static func path(_ name: String) throws -> String { try folder.get() + "/" + name }

    /// expected.json: file name to [x, y, r, g, b] points.
    static let expected: Result<[String: [[Int]]], Failure> = {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: try path("expected.json")))
            guard let table = try JSONSerialization.jsonObject(with: data) as? [String: [[Int]]] else {
                return .failure(Failure(description: "expected.json is not a table of points"))
            }
            return .success(table)
        } catch {
            return .failure(Failure(description: "\(error)"))
        }
    }()

    static func points(_ name: String) throws -> [[Int]] {
        guard let points = try expected.get()[name] else {
            throw Failure(description: "no expected pixels for \(name)")
        }
        return points
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: try path(name))))
    }
}

/// R, G, B of a pixel.
private func rgb(_ p: UInt32) -> [Int] { [Int((p >> 16) & 0xFF), Int((p >> 8) & 0xFF), Int(p & 0xFF)] }

/// The points of `expected` where `bitmap` differs by more than `tolerance` in a channel.
private func misses(_ bitmap: Bitmap, _ expected: [[Int]], tolerance: Int) -> [String] {
    expected.compactMap { e in
        let got = rgb(bitmap[e[0], e[1]])
        let want = Array(e[2...4])
        let close = zip(got, want).allSatisfy { abs($0 - $1) <= tolerance }
        return close ? nil : "(\(e[0]),\(e[1])): \(got) expected \(want)"
    }
}

@Suite struct ColourManagementTests {
    /// The figures of docs/colour.md: Display P3 red (200,40,40) is sRGB (218,0,26), Adobe RGB cyan
    /// (60,200,200) is (0,201,201); unconverted they stay as stored.
    @Test func displayP3RedAndAdobeCyanReachSRGB() throws {
        let p3 = try ImageDecoder.decode(path: ColourFiles.path("p3.png")).bitmap
        #expect(rgb(p3[8, 8]) == [218, 0, 26])
        let adobe = try ImageDecoder.decode(path: ColourFiles.path("adobe.png")).bitmap
        #expect(rgb(adobe[24, 8]) == [0, 201, 201])
        let off = try ImageDecoder.decode(path: ColourFiles.path("p3.png"), options: DecodeOptions(colour: .off)).bitmap
        #expect(rgb(off[8, 8]) == [200, 40, 40])
    }

    /// Every way a file describes its colours, each format's: the decoded pixels match Pillow's
    /// Little CMS transform of the same pixels with the same profile (the HDR ones, the
    /// tone-map formula), both decoded whole and fitted into a frame of the picture's size (the
    /// streamed path of JPEG and PNG converts row by row in the ring).
    @Test(arguments: [
        ("p3.jpg", 1), ("p3.png", 0), ("adobe.png", 0), ("p3.webp", 0), ("p3.heic", 1), ("p3-nclx.avif", 1),
        ("p3-cicp.png", 0), ("chrm.png", 1), ("gray.jpg", 1), ("cmyk.jpg", 2), ("srgb.jpg", 0), ("plain.jpg", 0),
        ("bad-icc.jpg", 0), ("ultrahdr.jpg", 0),
        ("pq10.avif", 1), ("pq12.avif", 1), ("hlg10.avif", 1), ("pq10-4000.avif", 1), ("pq10-absurd.avif", 1),
    ])
    func convertedAsExpected(_ name: String, _ tolerance: Int) throws {
        let path = try ColourFiles.path(name)
        let expected = try ColourFiles.points(name)
        let decoded = try ImageDecoder.decode(path: path)
        let whole = misses(decoded.bitmap, expected, tolerance: tolerance)
        #expect(whole.isEmpty, "\(name) decoded whole: \(whole)")
        let frame = Bitmap(width: decoded.bitmap.width, height: decoded.bitmap.height)
        _ = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fill,
                                          background: RGBColor(red: 0, green: 0, blue: 0))
        let fitted = misses(frame, expected, tolerance: tolerance)
        #expect(fitted.isEmpty, "\(name) fitted: \(fitted)")
    }

    /// A file tagged with an sRGB profile gives the very pixels of the same file untagged: no
    /// transform is applied when it would change nothing.
    @Test func anSRGBProfileChangesNoPixel() throws {
        let tagged = try ImageDecoder.decode(path: ColourFiles.path("srgb.jpg")).bitmap
        let plain = try ImageDecoder.decode(path: ColourFiles.path("plain.jpg")).bitmap
        #expect(maxDifference(tagged, plain) == 0)
    }

    /// A CMYK JPEG with a profile goes through it (far from the naive formula); without one, the
    /// naive formula, as before.
    @Test func cmykWithAndWithoutAProfile() throws {
        let profiled = try ImageDecoder.decode(path: ColourFiles.path("cmyk.jpg")).bitmap
        let plain = try ImageDecoder.decode(path: ColourFiles.path("cmyk-plain.jpg")).bitmap
        let unconverted = try ImageDecoder.decode(path: ColourFiles.path("cmyk.jpg"),
                                                  options: DecodeOptions(colour: .off)).bitmap
        #expect(maxDifference(plain, unconverted) == 0, "without a profile, the naive formula")
        #expect(maxDifference(profiled, plain) > 30, "the profile's inks, not the formula")
    }

    /// An unreadable profile is reported once per file (the next decode of the same file says
    /// nothing) and the picture is shown as sRGB.
    @Test func aMalformedProfileIsReportedOnceAndShownAsSRGB() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/bad.jpg"
        try FileManager.default.copyItem(atPath: ColourFiles.path("bad-icc.jpg"), toPath: path)
        let first = try ImageDecoder.decode(path: path)
        #expect(first.warnings.contains { $0.contains("ICC profile") && $0.contains("shown as sRGB") },
                "\(first.warnings)")
        let again = try ImageDecoder.decode(path: path)
        #expect(!again.warnings.contains { $0.contains("ICC profile") }, "\(again.warnings)")
        let plain = try ImageDecoder.decode(path: ColourFiles.path("plain.jpg")).bitmap
        #expect(maxDifference(first.bitmap, plain) == 0)
    }

    /// Profiles of megabytes: one of 3 MiB (a real profile, padded) is used; one over the 4 MiB
    /// limit is not read (in a JPEG its segments are skipped) and the picture is shown as sRGB with
    /// a line that says why; a profile cut in half is refused by Little CMS, and named.
    @Test func hugeAndCutProfiles() throws {
        let p3 = try ColourFiles.bytes("display-p3.icc")
        let jpeg = try ColourFiles.bytes("plain.jpg")
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (size, used) in [(3 << 20, true), ((4 << 20) + 4096, false)] {
            let path = dir + "/icc-\(size).jpg"
            try Data(JPEGFiles.withProfile(padded(p3, to: size), jpeg)).write(to: URL(fileURLWithPath: path))
            let decoded = try ImageDecoder.decode(path: path)
            let red = rgb(decoded.bitmap[8, 8])
            if used {
                #expect(red == [218, 0, 26], "a \(size)-byte profile is used: \(red), \(decoded.warnings)")
                #expect(decoded.warnings.isEmpty, "\(decoded.warnings)")
            } else {
                #expect(red == [200, 40, 40], "\(red)")
                #expect(decoded.warnings.contains { $0.contains("over the 4 MiB limit") }, "\(decoded.warnings)")
            }
        }
        let cut = dir + "/cut.jpg"
        try Data(JPEGFiles.withProfile(Array(p3.prefix(p3.count / 2)), jpeg)).write(to: URL(fileURLWithPath: cut))
        let decoded = try ImageDecoder.decode(path: cut)
        #expect(decoded.warnings.contains { $0.contains("its ICC profile") && $0.contains("cannot be used") },
                "\(decoded.warnings)")
        #expect(rgb(decoded.bitmap[8, 8]) == [200, 40, 40])
    }

    /// Little CMS's allocations count against the decoder's budget: with 384 KiB for the whole
    /// decode, the CMYK transform (about 490 KiB of tables when it can) is made smaller and
    /// still right; with 192 KiB, what libjpeg leaves is too little, and the picture is shown with
    /// the plain formula and a line that says why; with 64 KiB the file is refused, named.
    @Test func theTransformStaysWithinTheBudget() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/cmyk.jpg"
        try FileManager.default.copyItem(atPath: ColourFiles.path("cmyk.jpg"), toPath: path)
        let small = try ImageDecoder.decode(path: path, options: DecodeOptions(maxDecoderBytes: 384 << 10))
        #expect(misses(small.bitmap, try ColourFiles.points("cmyk.jpg"), tolerance: 2).isEmpty)
        #expect(small.warnings.isEmpty, "\(small.warnings)")
        let profile = try ColourFiles.bytes("cmyk.icc")
        let made = ColourConversion.make(.icc(profile), layout: .cmykInverted, alpha: false, target: .sRGB, name: path,
                                         budget: 300 << 10)
        #expect((made.conversion?.bytes ?? Int.max) <= 300 << 10)

        ColourConversion.forgetCached()  // the smaller transform just made would fit
        let smaller = try ImageDecoder.decode(path: path, options: DecodeOptions(maxDecoderBytes: 192 << 10))
        #expect(smaller.warnings.contains { $0.contains("over its limit") && $0.contains("plain CMYK formula") },
                "\(smaller.warnings)")
        let plain = try ImageDecoder.decode(path: ColourFiles.path("cmyk-plain.jpg")).bitmap
        #expect(maxDifference(smaller.bitmap, plain) == 0)
        #expect(throws: ImageError.self) {
            try ImageDecoder.decode(path: path, options: DecodeOptions(maxDecoderBytes: 64 << 10))
        }
    }

    /// With the screen's own profile every picture is converted to it, untagged ones (sRGB) too.
    @Test func aScreenProfile() throws {
        let screen = ScreenProfile(bytes: try ColourFiles.bytes("adobe-rgb.icc"), name: "Adobe RGB")
        let options = DecodeOptions(colour: ColourTarget(screenProfile: screen))
        let decoded = try ImageDecoder.decode(path: ColourFiles.path("patches.png"), options: options).bitmap
        let wrong = misses(decoded, try ColourFiles.points("patches.png@adobe-rgb.icc"), tolerance: 0)
        #expect(wrong.isEmpty, "\(wrong)")
        // And a profile that is no display profile is refused when it is read.
        #expect(throws: ImageError.self) { try ScreenProfile(path: ColourFiles.path("cmyk.icc")) }
        #expect(try ScreenProfile(path: ColourFiles.path("display-p3.icc")).name == "Display P3 (kiosk-carousel test)")
    }

    /// A folder or a device given as the screen's profile is named as such, not as EINVAL.
    @Test func aScreenProfileThatIsNoFile() {
        func reason(_ path: String) -> String {
            do { _ = try ScreenProfile(path: path); return "accepted" } catch { return error.reason }
        }
        #expect(reason("/tmp") == "cannot read: Is a directory (errno 21)")
        #expect(reason("/dev/zero").hasPrefix("not a regular file (a character device)"))
    }
}

@Suite struct HDRToneMapTests {
    /// Reference white (203 cd/m², BT.2408) of a PQ picture is near SDR white, not the grey of its
    /// code value; unconverted it is libheif's 8-bit reduction of the PQ signal, as before.
    @Test func referenceWhiteIsNearWhite() throws {
        let mapped = try ImageDecoder.decode(path: ColourFiles.path("pq10.avif")).bitmap
        #expect(rgb(mapped[28, 4]) == [229, 229, 229])
        let off = try ImageDecoder.decode(path: ColourFiles.path("pq10.avif"),
                                          options: DecodeOptions(colour: .off)).bitmap
        #expect(rgb(off[28, 4])[0] < 160, "\(rgb(off[28, 4]))")
    }

    /// The same scene coded in SDR and in PQ looks alike: shadows and mid-tones (up to the
    /// EETF's knee) within 2, highlights rolled off below SDR white and still all different
    /// (none clipped).
    @Test func sdrAndHdrOfOneSceneLookAlike() throws {
        let sdr = try ImageDecoder.decode(path: ColourFiles.path("scene.png")).bitmap
        let hdr = try ImageDecoder.decode(path: ColourFiles.path("pq-scene.avif")).bitmap
        let points = try ColourFiles.points("scene")
        var highlights: [Int] = []
        for p in points {
            let a = rgb(sdr[p[0], p[1]]), b = rgb(hdr[p[0], p[1]])
            if p[2] <= 150 {
                #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 2 }, "(\(p[0])): SDR \(a), HDR \(b)")
            } else if p[2] == p[3] {
                highlights.append(b[0])
                #expect(b[0] <= a[0], "(\(p[0])): SDR \(a), HDR \(b)")
            }
        }
        #expect(highlights.count > 8)
        #expect(zip(highlights, highlights.dropFirst()).allSatisfy { $0 < $1 },
                "rolled off, not clipped: \(highlights)")
        #expect(highlights.last! >= 220 && highlights.last! < 255, "\(highlights)")
    }

    /// Light levels the file gives are used when plausible (MaxCLL 4000 moves the knee), named
    /// and ignored when not (MaxCLL 65535, a mastering peak of 429497 cd/m²).
    @Test func lightLevels() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: ColourFiles.path("pq10-absurd.avif"), toPath: dir + "/absurd.avif")
        let absurd = try ImageDecoder.decode(path: dir + "/absurd.avif")  // its own name: its first decode
        #expect(absurd.warnings.contains {
                    $0.contains("MaxCLL of 65535 cd/m²") && $0.contains("mastering display peak of 429497")
                },
                "\(absurd.warnings)")
        let plain = try ImageDecoder.decode(path: ColourFiles.path("pq10.avif")).bitmap
        #expect(maxDifference(absurd.bitmap, plain) == 0)
        #expect(HDRToneMap.sourcePeak(HDRMetadata(maxContentLightLevel: 4000, masteringPeak: 1000)).peak == 1000)
        #expect(HDRToneMap.sourcePeak(HDRMetadata(maxContentLightLevel: 0, masteringPeak: 0)) == (1000, nil))
    }
}

/// A copy of `profile` grown to `size` bytes (zeros after its tags, the header's size field set).
private func padded(_ profile: [UInt8], to size: Int) -> [UInt8] {
    var p = profile + [UInt8](repeating: 0, count: size - profile.count)
    p[0] = UInt8(size >> 24); p[1] = UInt8((size >> 16) & 0xFF)
    p[2] = UInt8((size >> 8) & 0xFF); p[3] = UInt8(size & 0xFF)
    return p
}

extension JPEGFiles {
    /// `jpeg` with `profile` in APP2 ICC_PROFILE segments after SOI (ICC.1:2010 annex B.4: at
    /// most 65519 bytes of profile each, numbered from 1).
    static func withProfile(_ profile: [UInt8], _ jpeg: [UInt8]) -> [UInt8] {
        let chunk = 65519
        let count = (profile.count + chunk - 1) / chunk
        var segments: [UInt8] = []
        for i in 0..<count {
            let part = profile[(i * chunk)..<min(profile.count, (i + 1) * chunk)]
            let length = 2 + 14 + part.count
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE".utf8)
            segments += [0, UInt8(i + 1), UInt8(count)]
            segments += part
        }
        return Array(jpeg[0..<2]) + segments + Array(jpeg[2...])
    }
}
