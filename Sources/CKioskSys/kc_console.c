// SPDX-License-Identifier: Apache-2.0
#include "kc_console.h"
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/ioctl.h>

_Static_assert(kc_KDGETMODE == KDGETMODE && kc_KDSETMODE == KDSETMODE, "linux/kd.h request numbers");
_Static_assert(kc_KD_TEXT == KD_TEXT && kc_KD_GRAPHICS == KD_GRAPHICS, "linux/kd.h modes");

// Lock-free atomics only: read from signal handlers.
static atomic_int kc_console_fd = -1;
static atomic_int kc_console_mode = KD_TEXT;
// 1 while the registered VT is in VT_PROCESS mode (kc_console_restore_now puts VT_AUTO back).
static atomic_int kc_console_vt_process = 0;

void kc_console_register(int fd, int mode) {
    atomic_store(&kc_console_mode, mode);
    atomic_store(&kc_console_fd, fd);
}

int kc_console_unregister(void) { return atomic_exchange(&kc_console_fd, -1); }

int kc_console_restore_now(void) {
    int fd = atomic_exchange(&kc_console_fd, -1);
    if (fd < 0) return 0;
    int ok = 1;
    if (atomic_exchange(&kc_console_vt_process, 0)) {
        struct vt_mode m;
        memset(&m, 0, sizeof m);   // memset is async-signal-safe (POSIX.1-2016)
        m.mode = VT_AUTO;
        if (ioctl(fd, VT_SETMODE, &m) != 0) ok = -1;
    }
    if (ioctl(fd, KDSETMODE, (unsigned long)atomic_load(&kc_console_mode)) != 0) ok = -1;
    return ok;
}

int kc_vt_set_process(int fd, int relsig, int acqsig) {
    struct vt_mode m;
    memset(&m, 0, sizeof m);
    m.mode = VT_PROCESS;
    m.waitv = 0;
    m.relsig = (short)relsig;
    m.acqsig = (short)acqsig;
    m.frsig = 0;   // unused by the kernel, must be 0 on some
    if (ioctl(fd, VT_SETMODE, &m) != 0) return -1;
    atomic_store(&kc_console_vt_process, 1);
    return 0;
}

int kc_vt_set_auto(int fd) {
    struct vt_mode m;
    memset(&m, 0, sizeof m);
    m.mode = VT_AUTO;
    atomic_store(&kc_console_vt_process, 0);
    return ioctl(fd, VT_SETMODE, &m);
}

int kc_vt_release_done(int fd) { return ioctl(fd, VT_RELDISP, 1UL); }

int kc_vt_acquire_done(int fd) { return ioctl(fd, VT_RELDISP, (unsigned long)VT_ACKACQ); }

int kc_vt_active(int fd) {
    struct vt_stat st;
    if (ioctl(fd, VT_GETSTATE, &st) != 0) return -1;
    return st.v_active;
}

int kc_sigrtmin(void) { return SIGRTMIN; }
