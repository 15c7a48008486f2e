// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskApp
import KioskCore
import KioskDisplay
import KioskSystem

/// `kiosk-bench --case mirrored-outputs PHOTO PHOTO [RUNS]` (docs/displays.md "Several outputs"): what
/// a mirrored second output costs against the first, in peak RSS. Each configuration runs in a
/// child of its own (`mirrored-outputs-run SIZES PHOTO PHOTO`): the real frame loop, decoder and
/// renderer on virtual time, a show of the two photos with 400 ms fades over 3 s, on stand-ins
/// for DRM outputs (``ScanoutStandIn``: two scanout buffers each, every frame copied into one).
/// The first output's cost is the one-output run's peak above a child that does nothing
/// (`noop`); a second output's is the two-output run's peak above the one-output run's.
/// Each configuration's peak is the smallest of RUNS runs (default 3: the peaks of runs differ
/// by the moment the decode worker's buffers and the fade's scratch frames meet).
enum MirroredOutputsCase {
    static func run(photos: [String], runs: Int = 3) -> Int32 {
        let scratch = "/tmp/kiosk-bench-outputs-\(getpid())"
        mkdir(scratch, 0o755)
        defer { unlink(scratch + "/child.stdout"); unlink(scratch + "/child.stderr"); rmdir(scratch) }
        func peak(_ args: [String]) -> Int? {
            var best: Int?
            for _ in 0..<max(1, runs) {
                let r = spawnChild(["/proc/self/exe", "--case"] + args, scratch: scratch)
                guard r.ok else {
                    print("mirrored-outputs: \(args.joined(separator: " ")) failed (\(r.status)): \(r.stderr)")
                    return nil
                }
                best = min(best ?? r.maxRSSKiB, r.maxRSSKiB)
            }
            return best
        }
        guard let floor = peak(["noop"]), let one = peak(["mirrored-outputs-run", "1920x1080"] + photos),
              let twins = peak(["mirrored-outputs-run", "1920x1080,1920x1080"] + photos),
              let small = peak(["mirrored-outputs-run", "1920x1080,800x480"] + photos) else { return 1 }
        let first = one - floor
        func line(_ what: String, _ kib: Int) {
            let ratio = Double(kib) / Double(max(1, first))
            print("mirrored-outputs second output \(what): +\(mib(kib)) (\(fixed(ratio, 2)) of the first;"
                  + " target <= 0.50: \(ratio <= 0.5 ? "PASS" : "MISS"))")
        }
        print("mirrored-outputs first output 1920x1080: \(mib(first)) above a child doing nothing (\(mib(floor)))")
        line("1920x1080 (one composed frame for both)", twins - one)
        line("800x480 (its own slot frames)", small - one)
        return 0
    }

    /// The child: the show on outputs of `sizes` (`WxH,WxH`), the first the display's own size.
    static func child(sizes: String, photos: [String]) -> Int32 {
        let parsed = sizes.split(separator: ",").compactMap { s -> FrameSize? in
            let p = s.split(separator: "x").compactMap { Int($0) }
            return p.count == 2 ? FrameSize(width: p[0], height: p[1]) : nil
        }
        guard let first = parsed.first, photos.count == 2 else { return ChildCase.usage() }
        let outputs = parsed.map { ScanoutStandIn(width: $0.width, height: $0.height) }
        let display: Display = outputs.count == 1 ? outputs[0] : MirroredDisplay(outputs: outputs)
        let devnull = open("/dev/null", O_WRONLY)
        defer { close(devnull) }
        do {
            let preparer = try SlotPreparer(width: first.width, height: first.height, fit: .fit, background: .black,
                                            maxPixels: 1 << 26)
            let loop = FrameLoop(display: display, driver: VirtualTimeDriver(),
                                 carousel: Carousel(items: photos.map { PlaylistItem(source: $0) },
                                                    config: CarouselConfig(interval: .seconds(1),
                                                                           fade: .milliseconds(400),
                                                                           screenWidth: first.width)),
                                 preparer: preparer,
                                 configuration: .init(events: EventWriter(descriptor: devnull), runFor: .seconds(3)))
            _ = try loop.run()
        } catch {
            fputs("mirrored-outputs-run: \(error)\n", stderr)
            return 1
        }
        return outputs.allSatisfy { $0.frames > 0 } ? 0 : 1
    }
}

/// A DRM output's memory without a card: two XRGB8888 scanout buffers of its size (a dumb
/// buffer's pages count in the process's RSS once mapped and written), every frame copied into
/// the one not shown.
final class ScanoutStandIn: Display {
    let width: Int, height: Int
    var panelWidth: Int { width }
    var panelHeight: Int { height }
    var summary: String { "scanout stand-in \(width)x\(height)" }
    var pacesFrames: Bool { false }
    private let buffers: [UnsafeMutablePointer<UInt32>]
    private var front = 0
    private(set) var frames = 0

    init(width: Int, height: Int) {
        self.width = width; self.height = height
        buffers = (0..<2).map { _ in .allocate(capacity: width * height) }
    }
    deinit { for b in buffers { b.deallocate() } }

    func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        front = 1 - front
        buffers[front].update(from: frame.pixels, count: width * height)
        frames += 1
    }
    func restore() {}
}
