// SPDX-License-Identifier: Apache-2.0
/* vtswitch: switches the foreground virtual terminal, as Ctrl+Alt+Fn or chvt would, and waits
 * until the switch is done. Used inside the QEMU guest by the kernel suite to check that
 * kiosk-carousel (VT_PROCESS) gives the display up when its VT is switched away and takes it
 * back when it is switched back to.
 * Usage: vtswitch N [TIMEOUT_S]   (default 10 s)
 * Opens /dev/tty0, VT_ACTIVATE N, then VT_WAITACTIVE N (which returns once the switch happened:
 * with a VT_PROCESS owner, only after it acknowledged with VT_RELDISP). Prints
 *   KC_VT from=A to=N active=N ms=T       on success (exit 0)
 *   KC_VT_TIMEOUT from=A to=N active=X    when the switch did not happen in time (exit 1). */
#include <errno.h>
#include <fcntl.h>
#include <linux/vt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig) { (void)sig; }

static int active(int fd) {
    struct vt_stat st;
    return ioctl(fd, VT_GETSTATE, &st) == 0 ? st.v_active : -1;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: vtswitch N [TIMEOUT_S]\n"); return 2; }
    int to = atoi(argv[1]);
    int timeout = argc > 2 ? atoi(argv[2]) : 10;
    int fd = open("/dev/tty0", O_RDWR | O_NOCTTY);
    if (fd < 0) { perror("/dev/tty0"); return 1; }
    int from = active(fd);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;   /* no SA_RESTART: VT_WAITACTIVE returns EINTR */
    sigaction(SIGALRM, &sa, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (ioctl(fd, VT_ACTIVATE, to) != 0) { perror("ioctl VT_ACTIVATE"); return 1; }
    alarm(timeout);
    if (ioctl(fd, VT_WAITACTIVE, to) != 0) {
        int e = errno;
        printf("KC_VT_TIMEOUT from=%d to=%d active=%d (%s)\n", from, to, active(fd), strerror(e));
        fflush(stdout);
        return 1;
    }
    alarm(0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("KC_VT from=%d to=%d active=%d ms=%ld\n", from, to, active(fd), ms);
    fflush(stdout);
    close(fd);
    return 0;
}
