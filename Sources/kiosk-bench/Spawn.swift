// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// What one child process did: wall time of the whole process (spawn to reaped), its peak
/// resident set (`ru_maxrss` from `wait4`), its exit status and what it wrote.
struct ChildRun {
    var wallMs: Double
    /// Peak RSS in KiB (Linux `ru_maxrss` unit).
    var maxRSSKiB: Int
    /// Exit code, or 128 + signal number when it was killed.
    var status: Int32
    /// Minor page faults (`ru_minflt`).
    var minorFaults = 0
    /// CPU time of all its threads, user and system (`ru_utime` + `ru_stime`), in milliseconds.
    var cpuMs = 0.0
    var stdout: String
    var stderr: String

    var ok: Bool { status == 0 }
}

/// Milliseconds on the monotonic clock.
func nowMs() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
}

/// Runs `arguments` (`arguments[0]` found through PATH unless it contains a slash) as a child
/// with `posix_spawnp`, stdin from /dev/null, stdout to `stdoutPath` (a scratch file when nil,
/// read back into ``ChildRun/stdout``) and stderr to a scratch file; waits with `wait4`.
///
/// Note on `ru_maxrss`: glibc's posix_spawn starts the child with CLONE_VM | CLONE_VFORK, so at
/// `execve` the kernel folds the *parent's* peak RSS into the child's `ru_maxrss`. So this
/// process does no heavy work itself, and with `runner` (reference/rusage_runner.c, a ~1 MiB C
/// program) the child is started from there instead, which brings the floor down from this
/// process's ~10 MiB to ~1 MiB; the floor is shown in the table header (a spawned `/bin/true`).
func spawnChild(_ arguments: [String], executable: String? = nil, stdoutPath: String? = nil,
                scratch: String, runner: String? = nil) -> ChildRun {
    if let runner {
        // Through the small C launcher: it spawns the program, and reports wall time, peak RSS
        // and status in a file.
        let report = scratch + "/child.report"
        var argv = arguments
        if let executable { argv[0] = executable }
        var r = spawnChild([runner, report] + argv, stdoutPath: stdoutPath, scratch: scratch)
        let f = readTextFile(report).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard r.ok, f.count == 5, let wall = Double(f[0]), let rss = Int(f[1]), let status = Int32(f[2]),
              let faults = Int(f[3]), let cpu = Double(f[4]) else {
            r.status = r.ok ? 70 : r.status
            r.stderr = "rusage_runner failed: " + r.stderr
            return r
        }
        r.wallMs = wall
        r.maxRSSKiB = rss
        r.status = status
        r.minorFaults = faults
        r.cpuMs = cpu
        return r
    }
    let outPath = stdoutPath ?? scratch + "/child.stdout"
    let errPath = scratch + "/child.stderr"
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

    var cArgs: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
    cArgs.append(nil)
    defer { for p in cArgs { free(p) } }

    var pid: pid_t = 0
    let start = nowMs()
    let rc = posix_spawnp(&pid, executable ?? arguments[0], &actions, nil, cArgs, environ)
    guard rc == 0 else {
        return ChildRun(wallMs: 0, maxRSSKiB: 0, status: 127, stdout: "",
                        stderr: "cannot start \(executable ?? arguments[0]): \(SystemError.reason(errno: rc))")
    }
    var status: Int32 = 0
    var usage = rusage()
    _ = try? syscall("wait4") { wait4(pid, &status, 0, &usage) }
    let wall = nowMs() - start
    let signalled = status & 0x7F
    let code: Int32 = signalled == 0 ? (status >> 8) & 0xFF : 128 + signalled
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3
    return ChildRun(wallMs: wall, maxRSSKiB: Int(usage.ru_maxrss), status: code, minorFaults: Int(usage.ru_minflt),
                    cpuMs: cpu,
                    stdout: stdoutPath == nil ? readTextFile(outPath) : "", stderr: readTextFile(errPath))
}

/// The whole of a (small) text file, or "" when it cannot be read.
func readTextFile(_ path: String) -> String {
    guard let f = fopen(path, "rb") else { return "" }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n <= 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The first bytes of a file (for reading JPEG headers).
func readPrefix(_ path: String, count: Int) -> [UInt8] {
    guard let f = fopen(path, "rb") else { return [] }
    defer { fclose(f) }
    var buffer = [UInt8](repeating: 0, count: count)
    let n = fread(&buffer, 1, count, f)
    return Array(buffer[0..<max(0, n)])
}

func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

/// Absolute path of this executable.
func selfExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return CommandLine.arguments[0] }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func dirname(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// Searches PATH for `name`.
func which(_ name: String) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    for dir in path.split(separator: ":") where isExecutable("\(dir)/\(name)") {
        return "\(dir)/\(name)"
    }
    return nil
}

// MARK: - Small statistics and formatting (no Foundation)

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// `x` with `decimals` digits after the point.
func fixed(_ x: Double, _ decimals: Int) -> String {
    guard x.isFinite else { return "n/a" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let negative = x < 0
    let v = (abs(x) * scale).rounded()
    var digits = String(UInt64(v))
    if decimals > 0 {
        while digits.count <= decimals { digits = "0" + digits }
        digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -decimals))
    }
    return negative && v != 0 ? "-" + digits : digits
}

func mib(_ kib: Int) -> String { fixed(Double(kib) / 1024, 1) + " MiB" }

func ms(_ x: Double) -> String {
    x >= 100 ? fixed(x, 0) + " ms" : x >= 10 ? fixed(x, 1) + " ms" : fixed(x, 2) + " ms"
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

func padLeft(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}
