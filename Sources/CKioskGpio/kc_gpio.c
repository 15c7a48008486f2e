// SPDX-License-Identifier: Apache-2.0
// libgpiod opened with dlopen, its 2.x API or its 1.6 API; see include/kc_gpio.h.
#include "kc_gpio.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The two APIs' types. Every one is opaque but libgpiod 1.6's struct gpiod_line_event, declared
// here exactly as in libgpiod 1.6.3's <gpiod.h>.
struct gpiod_chip;
struct gpiod_line;                // 1.6
struct gpiod_line_event {         // 1.6
    struct timespec ts;           // best estimate of the time of the event (CLOCK_MONOTONIC)
    int event_type;               // GPIOD_LINE_EVENT_RISING_EDGE or _FALLING_EDGE
};
struct gpiod_chip_info;           // 2.x, and those below
struct gpiod_line_info;
struct gpiod_line_settings;
struct gpiod_line_config;
struct gpiod_request_config;
struct gpiod_line_request;
struct gpiod_edge_event;
struct gpiod_edge_event_buffer;

// libgpiod 1.6's constants (<gpiod.h>: GPIOD_LINE_REQUEST_FLAG_*, GPIOD_LINE_EVENT_*).
enum {
    V1_FLAG_ACTIVE_LOW = 1 << 2,
    V1_FLAG_BIAS_DISABLE = 1 << 3,
    V1_FLAG_BIAS_PULL_DOWN = 1 << 4,
    V1_FLAG_BIAS_PULL_UP = 1 << 5,
    V1_EVENT_RISING_EDGE = 1,
    // gpiod_line_event_read_multiple reads at most 16 events a call (libgpiod 1.6's core.c).
    V1_EVENTS_AT_ONCE = 16,
};
// libgpiod 2.x's constants (<gpiod.h>: enum gpiod_line_direction, gpiod_line_edge, gpiod_line_bias,
// gpiod_edge_event_type).
enum {
    V2_DIRECTION_INPUT = 2,
    V2_EDGE_BOTH = 4,
    V2_BIAS_AS_IS = 1,
    V2_BIAS_DISABLED = 3,
    V2_BIAS_PULL_UP = 4,
    V2_BIAS_PULL_DOWN = 5,
    V2_EDGE_EVENT_RISING_EDGE = 1,
    V2_EVENTS_AT_ONCE = 16,  // the capacity of each line's edge event buffer
};

// The functions called, with libgpiod 1.6's signatures (<gpiod.h>).
#define KC_GPIO_V1_FUNCTIONS(X) \
    X(struct gpiod_chip *, gpiod_chip_open_lookup, (const char *descr)) \
    X(void, gpiod_chip_close, (struct gpiod_chip *chip)) \
    X(const char *, gpiod_chip_name, (struct gpiod_chip *chip)) \
    X(const char *, gpiod_chip_label, (struct gpiod_chip *chip)) \
    X(unsigned int, gpiod_chip_num_lines, (struct gpiod_chip *chip)) \
    X(struct gpiod_line *, gpiod_chip_get_line, (struct gpiod_chip *chip, unsigned int offset)) \
    X(struct gpiod_line *, gpiod_chip_find_line, (struct gpiod_chip *chip, const char *name)) \
    X(unsigned int, gpiod_line_offset, (struct gpiod_line *line)) \
    X(const char *, gpiod_line_name, (struct gpiod_line *line)) \
    X(int, gpiod_line_request_both_edges_events_flags, (struct gpiod_line *line, const char *consumer, int flags)) \
    X(void, gpiod_line_release, (struct gpiod_line *line)) \
    X(int, gpiod_line_get_value, (struct gpiod_line *line)) \
    X(int, gpiod_line_event_wait, (struct gpiod_line *line, const struct timespec *timeout)) \
    X(int, gpiod_line_event_read_multiple, (struct gpiod_line *line, struct gpiod_line_event *events, \
                                            unsigned int num_events)) \
    X(int, gpiod_line_event_get_fd, (struct gpiod_line *line))

// The functions called, with libgpiod 2.x's signatures (<gpiod.h>; the enums passed as int).
#define KC_GPIO_V2_FUNCTIONS(X) \
    X(struct gpiod_chip *, gpiod_chip_open, (const char *path)) \
    X(void, gpiod_chip_close, (struct gpiod_chip *chip)) \
    X(struct gpiod_chip_info *, gpiod_chip_get_info, (struct gpiod_chip *chip)) \
    X(void, gpiod_chip_info_free, (struct gpiod_chip_info *info)) \
    X(const char *, gpiod_chip_info_get_name, (struct gpiod_chip_info *info)) \
    X(const char *, gpiod_chip_info_get_label, (struct gpiod_chip_info *info)) \
    X(size_t, gpiod_chip_info_get_num_lines, (struct gpiod_chip_info *info)) \
    X(int, gpiod_chip_get_line_offset_from_name, (struct gpiod_chip *chip, const char *name)) \
    X(struct gpiod_line_info *, gpiod_chip_get_line_info, (struct gpiod_chip *chip, unsigned int offset)) \
    X(void, gpiod_line_info_free, (struct gpiod_line_info *info)) \
    X(const char *, gpiod_line_info_get_name, (struct gpiod_line_info *info)) \
    X(struct gpiod_line_settings *, gpiod_line_settings_new, (void)) \
    X(void, gpiod_line_settings_free, (struct gpiod_line_settings *settings)) \
    X(int, gpiod_line_settings_set_direction, (struct gpiod_line_settings *settings, int direction)) \
    X(int, gpiod_line_settings_set_edge_detection, (struct gpiod_line_settings *settings, int edge)) \
    X(int, gpiod_line_settings_set_bias, (struct gpiod_line_settings *settings, int bias)) \
    X(void, gpiod_line_settings_set_active_low, (struct gpiod_line_settings *settings, bool active_low)) \
    X(struct gpiod_line_config *, gpiod_line_config_new, (void)) \
    X(void, gpiod_line_config_free, (struct gpiod_line_config *config)) \
    X(int, gpiod_line_config_add_line_settings, (struct gpiod_line_config *config, const unsigned int *offsets, \
                                                 size_t num_offsets, struct gpiod_line_settings *settings)) \
    X(struct gpiod_request_config *, gpiod_request_config_new, (void)) \
    X(void, gpiod_request_config_free, (struct gpiod_request_config *config)) \
    X(void, gpiod_request_config_set_consumer, (struct gpiod_request_config *config, const char *consumer)) \
    X(struct gpiod_line_request *, gpiod_chip_request_lines, (struct gpiod_chip *chip, \
                                                              struct gpiod_request_config *req_cfg, \
                                                              struct gpiod_line_config *line_cfg)) \
    X(void, gpiod_line_request_release, (struct gpiod_line_request *request)) \
    X(int, gpiod_line_request_get_fd, (struct gpiod_line_request *request)) \
    X(int, gpiod_line_request_get_value, (struct gpiod_line_request *request, unsigned int offset)) \
    X(int, gpiod_line_request_wait_edge_events, (struct gpiod_line_request *request, int64_t timeout_ns)) \
    X(int, gpiod_line_request_read_edge_events, (struct gpiod_line_request *request, \
                                                 struct gpiod_edge_event_buffer *buffer, size_t max_events)) \
    X(struct gpiod_edge_event_buffer *, gpiod_edge_event_buffer_new, (size_t capacity)) \
    X(void, gpiod_edge_event_buffer_free, (struct gpiod_edge_event_buffer *buffer)) \
    X(struct gpiod_edge_event *, gpiod_edge_event_buffer_get_event, (struct gpiod_edge_event_buffer *buffer, \
                                                                     unsigned long index)) \
    X(int, gpiod_edge_event_get_event_type, (struct gpiod_edge_event *event)) \
    X(uint64_t, gpiod_edge_event_get_timestamp_ns, (struct gpiod_edge_event *event))

#define KC_GPIO_FIELD(type, name, parameters) type (*name) parameters;
static struct { KC_GPIO_V1_FUNCTIONS(KC_GPIO_FIELD) } v1;
static struct { KC_GPIO_V2_FUNCTIONS(KC_GPIO_FIELD) } v2;
#undef KC_GPIO_FIELD

static int api;  // 2, 1, or 0 (not loaded); written under `once`
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

// Opens `soname` and finds every function of `table` in it; on failure the reason is appended
// to load_error and the library closed.
#define KC_GPIO_LOOKUP(type, name, parameters) \
    *(void **)&table.name = dlsym(library, #name); \
    if (!table.name) { missing = #name; }

static void append_error(const char *soname, const char *reason) {
    size_t used = strlen(load_error);
    snprintf(load_error + used, sizeof load_error - used, "%s%s: %s", used ? "; " : "", soname, reason);
}

static void load(void) {
    const char *missing = NULL;
    void *library = dlopen("libgpiod.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library) {
#define table v2
        KC_GPIO_V2_FUNCTIONS(KC_GPIO_LOOKUP)
#undef table
        if (!missing) { api = 2; return; }  // never closed, as the other libraries opened on use
        append_error("libgpiod.so.3: no symbol", missing);
        dlclose(library);
    } else {
        const char *reason = dlerror();
        append_error("libgpiod.so.3", reason ? reason : "dlopen failed");
    }
    missing = NULL;
    library = dlopen("libgpiod.so.2", RTLD_NOW | RTLD_LOCAL);
    if (library) {
#define table v1
        KC_GPIO_V1_FUNCTIONS(KC_GPIO_LOOKUP)
#undef table
        if (!missing) { api = 1; load_error[0] = 0; return; }
        append_error("libgpiod.so.2: no symbol", missing);
        dlclose(library);
    } else {
        const char *reason = dlerror();
        append_error("libgpiod.so.2", reason ? reason : "dlopen failed");
    }
}
#undef KC_GPIO_LOOKUP

int kc_gpio_api(void) {
    pthread_once(&once, load);
    return api;
}

const char *kc_gpio_load_error(void) {
    return kc_gpio_api() ? NULL : load_error;
}

struct kc_gpio_chip {
    struct gpiod_chip *chip;
    char name[64], label[64];
    unsigned int num_lines;
};

struct kc_gpio_line {
    struct gpiod_line *v1;                 // 1.6: the chip's line
    struct gpiod_line_request *v2;         // 2.x: the request
    struct gpiod_edge_event_buffer *buffer;  // 2.x
    unsigned int offset;
    int fd, has_name;
    char name[64];
};

static void copy(char *to, size_t size, const char *from) { snprintf(to, size, "%s", from ? from : ""); }

static int is_number(const char *text) {
    if (!*text) return 0;
    for (const char *c = text; *c; c++) if (*c < '0' || *c > '9') return 0;
    return 1;
}

/// 2.x: a chip opened by path, with its name, label and line count; NULL and errno on failure.
static struct kc_gpio_chip *v2_open(const char *path) {
    struct gpiod_chip *chip = v2.gpiod_chip_open(path);
    if (!chip) return NULL;
    struct gpiod_chip_info *info = v2.gpiod_chip_get_info(chip);
    struct kc_gpio_chip *out = info ? calloc(1, sizeof *out) : NULL;
    if (!out) {
        int e = errno;
        if (info) v2.gpiod_chip_info_free(info);
        v2.gpiod_chip_close(chip);
        errno = e;
        return NULL;
    }
    out->chip = chip;
    copy(out->name, sizeof out->name, v2.gpiod_chip_info_get_name(info));
    copy(out->label, sizeof out->label, v2.gpiod_chip_info_get_label(info));
    out->num_lines = (unsigned int)v2.gpiod_chip_info_get_num_lines(info);
    v2.gpiod_chip_info_free(info);
    return out;
}

static int is_chip_entry(const struct dirent *entry) { return strncmp(entry->d_name, "gpiochip", 8) == 0; }

/// 2.x: the chip in /dev whose label is `label` (in /dev's name order, as libgpiod 1.6's chip
/// iterator), NULL and ENOENT when none.
static struct kc_gpio_chip *v2_open_by_label(const char *label) {
    struct dirent **entries;
    int n = scandir("/dev", &entries, is_chip_entry, alphasort);
    if (n < 0) return NULL;
    struct kc_gpio_chip *found = NULL;
    for (int i = 0; i < n; i++) {
        char path[300];
        snprintf(path, sizeof path, "/dev/%s", entries[i]->d_name);
        if (!found) {
            struct kc_gpio_chip *chip = v2_open(path);
            if (chip && strcmp(chip->label, label) == 0) found = chip;
            else if (chip) kc_gpio_chip_close(chip);
        }
        free(entries[i]);
    }
    free(entries);
    if (!found) errno = ENOENT;
    return found;
}

struct kc_gpio_chip *kc_gpio_chip_open(const char *lookup) {
    switch (kc_gpio_api()) {
    case 1: {
        struct gpiod_chip *chip = v1.gpiod_chip_open_lookup(lookup);
        struct kc_gpio_chip *out = chip ? calloc(1, sizeof *out) : NULL;
        if (!out) {
            int e = errno;
            if (chip) v1.gpiod_chip_close(chip);
            errno = e;
            return NULL;
        }
        out->chip = chip;
        copy(out->name, sizeof out->name, v1.gpiod_chip_name(chip));
        copy(out->label, sizeof out->label, v1.gpiod_chip_label(chip));
        out->num_lines = v1.gpiod_chip_num_lines(chip);
        return out;
    }
    case 2: {
        // libgpiod 1.6's gpiod_chip_open_lookup: a number is /dev/gpiochipN; else a label, then
        // a path under /dev/, else a name in /dev.
        char path[300];
        if (is_number(lookup)) {
            snprintf(path, sizeof path, "/dev/gpiochip%lu", strtoul(lookup, NULL, 10));
            return v2_open(path);
        }
        struct kc_gpio_chip *chip = v2_open_by_label(lookup);
        if (chip) return chip;
        if (strncmp(lookup, "/dev/", 5) == 0) return v2_open(lookup);
        snprintf(path, sizeof path, "/dev/%s", lookup);
        return v2_open(path);
    }
    default:
        errno = ELIBACC;
        return NULL;
    }
}

const char *kc_gpio_chip_name(const struct kc_gpio_chip *chip) { return chip->name; }
const char *kc_gpio_chip_label(const struct kc_gpio_chip *chip) { return chip->label; }
unsigned int kc_gpio_chip_num_lines(const struct kc_gpio_chip *chip) { return chip->num_lines; }

int kc_gpio_chip_find_line(struct kc_gpio_chip *chip, const char *name) {
    errno = 0;
    if (api == 1) {
        struct gpiod_line *line = v1.gpiod_chip_find_line(chip->chip, name);
        if (!line) { if (errno == 0) errno = ENOENT; return -1; }
        return (int)v1.gpiod_line_offset(line);
    }
    int offset = v2.gpiod_chip_get_line_offset_from_name(chip->chip, name);
    if (offset < 0 && errno == 0) errno = ENOENT;
    return offset < 0 ? -1 : offset;
}

void kc_gpio_chip_close(struct kc_gpio_chip *chip) {
    if (api == 1) v1.gpiod_chip_close(chip->chip);
    else v2.gpiod_chip_close(chip->chip);
    free(chip);
}

/// 2.x: the request of one line as an input with both edges, as kc_gpio_line_request asks.
static struct gpiod_line_request *v2_request(struct gpiod_chip *chip, unsigned int offset, const char *consumer,
                                             int active_low, enum kc_gpio_bias bias) {
    struct gpiod_line_settings *settings = v2.gpiod_line_settings_new();
    struct gpiod_line_config *line_config = v2.gpiod_line_config_new();
    struct gpiod_request_config *request_config = v2.gpiod_request_config_new();
    struct gpiod_line_request *request = NULL;
    int v2_bias = bias == KC_GPIO_BIAS_PULL_UP ? V2_BIAS_PULL_UP
        : bias == KC_GPIO_BIAS_PULL_DOWN ? V2_BIAS_PULL_DOWN
        : bias == KC_GPIO_BIAS_DISABLE ? V2_BIAS_DISABLED : V2_BIAS_AS_IS;
    if (settings && line_config && request_config
        && v2.gpiod_line_settings_set_direction(settings, V2_DIRECTION_INPUT) == 0
        && v2.gpiod_line_settings_set_edge_detection(settings, V2_EDGE_BOTH) == 0
        && v2.gpiod_line_settings_set_bias(settings, v2_bias) == 0) {
        v2.gpiod_line_settings_set_active_low(settings, active_low != 0);
        if (v2.gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) == 0) {
            v2.gpiod_request_config_set_consumer(request_config, consumer);
            request = v2.gpiod_chip_request_lines(chip, request_config, line_config);
        }
    }
    int e = errno;
    if (request_config) v2.gpiod_request_config_free(request_config);
    if (line_config) v2.gpiod_line_config_free(line_config);
    if (settings) v2.gpiod_line_settings_free(settings);
    errno = e;
    return request;
}

struct kc_gpio_line *kc_gpio_line_request(struct kc_gpio_chip *chip, unsigned int offset, const char *consumer,
                                          int active_low, enum kc_gpio_bias bias) {
    struct kc_gpio_line *line = calloc(1, sizeof *line);
    if (!line) return NULL;
    line->offset = offset;
    if (api == 1) {
        line->v1 = v1.gpiod_chip_get_line(chip->chip, offset);
        int flags = active_low ? V1_FLAG_ACTIVE_LOW : 0;
        flags |= bias == KC_GPIO_BIAS_PULL_UP ? V1_FLAG_BIAS_PULL_UP
            : bias == KC_GPIO_BIAS_PULL_DOWN ? V1_FLAG_BIAS_PULL_DOWN
            : bias == KC_GPIO_BIAS_DISABLE ? V1_FLAG_BIAS_DISABLE : 0;
        if (!line->v1 || v1.gpiod_line_request_both_edges_events_flags(line->v1, consumer, flags) != 0) {
            int e = errno;
            free(line);
            errno = e;
            return NULL;
        }
        const char *name = v1.gpiod_line_name(line->v1);
        line->has_name = name != NULL;
        copy(line->name, sizeof line->name, name);
        line->fd = v1.gpiod_line_event_get_fd(line->v1);
        return line;
    }
    struct gpiod_line_info *info = v2.gpiod_chip_get_line_info(chip->chip, offset);
    if (info) {
        const char *name = v2.gpiod_line_info_get_name(info);
        line->has_name = name != NULL;
        copy(line->name, sizeof line->name, name);
        v2.gpiod_line_info_free(info);
    }
    line->v2 = v2_request(chip->chip, offset, consumer, active_low, bias);
    line->buffer = line->v2 ? v2.gpiod_edge_event_buffer_new(V2_EVENTS_AT_ONCE) : NULL;
    if (!line->buffer) {
        int e = errno;
        if (line->v2) v2.gpiod_line_request_release(line->v2);
        free(line);
        errno = e;
        return NULL;
    }
    line->fd = v2.gpiod_line_request_get_fd(line->v2);
    return line;
}

unsigned int kc_gpio_line_offset(const struct kc_gpio_line *line) { return line->offset; }
const char *kc_gpio_line_name(const struct kc_gpio_line *line) { return line->has_name ? line->name : NULL; }
int kc_gpio_line_fd(const struct kc_gpio_line *line) { return line->fd; }

int kc_gpio_line_value(struct kc_gpio_line *line) {
    int value = api == 1 ? v1.gpiod_line_get_value(line->v1) : v2.gpiod_line_request_get_value(line->v2, line->offset);
    return value < 0 ? -1 : value;
}

int kc_gpio_line_read_edges(struct kc_gpio_line *line, struct kc_gpio_edge *edges, unsigned int capacity) {
    unsigned int count = 0;
    while (count < capacity) {
        unsigned int room = capacity - count;
        int ready;
        if (api == 1) {
            const struct timespec none = {0, 0};
            ready = v1.gpiod_line_event_wait(line->v1, &none);
        } else {
            ready = v2.gpiod_line_request_wait_edge_events(line->v2, 0);
        }
        if (ready < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (ready == 0) break;
        int n;
        if (api == 1) {
            struct gpiod_line_event events[V1_EVENTS_AT_ONCE];
            unsigned int most = room < V1_EVENTS_AT_ONCE ? room : V1_EVENTS_AT_ONCE;
            n = v1.gpiod_line_event_read_multiple(line->v1, events, most);
            for (int i = 0; i < n; i++) {
                edges[count + i].rising = events[i].event_type == V1_EVENT_RISING_EDGE;
                edges[count + i].timestamp_ns =
                    (uint64_t)events[i].ts.tv_sec * 1000000000u + (uint64_t)events[i].ts.tv_nsec;
            }
        } else {
            n = v2.gpiod_line_request_read_edge_events(line->v2, line->buffer,
                                                       room < V2_EVENTS_AT_ONCE ? room : V2_EVENTS_AT_ONCE);
            for (int i = 0; i < n; i++) {
                struct gpiod_edge_event *event = v2.gpiod_edge_event_buffer_get_event(line->buffer, (unsigned long)i);
                edges[count + i].rising = v2.gpiod_edge_event_get_event_type(event) == V2_EDGE_EVENT_RISING_EDGE;
                edges[count + i].timestamp_ns = v2.gpiod_edge_event_get_timestamp_ns(event);
            }
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -1;
        }
        count += (unsigned int)n;
    }
    return (int)count;
}

void kc_gpio_line_release(struct kc_gpio_line *line) {
    if (api == 1) {
        v1.gpiod_line_release(line->v1);
    } else {
        v2.gpiod_line_request_release(line->v2);
        v2.gpiod_edge_event_buffer_free(line->buffer);
    }
    free(line);
}
