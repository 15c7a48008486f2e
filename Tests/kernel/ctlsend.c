// SPDX-License-Identifier: Apache-2.0
/* ctlsend: one request to kiosk-carousel's control socket (docs/control-socket.md), for the
 * kernel suite's guest, whose busybox nc has no AF_UNIX.
 * Usage: ctlsend SOCKET JSON
 * Connects to the stream socket SOCKET, sends JSON and a newline, skips event lines
 * ({"event":...}) and prints the first reply line as  KC_CTL <line>  (exit 0), or
 * KC_CTL_FAIL <why>  (exit 1); gives up after 60 s. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: ctlsend SOCKET JSON\n");
        return 2;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        printf("KC_CTL_FAIL connect %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    if (dprintf(fd, "%s\n", argv[2]) < 0) {
        printf("KC_CTL_FAIL write: %s\n", strerror(errno));
        return 1;
    }
    alarm(60);
    static char buffer[1 << 16];
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fd, buffer + used, sizeof buffer - 1 - used);
        if (n <= 0) {
            printf("KC_CTL_FAIL read: %s\n", n == 0 ? "the socket was closed" : strerror(errno));
            return 1;
        }
        used += (size_t)n;
        buffer[used] = 0;
        char *newline;
        while ((newline = strchr(buffer, '\n')) != NULL) {
            *newline = 0;
            if (strncmp(buffer, "{\"event\"", 8) != 0) {
                printf("KC_CTL %s\n", buffer);
                return 0;
            }
            size_t rest = used - (size_t)(newline + 1 - buffer);
            memmove(buffer, newline + 1, rest + 1);
            used = rest;
        }
        if (used == sizeof buffer - 1) used = 0;  /* an over-long event line: drop it */
    }
}
