// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import KioskCore
import KioskImaging
import KioskSystem

/// The control socket's `screenshot` (docs/control-socket.md): where a screenshot may go, and
/// its PNG encoding off the frame loop.
///
/// The frame loop reads the screen back (``Display/screenImage()``, a copy of the scanned-out
/// buffer: a few milliseconds) and hands the copy over; the PNG is encoded and written here on
/// a queue of its own (about 55 ms for a 1920x1080 photo at zlib level 1), atomically (a
/// temporary file in the same directory, renamed over the path), and the reply comes back
/// through ``finished``, whose descriptor wakes the loop. Meanwhile the loop goes on drawing;
/// later requests wait (``held``) so that replies keep the order of the requests.
public final class ScreenshotWriter: @unchecked Sendable {
    /// The directories a screenshot may be written in, or below: the runtime directory and the
    /// state directory (resolved with realpath(3) at each request, so they may appear later).
    public let directories: [String]
    /// A screenshot written (or not): the request and its reply.
    struct Done: Sendable {
        let request: ControlRequest
        let result: Result<JSONValue?, ControlFailure>
    }
    /// Finished screenshots for the frame loop.
    let finished: Mailbox<Done>
    private let queue = DispatchQueue(label: "kiosk-carousel screenshot")
    /// The frame loop's own state (touched on its thread only): the request being written,
    /// and the requests received after it, answered in order once it is done.
    var inFlight: ControlRequest?
    var held: [ControlRequest] = []

    /// - Throws: ``SystemError`` when the mailbox's eventfd cannot be made.
    public init(directories: [String]) throws(SystemError) {
        self.directories = directories
        finished = try Mailbox()
    }

    /// The runtime directory (systemd's `$RUNTIME_DIRECTORY`, the first when it lists several;
    /// else the folder holding the control socket at `controlPath`) and `stateDirectory`.
    public static func directories(runtimeDirectory: String?, controlPath: String?, stateDirectory: String) -> [String] {
        var dirs: [String] = []
        if let runtime = runtimeDirectory?.split(separator: ":").first {
            dirs.append(String(runtime))
        } else if let controlPath {
            let slash = controlPath.lastIndex(of: "/")
            dirs.append(slash.map { $0 == controlPath.startIndex ? "/" : String(controlPath[..<$0]) } ?? ".")
        }
        dirs.append(stateDirectory)
        return dirs
    }

    /// Where `path` may be written: an absolute path to a `.png` file whose directory, with every
    /// symbolic link and `..` resolved (realpath(3)), is one of ``directories`` or below one, and
    /// which is not something other than a regular file already. Returns the resolved path.
    /// The failure's message says what is wrong: `screenshot: /etc/x.png is outside …`.
    func resolve(_ path: String) -> Result<String, ControlFailure> {
        func fail(_ message: String) -> Result<String, ControlFailure> {
            .failure(ControlFailure(id: nil, message: "screenshot: " + message))
        }
        let allowed = directories.map { realPath($0) ?? $0 }
        let where_ = "it must be inside \(allowed.joined(separator: " or "))"
        guard path.hasPrefix("/") else { return fail("\(path): expected an absolute path; \(where_)") }
        guard let slash = path.lastIndex(of: "/") else { return fail("\(path): no file name") }
        let name = String(path[path.index(after: slash)...])
        guard !name.isEmpty, name != ".", name != ".." else { return fail("\(path): expected a file name at the end") }
        // Only .png names: the kiosk's own files in the state directory (the stored manifest,
        // the disk cache's entries) can never be replaced by a screenshot.
        guard name.lowercased().hasSuffix(".png"), name.count > 4 else {
            return fail("\(path): the file name must end in .png")
        }
        // The temporary file beside it takes the name and a suffix: NAME_MAX (255) must hold both.
        guard name.utf8.count <= 200 else { return fail("\(path): the file name is longer than 200 bytes") }
        let parent = slash == path.startIndex ? "/" : String(path[..<slash])
        let real: String
        do { real = try resolvePath(parent) } catch {
            let reason = SystemError.describe(errno: error.errno)
            return fail("\(path): its directory \(parent) cannot be resolved: \(reason)")
        }
        guard allowed.contains(where: { real == $0 || real.hasPrefix($0 == "/" ? "/" : $0 + "/") }) else {
            return fail("\(path) is outside the directories a screenshot may be written to (\(real)); \(where_)")
        }
        let resolved = (real == "/" ? "" : real) + "/" + name
        var st = stat()
        if lstat(resolved, &st) == 0, st.st_mode & S_IFMT != S_IFREG {
            return fail("\(resolved) exists and is not a regular file")
        }
        return .success(resolved)
    }

    /// Encodes `image` as PNG to `path` (from ``resolve(_:)``) on the queue, then posts the
    /// reply for `request` to ``finished``: `data` is `reply` plus `bytes`, the file's size.
    /// Takes ownership of `image`.
    func write(_ image: Bitmap, to path: String, reply: [String: JSONValue], for request: ControlRequest, readBackMilliseconds: Double) {
        queue.async { [finished] in
            let start = Self.monotonicMilliseconds()
            let result: Result<JSONValue?, ControlFailure>
            do throws(ImageError) {
                try PNGWriter.write(image, to: path)
                var st = stat()
                var data = reply
                data["bytes"] = .int(stat(path, &st) == 0 ? Int64(st.st_size) : 0)
                result = .success(.object(data))
                let encode = Self.monotonicMilliseconds() - start
                Log.info("screenshot written", path: path,
                         detail: "\(image.width)x\(image.height), read back in \(Self.format(readBackMilliseconds)) ms, PNG in \(Self.format(encode)) ms")
            } catch {
                result = .failure(ControlFailure(id: nil, message: "screenshot: \(error.reason)"))
            }
            finished.post(Done(request: request, result: result))
        }
    }

    static func monotonicMilliseconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
    }

    static func format(_ ms: Double) -> String {
        let tenths = Int((ms * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}
