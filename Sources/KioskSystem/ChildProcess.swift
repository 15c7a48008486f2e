// SPDX-License-Identifier: Apache-2.0
import Glibc

/// A program started without a shell (`posix_spawnp`): its arguments go to `execve` as they
/// are, so nothing in them (an image path with `;` or `$(…)`, say) is ever interpreted.
///
/// Used for `--on-tap` (kiosk-carousel(1)). The child gets stdin from /dev/null and stdout joined
/// to the parent's stderr (stdout carries the event stream, which a child must not write into);
/// stderr is inherited. Signal dispositions and mask are reset to the defaults in the child.
/// The child leads a process group of its own, so everything it starts (a script's background
/// jobs) can be told apart from the show and ended with it (``terminateGroup()``).
public final class ChildProcess {
    /// The child's process id.
    public let pid: pid_t
    /// The program as given (`arguments[0]`), for log lines.
    public let program: String
    private var status: Int32?

    /// Starts `executable` (a path), or else `arguments[0]` (found through PATH unless it
    /// contains a slash), with `arguments` as its argv and the parent's environment plus
    /// `environment` (which overrides), or, with `inheritEnvironment` false, `environment` alone.
    /// Throws ``SystemError`` (`posix_spawn PROGRAM: No such file or directory (errno 2)`).
    public init(arguments: [String], environment: [String: String] = [:], inheritEnvironment: Bool = true,
                executable: String? = nil) throws(SystemError) {
        precondition(!arguments.isEmpty, "ChildProcess: no program")
        program = arguments[0]
        var env: [String] = []
        var index = 0
        while inheritEnvironment, let entry = environ[index] {
            let text = String(cString: entry)
            let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
            if environment[name] == nil { env.append(text) }
            index += 1
        }
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) { env.append("\(name)=\(value)") }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t(), empty = sigset_t()
        sigfillset(&defaults)
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes,
                                 Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) }; for p in envp { free(p) } }
        var child: pid_t = 0
        let rc = executable.map { posix_spawn(&child, $0, &actions, &attributes, argv, envp) }
            ?? posix_spawnp(&child, arguments[0], &actions, &attributes, argv, envp)
        guard rc == 0 else { throw SystemError(operation: "posix_spawn", path: executable ?? arguments[0], errno: rc) }
        pid = child
    }

    /// Whether any process of the child's group is still running (the child, or what it left
    /// running in the background). Read from `/proc/PID/stat` (proc(5): the state and process
    /// group fields), so zombies waiting for a reaper do not count.
    public var groupIsAlive: Bool {
        _ = poll()
        guard kill(-pid, 0) == 0 else { return false }
        guard let entries = try? listDirectory("/proc") else { return true }
        for entry in entries {
            guard let name = entry.name, let process = Int32(name),
                  let stat = try? readRegularFile("/proc/\(process)/stat", limit: 4096),
                  let close = stat.lastIndex(of: UInt8(ascii: ")")) else { continue }
            // After "pid (comm)": state ppid pgrp ...
            let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
            guard fields.count >= 3, let group = Int32(String(decoding: fields[2], as: UTF8.self)) else { continue }
            let state = fields[0].first ?? 0
            if group == pid && state != UInt8(ascii: "Z") && state != UInt8(ascii: "X") { return true }
        }
        return false
    }

    /// Sends SIGTERM to the child's whole process group (nothing when it is gone), then reaps
    /// the child if it has ended.
    public func terminateGroup() {
        _ = kill(-pid, SIGTERM)
        _ = poll()
    }

    /// The exit status if the child has ended (reaped without blocking): the exit code, or
    /// 128 + the signal number when a signal ended it; nil while it runs.
    public func poll() -> Int32? {
        if let status { return status }
        var raw: Int32 = 0
        let r: pid_t
        do { r = try syscall("waitpid") { waitpid(pid, &raw, WNOHANG) } } catch {
            if error.errno == ECHILD { status = -1 }  // reaped elsewhere: treat as ended
            return status
        }
        guard r == pid else { return status }
        let signal = raw & 0x7f
        status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        return status
    }
}
