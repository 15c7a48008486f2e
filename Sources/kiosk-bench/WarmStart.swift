// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// The warm-start figure (docs/benchmarks.md, goal 300 ms): start to first frame with a warm
/// cache and no network, 1920x1080.
///
/// 1. A local `python3 -m http.server`-like server (a loopback port it picks) serves a manifest
///    naming two deploy/samples photos (relative URLs); one real run of kiosk-carousel against
///    it (offscreen, virtual clock, one round) fills the disk cache and stores the manifest.
/// 2. The server is stopped; kiosk-carousel is started `runs` times with
///    `--clock real --manifest http://127.0.0.1:1/show.json` (nothing listens on port 1: no
///    network) on that cache and state directory; the time from spawn to its first `shown`
///    line on stdout (the event is written once the first frame has been presented) is taken,
///    then the run is ended with SIGTERM.
extension Bench {
    static let warmStartTargetMs = 300.0

    func warmStart(app: String, prefix: [String], runs: Int) {
        let name = "start to first frame, warm cache, no network"
        guard let python = tool("python3") else { failRow(name, "python3 not found"); return }
        let base = scratch + "/warm-start"
        let www = base + "/www", cache = base + "/cache", state = base + "/state", frames = base + "/frames"
        for d in [base, www, cache, state, frames] { _ = mkdir(d, 0o755) }
        defer { _ = child(["rm", "-rf", base]) }
        let photos = ["colorfulcups-1920x1200.jpg", "path-1920x1200.jpg"]
        for p in photos {
            let r = child(["cp", root + "/deploy/samples/" + p, www + "/" + p])
            guard r.ok else { failRow(name, "cp \(p): " + firstLine(r.stderr)); return }
        }
        let manifest = "{\"items\":[" + photos.map { "{\"src\":\"\($0)\"}" }.joined(separator: ",") + "]}\n"
        guard writeTextFile(www + "/show.json", manifest) else { failRow(name, "cannot write show.json"); return }

        // 1. Warm the cache and the state directory against the local server.
        let serverScript = """
            import functools, http.server, sys
            class H(http.server.SimpleHTTPRequestHandler):
                def log_message(self, *a): pass
            s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(H, directory=sys.argv[1]))
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """
        let portFile = base + "/server.port"
        guard let server = spawnBackground([python, "-c", serverScript, www], stdoutPath: portFile) else {
            failRow(name, "cannot start \(python)"); return
        }
        var port = 0
        for _ in 0..<500 where port == 0 {
            port = Int(readTextFile(portFile).trimmingSpaces.split(separator: "\n").first ?? "") ?? 0
            if port == 0 { usleep(10_000) }
        }
        let warmArgs = ["--display", "offscreen:" + frames, "--size", "1920x1080",
                        "--manifest", "http://127.0.0.1:\(port)/show.json", "--cache-dir", cache, "--state-dir", state]
        let warm = port == 0 ? nil : spawnChild(prefix + warmArgs, executable: app, scratch: scratch)
        kill(server, SIGTERM)
        var st: Int32 = 0
        waitpid(server, &st, 0)
        guard let warm, warm.ok else {
            failRow(name, port == 0 ? "the local HTTP server did not start"
                        : "warm-up run failed: " + firstLine(warm?.stderr ?? ""))
            return
        }
        let cached = countFiles(cache, suffix: "") - 2  // minus . and ..
        guard cached == photos.count, fileExists(state + "/manifest.json") else {
            failRow(name, "warm-up left \(cached) cache entries (expected \(photos.count)) or no stored manifest")
            return
        }

        // 2. Timed runs, no network. With `--fade 0` the `shown` line follows the first frame
        //    that has the photo (a cut from the placeholder); with the default 500 ms fade it
        //    follows the end of the photo's fade-in from the placeholder.
        let args = ["--display", "offscreen:" + frames, "--size", "1920x1080", "--clock", "real", "--run-for", "5",
                    "--manifest", "http://127.0.0.1:1/show.json", "--cache-dir", cache, "--state-dir", state]
        for (fade, target) in [(["--fade", "0"], true), ([], false)] {
            var times: [Double] = []
            for _ in 0..<max(1, runs) {
                switch timeToFirstShown(prefix + args + fade, executable: app, timeoutMs: 10_000) {
                case .success(let ms): times.append(ms)
                case .failure(let why): failRow(name, why.text); return
                }
            }
            let m = median(times)
            let label = target ? name + ", --fade 0, median" : "  same, default --fade 500 (shown after the fade-in)"
            compare(label, ours: m, ms(m), reference: "start-up target", Self.warmStartTargetMs,
                    ms(Self.warmStartTargetMs), max: target ? 1.0 : nil, targetText: "<= 300 ms")
            rows.append(Row(name: "  (runs: " + times.map { fixed($0, 0) }.joined(separator: ", ") + " ms)", ours: "",
                            reference: "", referenceValue: "", ratio: nil, target: "", verdict: ""))
        }
        notes.append("warm start: spawn to the first `shown` line of `kiosk-carousel --display offscreen:DIR --size"
                     + " 1920x1080 --clock real --run-for 5 --manifest http://127.0.0.1:1/show.json --cache-dir C"
                     + " --state-dir S --fade 0` (C and S warmed by one run against a local python3 http.server"
                     + " serving two deploy/samples photos; port 1 refuses: no network), ended with SIGTERM after that"
                     + " line. The photo decoded within the start grace (1 s) is the first frame presented (no"
                     + " placeholder, no fade-in), with or without --fade")
    }

    struct SpawnFailure: Error { var text: String }

    /// Spawns `arguments` with stdout on a pipe; returns the milliseconds from spawn to the first
    /// line containing `"event":"shown"`, then ends the child with SIGTERM and reaps it.
    func timeToFirstShown(_ arguments: [String], executable: String,
                          timeoutMs: Double) -> Result<Double, SpawnFailure> {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return .failure(SpawnFailure(text: "pipe failed")) }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        let errPath = scratch + "/warm-start.stderr"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addclose(&actions, fds[1])
        var cArgs: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArgs.append(nil)
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let start = nowMs()
        let rc = posix_spawnp(&pid, executable, &actions, nil, cArgs, environ)
        close(fds[1])
        defer { close(fds[0]) }
        guard rc == 0 else {
            return .failure(SpawnFailure(text: "cannot start \(executable): \(SystemError.reason(errno: rc))"))
        }
        var seen: Double?
        var text = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let marker = Array("\"event\":\"shown\"".utf8)
        while seen == nil {
            let left = timeoutMs - (nowMs() - start)
            if left <= 0 { break }
            var set = PollSet(readable: [fds[0]])
            if ((try? set.wait(milliseconds: Int32(left))) ?? 0) == 0 { continue }
            let n = read(fds[0], &buffer, buffer.count)
            if n <= 0 { break }  // the child ended without a shown event
            text += buffer[0..<n]
            if text.count >= marker.count,
               (0...(text.count - marker.count)).contains(where: {
                   text[$0..<($0 + marker.count)].elementsEqual(marker)
               }) {
                seen = nowMs() - start
            }
        }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        _ = try? syscall("waitpid") { waitpid(pid, &status, 0) }
        guard let seen else {
            return .failure(SpawnFailure(text: "no `shown` line within \(Int(timeoutMs)) ms: "
                                             + firstLine(readTextFile(errPath))))
        }
        return .success(seen)
    }

    /// Starts `arguments` without waiting (stdout to `stdoutPath`, stderr to /dev/null); its pid.
    func spawnBackground(_ arguments: [String], stdoutPath: String) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cArgs: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArgs.append(nil)
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        return posix_spawnp(&pid, arguments[0], &actions, nil, cArgs, environ) == 0 ? pid : nil
    }
}

/// Writes `text` to `path` (replacing it); false on failure.
func writeTextFile(_ path: String, _ text: String) -> Bool {
    guard let f = fopen(path, "wb") else { return false }
    let ok = fputs(text, f) >= 0
    return fclose(f) == 0 && ok
}
