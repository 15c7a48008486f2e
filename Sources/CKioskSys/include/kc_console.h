// SPDX-License-Identifier: Apache-2.0
#ifndef KC_CONSOLE_H
#define KC_CONSOLE_H
// Virtual-terminal (VT) console mode for KioskDisplay's ConsoleGuard, and the
// async-signal-safe restore that a fatal-signal handler calls before re-raising.

/// Request numbers and modes from <linux/kd.h>.
enum {
    /// KDGETMODE (0x4B3B): ioctl(tty, KDGETMODE, int *mode) reads KD_TEXT / KD_GRAPHICS.
    kc_KDGETMODE = 0x4B3B,
    /// KDSETMODE (0x4B3A): ioctl(tty, KDSETMODE, mode) switches text / graphics mode.
    kc_KDSETMODE = 0x4B3A,
    /// KD_TEXT (0x00): the console draws text (cursor, kernel messages).
    kc_KD_TEXT = 0x00,
    /// KD_GRAPHICS (0x01): the console leaves the screen to a graphics program.
    kc_KD_GRAPHICS = 0x01,
};

/// Remembers `fd` (an open VT) and `mode` (the mode to put back) for kc_console_restore_now.
/// Called by ConsoleGuard after it switched the VT to KD_GRAPHICS.
void kc_console_register(int fd, int mode);

/// Forgets the registered VT without touching it (ConsoleGuard restored it itself).
/// Returns the fd that was registered, or -1.
int kc_console_unregister(void);

/// Async-signal-safe: puts the registered VT back into its saved mode with one
/// ioctl(KDSETMODE) and forgets it, so a second call does nothing. For a fatal-signal
/// handler (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE) to call before re-raising.
/// Returns 1 when a VT was restored, 0 when none was registered, -1 when the ioctl failed.
int kc_console_restore_now(void);

// ---- VT switching (VT_PROCESS, linux/vt.h) ----

/// Puts the VT `fd` under this process's control (VT_SETMODE, mode VT_PROCESS): a switch away
/// sends `relsig` and waits for kc_vt_release_done; a switch back sends `acqsig`.
/// Also remembers that kc_console_restore_now must put VT_AUTO back.
/// Returns 0, or -1 with errno set (EPERM: not the controlling terminal and no CAP_SYS_TTY_CONFIG).
int kc_vt_set_process(int fd, int relsig, int acqsig);

/// VT_SETMODE VT_AUTO: the kernel switches on its own again. Returns 0 or -1 with errno.
int kc_vt_set_auto(int fd);

/// VT_RELDISP 1: allows the pending switch away. Returns 0 or -1 with errno.
int kc_vt_release_done(int fd);

/// VT_RELDISP VT_ACKACQ: acknowledges that the VT was switched back to. Returns 0 or -1 with errno.
int kc_vt_acquire_done(int fd);

/// The foreground VT's number (VT_GETSTATE v_active), or -1 with errno.
int kc_vt_active(int fd);

/// SIGRTMIN, which glibc defines as a function call Swift cannot import.
int kc_sigrtmin(void);

#endif
