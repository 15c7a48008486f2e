// SPDX-License-Identifier: Apache-2.0
import Glibc

/// The whole program against a hostile server: a manifest of three items whose middle one
/// streams 1 GB with no `Content-Length`. The download is cut at the 50 MB cap inside
/// libcurl's write callback (the body goes to the disk cache's temporary file, never memory),
/// so the process's peak RSS stays that of showing the other two, which are shown.
extension Bench {
    static let hugeBodyLimitKiB = 64 * 1024

    func hugeBody(app: String, prefix: [String]) {
        let name = "whole program, a 1 GB item without Content-Length"
        guard let python = tool("python3") else { failRow(name, "python3 not found"); return }
        let base = scratch + "/huge-body"
        let www = base + "/www", cache = base + "/cache", state = base + "/state", frames = base + "/frames"
        for d in [base, www, cache, state, frames] { _ = mkdir(d, 0o755) }
        defer { _ = child(["rm", "-rf", base]) }
        let photos = ["colorfulcups-1920x1200.jpg", "path-1920x1200.jpg"]
        for p in photos {
            let r = child(["cp", root + "/deploy/samples/" + p, www + "/" + p])
            guard r.ok else { failRow(name, "cp \(p): " + firstLine(r.stderr)); return }
        }
        let manifest = "{\"items\":[{\"src\":\"\(photos[0])\"},{\"src\":\"huge.jpg\"},{\"src\":\"\(photos[1])\"}]}\n"
        let reference = "{\"items\":[{\"src\":\"\(photos[0])\"},{\"src\":\"\(photos[1])\"}]}\n"
        guard writeTextFile(www + "/show.json", manifest), writeTextFile(www + "/reference.json", reference) else {
            failRow(name, "cannot write show.json"); return
        }
        // Files from `www`; /huge.jpg: FF D8 FF then 1 GB in 1 MiB writes, no Content-Length.
        let serverScript = """
            import functools, http.server, sys
            class H(http.server.SimpleHTTPRequestHandler):
                def log_message(self, *a): pass
                def do_GET(self):
                    if self.path != "/huge.jpg":
                        return super().do_GET()
                    self.send_response(200)
                    self.send_header("Content-Type", "image/jpeg")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    chunk = b"\\xff\\xd8\\xff" + bytes(1024 * 1024 - 3)
                    try:
                        for _ in range(1024):
                            self.wfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    self.close_connection = True
            s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(H, directory=sys.argv[1]))
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """
        let portFile = base + "/server.port"
        guard let server = spawnBackground([python, "-c", serverScript, www], stdoutPath: portFile) else {
            failRow(name, "cannot start \(python)"); return
        }
        defer {
            kill(server, SIGTERM)
            var st: Int32 = 0
            waitpid(server, &st, 0)
        }
        var port = 0
        for _ in 0..<500 where port == 0 {
            port = Int(readTextFile(portFile).trimmingSpaces.split(separator: "\n").first ?? "") ?? 0
            if port == 0 { usleep(10_000) }
        }
        guard port != 0 else { failRow(name, "the local HTTP server did not start"); return }
        // Offscreen on the virtual clock: one round of the playlist, then the program ends. The
        // reference: the same program, the same two photos, no hostile item (fresh cache).
        func show(_ manifest: String) -> ChildRun {
            _ = child(["rm", "-rf", cache, state, frames])
            for d in [cache, state, frames] { _ = mkdir(d, 0o755) }
            return spawnChild(prefix + ["--display", "offscreen:" + frames, "--size", "1920x1080",
                                        "--manifest", "http://127.0.0.1:\(port)/" + manifest, "--cache-dir", cache,
                                        "--state-dir", state],
                              executable: app, stdoutPath: base + "/app.stdout", scratch: scratch, runner: runner)
        }
        let ref = show("reference.json")
        guard ref.ok else { failRow(name, "reference run: exit \(ref.status): " + firstLine(ref.stderr)); return }
        let r = show("show.json")
        guard r.ok else { failRow(name, "exit \(r.status): " + firstLine(r.stderr)); return }
        let events = readTextFile(base + "/app.stdout")
        let shown = Set(events.split(separator: "\n").filter { $0.contains("\"event\":\"shown\"") }.compactMap { line in
            photos.first { line.contains($0) }
        })
        let refusal = r.stderr.split(separator: "\n").first { $0.contains("huge.jpg") && $0.contains("over 50 MB") }
        let limit = Self.hugeBodyLimitKiB
        let good = r.maxRSSKiB <= limit && shown.count == photos.count && refusal != nil
        rows.append(Row(name: "peak RSS, " + name, ours: mib(r.maxRSSKiB), reference: "the same without that item",
                        referenceValue: mib(ref.maxRSSKiB),
                        ratio: ref.maxRSSKiB > 0 ? Double(r.maxRSSKiB) / Double(ref.maxRSSKiB) : nil,
                        target: "<= 64 MiB", verdict: good ? "PASS" : "MISS"))
        rows.append(Row(name: "  (item refused: \(refusal == nil ? "no" : "yes, \"over 50 MB\"");"
                            + " other items shown: \(shown.count) of \(photos.count); wall \(ms(r.wallMs)))",
                        ours: "", reference: "", referenceValue: "", ratio: nil, target: "", verdict: ""))
        if !good { failures += 1 }
        notes.append("1 GB item: `kiosk-carousel --display offscreen:DIR --size 1920x1080 --manifest"
                     + " http://127.0.0.1:PORT/show.json --cache-dir C --state-dir S` (one round on the virtual clock)"
                     + " against a local python3 server whose show.json names two deploy/samples photos and /huge.jpg,"
                     + " which streams 1 GB without Content-Length; the reference is the same run on a show.json"
                     + " without /huge.jpg; the row passes when peak RSS <= 64 MiB, the log refuses huge.jpg with"
                     + " \"over 50 MB\" and both photos get a `shown` event")
    }
}
