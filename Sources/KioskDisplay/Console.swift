// SPDX-License-Identifier: Apache-2.0
import Glibc
import CKioskSys
import KioskSystem

/// Keeps the Linux virtual terminal (VT) out of the picture: switches it to graphics mode
/// (KD_GRAPHICS) so the text cursor, the login prompt and kernel messages do not draw over
/// the show, and puts the saved mode back (save, then restore, like fbi's fb_init/fb_cleanup;
/// a VT found already in graphics mode goes back to text mode, see ``restoreMode``).
///
/// Which VT: the controlling terminal when it is a VT (fbi works on the VT it was started on),
/// opened by its own path (`/dev/tty1`, from the terminal number in `/proc/self/stat`), else
/// through `/dev/tty`; otherwise `/dev/tty0`, the VT in the foreground (what a boot-time program
/// started by init or systemd without a terminal uses; plymouth likewise opens the active VT).
/// By its own path, so that what the VT is called in the log is its name, and the descriptor
/// does not depend on `/dev/tty` (which names whatever the controlling terminal is at the moment
/// it is opened). A terminal counts as a VT when KDGETMODE works on it (ssh ptys and serial
/// lines answer ENOTTY). It is opened with O_NOCTTY so it never becomes this process's
/// controlling terminal.
///
/// Permission: KDSETMODE needs the VT to be the caller's controlling terminal or
/// CAP_SYS_TTY_CONFIG (drivers/tty/vt/vt_ioctl.c); a service started as a plain user therefore
/// gets `TTYPath=/dev/tty1` + `StandardInput=tty` or `AmbientCapabilities=CAP_SYS_TTY_CONFIG`.
///
/// Signals: ``enterGraphics(candidates:note:)`` also registers the VT with the C side, so that a
/// fatal-signal handler can call `kc_console_restore_now()` (async-signal-safe, one ioctl) before
/// re-raising. SIGTERM/SIGINT handlers only set a flag; the main loop then calls ``restore()``.
public final class ConsoleGuard {
    /// The VT device that was switched, e.g. `/dev/tty0`.
    public let path: String
    /// The mode it was in before (KD_TEXT = 0, KD_GRAPHICS = 1; linux/kd.h).
    public let savedMode: Int32
    /// The mode ``restore()`` puts back: ``savedMode``, except that a VT found in KD_GRAPHICS goes
    /// back to KD_TEXT. A predecessor killed with SIGKILL (a watchdog, the OOM killer) cannot
    /// restore anything; putting its graphics mode "back" would leave the console dark for good.
    public var restoreMode: Int32 { savedMode == Self.graphicsMode ? Self.textMode : savedMode }
    private let fd: FileDescriptor
    private var restored = false
    /// True once ``enableProcessSwitching(releaseSignal:acquireSignal:)`` put the VT in VT_PROCESS mode.
    public private(set) var switchesByProcess = false

    /// KD_TEXT from linux/kd.h.
    public static let textMode = Int32(kc_KD_TEXT)
    /// KD_GRAPHICS from linux/kd.h.
    public static let graphicsMode = Int32(kc_KD_GRAPHICS)

    private init(path: String, fd: FileDescriptor, savedMode: Int32) {
        self.path = path; self.fd = fd; self.savedMode = savedMode
    }

    /// Switches the VT to KD_GRAPHICS after saving its mode (KDGETMODE).
    ///
    /// Returns nil when there is no VT to switch: not started on a VT and /dev/tty0 cannot be
    /// opened (ssh session, container, service without a TTY), or KDSETMODE is not permitted.
    /// That is not an error, but worth a log line: `note` receives one line saying why, e.g.
    /// `console not switched to graphics mode: /dev/tty: No such device or address (errno 6);
    /// /dev/tty0: Permission denied (errno 13)`.
    /// - Parameter candidates: the terminals to try, in order (tests pass their own).
    public static func enterGraphics(candidates: [String] = [controllingVT() ?? "/dev/tty", "/dev/tty0"],
                                     note: ((String) -> Void)? = nil) -> ConsoleGuard? {
        var reasons: [String] = []
        for path in candidates {
            do {
                let fd = try openVT(path)
                var mode: Int32 = 0
                try fd.ioctl("KDGETMODE", UInt(kc_KDGETMODE), &mode)
                try fd.ioctl("KDSETMODE KD_GRAPHICS", UInt(kc_KDSETMODE), value: Int(kc_KD_GRAPHICS))
                let guardian = ConsoleGuard(path: path, fd: fd, savedMode: mode)
                kc_console_register(fd.rawValue, guardian.restoreMode)
                return guardian
            } catch {
                reasons.append(error.errno == ENOTTY ? "\(path): not a virtual terminal" : error.description)
            }
        }
        note?("console not switched to graphics mode: " + reasons.joined(separator: "; "))
        return nil
    }

    /// The path of this process's controlling terminal when it is a VT: `/dev/ttyN` for the
    /// terminal number (field 7, `tty_nr`, of `/proc/self/stat`, proc(5)) with the VT major 4
    /// and a minor of 1...63 (linux/major.h TTY_MAJOR, MAX_NR_CONSOLES); nil otherwise (no
    /// controlling terminal, a pty or a serial line, or /proc unreadable).
    public static func controllingVT() -> String? {
        let fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // "pid (comm) state ppid pgrp session tty_nr ...": comm may hold spaces and parentheses,
        // so the fields are counted after its last ')'.
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        guard let commEnd = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: commEnd)...].split(separator: " ")
        guard fields.count > 4, let ttyNumber = Int(fields[4]) else { return nil }
        let major = (ttyNumber >> 8) & 0xfff, minor = (ttyNumber & 0xff) | ((ttyNumber >> 12) & 0xfff00)
        return major == 4 && (1...63).contains(minor) ? "/dev/tty\(minor)" : nil
    }

    /// Opens read-write, or write-only when only that is allowed (/dev/tty0 is crw--w---- root:tty).
    private static func openVT(_ path: String) throws(SystemError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(path, O_RDWR | O_NOCTTY)
        } catch where error.errno == EACCES {
            return try FileDescriptor.open(path, O_WRONLY | O_NOCTTY)
        }
    }

    /// The VT's current mode (KDGETMODE): ``textMode`` or ``graphicsMode``.
    public func currentMode() throws(SystemError) -> Int32 {
        var mode: Int32 = 0
        try fd.ioctl("KDGETMODE", UInt(kc_KDGETMODE), &mode)
        return mode
    }

    /// Takes part in VT switching (VT_SETMODE with VT_PROCESS, as X servers and Weston do):
    /// a switch away (Ctrl+Alt+F2, `chvt 2`, VT_ACTIVATE) sends `releaseSignal` to this process
    /// and waits until it calls ``acknowledgeRelease()`` (after giving the display up); a switch
    /// back sends `acquireSignal`, answered by ``acknowledgeAcquire()`` (then the display is taken
    /// back and redrawn). Use real-time signals (SIGRTMIN + n): SIGUSR1/SIGUSR2 mean next/previous.
    /// The signals' handlers must be in place first: their default action ends the process.
    /// ``restore()`` (and `kc_console_restore_now()` on a fatal signal) puts VT_AUTO back.
    /// Throws ``SystemError`` (`ioctl VT_SETMODE /dev/tty0: Operation not permitted`: neither the
    /// controlling terminal nor CAP_SYS_TTY_CONFIG).
    public func enableProcessSwitching(releaseSignal: Int32, acquireSignal: Int32) throws(SystemError) {
        let raw = fd.rawValue
        try syscall("ioctl VT_SETMODE VT_PROCESS", path: path) { kc_vt_set_process(raw, releaseSignal, acquireSignal) }
        switchesByProcess = true
    }

    /// VT_RELDISP 1: lets the pending switch away go ahead. Call after the display was released.
    public func acknowledgeRelease() throws(SystemError) {
        let raw = fd.rawValue
        try syscall("ioctl VT_RELDISP 1", path: path) { kc_vt_release_done(raw) }
    }

    /// VT_RELDISP VT_ACKACQ: acknowledges the switch back to this VT.
    public func acknowledgeAcquire() throws(SystemError) {
        let raw = fd.rawValue
        try syscall("ioctl VT_RELDISP VT_ACKACQ", path: path) { kc_vt_acquire_done(raw) }
    }

    /// The foreground VT's number (VT_GETSTATE), e.g. 1 for tty1.
    public func activeVT() throws(SystemError) -> Int32 {
        let raw = fd.rawValue
        return try syscall("ioctl VT_GETSTATE", path: path) { kc_vt_active(raw) }
    }

    /// Puts VT_AUTO back when VT_PROCESS was set, then ``restoreMode`` (KD_TEXT), and closes the VT.
    /// Idempotent; a failure is returned for the log (the program is on its way out anyway), nil on success.
    @discardableResult
    public func restore() -> SystemError? {
        guard !restored else { return nil }
        restored = true
        _ = kc_console_unregister()
        defer { fd.close() }
        var failure: SystemError?
        if switchesByProcess {
            switchesByProcess = false
            let raw = fd.rawValue
            do {
                try syscall("ioctl VT_SETMODE VT_AUTO", path: path) { kc_vt_set_auto(raw) }
            } catch {
                failure = error
            }
        }
        do {
            try fd.ioctl("KDSETMODE", UInt(kc_KDSETMODE), value: Int(restoreMode))
        } catch {
            failure = failure ?? error
        }
        return failure
    }

    deinit { restore() }
}
