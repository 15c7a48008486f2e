// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskImaging

/// `kiosk-bench --case colour JPEG AVIF RUNS`: what colour management costs (section 9). JPEG is
/// a 12 MP (4032x3024) baseline JPEG without a profile; a copy of it with a Display P3 profile
/// (made by Little CMS, in APP2 ICC_PROFILE segments) is written to /tmp. AVIF is a 12 MP 10-bit
/// AVIF whose nclx says BT.2020 PQ. Each is prepared as a 1920x1080 slot (a new frame,
/// ImageDecoder.decodeFitted, as the app does) and decoded whole, with the colours converted and
/// without (`ColourTarget.off`, the stored numbers), alternately, RUNS times after a warm-up.
/// Prints the medians in ms: `jpeg-slot OFF ON jpeg-whole OFF ON avif-slot OFF ON avif-whole OFF
/// ON`, then the thread CPU time of the whole JPEG decode with and without (less disturbed by
/// other work on a busy machine): `jpeg-whole-cpu OFF ON`.
enum ColourCostCase {
    static func run(jpeg: String, avif: String, iterations: Int) -> Int32 {
        let width = ChildCase.frameWidth, height = ChildCase.frameHeight
        let tagged = "/tmp/kiosk-bench-p3-\(getpid()).jpg"
        defer { unlink(tagged) }
        guard let p3 = ScreenProfile(primaries: Chromaticities(white: .init(0.3127, 0.3290), red: .init(0.680, 0.320),
                                                               green: .init(0.265, 0.690), blue: .init(0.150, 0.060)),
                                     name: "Display P3"),
              let original = readAll(jpeg), writeAll(tagged, withProfile(p3.bytes, original)) else {
            fputs("colour: cannot make the Display P3 copy of \(jpeg)\n", stderr)
            return 1
        }
        var results: [String: [Double]] = [:]
        func time(_ key: String, _ body: () throws -> Void) rethrows {
            let t0 = nowMs()
            try body()
            results[key, default: []].append(nowMs() - t0)
        }
        do {
            for i in 0...iterations {  // round 0 warms up
                for (name, on) in [("off", false), ("on", true)] {
                    let colour: ColourTarget = on ? .sRGB : .off
                    let photo = on ? tagged : jpeg
                    let options = DecodeOptions(maxPixels: 100_000_000, targetWidth: width, targetHeight: height,
                                                fit: .fit, colour: colour)
                    let whole = DecodeOptions(maxPixels: 100_000_000, colour: colour)
                    try time("jpeg-slot-\(name)") {
                        let frame = Bitmap(uninitializedWidth: width, height: height)
                        _ = try ImageDecoder.decodeFitted(path: photo, into: frame, fit: .fit, background: .black,
                                                          options: options)
                    }
                    let c0 = BlurPrepareCase.threadCPUMs()
                    try time("jpeg-whole-\(name)") {
                        _ = try ImageDecoder.decode(path: photo, options: whole)
                    }
                    results["jpeg-whole-cpu-\(name)", default: []].append(BlurPrepareCase.threadCPUMs() - c0)
                    try time("avif-slot-\(name)") {
                        let frame = Bitmap(uninitializedWidth: width, height: height)
                        _ = try ImageDecoder.decodeFitted(path: avif, into: frame, fit: .fit, background: .black,
                                                          options: options)
                    }
                    try time("avif-whole-\(name)") {
                        _ = try ImageDecoder.decode(path: avif, options: whole)
                    }
                }
                if i == 0 { results.removeAll() }
            }
        } catch {
            fputs("colour: \(error)\n", stderr)
            return 1
        }
        var line: [String] = []
        for key in ["jpeg-slot", "jpeg-whole", "avif-slot", "avif-whole", "jpeg-whole-cpu"] {
            line.append("\(key) \(median(results[key + "-off"] ?? [])) \(median(results[key + "-on"] ?? []))")
        }
        print(line.joined(separator: " "))
        return 0
    }

    /// `jpeg` with `profile` in APP2 ICC_PROFILE segments after SOI (ICC.1:2010 annex B.4).
    static func withProfile(_ profile: [UInt8], _ jpeg: [UInt8]) -> [UInt8] {
        let chunk = 65519, count = (profile.count + chunk - 1) / chunk
        var segments: [UInt8] = []
        for i in 0..<count {
            let part = profile[(i * chunk)..<min(profile.count, (i + 1) * chunk)]
            let length = 16 + part.count
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE".utf8)
                + [0, UInt8(i + 1), UInt8(count)] + part
        }
        return Array(jpeg.prefix(2)) + segments + Array(jpeg.dropFirst(2))
    }

    private static func readAll(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }

    private static func writeAll(_ path: String, _ bytes: [UInt8]) -> Bool {
        guard let f = fopen(path, "wb") else { return false }
        defer { fclose(f) }
        return fwrite(bytes, 1, bytes.count, f) == bytes.count
    }
}

extension Bench {
    /// Section 9: the conversion's cost on a 12 MP picture, shown as a 1080p slot and decoded whole.
    func colourCost(volna: String, vips: String?) {
        guard let vips, let cjpeg = tool("cjpeg"), let avifenc = tool("avifenc") else {
            failRow("colour conversion", "vips, cjpeg (libjpeg-turbo-progs) or avifenc (libavif-bin) not found")
            return
        }
        // 12 MP, 4:3, as a phone's photo: volna enlarged to cover 4032x3024, centre-cropped.
        let ppm = scratch + "/c12.ppm", jpeg = scratch + "/photo-4032x3024.jpg"
        let png16 = scratch + "/c12-16.png", avif = scratch + "/photo-4032x3024-pq.avif"
        let a = child([vips, "thumbnail", volna, ppm, "4032", "--height", "3024", "--size", "both", "--crop", "centre"])
        let b = a.ok ? child([cjpeg, "-quality", "90", "-outfile", jpeg, ppm]) : a
        // The same pixels as 16-bit samples (v * 256), coded as 10-bit PQ BT.2020 by avifenc.
        let c = b.ok ? child([vips, "cast", ppm, png16, "ushort", "--shift"]) : b
        let d = c.ok ? child([avifenc, "-s", "10", "-j", "2", "--depth", "10", "--cicp", "9/16/9", png16, avif]) : c
        _ = unlink(ppm); _ = unlink(png16)
        guard d.ok else { failRow("colour conversion", "could not make the inputs: " + firstLine(d.stderr)); return }
        let r = ourCase(["colour", jpeg, avif, settings.quick ? "3" : "7"])
        guard r.ok else { failRow("colour conversion", firstLine(r.stderr)); return }
        let f = r.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
        guard f.count == 10 else { failRow("colour conversion", "unexpected output: \(firstLine(r.stdout))"); return }
        compare("12 MP JPEG, Display P3 -> sRGB, as a 1080p slot", ours: f[1], ms(f[1]),
                reference: "untagged (no conversion)", f[0], ms(f[0]), max: 2.0)
        compare("12 MP JPEG, Display P3 -> sRGB, decoded whole", ours: f[3], ms(f[3]), reference: "untagged",
                f[2], ms(f[2]), max: nil)
        compare("  (same, thread CPU time)", ours: f[9], ms(f[9]), reference: "untagged", f[8], ms(f[8]), max: nil)
        compare("12 MP 10-bit PQ AVIF, tone-mapped, as a 1080p slot", ours: f[5], ms(f[5]),
                reference: "--screen-profile off (libheif's 8 bits)", f[4], ms(f[4]), max: 1.5)
        compare("12 MP 10-bit PQ AVIF, tone-mapped, decoded whole", ours: f[7], ms(f[7]),
                reference: "--screen-profile off", f[6], ms(f[6]), max: nil)
    }
}
