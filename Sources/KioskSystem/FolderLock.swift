// SPDX-License-Identifier: Apache-2.0
import Glibc

/// An exclusive lock on a folder for as long as the process holds it: `flock(2)` `LOCK_EX` on
/// the file ``fileName`` in the folder, with the holder's PID written into it so that another
/// process can say who has it. The kernel drops the lock when the process ends, however it
/// ends (a SIGKILL, a power cut: the file left behind holds no lock), so a stale file never
/// blocks a restart. The descriptor is close-on-exec: `--on-tap` children do not inherit it.
///
/// Used for `--state-dir` (docs/usage.md "Files"): two kiosks writing one state directory
/// would overwrite each other's shuffle round, stored manifest and MQTT outbox.
public final class FolderLock {
    /// The lock file's name in the folder.
    public static let fileName = "kiosk-carousel.lock"

    /// Why a folder could not be locked.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Another process holds the lock; `pid` is what it wrote into the file (nil: unreadable).
        case held(path: String, pid: Int32?)
        /// The folder or the file could not be made or opened (read-only, permission denied).
        case system(SystemError)

        public var description: String {
            switch self {
            case .held(let path, let pid):
                return "\(path) is locked by another kiosk-carousel" + (pid.map { " (PID \($0))" } ?? "")
            case .system(let error): return error.description
            }
        }
    }

    /// The lock file's path.
    public let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Locks `folder` (made with its parents, mode 0755 before the umask, when missing),
    /// trying again every 50 ms for up to `waiting` while another process holds it (a kiosk
    /// being restarted may still be on its way out). Throws ``Failure/held(path:pid:)`` when
    /// it is still held then, ``Failure/system(_:)`` when the folder or file cannot be made.
    public static func lock(folder: String, waiting: Duration = .seconds(2)) throws(Failure) -> FolderLock {
        let path = folder + "/" + fileName
        let fd: Int32
        do {
            try AtomicFile.makeDirectories(folder)
            fd = try syscall("open", path: path) { open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o640) }
        } catch {
            throw .system(error)
        }
        let end = ContinuousClock.now + waiting
        while true {
            do {
                if try nonBlockingSyscall("flock", path: path, { flock(fd, LOCK_EX | LOCK_NB) }) != nil { break }
            } catch {
                close(fd)
                throw .system(error)
            }
            guard ContinuousClock.now < end else {
                let pid = readPID(fd)
                close(fd)
                throw .held(path: path, pid: pid)
            }
            usleep(50_000)
        }
        // Ours now: the PID, for the message another process gives.
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return FolderLock(path: path, descriptor: fd)
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[..<n], as: UTF8.self).split(separator: "\n").first ?? "")
    }
}
