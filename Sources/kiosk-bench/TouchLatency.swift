// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskApp
import KioskCore
import KioskDisplay
import KioskSystem

/// Input-to-screen latency of a drag (docs/benchmarks.md), in process: the real frame loop,
/// gesture recogniser, carousel, renderer and fbdev present path at 1920x1080 XRGB8888 (a
/// regular file in /dev/shm mapped as the framebuffer, so the scanout copy is real), fed by a
/// thread that reports a finger every 8 ms (a 125 Hz touchscreen) with timestamps on the
/// loop's clock, as the kernel stamps evdev events.
///
/// Latency of a frame = the time its present returned minus the timestamp of the oldest touch
/// report it was the first to show. The loop draws at most one frame per 1/60 s on a display
/// that does not pace frames, so a report that arrives just after a frame waits for the next.
enum TouchLatency {
    /// Prints `median p95 max frames` (milliseconds) on stdout.
    static func run(photos: [String], swipes: Int) -> Int32 {
        let width = 1920, height = 1080
        let path = "/dev/shm/kc-bench-fb-\(getpid())"
        let geometry = FramebufferGeometry(xres: width, yres: height, format: .xrgb8888, lineLength: width * 4)
        do {
            let fd = try FileDescriptor.open(path, O_RDWR | O_CREAT | O_TRUNC, mode: 0o600)
            try syscall("ftruncate", path: path) { ftruncate(fd.rawValue, off_t(geometry.memoryLength)) }
        } catch {
            fputs("touch-latency: cannot create \(path): \(error)\n", stderr)
            return 1
        }
        defer { unlink(path) }
        let display: FramebufferDisplay
        do {
            display = try FramebufferDisplay.open(path: path, geometry: geometry, rotation: .none, swapRedBlue: false,
                                                  dither: false)
        } catch {
            fputs("touch-latency: \(error)\n", stderr)
            return 1
        }
        let clock = MonotonicClock()
        let feed: SwipeFeed
        do {
            feed = try SwipeFeed(clock: clock, width: Double(width), swipes: swipes)
        } catch {
            fputs("touch-latency: \(error)\n", stderr)
            return 1
        }
        let items = photos.map { PlaylistItem(source: $0) }
        let end = feed.endTime + .milliseconds(500)
        let preparer: SlotPreparer
        do {
            preparer = try SlotPreparer(width: width, height: height, fit: .fit, background: .black,
                                        maxPixels: 100_000_000)
        } catch {
            fputs("touch-latency: \(error)\n", stderr)
            return 1
        }
        var latencies: [Double] = []
        var configuration = FrameLoop.Configuration(events: EventWriter(descriptor: open("/dev/null", O_WRONLY)),
                                                    runFor: end)
        configuration.touch = feed
        configuration.presented = { at, touchTime in
            if let touchTime { latencies.append(Double((at - touchTime).wholeNanoseconds) / 1e6) }
        }
        let loop = FrameLoop(display: display, driver: RealTimeDriver(clock: clock),
                             carousel: Carousel(items: items, config: CarouselConfig(interval: .seconds(600))),
                             preparer: preparer, configuration: configuration)
        do { try feed.start() } catch {
            fputs("touch-latency: \(error)\n", stderr)
            return 1
        }
        do { _ = try loop.run() } catch {
            fputs("touch-latency: \(error)\n", stderr)
            return 1
        }
        guard !latencies.isEmpty else { fputs("touch-latency: no frame showed a touch\n", stderr); return 1 }
        let sorted = latencies.sorted()
        let p95 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.95).rounded(.up)) - 1)]
        print(fixed3(sorted[sorted.count / 2]), fixed3(p95), fixed3(sorted.last!), sorted.count)
        return 0
    }
}

private func fixed3(_ v: Double) -> String { String(Double((v * 1000).rounded()) / 1000) }

/// Reports a finger sweeping from 85 % to 15 % of the width and back, every 8 ms, `swipes`
/// times, starting 1.5 s in (when the first images are decoded), with a 600 ms rest between.
private final class SwipeFeed: TouchFeed {
    private let pending: Mailbox<TouchFeedEvent>
    private let finger: WorkerThread
    var wakeDescriptor: Int32 { pending.wakeDescriptor }
    private let clock: MonotonicClock
    private let width: Double
    private let swipes: Int
    static let start: Duration = .milliseconds(1500), swipeLength = 50, period: Duration = .milliseconds(8)
    static let rest: Duration = .milliseconds(600)

    init(clock: MonotonicClock, width: Double, swipes: Int) throws(SystemError) {
        pending = try Mailbox()
        finger = try WorkerThread(name: "touch-latency finger")
        self.clock = clock
        self.width = width
        self.swipes = swipes
    }

    var endTime: Duration {
        Self.start + (Self.period * (Self.swipeLength + 1) + Self.rest) * swipes
    }

    /// Starts the finger's thread (it ends by itself after the last swipe).
    func start() throws(SystemError) {
        try finger.start { [self] in generate() }
    }

    private func sleep(until t: Duration) {
        let ns = (t - clock.now).wholeNanoseconds
        if ns > 0 { usleep(useconds_t(ns / 1000)) }
    }

    private func report(_ phase: TouchSample.Phase, x: Double) {
        let sample = TouchSample(phase, x: x, y: 540, time: clock.now)
        pending.post(.sample(sample))
    }

    private func generate() {
        var t = Self.start
        for i in 0..<swipes {
            let (from, to) = i % 2 == 0 ? (0.85 * width, 0.15 * width) : (0.15 * width, 0.85 * width)
            sleep(until: t)
            report(.down, x: from)
            for step in 1...Self.swipeLength {
                t += Self.period
                sleep(until: t)
                report(step == Self.swipeLength ? .up : .move,
                       x: from + (to - from) * Double(step) / Double(Self.swipeLength))
            }
            t += Self.period + Self.rest
        }
    }

    func take() -> [TouchFeedEvent] { pending.take() }
}
