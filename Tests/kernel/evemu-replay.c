// SPDX-License-Identifier: Apache-2.0
/* evemu-replay: recreates an input device from an evemu description with /dev/uinput and
 * replays evemu event recordings on it with their recorded timing. Static, for the kernel
 * suite's busybox initramfs (no libevdev, no evemu).
 *
 *   evemu-replay [--control FIFO] [--now] [--hold SECONDS] DEVICE.desc [EVENTS.events ...]
 *
 * 1. Reads the description (N: name, I: bus vendor product version, P: property bits,
 *    B: event bits per type, A: code min max fuzz flat [resolution]) and creates the device:
 *    UI_SET_PROPBIT / UI_SET_EVBIT / UI_SET_KEYBIT / UI_SET_ABSBIT ..., UI_ABS_SETUP,
 *    UI_DEV_SETUP, UI_DEV_CREATE.
 * 2. Waits until /dev/input/eventN of the new device exists and prints
 *        KC_UINPUT node=/dev/input/eventN sys=inputM name=NAME
 * 3. Plays events files: `E: sec.usec type code value` lines, each at its recorded offset from
 *    the file's first event; after each file
 *        KC_REPLAY_DONE file=F events=N touches=T duration=S.SSS late_max_ms=L
 *    --control FIFO: makes the FIFO (after the device, before KC_UINPUT) and plays each file
 *    named by a line written to it ("quit" ends); the guest's `replay FILE` command.
 *    --now: plays the EVENTS files given, in order, 0.5 s after the node appeared.
 * 4. SIGTERM/SIGINT (or, with --now --hold S, S seconds after the last file) destroys the
 *    device and prints KC_UINPUT_GONE node=...
 * Messages go to stdout (the guest console). Exit status: 0, 1 on errors (KC_UINPUT_ERROR ...).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BITS_BYTES(max) (((max) + 8) / 8)

struct desc {
    char name[UINPUT_MAX_NAME_SIZE];
    struct input_id id;
    unsigned char props[BITS_BYTES(INPUT_PROP_MAX)];
    unsigned char bits[EV_MAX + 1][BITS_BYTES(KEY_MAX)];   /* KEY_MAX is the largest code space */
    int bytes_seen[EV_MAX + 1];                             /* continuation of B: lines per type */
    int props_seen;
    struct input_absinfo abs[ABS_CNT];
    int has_abs[ABS_CNT];
};

struct ev { double t; int type, code, value; };

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("KC_UINPUT_ERROR ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    exit(1);
}

static int test_bit(const unsigned char *b, int n) { return (b[n / 8] >> (n % 8)) & 1; }

static void parse_desc(const char *path, struct desc *d) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    memset(d, 0, sizeof *d);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *p = line + 3;
        if (strncmp(line, "N: ", 3) == 0) {
            p[strcspn(p, "\r\n")] = 0;
            snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof d->name - 1, p);
        } else if (strncmp(line, "I: ", 3) == 0) {
            unsigned bus, vendor, product, version;
            if (sscanf(p, "%x %x %x %x", &bus, &vendor, &product, &version) == 4) {
                d->id.bustype = bus; d->id.vendor = vendor; d->id.product = product; d->id.version = version;
            }
        } else if (strncmp(line, "P: ", 3) == 0) {
            unsigned v; int n;
            while (sscanf(p, "%x%n", &v, &n) == 1) {
                if (d->props_seen < (int)sizeof d->props) d->props[d->props_seen] = v;
                d->props_seen++; p += n;
            }
        } else if (strncmp(line, "B: ", 3) == 0) {
            unsigned type, v; int n;
            if (sscanf(p, "%x%n", &type, &n) != 1 || type > EV_MAX) continue;
            p += n;
            while (sscanf(p, "%x%n", &v, &n) == 1) {
                if (d->bytes_seen[type] < (int)sizeof d->bits[type]) d->bits[type][d->bytes_seen[type]] = v;
                d->bytes_seen[type]++; p += n;
            }
        } else if (strncmp(line, "A: ", 3) == 0) {
            unsigned code; int min, max, fuzz, flat, res = 0;
            int k = sscanf(p, "%x %d %d %d %d %d", &code, &min, &max, &fuzz, &flat, &res);
            if (k < 5 || code >= ABS_CNT) continue;
            d->abs[code] = (struct input_absinfo){ .minimum = min, .maximum = max, .fuzz = fuzz, .flat = flat,
                                                   .resolution = k == 6 ? res : 0 };
            d->has_abs[code] = 1;
        }
    }
    fclose(f);
    if (!d->name[0]) die("%s: no N: line (not an evemu description?)", path);
}

static struct ev *parse_events(const char *path, int *count) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    int cap = 1024, n = 0;
    struct ev *evs = malloc(cap * sizeof *evs);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "E: ", 3) != 0) continue;
        double t; unsigned type, code; int value;
        if (sscanf(line + 3, "%lf %x %x %d", &t, &type, &code, &value) != 4) continue;
        if (n == cap) evs = realloc(evs, (cap *= 2) * sizeof *evs);
        evs[n++] = (struct ev){ t, (int)type, (int)code, value };
    }
    fclose(f);
    if (n == 0) die("%s: no E: lines", path);
    *count = n;
    return evs;
}

static void xioctl(int fd, unsigned long req, long arg, const char *what) {
    if (ioctl(fd, req, arg) < 0) die("%s: %s", what, strerror(errno));
}

/* Creates the device; returns the uinput fd, fills node ("/dev/input/eventN") and sys ("inputM"). */
static int create_device(const struct desc *d, char *node, size_t nodelen, char *sys, size_t syslen) {
    int fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK);
    if (fd < 0) die("open /dev/uinput: %s", strerror(errno));
    static const struct { int type; unsigned long req; int max; } sets[] = {
        { EV_KEY, UI_SET_KEYBIT, KEY_MAX }, { EV_REL, UI_SET_RELBIT, REL_MAX }, { EV_ABS, UI_SET_ABSBIT, ABS_MAX },
        { EV_MSC, UI_SET_MSCBIT, MSC_MAX }, { EV_LED, UI_SET_LEDBIT, LED_MAX }, { EV_SND, UI_SET_SNDBIT, SND_MAX },
        { EV_SW, UI_SET_SWBIT, SW_MAX },
    };
    for (int p = 0; p <= INPUT_PROP_MAX && p / 8 < d->props_seen; p++)
        if (test_bit(d->props, p)) xioctl(fd, UI_SET_PROPBIT, p, "UI_SET_PROPBIT");
    for (int type = 1; type <= EV_MAX; type++) {
        if (!test_bit(d->bits[EV_SYN], type) || type == EV_FF || type == EV_REP || type == EV_PWR) continue;
        xioctl(fd, UI_SET_EVBIT, type, "UI_SET_EVBIT");
        for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
            if (sets[s].type != type) continue;
            for (int code = 0; code <= sets[s].max && code / 8 < d->bytes_seen[type]; code++) {
                if (!test_bit(d->bits[type], code)) continue;
                xioctl(fd, sets[s].req, code, "UI_SET_*BIT");
                if (type == EV_ABS) {
                    struct uinput_abs_setup a = { .code = code, .absinfo = d->abs[code] };
                    if (!d->has_abs[code]) die("ABS code 0x%02x has a bit but no A: line", code);
                    xioctl(fd, UI_ABS_SETUP, (long)&a, "UI_ABS_SETUP");
                }
            }
        }
    }
    struct uinput_setup setup = { .id = d->id };
    snprintf(setup.name, sizeof setup.name, "%s", d->name);
    xioctl(fd, UI_DEV_SETUP, (long)&setup, "UI_DEV_SETUP");
    xioctl(fd, UI_DEV_CREATE, 0, "UI_DEV_CREATE");

    if (ioctl(fd, UI_GET_SYSNAME(syslen), sys) < 0) die("UI_GET_SYSNAME: %s", strerror(errno));
    char dir[256];
    snprintf(dir, sizeof dir, "/sys/devices/virtual/input/%s", sys);
    /* The evdev handler adds an eventN child; devtmpfs makes /dev/input/eventN for it. */
    node[0] = 0;
    for (int i = 0; i < 500 && !node[0]; i++) {
        DIR *dd = opendir(dir);
        struct dirent *e;
        while (dd && (e = readdir(dd)))
            if (strncmp(e->d_name, "event", 5) == 0) {
                struct stat st;
                snprintf(node, nodelen, "/dev/input/%.*s", (int)nodelen - 12, e->d_name);
                if (stat(node, &st) != 0) node[0] = 0;
            }
        if (dd) closedir(dd);
        if (!node[0]) usleep(10000);
    }
    if (!node[0]) die("no /dev/input/event* for %s after 5 s (is evdev loaded?)", dir);
    return fd;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int stop_requested, sigfd = -1;

/* Waits until monotonic time `until` or until `fd` (if >= 0) is readable (returns 2 then);
 * returns 0 once SIGTERM/SIGINT arrived, 1 when the time has come. */
static int wait_until(double until, int fd) {
    while (!stop_requested) {
        double left = until - now();
        if (left <= 0) return 1;
        struct pollfd p[2] = { { sigfd, POLLIN, 0 }, { fd, POLLIN, 0 } };
        int ms = left > 3600 ? 3600000 : (int)(left * 1000);
        int r = poll(p, fd >= 0 ? 2 : 1, ms);       /* poll rounds down: sub-ms waits spin a little */
        if (r > 0 && (p[0].revents & POLLIN)) {
            struct signalfd_siginfo si;
            if (read(sigfd, &si, sizeof si) == sizeof si) stop_requested = 1;
        } else if (r > 0 && fd >= 0 && (p[1].revents & POLLIN)) {
            return 2;
        } else if (r == 0 && left < 0.001) {
            return 1;
        }
    }
    return 0;
}

static void play(int fd, const char *path) {
    int n;
    struct ev *evs = parse_events(path, &n);
    double start = now(), t0 = evs[0].t, late_max = 0;
    int touches = 0;
    for (int i = 0; i < n && !stop_requested; i++) {
        double due = start + (evs[i].t - t0);
        if (!wait_until(due, -1)) break;
        double late = now() - due;
        if (late > late_max) late_max = late;
        struct input_event ie = { .type = evs[i].type, .code = evs[i].code, .value = evs[i].value };
        if (write(fd, &ie, sizeof ie) != sizeof ie) die("write event %d of %s: %s", i, path, strerror(errno));
        if (ie.type == EV_KEY && (ie.code == BTN_TOUCH || ie.code == BTN_LEFT) && ie.value == 1) touches++;
    }
    printf("KC_REPLAY_DONE file=%s events=%d touches=%d duration=%.3f late_max_ms=%.1f%s\n", path, n, touches,
           now() - start, late_max * 1000, stop_requested ? " (stopped)" : "");
    fflush(stdout);
    free(evs);
}

int main(int argc, char **argv) {
    int immediate = 0;
    double hold = -1;
    const char *control = NULL;
    int a = 1;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--now") == 0) immediate = 1;
        else if (strcmp(argv[a], "--hold") == 0 && a + 1 < argc) hold = atof(argv[++a]);
        else if (strcmp(argv[a], "--control") == 0 && a + 1 < argc) control = argv[++a];
        else break;
    }
    if (argc - a < 1 || (!control && !immediate)) {
        fprintf(stderr, "usage: %s [--control FIFO] [--now] [--hold SECONDS] DEVICE.desc [EVENTS.events ...]\n"
                        "  (one of --control and --now)\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    sigset_t stopset;
    sigemptyset(&stopset);
    sigaddset(&stopset, SIGTERM); sigaddset(&stopset, SIGINT);
    sigprocmask(SIG_BLOCK, &stopset, NULL);
    sigfd = signalfd(-1, &stopset, SFD_CLOEXEC);
    if (sigfd < 0) die("signalfd: %s", strerror(errno));

    static struct desc d;
    parse_desc(argv[a], &d);
    char node[320], sys[64];
    int fd = create_device(&d, node, sizeof node, sys, sizeof sys);
    int ctl = -1;
    if (control) {
        unlink(control);
        if (mkfifo(control, 0600) < 0) die("mkfifo %s: %s", control, strerror(errno));
        /* O_RDWR: the FIFO always has a writer, so there is no EOF between commands. */
        ctl = open(control, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (ctl < 0) die("open %s: %s", control, strerror(errno));
    }
    printf("KC_UINPUT node=%s sys=%s name=%s\n", node, sys, d.name);

    if (immediate) {
        wait_until(now() + 0.5, -1);
        for (int i = a + 1; i < argc && !stop_requested; i++) play(fd, argv[i]);
        if (hold >= 0) {
            wait_until(now() + hold, -1);
            stop_requested = 1;
        }
    }
    char buf[4096];
    size_t have = 0;
    while (!stop_requested) {
        if (wait_until(now() + 1e9, ctl) != 2) continue;
        ssize_t r = read(ctl, buf + have, sizeof buf - 1 - have);
        if (r <= 0) continue;
        have += r;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = 0;
            line[strcspn(line, "\r")] = 0;
            if (strcmp(line, "quit") == 0) stop_requested = 1;
            else if (*line && !stop_requested) play(fd, line);
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
        if (have >= sizeof buf - 1) have = 0;
    }
    ioctl(fd, UI_DEV_DESTROY);
    close(fd);
    if (control) unlink(control);
    printf("KC_UINPUT_GONE node=%s\n", node);
    return 0;
}
