#include "kc_console.h"
#include <linux/kd.h>
#include <stdatomic.h>
#include <sys/ioctl.h>

_Static_assert(kc_KDGETMODE == KDGETMODE && kc_KDSETMODE == KDSETMODE, "linux/kd.h request numbers");
_Static_assert(kc_KD_TEXT == KD_TEXT && kc_KD_GRAPHICS == KD_GRAPHICS, "linux/kd.h modes");

// Lock-free atomics only: read from signal handlers.
static atomic_int kc_console_fd = -1;
static atomic_int kc_console_mode = KD_TEXT;

void kc_console_register(int fd, int mode) {
    atomic_store(&kc_console_mode, mode);
    atomic_store(&kc_console_fd, fd);
}

int kc_console_unregister(void) { return atomic_exchange(&kc_console_fd, -1); }

int kc_console_restore_now(void) {
    int fd = atomic_exchange(&kc_console_fd, -1);
    if (fd < 0) return 0;
    return ioctl(fd, KDSETMODE, (unsigned long)atomic_load(&kc_console_mode)) == 0 ? 1 : -1;
}
