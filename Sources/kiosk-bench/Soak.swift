// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import KioskApp
import KioskContent
import KioskCore
import KioskDisplay
import KioskSystem

/// The soak on the virtual clock (docs/soak.md; driven by Tests/soak/virtual-clock.sh):
/// the real frame loop, content service (a remote manifest over loopback HTTP, its disk cache and
/// stored manifest, a watched directory), decode worker, renderer, event writer, signal pipe and
/// control socket, in this process, at 640x400 on the ``VirtualClock`` for `transitions` images
/// shown. Frames go to a display that only checks their size (an offscreen run would spend its
/// time writing PNGs).
///
/// Everything the soak does to the show happens on the loop's own thread, from ``Driver``'s
/// `take()` (the loop's touch feed, asked once a turn), counted in `shown` events read back from
/// the event writer's pipe:
/// - every 100 transitions a new manifest (items of the pool added, removed and re-ordered, with a
///   fixed seed) is written to the served folder and SIGHUP is raised (the loop polls it at once);
/// - every 100 transitions, 50 after the manifest, the watched directory changes: a file added,
///   one removed, one rewritten in place with another picture;
/// - every 7 transitions a scripted finger: a swipe (left or right, flicked or slow) or a tap,
///   its samples timed on the show's clock;
/// - every 13 transitions a control request on the socket (status, next, previous, goto, pause
///   and resume together), replies read back;
/// - every 250 transitions SIGUSR1 (next) or SIGUSR2 (previous).
/// Resident memory (VmRSS, /proc/self/status), open descriptors (/proc/self/fd) and threads
/// (Threads) are sampled at the start and end of each thousand transitions.
enum Soak {
    struct Sample { var transitions: Int; var rssKiB: Int; var fds: Int; var threads: Int }

    /// `dir` holds `www/` (served at `manifestURL`'s folder, with the pool of images in
    /// `www/images`) and gets `watched/`, `cache/` and `state/`. Prints the table; returns 0 when
    /// the last thousand is within 5 % of the second, 1 otherwise, 2 when it could not run.
    static func run(dir: String, manifestURL: String, transitions: Int) -> Int32 {
        guard let url = URL(string: manifestURL) else { fputs("soak: bad URL \(manifestURL)\n", stderr); return 2 }
        Allocator.mapLargeBlocks()  // as KioskApp.main does
        let driver: Driver
        let content: ContentService
        let preparer: SlotPreparer
        let signals: SignalPipe
        let control: ControlServer
        do {
            driver = try Driver(dir: dir, transitions: transitions)
            try driver.writeManifest()
            try driver.resetWatched()
            var configuration = ContentService.Configuration(sources: [dir + "/watched"], manifest: url,
                                                             cacheDirectory: dir + "/cache",
                                                             stateDirectory: dir + "/state")
            configuration.manifestInterval = .seconds(3600)
            content = try ContentService(configuration: configuration)
            preparer = try SlotPreparer(width: 640, height: 400, fit: .fit, background: .black, maxPixels: 100_000_000)
            signals = try SignalPipe.install([SIGHUP, SIGUSR1, SIGUSR2, SIGTERM])
            control = try ControlServer(path: dir + "/control")
            try control.start()
            try driver.connect(control: dir + "/control")
        } catch {
            fputs("soak: \(error)\n", stderr)
            return 2
        }
        defer { content.stop(); control.stop() }
        signal(SIGPIPE, SIG_IGN)
        preparer.images = content.images
        content.start()
        content.waitForFirstAnswer(timeout: .seconds(60))
        let clock = VirtualClock()
        driver.clock = clock
        let display = CheckingDisplay(width: 640, height: 400)
        var configuration = FrameLoop.Configuration(events: EventWriter(descriptor: driver.eventsWrite))
        configuration.signals = signals
        configuration.decodeSignal = { s in
            switch s {
            case SIGHUP: return .reload
            case SIGUSR1: return .next
            case SIGUSR2: return .previous
            case SIGTERM: return .stop(signal: s)
            default: return nil
            }
        }
        configuration.touch = driver
        configuration.content = content
        configuration.control = control
        let loop = FrameLoop(display: display, driver: VirtualTimeDriver(clock: clock),
                             carousel: Carousel(items: content.items,
                                                config: CarouselConfig(interval: .seconds(1),
                                                                       fade: .milliseconds(500))),
                             preparer: preparer, configuration: configuration)
        let started = nowMs()
        do { _ = try loop.run() } catch {
            fputs("soak: \(error)\n", stderr)
            return 2
        }
        let samples = driver.samples
        print("transitions\trss_kib\tfds\tthreads")
        for s in samples { print("\(s.transitions)\t\(s.rssKiB)\t\(s.fds)\t\(s.threads)") }
        print("soak: \(driver.shown) transitions, \(display.frames) frames, \(driver.manifests) manifests, "
              + "\(driver.directoryChanges) directory changes, \(driver.gestures) gestures, "
              + "\(driver.requests) control requests (\(driver.replies) replies), \(driver.signalsSent) signals, "
              + "show time \(clock.now.wholeMilliseconds / 1000) s, "
              + "wall \(Int((nowMs() - started) / 1000)) s")
        guard let second = samples.first(where: { $0.transitions == 2000 }),
              let last = samples.last, last.transitions >= 3000,
              let lastStart = samples.last(where: { $0.transitions == last.transitions - 1000 }) else {
            fputs("soak: too few transitions to compare the second and the last thousand\n", stderr)
            return 1
        }
        let secondStart = samples.first(where: { $0.transitions == 1000 })!
        var ok = true
        // Threads get 2 of slack besides the 5 %: libdispatch starts and retires pool workers as
        // the decode, file-check and event queues get busy, so a sample catches 0 to 2 idle ones.
        for (name, value, slack) in [("RSS", \Sample.rssKiB, 0), ("fds", \Sample.fds, 0),
                                     ("threads", \Sample.threads, 2)] {
            let reference = max(second[keyPath: value], secondStart[keyPath: value])
            let worst = max(last[keyPath: value], lastStart[keyPath: value])
            let growth = Double(worst - reference) / Double(reference) * 100
            let pass = growth <= 5 || worst - reference <= slack
            ok = ok && pass
            print("soak: \(name) second thousand \(secondStart[keyPath: value])…\(second[keyPath: value]), "
                  + "last thousand \(lastStart[keyPath: value])…\(last[keyPath: value]): "
                  + "\(growth >= 0 ? "+" : "")\(Double(Int(growth * 10)) / 10) % "
                  + (pass ? "(flat)" : "(GROWS)"))
        }
        return ok ? 0 : 1
    }

    /// Resident set (KiB), open descriptors and threads of this process now.
    static func measure(transitions: Int) -> Sample {
        var rss = 0, threads = 0
        if let file = fopen("/proc/self/status", "r") {
            defer { fclose(file) }
            var line = [CChar](repeating: 0, count: 256)
            while fgets(&line, Int32(line.count), file) != nil {
                let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                let number = Int(String(text.filter(\.isNumber))) ?? 0  // "VmRSS:\t  29588 kB"
                if text.hasPrefix("VmRSS:") { rss = number } else if text.hasPrefix("Threads:") { threads = number }
            }
        }
        // Less the descriptor listDirectory holds while it reads.
        let fds = ((try? listDirectory("/proc/self/fd"))?.count ?? 1) - 1
        return Sample(transitions: transitions, rssKiB: rss, fds: fds, threads: threads)
    }
}

/// A display that keeps no pixels: it checks each frame's size and counts it.
private final class CheckingDisplay: Display {
    let width: Int, height: Int
    var panelWidth: Int { width }
    var panelHeight: Int { height }
    var summary: String { "soak \(width)x\(height)" }
    var pacesFrames: Bool { false }
    private(set) var frames = 0
    init(width: Int, height: Int) { self.width = width; self.height = height }
    func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        guard frame.width == width, frame.height == height else {
            throw .write(path: "soak", reason: "frame \(frame.width)x\(frame.height), expected \(width)x\(height)")
        }
        frames += 1
    }
    func restore() {}
}

/// The soak's hand on the show (see ``Soak``): the loop's touch feed, run on the loop's thread.
private final class Driver: TouchFeed {
    let dir: String
    let target: Int
    /// The event writer's pipe: `shown` lines are counted from its read end.
    let eventsWrite: Int32
    private let eventsRead: Int32
    /// Always readable: the loop on the virtual clock polls nothing, so this never matters.
    var wakeDescriptor: Int32 { eventsRead }
    var clock: VirtualClock?
    private var pool: [String] = []
    private var random = SplitMix64(seed: 20261201)
    private var pendingLine: [UInt8] = []
    private var controlSocket: Int32 = -1
    private var replyLine: [UInt8] = []
    private var done = false
    private(set) var shown = 0, manifests = 0, directoryChanges = 0, gestures = 0, requests = 0, replies = 0,
                     signalsSent = 0
    private(set) var samples: [Soak.Sample] = []
    private var watchedSerial = 0

    init(dir: String, transitions: Int) throws(SystemError) {
        self.dir = dir
        target = transitions
        (eventsRead, eventsWrite) = try makeWakePipe()
        _ = fcntl(eventsWrite, F_SETFL, fcntl(eventsWrite, F_GETFL) & ~O_NONBLOCK)  // the writer thread may wait
        pool = try listDirectory(dir + "/www/images").compactMap(\.name).filter { !$0.hasPrefix(".") }.sorted()
    }

    func connect(control path: String) throws(SystemError) {
        controlSocket = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let fd = controlSocket
        try syscall("connect", path: path) {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        _ = fcntl(controlSocket, F_SETFL, O_NONBLOCK)
    }

    /// A new manifest: 170 to 190 items of the pool, in a new order.
    func writeManifest() throws(SystemError) {
        var items = pool
        random.shuffle(&items)
        let count = 170 + random.next(21)
        let body = "{\"interval\":1,\"fade\":500,\"items\":[\n"
            + items.prefix(count).map { "{\"src\":\"images/\($0)\"}" }.joined(separator: ",\n") + "\n]}\n"
        // Written beside and renamed over: the server never serves half a manifest.
        try writeFile(dir + "/www/.manifest.tmp", Array(body.utf8))
        let manifest = dir + "/www/manifest.json"
        try syscall("rename", path: manifest) { rename(dir + "/www/.manifest.tmp", manifest) }
        manifests += 1
    }

    /// The watched directory's first ten images.
    func resetWatched() throws(SystemError) {
        let watched = dir + "/watched"
        mkdir(watched, 0o755)
        for entry in (try? listDirectory(watched)) ?? [] {
            if let name = entry.name, !name.hasPrefix(".") { unlink(watched + "/" + name) }
        }
        for i in 0..<10 { try copy(pool[i], to: "w\(i)-\(pool[i])") }
        watchedSerial = 10
    }

    private func copy(_ name: String, to newName: String) throws(SystemError) {
        let bytes = try readFile(dir + "/www/images/" + name)
        try writeFile(dir + "/watched/.tmp", bytes)
        let destination = dir + "/watched/" + newName
        try syscall("rename", path: destination) { rename(dir + "/watched/.tmp", destination) }
    }

    /// One file added, the oldest removed, one rewritten in place (truncated and written again
    /// with another image of the same kind).
    private func changeWatched() {
        let watched = dir + "/watched"
        let names = ((try? listDirectory(watched)) ?? []).compactMap(\.name).filter { !$0.hasPrefix(".") }.sorted {
            Int($0.dropFirst().prefix(while: \.isNumber)) ?? 0 < Int($1.dropFirst().prefix(while: \.isNumber)) ?? 0
        }
        let source = pool[random.next(pool.count)]
        try? copy(source, to: "w\(watchedSerial)-\(source)")
        watchedSerial += 1
        if let oldest = names.first { unlink(watched + "/" + oldest) }
        if names.count > 2 {
            let victim = names[1 + random.next(names.count - 1)]
            let suffix = victim.split(separator: ".").last.map(String.init) ?? ""
            if let other = pool.filter({ $0.hasSuffix("." + suffix) }).randomElement(using: &random),
               let bytes = try? readFile(dir + "/www/images/" + other) {
                try? writeFile(watched + "/" + victim, bytes)
            }
        }
        directoryChanges += 1
    }

    func take() -> [TouchFeedEvent] {
        var events: [TouchFeedEvent] = []
        let before = shown
        readEvents()
        readReplies()
        if samples.isEmpty && shown > 0 { samples.append(Soak.measure(transitions: 0)) }
        guard !done else { return [] }
        var t = before + 1
        while t <= shown {
            if t % 1000 == 0 { samples.append(Soak.measure(transitions: t)) }
            if t >= target {
                done = true
                kill(getpid(), SIGTERM)
                return []
            }
            if t % 100 == 0 {
                try? writeManifest()
                kill(getpid(), SIGHUP)
                signalsSent += 1
            }
            if t % 100 == 50 { changeWatched() }
            if t % 250 == 125 { kill(getpid(), t % 500 == 125 ? SIGUSR1 : SIGUSR2); signalsSent += 1 }
            if t % 13 == 0 { sendRequest(t) }
            if t % 7 == 0 { events += gesture(t) }
            t += 1
        }
        return events
    }

    /// Counts the `shown` lines the event writer wrote so far.
    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(eventsRead, &buffer, buffer.count)
            guard n > 0 else { break }
            for byte in buffer[0..<n] {
                if byte == UInt8(ascii: "\n") {
                    if pendingLine.starts(with: Array("{\"event\":\"shown\"".utf8)) { shown += 1 }
                    pendingLine.removeAll(keepingCapacity: true)
                } else {
                    pendingLine.append(byte)
                }
            }
        }
    }

    private func readReplies() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while controlSocket >= 0 {
            let n = read(controlSocket, &buffer, buffer.count)
            guard n > 0 else { break }
            // Replies carry "error"; the rest are the `shown` and `tap` events every client gets.
            for byte in buffer[0..<n] {
                if byte == UInt8(ascii: "\n") {
                    if replyLine.starts(with: Array("{\"event\"".utf8)) == false { replies += 1 }
                    replyLine.removeAll(keepingCapacity: true)
                } else if replyLine.count < 16 {
                    replyLine.append(byte)
                }
            }
        }
    }

    private func sendRequest(_ t: Int) {
        let lines: String
        switch (t / 13) % 5 {
        case 0: lines = "{\"command\":[\"status\"],\"request_id\":\(t)}\n"
        case 1: lines = "{\"command\":[\"next\"]}\n"
        case 2: lines = "{\"command\":[\"previous\"]}\n"
        case 3: lines = "{\"command\":[\"goto\",\(random.next(150))]}\n"
        default: lines = "{\"command\":[\"pause\"]}\n{\"command\":[\"resume\"]}\n"
        }
        let bytes = Array(lines.utf8)
        if write(controlSocket, bytes, bytes.count) == bytes.count { requests += lines.split(separator: "\n").count }
    }

    /// A finger whose samples end at the show's present time: a swipe either way (a flick in
    /// 120 ms or a slow drag past a third in 600 ms) or a tap.
    private func gesture(_ t: Int) -> [TouchFeedEvent] {
        guard let now = clock?.now else { return [] }
        gestures += 1
        let kind = (t / 7) % 4
        if kind == 3 {
            return [.sample(TouchSample(.down, x: 320, y: 200, time: now - .milliseconds(60))),
                    .sample(TouchSample(.up, x: 321, y: 200, time: now))]
        }
        let (from, to): (Double, Double) = kind == 0 ? (540, 100) : (100, 540)
        let steps = kind == 2 ? 38 : 8
        let step: Duration = .milliseconds(16)
        let start = now - step * steps
        var out: [TouchFeedEvent] = [.sample(TouchSample(.down, x: from, y: 200, time: start))]
        for i in 1...steps {
            out.append(.sample(TouchSample(i == steps ? .up : .move, x: from + (to - from) * Double(i) / Double(steps),
                                           y: 200, time: start + step * i)))
        }
        return out
    }
}

extension SplitMix64 {
    /// `items` in an order of the soak's fixed-seed choosing.
    mutating func shuffle(_ items: inout [String]) { items.shuffle(using: &self) }
}

private func readFile(_ path: String) throws(SystemError) -> [UInt8] {
    let fd = try FileDescriptor.open(path, O_RDONLY)
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = try syscall("read", path: path) { read(fd.rawValue, &buffer, buffer.count) }
        if n == 0 { return out }
        out += buffer[0..<n]
    }
}

/// Writes `bytes` over `path` in place (O_TRUNC: a reader may see it half written, as a copy does).
private func writeFile(_ path: String, _ bytes: [UInt8]) throws(SystemError) {
    let fd = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
    var offset = 0
    while offset < bytes.count {
        let n = try syscall("write", path: path) {
            bytes[offset...].withUnsafeBytes { write(fd.rawValue, $0.baseAddress, $0.count) }
        }
        if n == 0 { throw SystemError(operation: "write", path: path, errno: EIO) }
        offset += n
    }
}
