// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import CKioskSys
@testable import KioskDisplay

/// Without a VT (as in CI) the guard declines politely; the switch itself (KD_GRAPHICS while
/// running, KD_TEXT after SIGTERM) is checked on a real VT by Tests/kernel/run.sh.
@Suite(.serialized) struct ConsoleGuardTests {
    @Test func noTerminalGivesNilAndSaysWhy() {
        var note = ""
        let guardian = ConsoleGuard.enterGraphics(candidates: ["/nonexistent/tty0"], note: { note = $0 })
        #expect(guardian == nil)
        #expect(note == "console not switched to graphics mode: open /nonexistent/tty0: No such file or directory"
                + " (errno 2)")
    }

    @Test func aFileThatIsNotAVirtualTerminalIsSkipped() {
        var note = ""
        let guardian = ConsoleGuard.enterGraphics(candidates: ["/dev/null", "/nonexistent"], note: { note = $0 })
        #expect(guardian == nil)
        #expect(note.hasPrefix("console not switched to graphics mode: /dev/null: not a virtual terminal; "
                               + "open /nonexistent:"))
    }

    @Test func signalRestoreRunsOnceAndOnlyWhenRegistered() {
        #expect(kc_console_restore_now() == 0)   // nothing registered
        let fd = open("/dev/null", O_WRONLY)
        defer { close(fd) }
        kc_console_register(fd, Int32(kc_KD_TEXT))
        #expect(kc_console_restore_now() == -1)  // KDSETMODE reached the fd: /dev/null is no VT
        #expect(errno == ENOTTY)
        #expect(kc_console_restore_now() == 0)   // forgotten after the first call
        kc_console_register(fd, Int32(kc_KD_TEXT))
        #expect(kc_console_unregister() == fd)
        #expect(kc_console_restore_now() == 0)
    }

    @Test func constantsAreThoseOfLinuxKD() {
        #expect(kc_KDGETMODE == 0x4B3B && kc_KDSETMODE == 0x4B3A)
        #expect(ConsoleGuard.textMode == 0 && ConsoleGuard.graphicsMode == 1)
    }
}
