// SPDX-License-Identifier: Apache-2.0
/* kdgetmode: prints the console mode of a virtual terminal, as KDGETMODE reports it:
 * 0 = KD_TEXT, 1 = KD_GRAPHICS (linux/kd.h). Used inside the QEMU guest by the kernel suite
 * to check that kiosk-carousel switches the VT to graphics mode and puts text mode back.
 * Usage: kdgetmode [TTY]   (default /dev/tty0, the foreground VT). KDGETMODE needs no
 * permission beyond opening the device. Exit status 1 and a message on failure. */
#include <fcntl.h>
#include <linux/kd.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/dev/tty0";
    int fd = open(path, O_RDONLY | O_NOCTTY);
    if (fd < 0) { perror(path); return 1; }
    int mode = -1;
    if (ioctl(fd, KDGETMODE, &mode) < 0) { perror("ioctl KDGETMODE"); return 1; }
    printf("%d\n", mode);
    close(fd);
    return 0;
}
