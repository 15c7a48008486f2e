// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc

// Helpers for ShowContentTests: the real `kiosk-carousel` executable run as a child with its
// stdout and stderr read line by line as they arrive (each line stamped with the time since
// spawn), solid-colour PNGs made here, atomic publishing into nginx's document root, and an
// analysis of the offscreen frames (PNG decoded by /usr/bin/python3 with zlib only).

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The repository root (three levels above this file).
let showRepository: String = {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
}()

/// A sample photo shipped in deploy/samples.
func samplePhoto(_ name: String) -> String { showRepository + "/deploy/samples/" + name }

/// One `shown` event and when its line arrived (seconds since spawn).
struct ShownEvent: CustomStringConvertible {
    var index: Int
    var src: String
    var t: Int
    var at: Double
    var description: String { "#\(index) \(src) t=\(t) at=\(String(format: "%.2f", at))s" }
}

/// `kiosk-carousel --display offscreen:FRAMES ARGS...`, stdout and stderr read on threads.
final class KioskShow: @unchecked Sendable {
    struct Line { var at: Double; var text: String }

    let pid: pid_t
    let frames: String
    let arguments: [String]
    let startedAt: Double
    private let condition = NSCondition()
    private var out: [Line] = []
    private var err: [Line] = []
    private var openStreams = 2
    private var status: Int32?

    /// - Parameter arguments: everything after `--display offscreen:DIR` (`--size` included).
    init(_ arguments: [String], frames: String = makeTempDirectory("show-frames")) throws {
        self.frames = frames
        self.arguments = ["--display", "offscreen:" + frames] + arguments
        let binary = builtExecutable("kiosk-carousel")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw Failure("kiosk-carousel not built beside the tests (\(binary))")
        }
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw Failure("pipe failed") }
        // Close-on-exec: another child spawned meanwhile must not hold our pipes open (the
        // dup2 in the file actions clears the flag on the child's 1 and 2).
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        startedAt = monotonicSeconds()
        let pid: pid_t
        do {
            defer { close(outPipe[1]); close(errPipe[1]) }
            pid = try spawnResettingSignals(binary, self.arguments, stdout: outPipe[1], stderr: errPipe[1])
        } catch {
            close(outPipe[0]); close(errPipe[0])
            throw error
        }
        self.pid = pid
        for (fd, isOut) in [(outPipe[0], true), (errPipe[0], false)] {
            let thread = Thread { [self] in self.readLines(fd, isOut: isOut) }
            thread.start()
        }
    }

    private func readLines(_ fd: Int32, isOut: Bool) {
        var pending = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            let at = monotonicSeconds() - startedAt
            pending += buffer[0..<n]
            var lines: [Line] = []
            while let nl = pending.firstIndex(of: 10) {
                lines.append(Line(at: at, text: String(decoding: pending[..<nl], as: UTF8.self)))
                pending.removeSubrange(...nl)
            }
            if !lines.isEmpty {
                condition.lock()
                if isOut { out += lines } else { err += lines }
                condition.broadcast()
                condition.unlock()
            }
        }
        close(fd)
        condition.lock()
        if !pending.isEmpty {
            let line = Line(at: monotonicSeconds() - startedAt, text: String(decoding: pending, as: UTF8.self))
            if isOut { out.append(line) } else { err.append(line) }
        }
        openStreams -= 1
        condition.broadcast()
        condition.unlock()
    }

    var stdoutLines: [Line] { condition.lock(); defer { condition.unlock() }; return out }
    var stderrLines: [Line] { condition.lock(); defer { condition.unlock() }; return err }
    var log: String { stderrLines.map(\.text).joined(separator: "\n") }
    /// Seconds since spawn.
    var elapsed: Double { monotonicSeconds() - startedAt }

    var shown: [ShownEvent] {
        stdoutLines.compactMap { line in
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any],
                  obj["event"] as? String == "shown", let index = obj["index"] as? Int,
                  let src = obj["src"] as? String, let t = obj["t"] as? Int else { return nil }
            return ShownEvent(index: index, src: src, t: t, at: line.at)
        }
    }

    /// Stderr lines containing `text`.
    func logLines(containing text: String) -> [String] { stderrLines.map(\.text).filter { $0.contains(text) } }

    /// Polls `predicate` every 20 ms until it holds or `timeout` seconds pass; returns whether it held.
    @discardableResult
    func waitUntil(_ timeout: Double, _ predicate: (KioskShow) -> Bool) -> Bool {
        let end = monotonicSeconds() + timeout
        while monotonicSeconds() < end {
            if predicate(self) { return true }
            if !isRunning && !predicate(self) { return predicate(self) }
            usleep(20_000)
        }
        return predicate(self)
    }

    var isRunning: Bool {
        condition.lock(); defer { condition.unlock() }
        if status != nil { return false }
        var st: Int32 = 0
        if waitpid(pid, &st, WNOHANG) == pid { status = st; return false }
        return true
    }

    /// Waits for the exit (then for both streams to end); the exit code, 128+N for a signal, nil on timeout.
    @discardableResult
    func waitForExit(timeout: Double) -> Int32? {
        let end = monotonicSeconds() + timeout
        while isRunning && monotonicSeconds() < end { usleep(20_000) }
        if isRunning { return nil }
        condition.lock()
        while openStreams > 0 && condition.wait(until: Date().addingTimeInterval(2)) {}
        let st = status ?? 0
        condition.unlock()
        return (st & 0x7F) == 0 ? (st >> 8) & 0xFF : 128 + (st & 0x7F)
    }

    func signal(_ sig: Int32) { if isRunning { kill(pid, sig) } }

    /// SIGTERM, then SIGKILL after 10 s; returns the exit code.
    @discardableResult
    func stop() -> Int32? {
        signal(SIGTERM)
        if let code = waitForExit(timeout: 10) { return code }
        kill(pid, SIGKILL)
        return waitForExit(timeout: 5)
    }

    /// For failure messages.
    var transcript: String {
        "command: kiosk-carousel \(arguments.joined(separator: " "))\nstdout:\n"
            + stdoutLines.map { String(format: "  %6.2f ", $0.at) + $0.text }.joined(separator: "\n")
            + "\nstderr:\n" + stderrLines.map { String(format: "  %6.2f ", $0.at) + $0.text }.joined(separator: "\n")
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            var st: Int32 = 0
            waitpid(pid, &st, 0)
        }
    }
}

// MARK: - Images

private let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
    var c = UInt32(n)
    for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
}

private func crc32(_ bytes: [UInt8]) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    for b in bytes { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
    return c ^ 0xFFFF_FFFF
}

private func bigEndian(_ v: UInt32) -> [UInt8] {
    [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
}

/// A solid-colour RGB PNG (zlib stream of stored blocks: no compressor needed).
func solidPNG(width: Int = 160, height: Int = 100, _ rgb: (UInt8, UInt8, UInt8)) -> [UInt8] {
    var raw = [UInt8]()
    raw.reserveCapacity(height * (1 + width * 3))
    for _ in 0..<height {
        raw.append(0)
        for _ in 0..<width { raw += [rgb.0, rgb.1, rgb.2] }
    }
    var z: [UInt8] = [0x78, 0x01]
    var offset = 0
    repeat {
        let n = min(65535, raw.count - offset)
        let final: UInt8 = offset + n == raw.count ? 1 : 0
        z += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
        z += raw[offset..<(offset + n)]
        offset += n
    } while offset < raw.count
    var a: UInt32 = 1, b: UInt32 = 0
    for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
    z += bigEndian(b << 16 | a)
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }
    let ihdr = bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0]
    return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", z) + chunk("IEND", [])
}

/// Colours of the test images, well apart from black and from each other.
enum Swatch {
    static let red: (UInt8, UInt8, UInt8) = (220, 40, 40)
    static let green: (UInt8, UInt8, UInt8) = (40, 200, 60)
    static let blue: (UInt8, UInt8, UInt8) = (40, 60, 220)
    static let yellow: (UInt8, UInt8, UInt8) = (230, 210, 40)
}

// MARK: - Publishing

private let mtimeLock = NSLock()
nonisolated(unsafe) private var nextMtime = 1_700_000_000

/// Puts `bytes` at `path` under nginx's root atomically (temp file + rename, so nginx never
/// serves a half-written manifest) with an mtime no other publish used: nginx's ETag
/// (mtime-size) and Last-Modified change with every version even within one second.
func publish(_ nginx: Nginx, _ path: String, _ bytes: [UInt8]) throws {
    let full = nginx.root + "/" + path
    let dir = (full as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let tmp = dir + "/.publish-\(UUID().uuidString)"
    try writeFile(tmp, bytes)
    let mtime = mtimeLock.withLock { () -> Int in nextMtime += 10; return nextMtime }
    var times = [timespec(tv_sec: mtime, tv_nsec: 0), timespec(tv_sec: mtime, tv_nsec: 0)]
    guard utimensat(AT_FDCWD, tmp, &times, 0) == 0, rename(tmp, full) == 0 else {
        throw Failure("publish \(full): \(String(cString: strerror(errno)))")
    }
}

func publish(_ nginx: Nginx, _ path: String, json: String) throws { try publish(nginx, path, Array(json.utf8)) }

/// `{"items":[{"src":…},…]}` plus extra top-level fields (e.g. `"interval":2`).
func itemsManifest(_ srcs: [String], extra: String = "") -> String {
    let items = srcs.map { "{\"src\":\"\($0)\"}" }.joined(separator: ",")
    return "{" + (extra.isEmpty ? "" : extra + ",") + "\"items\":[\(items)]}"
}

/// The `/show.json` lines of nginx's access log: (status, If-None-Match sent).
func manifestRequests(_ nginx: Nginx, path: String = "/show.json") -> [(status: Int, inm: String)] {
    nginx.accessLog().compactMap { line in
        let f = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
        guard f.count >= 5, f[0] == "GET", f[1] == path, let status = Int(f[2]) else { return nil }
        return (status, String(f[4].dropFirst(4)))
    }
}

/// Requests nginx logged for `path` with status `status`.
func requestCount(_ nginx: Nginx, _ path: String, status: Int? = nil) -> Int {
    nginx.accessLog().filter { line in
        let f = line.split(separator: " ")
        return f.count >= 3 && f[0] == "GET" && f[1] == path && (status == nil || f[2] == "\(status!)")
    }.count
}

// MARK: - Frames

/// What the test needs of an offscreen frame.
struct FrameInfo: CustomStringConvertible {
    var ms: Int
    var name: String
    var center: [Int]
    var corner: [Int]
    /// Fraction of the sampled pixels that are near black (every channel < 24).
    var dark: Double
    /// Bright pixels (blue > 128) in the middle band (rows 30 %...70 %, every 4th row): the text of
    /// the "No images" screen on a black background.
    var lit: Int

    func centerIs(_ rgb: (UInt8, UInt8, UInt8), tolerance: Int = 8) -> Bool {
        abs(center[0] - Int(rgb.0)) <= tolerance && abs(center[1] - Int(rgb.1)) <= tolerance
            && abs(center[2] - Int(rgb.2)) <= tolerance
    }
    var centerIsDark: Bool { center.allSatisfy { $0 < 24 } }
    /// The "No images to show" screen: black corner, mostly black, some light text in the middle.
    var looksLikeNoImagesScreen: Bool { corner.allSatisfy { $0 < 8 } && dark > 0.85 && lit > 5 }
    var description: String { "\(name) center=\(center) dark=\(String(format: "%.2f", dark)) lit=\(lit)" }
}

private let frameScript = #"""
import sys, os, zlib, struct, json
from itertools import accumulate
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    if not (name.startswith("frame-") and name.endswith(".png")):
        continue
    data = open(os.path.join(d, name), "rb").read()
    pos, idat, w, h, ct = 8, [], 0, 0, 2
    while pos + 8 <= len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if typ == b"IHDR":
            w, h, bd, ct = struct.unpack(">IIBB", body[:10])
        elif typ == b"IDAT":
            idat.append(body)
        elif typ == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    bpp = {2: 3, 6: 4}[ct]
    stride = w * bpp
    want = set(range(0, h, 4)) | {h // 2}
    fast = all(f in (0, 1) for f in raw[0::stride + 1])
    rows, prev = {}, bytearray(stride)
    for y in range(h):
        if fast and y not in want:
            continue
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for c in range(bpp):
                line[c::bpp] = bytes(accumulate(line[c::bpp], lambda a, b: (a + b) & 255))
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        prev = line
        if y in want:
            rows[y] = line
    def px(y, x):
        r = rows[y]
        return [r[x * bpp], r[x * bpp + 1], r[x * bpp + 2]]
    dark = total = lit = 0
    for y, r in rows.items():
        for x in range(w):
            p = r[x * bpp:x * bpp + 3]
            total += 1
            if max(p) < 24:
                dark += 1
            if 0.3 * h <= y < 0.7 * h and p[2] > 128:
                lit += 1
    print(json.dumps({"name": name, "center": px(h // 2, w // 2), "corner": px(0, 0),
                      "dark": dark / max(total, 1), "lit": lit}))
"""#

/// Every `frame-TTTTTTTT.png` in `directory`, in time order.
func analyzeFrames(_ directory: String) throws -> [FrameInfo] {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    p.arguments = ["-c", frameScript, directory]
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { throw Failure("frame analysis failed: \(errors)") }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
        guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let name = o["name"] as? String, let ms = Int(name.dropFirst(6).prefix(8)) else { return nil }
        return FrameInfo(ms: ms, name: name, center: o["center"] as? [Int] ?? [], corner: o["corner"] as? [Int] ?? [],
                         dark: o["dark"] as? Double ?? 1, lit: o["lit"] as? Int ?? 0)
    }
}

/// SHA-256 of `text` in hex, computed by Python's hashlib (independent of KioskContent's SHA256).
func independentSHA256(_ text: String) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    p.arguments = ["-c", "import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())", text]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Entries of a directory (names), [] when it cannot be read.
func directoryNames(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
}
