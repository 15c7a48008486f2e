// SPDX-License-Identifier: Apache-2.0
import Glibc

/// One line of the table: a figure of ours beside a reference measured in the same run.
struct Row {
    var name: String
    var ours: String
    var reference: String
    var referenceValue: String
    /// ours / reference (nil: not meaningful).
    var ratio: Double?
    /// "<= 0.50x", "<= 64 MiB" or "" (information only).
    var target: String
    /// PASS, MISS, info, FAIL (did not run), DIFF (outputs differ from the reference's).
    var verdict: String
}

/// The parent: prepares inputs, runs every measurement as a child process (wall time and
/// `ru_maxrss` from `wait4`), prints the table.
final class Bench {
    struct Settings {
        var quick = false
        /// Whole-process runs per decode case (median taken).
        var decodeRuns = 7
        /// Timed frames per kernel child (median taken) and untimed warm-up frames.
        var kernelIterations = 50, kernelWarmup = 5
        /// Kernel children per kernel, alternating ours and C (median of their medians).
        var kernelRounds = 3
        /// Whole-program runs.
        var appRuns = 3
        /// Runs of the warm-start case (section 6).
        var warmStartRuns = 5
        /// `--warm-start-only`: run section 6 alone.
        var warmStartOnly = false
        var hugeBodyOnly = false
        /// `--formats-only`: run section 3b (HEIC and WebP) alone.
        var formatsOnly = false
        /// `--text-only`: run section 8 (caption and clock costs) alone.
        var textOnly = false
        var colourOnly = false
        /// `--progressive-peak-only`: section 3's row for the progressive photo alone.
        var progressivePeakOnly = false
        /// `--decode-only`: run section 1 (JPEG decode + fit) alone.
        var decodeOnly = false
        var photo: String?
        var keepScratch = false
    }

    let settings: Settings
    let exe = selfExecutable()
    let scratch: String
    let root: String
    var rows: [Row] = []
    var notes: [String] = []
    var failures = 0

    init(_ settings: Settings) {
        self.settings = settings
        var template = Array("/tmp/kiosk-bench.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        scratch = made.map { String(cString: $0) } ?? "/tmp"
        // The package root: three levels above this file (Sources/kiosk-bench/Bench.swift),
        // or the working directory when the sources are not where they were compiled.
        let fromSource = dirname(of: dirname(of: dirname(of: #filePath)))
        root = fileExists(fromSource + "/Package.swift") ? fromSource : "."
    }

    // MARK: - Running children

    /// The launcher that gives children an honest ru_maxrss (see ``spawnChild``); nil until built.
    var runner: String?

    /// Runs a measured child (through ``runner`` once it is built).
    func child(_ args: [String], stdoutPath: String? = nil) -> ChildRun {
        spawnChild(args, stdoutPath: stdoutPath, scratch: scratch, runner: runner)
    }

    func ourCase(_ args: [String]) -> ChildRun {
        spawnChild(["kiosk-bench", "--case"] + args, executable: exe, scratch: scratch, runner: runner)
    }

    func tool(_ name: String) -> String? {
        let found = which(name)
        if found == nil { notes.append("\(name) not found: install it (apt-get install libvips-tools libjpeg-turbo-progs gcc); its rows are skipped") }
        return found
    }

    func firstLine(_ s: String) -> String {
        String(s.split(separator: "\n", omittingEmptySubsequences: true).first ?? "")
    }

    func failRow(_ name: String, _ why: String) {
        rows.append(Row(name: name, ours: "—", reference: why, referenceValue: "", ratio: nil, target: "", verdict: "FAIL"))
        failures += 1
    }

    func compare(_ name: String, ours: Double, _ oursText: String, reference: String, _ refValue: Double,
                 _ refText: String, max target: Double?, targetText: String? = nil) {
        let ratio = refValue > 0 ? ours / refValue : nil
        var verdict = "info"
        var t = ""
        if let target, let ratio {
            verdict = ratio <= target ? "PASS" : "MISS"
            t = targetText ?? "<= " + fixed(target, 2) + "x"
        }
        rows.append(Row(name: name, ours: oursText, reference: reference, referenceValue: refText,
                        ratio: ratio, target: t, verdict: verdict))
    }

    func section(_ title: String) {
        rows.append(Row(name: "## " + title, ours: "", reference: "", referenceValue: "", ratio: nil, target: "", verdict: ""))
    }

    // MARK: - The run

    func run() -> Int32 {
        defer { if !settings.keepScratch { _ = child(["rm", "-rf", scratch]) } }
        let volna = settings.photo ?? root + "/Tests/Fixtures/photos/volna-5120x2880.jpg"
        guard fileExists(volna) else {
            fputs("kiosk-bench: \(volna) not found (run from the package root, or pass --photo PATH)\n", stderr)
            return 66
        }
        let load0 = firstLine(readTextFile("/proc/loadavg"))
        if settings.warmStartOnly {
            let (app, appPrefix, appNote) = appCommand()
            if let appNote { notes.append(appNote) }
            section("6. start to first frame: warm disk cache and stored manifest, no network, 1920x1080 (spawn -> first `shown` line, median of \(settings.warmStartRuns) runs)")
            warmStart(app: app, prefix: appPrefix, runs: settings.warmStartRuns)
            notes.append("load average before / after: \(load0) / \(firstLine(readTextFile("/proc/loadavg")))")
            printTable()
            return failures == 0 ? 0 : 1
        }
        if settings.colourOnly {
            section("9. colour: 12 MP pictures converted (Display P3 JPEG, PQ AVIF) against the same unconverted "
                    + "(medians of \(settings.quick ? 3 : 7))")
            colourCost(volna: volna, vips: tool("vips"))
            notes.append("load average before / after: \(load0) / \(firstLine(readTextFile("/proc/loadavg")))")
            printTable()
            return failures == 0 ? 0 : 1
        }
        if settings.textOnly {
            section("8. text at 1080p: a two-line caption drawn into a prepared slot; the clock overlay during a fade (medians)")
            textCost()
            printTable()
            return failures == 0 ? 0 : 1
        }
        if settings.hugeBodyOnly {
            let (app, appPrefix, appNote) = appCommand()
            if let appNote { notes.append(appNote) }
            buildRusageRunner()
            section("7. a hostile server: one manifest item streams 1 GB without Content-Length (whole program, 1920x1080)")
            hugeBody(app: app, prefix: appPrefix)
            printTable()
            return failures == 0 ? 0 : 1
        }
        let gcc = tool("gcc"), vipsthumbnail = tool("vipsthumbnail"), vips = tool("vips")
        if settings.progressivePeakOnly {
            let (app, appPrefix, appNote) = appCommand()
            if let appNote { notes.append(appNote) }
            buildRusageRunner()
            section("3. whole program: kiosk-carousel --display offscreen:DIR --size 1920x1080 --run-for 1 PHOTO (peak RSS, max of \(settings.appRuns) runs)")
            wholeProgram(label: "volna progressive 4:4:4", path: volna, app: app, prefix: appPrefix, djpeg: tool("djpeg"),
                         reason: Self.progressiveReason, overDjpegMiB: 16)
            notes.append("load average before / after: \(load0) / \(firstLine(readTextFile("/proc/loadavg")))")
            printTable()
            return failures == 0 ? 0 : 1
        }
        if settings.formatsOnly {
            let (app, appPrefix, appNote) = appCommand()
            if let appNote { notes.append(appNote) }
            buildRusageRunner()
            section("3b. HEIC and WebP: decode + fit to 1920x1080 (whole process, median of \(settings.decodeRuns) runs), whole program at 1080p")
            formatSection(volna: volna, vips: vips, vipsthumbnail: vipsthumbnail, app: app, prefix: appPrefix)
            notes.append("load average before / after: \(load0) / \(firstLine(readTextFile("/proc/loadavg")))")
            printTable()
            return failures == 0 ? 0 : 1
        }
        let djpeg = tool("djpeg"), cjpeg = tool("cjpeg")
        buildRusageRunner()
        let floor = child(["/bin/true"])

        // Generated inputs.
        var big: String?, volnaBaseline: String?
        if let vips, let cjpeg {
            // 6000x4000 (24 MP, 3:2) baseline JPEG, 4:2:0, quality 90: volna enlarged to cover
            // 6000x4000 and centre-cropped (Lanczos3 in vips), re-encoded by cjpeg (sequential by default).
            let ppm = scratch + "/big.ppm", jpg = scratch + "/big-6000x4000.jpg"
            let a = child([vips, "thumbnail", volna, ppm, "6000", "--height", "4000", "--size", "both", "--crop", "centre"])
            let b = a.ok ? child([cjpeg, "-quality", "90", "-sample", "2x2", "-outfile", jpg, ppm]) : a
            _ = unlink(ppm)
            if b.ok { big = jpg } else { notes.append("could not make the 6000x4000 JPEG: \(firstLine(b.stderr))") }
        }
        if let djpeg, let cjpeg {
            // The 14.7 MP photo re-encoded as a baseline (sequential) JPEG, still 4:4:4, quality 92.
            let ppm = scratch + "/volna.ppm", jpg = scratch + "/volna-baseline-5120x2880.jpg"
            let a = child([djpeg, "-ppm", "-outfile", ppm, volna])
            let b = a.ok ? child([cjpeg, "-quality", "92", "-sample", "1x1", "-outfile", jpg, ppm]) : a
            _ = unlink(ppm)
            if b.ok { volnaBaseline = jpg } else { notes.append("could not make the baseline re-encode: \(firstLine(b.stderr))") }
        }

        // The C reference, compiled now.
        var reference: String?
        let source = root + "/Sources/kiosk-bench/reference/kiosk_reference.c"
        if let gcc {
            let binary = scratch + "/kiosk_reference"
            let r = child([gcc, "-O3", "-o", binary, source])
            if r.ok { reference = binary } else { notes.append("gcc -O3 \(source) failed: \(firstLine(r.stderr))") }
        }

        printHeader(volna: volna, big: big, volnaBaseline: volnaBaseline, floorKiB: floor.maxRSSKiB, load: load0,
                    gcc: gcc, vips: vipsthumbnail, djpeg: djpeg)

        // 1. Decode + fit.
        section("1. decode + fit to 1920x1080 (whole process: spawn to exit, median of \(settings.decodeRuns) runs)")
        decodeSection(label: "volna 5120x2880 progressive 4:4:4", path: volna, vipsthumbnail: vipsthumbnail, djpeg: djpeg,
                      vipsTarget: 0.5, djpegTarget: 1.1)
        if let big {
            decodeSection(label: "6000x4000 baseline 4:2:0", path: big, vipsthumbnail: vipsthumbnail, djpeg: djpeg,
                          vipsTarget: 0.45, djpegTarget: 1.2)
        } else {
            failRow("6000x4000 baseline decode", "input not generated")
        }
        if settings.decodeOnly {
            notes.append("load average before / after: \(load0) / \(firstLine(readTextFile("/proc/loadavg")))")
            printTable()
            return failures == 0 ? 0 : 1
        }

        // 2. Kernels.
        section("2. per-frame kernels, 1920x1080 (median of \(settings.kernelIterations) frames after \(settings.kernelWarmup) warm-up, median of \(settings.kernelRounds) processes)")
        let blend = kernelPair("fade frame: Compositor.blend w=128", ours: ["blend"], c: reference, cKernel: "blend",
                               cLabel: "C per-pixel channel loop, gcc -O3", target: 1.2)
        kernelPair("  (same, beside the C byte loop)", ours: ["blend"], c: reference, cKernel: "blend-bytes",
                   cLabel: "C loop over bytes, gcc -O3", target: nil)
        kernelPair("XRGB8888->RGB565, truncating", ours: ["rgb565", "0"], c: reference, cKernel: "rgb565",
                   cLabel: "C per-pixel loop, gcc -O3", target: 1.2)
        kernelPair("XRGB8888->RGB565, 4x4 ordered dither", ours: ["rgb565", "1"], c: reference, cKernel: "rgb565-dither",
                   cLabel: "C per-pixel loop, gcc -O3", target: 1.2)

        // 3. Whole program.
        section("3. whole program: kiosk-carousel --display offscreen:DIR --size 1920x1080 --run-for 1 PHOTO (peak RSS, max of \(settings.appRuns) runs)")
        let (app, appPrefix, appNote) = appCommand()
        if let appNote { notes.append(appNote) }
        wholeProgram(label: "volna progressive 4:4:4", path: volna, app: app, prefix: appPrefix, djpeg: djpeg,
                     reason: Self.progressiveReason, overDjpegMiB: 16)
        if let big {
            wholeProgram(label: "6000x4000 baseline 4:2:0", path: big, app: app, prefix: appPrefix, djpeg: djpeg,
                         reason: "the process floor (Swift runtime, the binary's own pages, the libraries it links) and the 1920x1080 frame",
                         limitMiB: 24)
        }
        if let volnaBaseline {
            wholeProgram(label: "volna re-encoded baseline 4:4:4", path: volnaBaseline, app: app, prefix: appPrefix,
                         djpeg: djpeg, reason: nil)
        } else {
            failRow("whole program, baseline re-encode", "input not generated")
        }

        // 3b. HEIC and WebP.
        section("3b. HEIC and WebP: decode + fit to 1920x1080 (whole process, median of \(settings.decodeRuns) runs), whole program at 1080p")
        formatSection(volna: volna, vips: vips, vipsthumbnail: vipsthumbnail, app: app, prefix: appPrefix)

        // 4. Compose and copy-to-scanout.
        section("4. per-frame compose and copy-to-scanout, 1080p")
        if let blend {
            compare("compose: blend into a frame (= 2)", ours: blend.ours, ms(blend.ours),
                    reference: "C per-pixel channel loop, gcc -O3", blend.c, ms(blend.c), max: 1.2)
        }
        kernelPair("copy-to-scanout XRGB8888 pitch 7680, rot 0", ours: ["xrgb", "0"], c: reference, cKernel: "xrgb-copy",
                   cLabel: "C memcpy per row, gcc -O3", target: nil)
        kernelPair("copy-to-scanout XRGB8888 pitch 7680, rot 90", ours: ["xrgb", "90"], c: reference, cKernel: "xrgb-rot90",
                   cLabel: "C per-pixel loop, gcc -O3", target: nil)

        // 5. Touch to screen.
        section("5. touch to screen: input timestamp -> frame presented, 1920x1080 fbdev path, 125 Hz reports (median of frames)")
        touchLatency()

        // 5b. The disk cache's write when full (each write evicts one entry).
        section("5b. disk cache: one write into a full cache of 10,000 entries (evicting the least recently used), against a full cache of 1,000; tmpfs, median of 300 writes")
        diskCacheWrite()

        // 6. Start to first frame from the disk cache, offline.
        section("6. start to first frame: warm disk cache and stored manifest, no network, 1920x1080 (spawn -> first `shown` line, median of \(settings.warmStartRuns) runs)")
        warmStart(app: app, prefix: appPrefix, runs: settings.warmStartRuns)

        // 7. Every byte from the network bounded.
        section("7. a hostile server: one manifest item streams 1 GB without Content-Length (whole program, 1920x1080)")
        hugeBody(app: app, prefix: appPrefix)

        section("8. text at 1080p: a two-line caption drawn into a prepared slot; the clock overlay during a fade (medians)")
        textCost()

        section("9. colour: 12 MP pictures converted (Display P3 JPEG, PQ AVIF) against the same unconverted "
                + "(medians of \(settings.quick ? 3 : 7))")
        colourCost(volna: volna, vips: vips)

        let load1 = firstLine(readTextFile("/proc/loadavg"))
        notes.append("load average before / after: \(load0) / \(load1) (2 cores shared with other work: figures are noisy)")
        printTable()
        return failures == 0 ? 0 : 1
    }

    // MARK: - Sections

    func printHeader(volna: String, big: String?, volnaBaseline: String?, floorKiB: Int, load: String,
                     gcc: String?, vips: String?, djpeg: String?) {
        print("kiosk-bench\(settings.quick ? " --quick" : "")")
        let cpu = readTextFile("/proc/cpuinfo").split(separator: "\n")
            .first { $0.hasPrefix("model name") }.map { String($0.split(separator: ":", maxSplits: 1).last ?? "") } ?? "?"
        print("machine: \(cpu.trimmingSpaces), \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) CPUs online; load \(load)")
        if let gcc { print("C reference: \(gcc) -O3 (no -march: the distribution baseline, as the Swift code)"
                           + " \(firstLine(child([gcc, "-dumpfullversion"]).stdout))") }
        if let vips { print("vipsthumbnail: \(firstLine(child([vips, "--vips-version"]).stdout))") }
        if let djpeg { print("djpeg: \(firstLine(child([djpeg, "-version"]).stderr))") }
        print("inputs:")
        print("  \(volna): \(JPEGInfo(readPrefix(volna, count: 1 << 16))?.description ?? "?")")
        if let big { print("  \(big): \(JPEGInfo(readPrefix(big, count: 1 << 16))?.description ?? "?")"
                           + " (generated: vips thumbnail volna 6000 --height 4000 --size both --crop centre; cjpeg -quality 90 -sample 2x2)") }
        if let volnaBaseline { print("  \(volnaBaseline): \(JPEGInfo(readPrefix(volnaBaseline, count: 1 << 16))?.description ?? "?")"
                                     + " (generated: djpeg -ppm volna | cjpeg -quality 92 -sample 1x1)") }
        print("peak RSS floor of a measured child (/bin/true): \(mib(floorKiB))"
              + (runner != nil ? " (children started by reference/rusage_runner.c, built with gcc -O2)"
                               : " (started straight from kiosk-bench: includes its own peak through vfork+exec)"))
        print("")
    }

    /// Decode + fit rows of one file; targets: our wall at most `vipsTarget` x vipsthumbnail's
    /// and `djpegTarget` x `djpeg -scale 1/2`'s.
    func decodeSection(label: String, path: String, vipsthumbnail: String?, djpeg: String?,
                       vipsTarget: Double, djpegTarget: Double) {
        let vOut = scratch + "/thumb.v", jOut = scratch + "/thumb.jpg"
        var ours: [ChildRun] = [], vips: [ChildRun] = [], vipsJPEG: [ChildRun] = []
        var dj: [ChildRun] = [], djSame: [ChildRun] = [], full: [ChildRun] = []
        var fullSize = "?"
        var inProcess: [Double] = []
        var scale: Int?
        var decodedSize = "?"
        var streamed = false
        // One untimed round first (page cache, dynamic loader caches; it also tells the DCT
        // scale we decode at), then the runs interleaved so that noise from other work on the
        // machine falls on all of them alike.
        for round in 0...settings.decodeRuns {
            let o = ourCase(["decode", path])
            if o.ok {
                let f = o.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" })
                if round > 0, let t = f.first.flatMap({ Double($0) }) { inProcess.append(t) }
                if f.count > 1 { scale = Int(f[1]) }
                if f.count > 3 { decodedSize = String(f[3]) }
                if f.count > 4 { streamed = f[4] == "streamed" }
            }
            if let vipsthumbnail {
                let v = child([vipsthumbnail, path, "-s", "1920x1080", "-o", vOut])
                let vj = child([vipsthumbnail, path, "-s", "1920x1080", "-o", jOut])
                if round > 0 { vips.append(v); vipsJPEG.append(vj) }
            }
            let f = ourCase(["decode-full", path])
            if round > 0 { full.append(f) }
            if f.ok, let size = f.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).dropFirst().first {
                fullSize = String(size)
            }
            if let djpeg {
                let d = child([djpeg, "-scale", "1/2", path], stdoutPath: "/dev/null")
                if round > 0 { dj.append(d) }
                if let scale, scale != 4 {
                    let d2 = child([djpeg, "-scale", "\(scale)/8", path], stdoutPath: "/dev/null")
                    if round > 0 { djSame.append(d2) }
                }
            }
            if round > 0 { ours.append(o) }
        }
        let name = "decode+fit \(label)"
        guard ours.allSatisfy(\.ok), !ours.isEmpty else {
            failRow(name, firstLine(ours.first { !$0.ok }?.stderr ?? "no run"))
            return
        }
        let oWall = median(ours.map(\.wallMs)), oRSS = ours.map(\.maxRSSKiB).max() ?? 0
        let oFaults = median(ours.map { Double($0.minorFaults) })
        let vipsWall = vips.isEmpty || !vips.allSatisfy(\.ok) ? nil : Optional(median(vips.map(\.wallMs)))
        let djWall = dj.isEmpty || !dj.allSatisfy(\.ok) ? nil : Optional(median(dj.map(\.wallMs)))
        let djSameWall = djSame.isEmpty || !djSame.allSatisfy(\.ok) ? nil : Optional(median(djSame.map(\.wallMs)))
        let vipsName = "vipsthumbnail FILE -s 1920x1080 -o X.v"
        let djName = "djpeg -scale 1/2 FILE > /dev/null"
        if !vips.isEmpty, vips.allSatisfy(\.ok) {
            let vWall = median(vips.map(\.wallMs))
            compare(name + ", wall", ours: oWall, ms(oWall), reference: vipsName, vWall, ms(vWall), max: vipsTarget)
        } else if vipsthumbnail != nil {
            failRow(name + " vs vipsthumbnail", firstLine(vips.first { !$0.ok }?.stderr ?? ""))
        }
        if !dj.isEmpty, dj.allSatisfy(\.ok) {
            let dWall = median(dj.map(\.wallMs))
            compare(name + ", wall", ours: oWall, ms(oWall), reference: djName, dWall, ms(dWall), max: djpegTarget)
            // CPU time (user and system, page faults included): what the machine's other work
            // disturbs least.
            let oCPU = median(ours.map(\.cpuMs)), dCPU = median(dj.map(\.cpuMs))
            compare(name + ", CPU", ours: oCPU, ms(oCPU), reference: djName, dCPU, ms(dCPU), max: nil)
        } else if djpeg != nil {
            failRow(name + " vs djpeg", firstLine(dj.first { !$0.ok }?.stderr ?? ""))
        }
        // What the DCT scaling saves: the same picture from the whole image decoded at 8/8 and
        // area-averaged into the frame.
        if !full.isEmpty, full.allSatisfy(\.ok) {
            let fullName = "8/8 decode (\(fullSize)) + Compositor.place"
            let fWall = median(full.map(\.wallMs)), fCPU = median(full.map(\.cpuMs))
            let oCPU = median(ours.map(\.cpuMs))
            compare("  wall, beside no DCT scaling", ours: oWall, ms(oWall), reference: fullName, fWall, ms(fWall),
                    max: nil)
            compare("  CPU, beside no DCT scaling", ours: oCPU, ms(oCPU), reference: fullName, fCPU, ms(fCPU), max: nil)
        } else {
            failRow(name + " at 8/8", firstLine(full.first { !$0.ok }?.stderr ?? "no run"))
        }
        if !vips.isEmpty, vips.allSatisfy(\.ok) {
            let vRSS = vips.map(\.maxRSSKiB).max() ?? 0
            compare(name + ", peak RSS", ours: Double(oRSS), mib(oRSS), reference: vipsName, Double(vRSS), mib(vRSS), max: nil)
        }
        if !dj.isEmpty, dj.allSatisfy(\.ok) {
            let dRSS = dj.map(\.maxRSSKiB).max() ?? 0
            compare(name + ", peak RSS", ours: Double(oRSS), mib(oRSS), reference: djName, Double(dRSS), mib(dRSS), max: nil)
            let dFaults = median(dj.map { Double($0.minorFaults) })
            compare("  minor page faults", ours: oFaults, fixed(oFaults, 0), reference: djName, dFaults, fixed(dFaults, 0), max: nil)
        }
        // The fastest run of each: what the machine's other work added least to.
        let oMin = ours.map(\.wallMs).min() ?? 0
        if !dj.isEmpty, dj.allSatisfy(\.ok), let dMin = dj.map(\.wallMs).min() {
            compare("  wall, fastest of \(ours.count)", ours: oMin, ms(oMin), reference: djName, dMin, ms(dMin), max: nil)
        }
        if !vips.isEmpty, vips.allSatisfy(\.ok), let vMin = vips.map(\.wallMs).min() {
            compare("  wall, fastest of \(ours.count)", ours: oMin, ms(oMin), reference: vipsName, vMin, ms(vMin), max: nil)
        }
        if !vipsJPEG.isEmpty, vipsJPEG.allSatisfy(\.ok) {
            let t = median(vipsJPEG.map(\.wallMs))
            compare("  wall, beside vipsthumbnail with its JPEG encode", ours: oWall, ms(oWall),
                    reference: "vipsthumbnail FILE -s 1920x1080 -o X.jpg", t, ms(t), max: nil)
        }
        if let scale, !djSame.isEmpty, djSame.allSatisfy(\.ok) {
            let t = median(djSame.map(\.wallMs))
            compare("  wall, beside djpeg at our DCT scale", ours: oWall, ms(oWall),
                    reference: "djpeg -scale \(scale)/8 FILE > /dev/null", t, ms(t), max: nil)
        }
        // In-process figures: the decode + fit call alone, first call in a fresh process (what
        // the wall figure contains) and warm (after one call in the same process).
        let warm = ourCase(["decode-warm", path, String(settings.quick ? 3 : 5)])
        let w = warm.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
        let warmText = warm.ok && w.count == 3 ? ms(w[0]) : "failed"
        let scaleText = scale.map { "\($0)/8" } ?? "?"
        rows.append(Row(name: "  in-process decode+fit (DCT scale \(scaleText)): first call / warm", ours: ms(median(inProcess)),
                        reference: "warm, same process", referenceValue: warmText, ratio: nil, target: "", verdict: "info"))
        if w.count == 3 {
            rows.append(Row(name: "  warm, whole-image path: ImageDecoder.decode / new frame + Compositor.place", ours: ms(w[1]),
                            reference: "", referenceValue: ms(w[2]), ratio: nil, target: "", verdict: "info"))
        }
        // Process start: the fastest of 7 runs of a child that returns at once (the machine's
        // other work only ever adds to it), beside /bin/true started the same way.
        let starts = (0..<7).map { _ in ourCase(["noop"]) }.filter(\.ok).map(\.wallMs)
        let trues = (0..<7).map { _ in child(["/bin/true"]) }.filter(\.ok).map(\.wallMs)
        if let fastest = starts.min() {
            rows.append(Row(name: "  kiosk-bench process start+exit (in the wall figure), fastest of 7", ours: ms(fastest),
                            reference: "/bin/true, fastest of 7", referenceValue: trues.min().map(ms) ?? "",
                            ratio: nil, target: "<= 6 ms", verdict: fastest <= 6 ? "PASS" : "MISS"))
        }

        // Why a target was missed, from the figures above.
        func why(_ text: String) {
            rows.append(Row(name: "  why: " + text, ours: "", reference: "", referenceValue: "", ratio: nil, target: "", verdict: ""))
        }
        if let vipsWall, oWall > vipsTarget * vipsWall, let djWall {
            let floor = min(djWall, djSameWall ?? djWall)
            if floor > vipsTarget * vipsWall {
                why("libjpeg-turbo by itself (djpeg, faster of 1/2 and our scale) takes \(ms(floor)) = "
                    + "\(fixed(floor / vipsWall, 2))x vipsthumbnail: the \(fixed(vipsTarget, 2))x target is below the decoder's own time for this file")
            } else {
                why("libjpeg-turbo by itself (djpeg) takes \(ms(floor)) = \(fixed(floor / vipsWall, 2))x vipsthumbnail;"
                    + " the rest is ours (see the rows below)")
            }
        }
        if let djWall, oWall > djpegTarget * djWall {
            let faults = "page faults \(fixed(oFaults, 0)) vs \(fixed(median(dj.map { Double($0.minorFaults) }), 0))"
            var text = streamed
                ? "we stream the decoded rows (\(decodedSize)) into a 1920x1080 frame as djpeg streams them to its output"
                    + " (\(faults): the frame and the Swift runtime); the fit is work djpeg does not do"
                : "we keep the whole decoded image (\(decodedSize)) and a 1920x1080 frame in memory, djpeg streams rows"
                    + " (\(faults)); the fit is work djpeg does not do"
            if let djSameWall, let scale, djSameWall > djWall {
                text += "; libjpeg-turbo itself is \(fixed(djSameWall / djWall, 2))x slower at \(scale)/8 than at 1/2"
                    + " (its x86-64 SIMD IDCTs are 8x8, 4x4, 2x2 only)"
            }
            why(text)
        }
    }

    /// Runs a Swift kernel and its C counterpart alternately `kernelRounds` times; adds a row.
    @discardableResult
    func kernelPair(_ name: String, ours: [String], c: String?, cKernel: String, cLabel: String,
                    target: Double?) -> (ours: Double, c: Double)? {
        let it = String(settings.kernelIterations), warm = String(settings.kernelWarmup)
        var o: [Double] = [], r: [Double] = []
        var oSum = "", rSum = ""
        for _ in 0..<settings.kernelRounds {
            let a = ourCase([ours[0], it, warm] + ours.dropFirst())
            guard a.ok else { failRow(name, firstLine(a.stderr)); return nil }
            let f = a.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" })
            o.append(Double(f[0]) ?? .nan)
            oSum = String(f[1])
            if let c {
                let b = child([c, cKernel, it, warm])
                guard b.ok else { failRow(name, "C reference: " + firstLine(b.stderr)); return nil }
                let g = b.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" })
                r.append(Double(g[0]) ?? .nan)
                rSum = String(g[1])
            }
        }
        let om = median(o)
        guard c != nil else {
            rows.append(Row(name: name, ours: ms(om), reference: "(no C compiler)", referenceValue: "", ratio: nil,
                            target: "", verdict: "info"))
            return nil
        }
        let rm = median(r)
        compare(name, ours: om, ms(om), reference: cLabel, rm, ms(rm), max: target)
        if oSum != rSum {
            rows[rows.count - 1].verdict = "DIFF"
            notes.append("\(name): output checksum \(oSum) differs from the C reference's \(rSum): not the same result")
            failures += 1
        }
        return (om, rm)
    }

    /// The drag latency figure: median and 95th percentile against one 60 Hz frame.
    func touchLatency() {
        let photos = ["colorfulcups-1920x1200.jpg", "path-1920x1200.jpg", "fallenleaf-1920x1200.jpg"]
            .map { root + "/deploy/samples/" + $0 }
        let r = ourCase(["touch-latency", settings.quick ? "6" : "20"] + photos)
        guard r.ok else { failRow("touch latency", firstLine(r.stderr)); return }
        let f = r.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
        guard f.count == 4 else { failRow("touch latency", "unexpected output: \(firstLine(r.stdout))"); return }
        let frame = 1000.0 / 60
        compare("drag frame latency, median", ours: f[0], ms(f[0]), reference: "one 60 Hz frame", frame, ms(frame),
                max: 1.0, targetText: "<= 16.7 ms")
        compare("drag frame latency, 95th percentile", ours: f[1], ms(f[1]), reference: "one 60 Hz frame", frame, ms(frame),
                max: nil)
        notes.append("touch latency: \(Int(f[3])) drag frames, worst \(ms(f[2])); a report waits for the next 1/60 s frame slot"
                     + " when it arrives just after a frame (the loop draws once per refresh, not once per report)")
    }

    /// The disk cache's write cost at 10,000 entries against 1,000: with the eviction taking the
    /// least recent entry from a heap the two are about the same (log n); sorting the index on
    /// every write made it grow with n log n.
    func diskCacheWrite() {
        let small = ourCase(["cache-write", "1000", "300"]), large = ourCase(["cache-write", "10000", "300"])
        guard small.ok, large.ok else { failRow("disk cache write", firstLine(small.ok ? large.stderr : small.stderr)); return }
        func first(_ r: ChildRun) -> Double? { r.stdout.split(separator: " ").first.flatMap { Double($0) } }
        guard let s = first(small), let l = first(large) else { failRow("disk cache write", "unexpected output"); return }
        compare("disk cache write, 10,000 entries full", ours: l, fixed(l, 1) + " µs",
                reference: "the same with 1,000 entries", s, fixed(s, 1) + " µs", max: 1.5,
                targetText: "<= 1.5x (O(log n))")
    }

    /// The kiosk-carousel executable to run: next to kiosk-bench (same build), or kiosk-bench's own
    /// `--case app` (the same KioskApp.main) when it has not been built.
    /// Builds `reference/rusage_runner.c` with gcc into the scratch directory as ``runner`` (the
    /// spawner that reports a child's peak RSS and CPU time from `wait4`); a note when it cannot.
    func buildRusageRunner() {
        guard runner == nil, let gcc = tool("gcc") else { return }
        let binary = scratch + "/rusage_runner"
        let r = child([gcc, "-O2", "-o", binary, root + "/Sources/kiosk-bench/reference/rusage_runner.c"])
        if r.ok { runner = binary } else { notes.append("could not build rusage_runner: \(firstLine(r.stderr))") }
    }

    func appCommand() -> (executable: String, prefix: [String], note: String?) {
        let sibling = dirname(of: exe) + "/kiosk-carousel"
        if isExecutable(sibling) { return (sibling, ["kiosk-carousel"], nil) }
        return (exe, ["kiosk-bench", "--case", "app"],
                "no kiosk-carousel next to \(exe): the whole-program rows ran `kiosk-bench --case app`, the same"
                + " KioskApp.main; `swift build -c release --product kiosk-carousel` first to measure the real binary")
    }

    /// Why the progressive photo's peak is high, shown when it misses its target.
    static let progressiveReason = "progressive: libjpeg keeps every DCT coefficient of the image until the last scan"
        + " (5120x2880x3 x 2 bytes = 84 MiB; the output pass gives them back as it reads them); djpeg alone needs the same"

    /// Peak RSS of the whole program showing `path`; the target is `limitMiB`, or with
    /// `overDjpegMiB` djpeg's own peak on the same file plus that much.
    func wholeProgram(label: String, path: String, app: String, prefix: [String], djpeg: String?, reason: String?,
                      limitMiB: Int = 64, overDjpegMiB: Int? = nil) {
        var runs: [ChildRun] = []
        var frames = 0
        for i in 0..<settings.appRuns {
            let dir = scratch + "/frames-\(i)"
            _ = mkdir(dir, 0o755)
            let r = spawnChild(prefix + ["--display", "offscreen:" + dir, "--size", "1920x1080", "--run-for", "1", path],
                               executable: app, stdoutPath: scratch + "/app.stdout", scratch: scratch, runner: runner)
            if !r.ok { failRow("whole program, \(label)", "exit \(r.status): " + firstLine(r.stderr)); return }
            frames = countFiles(dir, suffix: ".png")
            runs.append(r)
            _ = child(["rm", "-rf", dir])
        }
        let rss = runs.map(\.maxRSSKiB).max() ?? 0
        let wall = median(runs.map(\.wallMs))
        var refName = "(djpeg not found)", refKiB = 0
        if let djpeg {
            let d = child([djpeg, "-scale", "3/8", path], stdoutPath: "/dev/null")
            refName = "djpeg -scale 3/8 FILE > /dev/null"
            refKiB = d.ok ? d.maxRSSKiB : 0
        }
        let limit = overDjpegMiB.map { refKiB + $0 * 1024 } ?? limitMiB * 1024
        let target = overDjpegMiB.map { "<= ref + \($0) MiB" } ?? "<= \(limitMiB) MiB"
        rows.append(Row(name: "peak RSS, \(label)", ours: mib(rss), reference: refName, referenceValue: mib(refKiB),
                        ratio: refKiB > 0 ? Double(rss) / Double(refKiB) : nil, target: target,
                        verdict: rss <= limit && (overDjpegMiB == nil || refKiB > 0) ? "PASS" : "MISS"))
        rows.append(Row(name: "  (wall \(ms(wall)), \(frames) frame\(frames == 1 ? "" : "s") written)", ours: "", reference: "",
                        referenceValue: "", ratio: nil, target: "", verdict: ""))
        if rss > limit, let reason {
            rows.append(Row(name: "  why: " + reason, ours: "", reference: "", referenceValue: "", ratio: nil,
                            target: "", verdict: ""))
        }
    }

    func countFiles(_ dir: String, suffix: String) -> Int {
        guard let d = opendir(dir) else { return 0 }
        defer { closedir(d) }
        var n = 0
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(suffix) { n += 1 }
        }
        return n
    }

    // MARK: - Output

    func printTable() {
        let header = Row(name: "measurement", ours: "ours", reference: "reference", referenceValue: "ref",
                         ratio: nil, target: "target", verdict: "result")
        let body = rows.filter { !$0.name.hasPrefix("## ") && !$0.ours.isEmpty }
        let nameWidth = ([header] + body).map(\.name.count).max() ?? 20
        let oursWidth = ([header] + body).map(\.ours.count).max() ?? 10
        let refWidth = ([header] + body).map(\.reference.count).max() ?? 20
        let refValueWidth = ([header] + body).map(\.referenceValue.count).max() ?? 10
        func line(_ r: Row, ratio: String) -> String {
            [pad(r.name, nameWidth), padLeft(r.ours, oursWidth), pad(r.reference, refWidth),
             padLeft(r.referenceValue, refValueWidth), padLeft(ratio, 6), pad(r.target, 9), r.verdict].joined(separator: "  ")
        }
        let head = line(header, ratio: "ratio")
        print(head)
        print(String(repeating: "-", count: head.count))
        for r in rows {
            if r.name.hasPrefix("## ") {
                print(r.name.dropFirst(3))
            } else if r.ours.isEmpty {
                print(r.name)
            } else {
                print(line(r, ratio: r.ratio.map { fixed($0, 2) + "x" } ?? ""))
            }
        }
        let verdicts = rows.map(\.verdict)
        print("")
        print("targets: \(verdicts.filter { $0 == "PASS" }.count) PASS, \(verdicts.filter { $0 == "MISS" }.count) MISS"
              + (failures > 0 ? ", \(failures) FAIL/DIFF" : ""))
        print("notes:")
        print("  - ratio = ours / reference. Wall times are whole processes (spawn to reaped, incl. process start);"
              + " peak RSS is ru_maxrss from wait4.")
        print("  - vipsthumbnail -o X.v writes vips's raw format (no encode); -o X.jpg also JPEG-encodes its 1920x1080 result."
              + " vipsthumbnail and djpeg both shrink on load with libjpeg DCT scaling, as we do; vips runs threads.")
        print("  - djpeg -scale 1/2 decodes to half size and writes a PPM to /dev/null: no fit, no resampling.")
        print("  - C and Swift kernels run on the same deterministic frames; their output checksums (FNV-1a) are compared.")
        for n in notes { print("  - " + n) }
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// The facts of a JPEG file the table shows: size, baseline or progressive, chroma sampling.
struct JPEGInfo: CustomStringConvertible {
    var width = 0, height = 0, components = 0
    var process = ""
    var sampling = ""

    init?(_ b: [UInt8]) {
        guard b.count > 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var i = 2
        while i + 4 <= b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
                guard i + 4 + length <= b.count, length >= 8 else { return nil }
                let names: [UInt8: String] = [0xC0: "baseline", 0xC1: "extended sequential", 0xC2: "progressive",
                                              0xC9: "arithmetic sequential", 0xCA: "arithmetic progressive"]
                process = names[marker] ?? "SOF\(marker & 0x0F)"
                height = Int(b[i + 5]) << 8 | Int(b[i + 6])
                width = Int(b[i + 7]) << 8 | Int(b[i + 8])
                components = Int(b[i + 9])
                var factors: [String] = []
                for c in 0..<components where i + 10 + 3 * c + 1 < b.count {
                    let f = b[i + 10 + 3 * c + 1]
                    factors.append("\(f >> 4)x\(f & 15)")
                }
                sampling = factors.joined(separator: ",")
                return
            }
            i += 2 + length
        }
        return nil
    }

    var description: String {
        "\(width)x\(height) (\(fixed(Double(width * height) / 1e6, 1)) MP), \(process), \(components) components, sampling \(sampling)"
    }
}
