// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import KioskCore
import KioskImaging
import KioskSystem

/// The control socket's `screenshot` (docs/security.md, "Screenshots"): the one folder a
/// screenshot may be written in, its caps, and the PNG encoding off the frame loop.
///
/// The folder (`--screenshot-dir`, by default `screenshots` in the runtime directory) is opened
/// once at start, every step of its path with `O_NOFOLLOW` (``openFolder(_:)``), made if
/// missing (mode 0750 before the umask), and held open: every file is then made and renamed
/// relative to that descriptor (`openat(2)` with `O_CREAT | O_EXCL | O_NOFOLLOW`, `renameat(2)`),
/// so swapping the folder, or anything above it, for a symbolic link later sends nothing
/// elsewhere. A request names a file in it (`shot.png`, or the folder's path and the name);
/// nothing else is written, and the folder may not be a SOURCE folder, nor inside one, nor the
/// state or cache directory. Caps (``Limits``): a number of files and of bytes (the oldest
/// screenshots are deleted to make room; one larger than the byte cap alone is refused) and of
/// requests a minute. Files get mode 0666 less the umask (0640 under the unit's `UMask=0027`).
///
/// The frame loop reads the screen back (``Display/screenImage()``, a copy of the scanned-out
/// buffer: a few milliseconds) and hands the copy over; the PNG is encoded and written here on
/// a queue of its own (about 55 ms for a 1920x1080 photo at zlib level 1), to a hidden
/// temporary file renamed over the name, and the reply comes back through ``finished``, whose
/// descriptor wakes the loop. Meanwhile the loop goes on drawing; later requests wait
/// (``held``) so that replies keep the order of the requests.
public final class ScreenshotWriter: @unchecked Sendable {
    /// The caps of the screenshot folder (`--screenshot-limit FILES,MB,PER_MINUTE`).
    public struct Limits: Equatable, Sendable {
        /// Most screenshots kept in the folder; the oldest go first. Default 10.
        public var files = 10
        /// Most bytes they take together; default 32 MB (the folder is in RAM under the unit).
        public var bytes = 32_000_000
        /// Most screenshots asked for in any minute; more are refused. Default 30.
        public var perMinute = 30
        public init() {}

        /// `FILES,MB,PER_MINUTE`, each a whole number (1...10000, 1...100000 MB, 1...10000).
        public static func parse(_ text: String) -> Limits? {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 3, let files = parts[0], let mb = parts[1], let rate = parts[2],
                  (1...10_000).contains(files), (1...100_000).contains(mb), (1...10_000).contains(rate) else {
                return nil
            }
            var limits = Limits()
            limits.files = files
            limits.bytes = mb * 1_000_000
            limits.perMinute = rate
            return limits
        }

        public var description: String { "\(files) files, \(bytes / 1_000_000) MB, \(perMinute) a minute" }
    }

    /// Why the folder cannot be used, or a screenshot was not written: the log line's reason,
    /// or the reply's message.
    public struct ScreenshotError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The folder's path, its parent resolved at start (realpath(3)).
    public let folder: String
    public let limits: Limits
    /// The folder, open (`O_DIRECTORY`); every file is made relative to it.
    private let directory: Int32
    /// A screenshot written (or not): the request and its reply.
    struct Done: Sendable {
        let request: ControlRequest
        let result: Result<JSONValue?, ControlFailure>
    }
    /// Finished screenshots for the frame loop.
    let finished: Mailbox<Done>
    private let queue = DispatchQueue(label: "kiosk-carousel screenshot")
    /// The frame loop's own state (touched on its thread only): the request being written,
    /// the requests received after it, answered in order once it is done, and when the
    /// requests of the last minute were accepted (monotonic milliseconds).
    var inFlight: ControlRequest?
    var held: [ControlRequest] = []
    private var accepted: [Double] = []

    /// The prefix of the temporary files (hidden; left ones are removed at start).
    static let temporaryPrefix = ".kiosk-screenshot-"

    /// Opens (making it if missing) the folder `path` (absolute), checks it is this user's and
    /// none of `sourceFolders` (the show's SOURCE folders) nor inside one, nor one of
    /// `kioskFolders` (state and cache directories), removes temporary files a killed run left
    /// and brings it within `limits`.
    /// - Throws: ``ScreenshotError`` saying what is wrong.
    public init(folder path: String, limits: Limits = Limits(), sourceFolders: [String] = [],
                kioskFolders: [String] = []) throws(ScreenshotError) {
        let (fd, resolved) = try Self.openFolder(path)
        func refuse(_ why: String) -> ScreenshotError {
            close(fd)
            return ScreenshotError(description: why)
        }
        for source in sourceFolders {
            guard let real = Self.realPath(source) else { continue }
            if resolved == real || resolved.hasPrefix(real == "/" ? "/" : real + "/") {
                throw refuse("\(resolved) is the SOURCE folder \(source) or inside it: "
                             + "a screenshot would replace what the show plays")
            }
        }
        for own in kioskFolders where Self.realPath(own) == resolved {
            throw refuse("\(resolved) is the kiosk's own folder \(own)")
        }
        do {
            finished = try Mailbox()
        } catch {
            throw refuse(error.description)
        }
        folder = resolved
        self.limits = limits
        directory = fd
        for name in listing() where name.hasPrefix(Self.temporaryPrefix) { unlinkat(directory, name, 0) }
        makeRoom(bytes: 0, replacing: nil, adding: 0)
    }

    deinit { close(directory) }

    /// The default folder: `screenshots` in the runtime directory (systemd's
    /// `$RUNTIME_DIRECTORY`, the first when it lists several; else the folder holding the
    /// control socket at `controlPath`); nil with neither.
    public static func defaultFolder(runtimeDirectory: String?, controlPath: String?) -> String? {
        if let runtime = runtimeDirectory?.split(separator: ":").first { return String(runtime) + "/screenshots" }
        guard let controlPath else { return nil }
        let slash = controlPath.lastIndex(of: "/")
        let parent = slash.map { $0 == controlPath.startIndex ? "" : String(controlPath[..<$0]) } ?? "."
        return parent + "/screenshots"
    }

    /// The writer the settings ask for (`--screenshot-dir`, `--screenshot-limit`), or nil
    /// when screenshots are off or the folder cannot be used (logged, with why).
    static func forShow(_ settings: Settings, runtimeDirectory: String?) -> ScreenshotWriter? {
        guard settings.screenshots else { return nil }
        guard let path = settings.screenshotDirectory
                ?? defaultFolder(runtimeDirectory: runtimeDirectory, controlPath: settings.controlPath) else {
            return nil
        }
        let sources = settings.sources.filter { source in
            var st = stat()
            return !source.hasPrefix("http:") && !source.hasPrefix("https:") && stat(source, &st) == 0
                && st.st_mode & S_IFMT == S_IFDIR
        }
        do {
            return try ScreenshotWriter(folder: path, limits: settings.screenshotLimits, sourceFolders: sources,
                                        kioskFolders: [settings.stateDirectory, settings.cacheDirectory])
        } catch {
            Log.warning("screenshots off", path: path, reason: error.description)
            return nil
        }
    }

    /// Opens the folder at `path` relative to `/`, one step at a time with `O_NOFOLLOW` (its
    /// parent resolved with realpath(3) first, once, so a configured path through a link such
    /// as /var/run works), making the last step if missing; it must be a folder owned by this
    /// user, and loses any group or other write permission. Returns the descriptor and the path.
    static func openFolder(_ path: String) throws(ScreenshotError) -> (fd: Int32, path: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard trimmed.hasPrefix("/"), trimmed.count > 1, let slash = trimmed.lastIndex(of: "/") else {
            throw ScreenshotError(description: "expected an absolute path of a folder, got '\(path)'")
        }
        let name = String(trimmed[trimmed.index(after: slash)...])
        guard name != ".", name != ".." else {
            throw ScreenshotError(description: "'\(path)' does not end in a folder name")
        }
        let parentPath = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        guard let parent = realPath(parentPath) else {
            throw ScreenshotError(description: "its parent \(parentPath) cannot be resolved: \(describe(errno))")
        }
        func failure(_ what: String, _ code: Int32) -> ScreenshotError {
            ScreenshotError(description: "\(what): \(describe(code))")
        }
        let flags = O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC
        var fd = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open /", errno) }
        var walked = ""
        for step in parent.split(separator: "/") {
            walked += "/" + step
            let next = openat(fd, String(step), flags)
            let code = errno
            close(fd)
            guard next >= 0 else { throw failure("open \(walked) (no symbolic link is followed)", code) }
            fd = next
        }
        let resolved = (parent == "/" ? "" : parent) + "/" + name
        if mkdirat(fd, name, 0o750) != 0, errno != EEXIST {
            let code = errno
            close(fd)
            throw failure("mkdir \(resolved)", code)
        }
        let folder = openat(fd, name, flags)
        let code = errno
        close(fd)
        guard folder >= 0 else {
            throw failure("open \(resolved)"
                              + (code == ELOOP || code == ENOTDIR ? " (a symbolic link or not a folder)" : ""), code)
        }
        var st = stat()
        guard fstat(folder, &st) == 0 else { let code = errno; close(folder); throw failure("fstat \(resolved)", code) }
        guard st.st_uid == geteuid() else {
            close(folder)
            throw ScreenshotError(description: "\(resolved) belongs to uid \(st.st_uid), "
                                      + "not to this user (uid \(geteuid()))")
        }
        if st.st_mode & 0o022 != 0, fchmod(folder, st.st_mode & 0o7755) != 0 {
            let code = errno
            close(folder)
            throw failure("chmod go-w \(resolved)", code)
        }
        return (folder, resolved)
    }

    /// Where `path` is written: a file name (`shot.png`), or ``folder`` and a file name, the
    /// name ending in `.png` (any case), not hidden, at most 200 bytes, without control
    /// characters; within ``Limits/perMinute``. Returns the file's path in the folder. The
    /// failure's message says what is wrong: `screenshot: /etc/x.png: screenshots are written
    /// only in …`. Called on the frame loop.
    func resolve(_ path: String) -> Result<String, ControlFailure> {
        func fail(_ message: String) -> Result<String, ControlFailure> {
            .failure(ControlFailure(id: nil, message: "screenshot: " + message))
        }
        var name = path
        if let slash = path.lastIndex(of: "/") {
            var parent = String(path[..<slash])
            while parent.count > 1, parent.hasSuffix("/") { parent.removeLast() }
            guard parent == folder || (parent.isEmpty && folder == "/") else {
                return fail("\(path): screenshots are written only in \(folder) (--screenshot-dir): give a file name, "
                            + "or a path in that folder")
            }
            name = String(path[path.index(after: slash)...])
        }
        guard !name.isEmpty, name != ".", name != ".." else { return fail("\(path): expected a file name at the end") }
        guard !name.hasPrefix(".") else { return fail("\(path): the file name must not start with '.'") }
        guard name.lowercased().hasSuffix(".png"), name.count > 4 else {
            return fail("\(path): the file name must end in .png")
        }
        // The temporary file beside it takes the name and a prefix: NAME_MAX (255) must hold both.
        guard name.utf8.count <= 200 else { return fail("\(path): the file name is longer than 200 bytes") }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return fail("the file name holds a control character")
        }
        let now = Self.monotonicMilliseconds()
        accepted.removeAll { now - $0 >= 60_000 }
        if accepted.count >= limits.perMinute {
            let wait = Int(((accepted[0] + 60_000 - now) / 1000).rounded(.up))
            return fail("too many: at most \(limits.perMinute) a minute (--screenshot-limit); the next in \(wait) s")
        }
        accepted.append(now)
        return .success((folder == "/" ? "" : folder) + "/" + name)
    }

    /// Encodes `image` as PNG to `path` (from ``resolve(_:)``) on the queue, then posts the
    /// reply for `request` to ``finished``: `data` is `reply` plus `bytes`, the file's size.
    /// Takes ownership of `image`.
    func write(_ image: Bitmap, to path: String, reply: [String: JSONValue], for request: ControlRequest,
               readBackMilliseconds: Double) {
        let name = String(path[path.index(after: path.lastIndex(of: "/")!)...])
        queue.async { [self] in
            let start = Self.monotonicMilliseconds()
            let result: Result<JSONValue?, ControlFailure>
            switch writeFile(image, name: name, path: path) {
            case .success(let bytes):
                var data = reply
                data["bytes"] = .int(Int64(bytes))
                result = .success(.object(data))
                let encode = Self.monotonicMilliseconds() - start
                Log.info("screenshot written", path: path,
                         detail: "\(image.width)x\(image.height), "
                             + "read back in \(Self.format(readBackMilliseconds)) ms, PNG in \(Self.format(encode)) ms")
            case .failure(let error):
                result = .failure(ControlFailure(id: nil, message: "screenshot: \(error)"))
            }
            finished.post(Done(request: request, result: result))
        }
    }

    /// Waits for a screenshot being written (the program's exit: no write runs on into it).
    public func stop() { queue.sync {} }

    /// The PNG into a new hidden file in the folder, then renamed over `name` once the oldest
    /// screenshots made room for it. Returns its size, or why it was not written.
    private func writeFile(_ image: Bitmap, name: String, path: String) -> Result<Int, ScreenshotError> {
        func failure(_ text: String) -> Result<Int, ScreenshotError> { .failure(ScreenshotError(description: text)) }
        var random = SystemRandomNumberGenerator()
        let temporary = Self.temporaryPrefix + String(random.next(), radix: 16) + ".png"
        // 0666 less the umask: the unit's UMask=0027 makes it 0640.
        let fd = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard fd >= 0 else { return failure("cannot create a file in \(folder): \(Self.describe(errno))") }
        do throws(ImageError) {
            try PNGWriter.write(image, toDescriptor: fd, name: path)
        } catch {
            unlinkat(directory, temporary, 0)
            return failure(error.reason)
        }
        var st = stat()
        guard fstatat(directory, temporary, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
            let code = errno
            unlinkat(directory, temporary, 0)
            return failure("fstatat \(folder)/\(temporary): \(Self.describe(code))")
        }
        let size = Int(st.st_size)
        guard size <= limits.bytes else {
            unlinkat(directory, temporary, 0)
            return failure("the PNG is \(size) bytes, more than the folder's cap of \(limits.bytes) "
                           + "(--screenshot-limit)")
        }
        if fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) == 0, st.st_mode & S_IFMT == S_IFDIR {
            unlinkat(directory, temporary, 0)
            return failure("\(path) exists and is not a regular file")
        }
        makeRoom(bytes: size, replacing: name, adding: 1)
        guard renameat(directory, temporary, directory, name) == 0 else {
            let code = errno
            unlinkat(directory, temporary, 0)
            return failure("rename to \(path): \(Self.describe(code))")
        }
        return .success(size)
    }

    /// Deletes the oldest screenshots (`*.png` files of the folder, by modification time) until
    /// `adding` more files of `bytes` in all fit the caps; `replacing` (the name about to be
    /// written) does not count.
    private func makeRoom(bytes: Int, replacing: String?, adding: Int) {
        var files: [(name: String, bytes: Int, modified: Int64)] = []
        for name in listing() where !name.hasPrefix(".") && name.lowercased().hasSuffix(".png") && name != replacing {
            var st = stat()
            guard fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) == 0, st.st_mode & S_IFMT == S_IFREG else {
                continue
            }
            files.append((name, Int(st.st_size), Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)))
        }
        files.sort { ($0.modified, $0.name) < ($1.modified, $1.name) }
        var count = files.count, total = files.reduce(0) { $0 + $1.bytes }
        for file in files {
            guard count + adding > limits.files || total + bytes > limits.bytes else { break }
            if unlinkat(directory, file.name, 0) == 0 {
                count -= 1
                total -= file.bytes
                Log.info("old screenshot removed", path: folder + "/" + file.name,
                         detail: "the folder's caps: \(limits.description)")
            }
        }
    }

    /// The names in the folder (through its descriptor).
    private func listing() -> [String] {
        let copy = dup(directory)
        guard copy >= 0, let dir = fdopendir(copy) else { return [] }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
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

    private static func describe(_ code: Int32) -> String { "\(String(cString: strerror(code))) (errno \(code))" }

    private static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}
