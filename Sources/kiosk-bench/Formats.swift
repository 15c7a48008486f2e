// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Section 7: HEIC and WebP, decode + fit to 1920x1080 beside their reference decoders and
/// vipsthumbnail (Debian's libvips reads both through the same libheif and libwebp), and the
/// whole program's peak RSS showing each at 1080p.
extension Bench {
    func formatSection(volna: String, vips: String?, vipsthumbnail: String?, app: String, prefix: [String]) {
        guard let vips else {
            failRow("HEIC and WebP inputs", "vips not found (apt-get install libvips-tools)")
            return
        }
        let heifEnc = tool("heif-enc"), heifConvert = tool("heif-convert"), cwebp = tool("cwebp"), dwebp = tool("dwebp")
        // 12 MP, 4:3: volna enlarged to cover 4032x3024 and centre-cropped (as a phone's
        // photo), encoded by heif-enc (x265, quality 90, 4:2:0, one image: not a grid of tiles).
        if let heifEnc {
            let png = scratch + "/p12.png", heic = scratch + "/photo-4032x3024.heic"
            let a = child([vips, "thumbnail", volna, png, "4032", "--height", "3024", "--size", "both",
                           "--crop", "centre"])
            let b = a.ok ? child([heifEnc, "-q", "90", png, "-o", heic]) : a
            _ = unlink(png)
            if b.ok {
                formatRows(label: "HEIC 4032x3024 (heif-enc -q 90)", path: heic, vipsthumbnail: vipsthumbnail,
                           reference: heifConvert.map { ("heif-convert FILE X.png", [$0, heic, scratch + "/hc.png"]) },
                           target: 0.8, app: app, prefix: prefix)
            } else {
                failRow("HEIC 4032x3024", "could not make it: " + firstLine(b.stderr))
            }
        } else {
            failRow("HEIC 4032x3024", "heif-enc not found (apt-get install libheif-examples)")
        }
        // 24 MP, 3:2, lossy WebP quality 90 (cwebp).
        if let cwebp {
            let png = scratch + "/p24.png", webp = scratch + "/photo-6000x4000.webp"
            let a = child([vips, "thumbnail", volna, png, "6000", "--height", "4000", "--size", "both",
                           "--crop", "centre"])
            let b = a.ok ? child([cwebp, "-quiet", "-q", "90", png, "-o", webp]) : a
            _ = unlink(png)
            if b.ok {
                formatRows(label: "WebP 6000x4000 (cwebp -q 90)", path: webp, vipsthumbnail: vipsthumbnail,
                           reference: dwebp.map {
                               ("dwebp FILE -ppm -o X.ppm", [$0, "-quiet", webp, "-ppm", "-o", scratch + "/dw.ppm"])
                           },
                           target: 0.5, app: app, prefix: prefix)
            } else {
                failRow("WebP 6000x4000", "could not make it: " + firstLine(b.stderr))
            }
        } else {
            failRow("WebP 6000x4000", "cwebp not found (apt-get install webp)")
        }
    }

    /// Decode + fit rows of one file (median of the decode runs, interleaved with the
    /// references), then the whole program's peak RSS showing it at 1920x1080.
    func formatRows(label: String, path: String, vipsthumbnail: String?, reference: (name: String, args: [String])?,
                    target: Double, app: String, prefix: [String]) {
        var ours: [ChildRun] = [], vipsRuns: [ChildRun] = [], refRuns: [ChildRun] = []
        var decoded = "?"
        for round in 0...settings.decodeRuns {
            let o = ourCase(["decode", path])
            let f = o.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" })
            if o.ok, f.count > 3 { decoded = String(f[3]) }
            let v = vipsthumbnail.map { child([$0, path, "-s", "1920x1080", "-o", scratch + "/fmt-thumb.v"]) }
            let r = reference.map { child($0.args) }
            if round > 0 {
                ours.append(o)
                if let v { vipsRuns.append(v) }
                if let r { refRuns.append(r) }
            }
        }
        let name = "decode+fit \(label)"
        guard !ours.isEmpty, ours.allSatisfy(\.ok) else {
            failRow(name, firstLine(ours.first { !$0.ok }?.stderr ?? "no run"))
            return
        }
        let oWall = median(ours.map(\.wallMs)), oRSS = ours.map(\.maxRSSKiB).max() ?? 0
        let vipsName = "vipsthumbnail FILE -s 1920x1080 -o X.v"
        if !vipsRuns.isEmpty, vipsRuns.allSatisfy(\.ok) {
            let t = median(vipsRuns.map(\.wallMs)), rss = vipsRuns.map(\.maxRSSKiB).max() ?? 0
            compare(name + ", wall", ours: oWall, ms(oWall), reference: vipsName, t, ms(t), max: target)
            // CPU time of all threads: what the machine's other work disturbs least.
            let oCPU = median(ours.map(\.cpuMs)), vCPU = median(vipsRuns.map(\.cpuMs))
            compare(name + ", CPU", ours: oCPU, ms(oCPU), reference: vipsName, vCPU, ms(vCPU), max: nil)
            compare(name + ", peak RSS", ours: Double(oRSS), mib(oRSS), reference: vipsName, Double(rss), mib(rss),
                    max: nil)
        } else if vipsthumbnail != nil {
            failRow(name + " vs vipsthumbnail", firstLine(vipsRuns.first { !$0.ok }?.stderr ?? ""))
        }
        if let reference {
            if refRuns.allSatisfy(\.ok) {
                let t = median(refRuns.map(\.wallMs)), rss = refRuns.map(\.maxRSSKiB).max() ?? 0
                compare(name + ", wall", ours: oWall, ms(oWall), reference: reference.name, t, ms(t), max: nil)
                compare(name + ", peak RSS", ours: Double(oRSS), mib(oRSS), reference: reference.name, Double(rss),
                        mib(rss), max: nil)
            } else {
                failRow(name + " vs " + reference.name, firstLine(refRuns.first { !$0.ok }?.stderr ?? ""))
            }
        }
        rows.append(Row(name: "  (decoded at \(decoded), then fitted)", ours: "", reference: "", referenceValue: "",
                        ratio: nil, target: "", verdict: ""))
        var appRuns: [ChildRun] = []
        for i in 0..<settings.appRuns {
            let dir = scratch + "/fmt-frames-\(i)"
            _ = mkdir(dir, 0o755)
            let r = spawnChild(prefix + ["--display", "offscreen:" + dir, "--size", "1920x1080", "--run-for", "1",
                                         path],
                               executable: app, stdoutPath: scratch + "/app.stdout", scratch: scratch, runner: runner)
            _ = child(["rm", "-rf", dir])
            if !r.ok { failRow("whole program, \(label)", "exit \(r.status): " + firstLine(r.stderr)); return }
            appRuns.append(r)
        }
        let rss = appRuns.map(\.maxRSSKiB).max() ?? 0
        rows.append(Row(name: "peak RSS, whole program showing \(label) at 1920x1080", ours: mib(rss), reference: "",
                        referenceValue: "", ratio: nil, target: "", verdict: "info"))
    }
}
