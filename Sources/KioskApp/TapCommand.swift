// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// Runs the `--on-tap` command for a tap (docs/security.md, "The tap command"): the program
/// and its arguments as given, no shell, in an environment of its own: ``environment(index:source:)``,
/// nothing else of the show's (no proxy password, no systemd variables). The program is looked
/// up once, at start (``locate(_:path:)``), and that file is what every tap runs. At most one
/// runs at a time: a tap while the last run (or anything it left running in its process group)
/// is still going is logged and skipped, so a stuck script cannot pile up processes.
/// ``stop()`` ends what is left when the show ends.
public final class TapCommand {
    /// The program and its arguments.
    public let arguments: [String]
    /// The file the program was found as at start; nil when it was not found (taps then run
    /// nothing, said once).
    public let executable: String?
    private var running: ChildProcess?

    /// The child's `PATH`: the system's programs only, whatever the show's own `PATH` holds.
    public static let childPath = "/usr/local/bin:/usr/bin:/bin"
    /// Variables passed on from the show's environment when set (language, time zone, home).
    public static let passedOn = ["LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_TIME", "TZ", "HOME",
                                  "USER", "LOGNAME"]

    /// Looks the program up (logged when it is not found).
    public init(arguments: [String]) {
        self.arguments = arguments
        let path = getenv("PATH").map { String(cString: $0) }
        executable = arguments.first.flatMap { Self.locate($0, path: path) }
        if executable == nil, let program = arguments.first {
            Log.warning("--on-tap program not found, taps run nothing", path: program,
                        reason: program.contains("/") ? "no such executable file"
                            : "not an executable file in the absolute folders of PATH (\(path ?? Self.childPath))")
        }
    }

    /// The file `program` names: itself when it holds a slash (made absolute against the
    /// working directory now), else the first executable regular file of that name in `path`'s
    /// absolute folders (`/usr/local/bin:/usr/bin:/bin` when unset). Empty and relative entries
    /// are skipped: execvp(3) takes them as the working directory, where anyone may have put
    /// a program of that name.
    public static func locate(_ program: String, path: String?) -> String? {
        func executableFile(_ file: String) -> Bool {
            var st = stat()
            return stat(file, &st) == 0 && st.st_mode & S_IFMT == S_IFREG && access(file, X_OK) == 0
        }
        if program.contains("/") {
            guard executableFile(program) else { return nil }
            if program.hasPrefix("/") { return program }
            var cwd = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard getcwd(&cwd, cwd.count) != nil else { return nil }
            return String(cString: cwd) + "/" + program
        }
        guard !program.isEmpty else { return nil }
        for folder in (path ?? childPath).split(separator: ":", omittingEmptySubsequences: true)
        where folder.hasPrefix("/") {
            let file = (folder.hasSuffix("/") ? String(folder) : folder + "/") + program
            if executableFile(file) { return file }
        }
        return nil
    }

    /// The child's whole environment: `PATH` (``childPath``), the variables of ``passedOn``
    /// the show has, `KIOSK_INDEX` (the playlist index) and `KIOSK_SRC` (the image's path or
    /// URL, its password hidden).
    public static func environment(index: Int, source: String) -> [String: String] {
        var env = ["PATH": childPath, "KIOSK_INDEX": String(index), "KIOSK_SRC": Log.hidingPasswords(source)]
        for name in passedOn { if let value = getenv(name) { env[name] = String(cString: value) } }
        return env
    }

    /// Starts the command for the item at `index` with `source`; returns at once.
    public func run(index: Int, source: String) {
        guard let executable else { return }
        if let last = running {
            if last.poll() == nil || last.groupIsAlive {
                Log.info("tap command still running, this tap's run skipped", detail: "\(last.program) pid \(last.pid)")
                return
            }
            if let status = last.poll(), status != 0 {
                Log.warning("tap command failed", path: last.program, reason: "exit status \(status)")
            }
        }
        do {
            running = try ChildProcess(arguments: arguments,
                                       environment: Self.environment(index: index, source: source),
                                       inheritEnvironment: false, executable: executable)
        } catch {
            running = nil
            Log.warning("tap command not started", reason: error.description)
        }
    }

    /// Reaps a finished run (called from the frame loop, so no zombie waits for the next tap).
    public func reap() { _ = running?.poll() }

    /// Ends the last run's process group (SIGTERM) when the show stops.
    public func stop() { running?.terminateGroup() }
}
