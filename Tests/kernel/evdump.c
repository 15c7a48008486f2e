// SPDX-License-Identifier: Apache-2.0
/* evdump: prints what evdev devices report, for the kernel suite (static, busybox initramfs).
 *
 *   evdump [-t SECONDS] [-g] [DEVICE...]     (default: every /dev/input/event*)
 *
 * For each device, once: KC_EVDEV node=... name="..." props=... abs: CODE[min..max res R] ... keys: ...
 * Then every event as it arrives, until SECONDS (default 10) have passed:
 *   KC_EV event3 t=12.345678 EV_ABS ABS_X 16383
 * with -g the devices are grabbed (EVIOCGRAB) so nothing else sees the events meanwhile.
 * Ends with KC_EVDUMP_DONE events=N.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define NBITS(max) ((max) / (8 * sizeof(unsigned long)) + 1)
#define TEST(b, n) (((b)[(n) / (8 * sizeof(unsigned long))] >> ((n) % (8 * sizeof(unsigned long)))) & 1)

static const char *type_name(int t) {
    switch (t) {
    case EV_SYN: return "EV_SYN"; case EV_KEY: return "EV_KEY"; case EV_REL: return "EV_REL";
    case EV_ABS: return "EV_ABS"; case EV_MSC: return "EV_MSC"; default: return NULL;
    }
}

static const char *code_name(int t, int c) {
    static const struct { int t, c; const char *n; } names[] = {
        { EV_SYN, SYN_REPORT, "SYN_REPORT" }, { EV_SYN, SYN_DROPPED, "SYN_DROPPED" },
        { EV_KEY, BTN_LEFT, "BTN_LEFT" }, { EV_KEY, BTN_RIGHT, "BTN_RIGHT" }, { EV_KEY, BTN_MIDDLE, "BTN_MIDDLE" },
        { EV_KEY, BTN_TOUCH, "BTN_TOUCH" }, { EV_KEY, BTN_TOOL_FINGER, "BTN_TOOL_FINGER" },
        { EV_KEY, BTN_TOOL_DOUBLETAP, "BTN_TOOL_DOUBLETAP" },
        { EV_ABS, ABS_X, "ABS_X" }, { EV_ABS, ABS_Y, "ABS_Y" }, { EV_ABS, ABS_PRESSURE, "ABS_PRESSURE" },
        { EV_ABS, ABS_MT_SLOT, "ABS_MT_SLOT" }, { EV_ABS, ABS_MT_TRACKING_ID, "ABS_MT_TRACKING_ID" },
        { EV_ABS, ABS_MT_POSITION_X, "ABS_MT_POSITION_X" }, { EV_ABS, ABS_MT_POSITION_Y, "ABS_MT_POSITION_Y" },
        { EV_ABS, ABS_MT_TOOL_TYPE, "ABS_MT_TOOL_TYPE" }, { EV_ABS, ABS_MT_TOUCH_MAJOR, "ABS_MT_TOUCH_MAJOR" },
        { EV_REL, REL_WHEEL, "REL_WHEEL" }, { EV_REL, REL_HWHEEL, "REL_HWHEEL" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].t == t && names[i].c == c) return names[i].n;
    return NULL;
}

static void describe(int fd, const char *node) {
    char name[256] = "?";
    unsigned long props[NBITS(INPUT_PROP_MAX)] = { 0 }, ev[NBITS(EV_MAX)] = { 0 };
    unsigned long keys[NBITS(KEY_MAX)] = { 0 }, abs[NBITS(ABS_MAX)] = { 0 };
    ioctl(fd, EVIOCGNAME(sizeof name), name);
    ioctl(fd, EVIOCGPROP(sizeof props), props);
    ioctl(fd, EVIOCGBIT(0, sizeof ev), ev);
    ioctl(fd, EVIOCGBIT(EV_KEY, sizeof keys), keys);
    ioctl(fd, EVIOCGBIT(EV_ABS, sizeof abs), abs);
    printf("KC_EVDEV node=%s name=\"%s\" props=%s%s ev=0x%lx abs:", node, name,
           TEST(props, INPUT_PROP_DIRECT) ? "DIRECT" : "-", TEST(props, INPUT_PROP_POINTER) ? ",POINTER" : "", ev[0]);
    for (int c = 0; c <= ABS_MAX; c++) {
        if (!TEST(abs, c)) continue;
        struct input_absinfo ai;
        if (ioctl(fd, EVIOCGABS(c), &ai) < 0) continue;
        const char *n = code_name(EV_ABS, c);
        if (n) printf(" %s[%d..%d", n, ai.minimum, ai.maximum);
        else printf(" 0x%02x[%d..%d", c, ai.minimum, ai.maximum);
        if (ai.resolution) printf(" res %d", ai.resolution);
        printf("]");
    }
    printf(" keys:");
    int nk = 0;
    for (int c = BTN_MISC; c <= KEY_MAX; c++)
        if (TEST(keys, c)) {
            const char *n = code_name(EV_KEY, c);
            if (n) printf(" %s", n); else printf(" 0x%x", c);
            nk++;
        }
    if (!nk) printf(" -");
    printf("\n");
}

int main(int argc, char **argv) {
    double seconds = 10;
    int grab = 0, opt;
    while ((opt = getopt(argc, argv, "t:g")) != -1) {
        if (opt == 't') seconds = atof(optarg);
        else if (opt == 'g') grab = 1;
        else { fprintf(stderr, "usage: evdump [-t SECONDS] [-g] [DEVICE...]\n"); return 2; }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *paths[64];
    int n = 0;
    if (optind < argc) {
        for (int i = optind; i < argc && n < 64; i++) paths[n++] = strdup(argv[i]);
    } else {
        DIR *d = opendir("/dev/input");
        struct dirent *e;
        while (d && (e = readdir(d)) && n < 64)
            if (strncmp(e->d_name, "event", 5) == 0) {
                char p[300];
                snprintf(p, sizeof p, "/dev/input/%s", e->d_name);
                paths[n++] = strdup(p);
            }
        if (d) closedir(d);
    }
    struct pollfd pfd[64];
    for (int i = 0; i < n; i++) {
        pfd[i].fd = open(paths[i], O_RDONLY | O_NONBLOCK);
        pfd[i].events = POLLIN;
        if (pfd[i].fd < 0) { printf("KC_EVDEV node=%s error=\"%s\"\n", paths[i], strerror(errno)); continue; }
        int clk = CLOCK_MONOTONIC;
        ioctl(pfd[i].fd, EVIOCSCLOCKID, &clk);
        describe(pfd[i].fd, paths[i]);
        if (grab && ioctl(pfd[i].fd, EVIOCGRAB, 1) < 0) printf("KC_EVDEV node=%s grab failed: %s\n", paths[i], strerror(errno));
    }
    printf("KC_EVDUMP_LISTENING devices=%d seconds=%.1f\n", n, seconds);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long count = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        double left = seconds - ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
        if (left <= 0) break;
        if (poll(pfd, n, (int)(left * 1000) + 1) <= 0) continue;
        for (int i = 0; i < n; i++) {
            if (pfd[i].fd < 0 || !(pfd[i].revents & POLLIN)) continue;
            struct input_event evs[64];
            ssize_t r = read(pfd[i].fd, evs, sizeof evs);
            if (r < 0 && errno == ENODEV) { printf("KC_EV %s gone\n", paths[i]); close(pfd[i].fd); pfd[i].fd = -1; continue; }
            for (ssize_t k = 0; r > 0 && k < r / (ssize_t)sizeof evs[0]; k++) {
                struct input_event *e = &evs[k];
                const char *tn = type_name(e->type), *cn = code_name(e->type, e->code);
                printf("KC_EV %s t=%ld.%06ld ", strrchr(paths[i], '/') + 1, (long)e->input_event_sec, (long)e->input_event_usec);
                if (tn) printf("%s ", tn); else printf("0x%02x ", e->type);
                if (cn) printf("%s ", cn); else printf("0x%03x ", e->code);
                printf("%d\n", e->value);
                count++;
            }
        }
    }
    printf("KC_EVDUMP_DONE events=%ld\n", count);
    return 0;
}
