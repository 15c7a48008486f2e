// SPDX-License-Identifier: Apache-2.0
#ifndef KC_GPIO_H
#define KC_GPIO_H
// One GPIO line requested for edge events through libgpiod, opened with dlopen at the first
// request instead of linked, so one binary runs with either of libgpiod's two APIs:
//   - libgpiod 2.x (soname libgpiod.so.3; Debian 13's libgpiod3, 2.2), tried first;
//   - libgpiod 1.6 (soname libgpiod.so.2; Debian 12's libgpiod2, 1.6.3).
// The functions each one is called through are declared in kc_gpio.c, as in that version's
// <gpiod.h>; no libgpiod header is needed to build. The .deb depends on the package that holds
// the soname found when it is built (libgpiod3 or libgpiod2), since dpkg-shlibdeps cannot see it.
//
// Functions returning a pointer or an int report a failure with NULL or -1 and errno set (as
// libgpiod leaves it, or ENOENT when no chip or line of that name exists, ELIBACC when libgpiod
// could not be loaded: kc_gpio_load_error() then says why).
#include <stdint.h>

/// A line's bias while requested.
enum kc_gpio_bias {
    /// As it is (no flag).
    KC_GPIO_BIAS_AS_IS = 0,
    KC_GPIO_BIAS_PULL_UP = 1,
    KC_GPIO_BIAS_PULL_DOWN = 2,
    /// Neither pull-up nor pull-down.
    KC_GPIO_BIAS_DISABLE = 3,
};

/// An opened GPIO chip (/dev/gpiochipN); owned by the caller, kc_gpio_chip_close() frees it.
struct kc_gpio_chip;
/// A line of a chip requested as an input with edge events on both edges; owned by the caller,
/// kc_gpio_line_release() gives it back (before its chip is closed).
struct kc_gpio_line;

/// One edge read from a requested line.
struct kc_gpio_edge {
    /// 1: a rising edge (the line became active, as active-low says), 0: a falling edge.
    int rising;
    /// The kernel's timestamp of the edge, CLOCK_MONOTONIC, in nanoseconds.
    uint64_t timestamp_ns;
};

/// Loads libgpiod once per process (thread-safe): 2 when libgpiod.so.3 (the 2.x API) was
/// found with every function used, 1 for libgpiod.so.2 (the 1.6 API), 0 when neither.
int kc_gpio_api(void);
/// Why libgpiod could not be loaded (each soname's dlerror text, or the missing symbol), NULL
/// when it was. The string is static.
const char *_Nullable kc_gpio_load_error(void);

/// Opens a chip by name (`gpiochip0`: /dev/gpiochip0), path (`/dev/gpiochip0`), number (`0`)
/// or label (`pinctrl-bcm2711`), as libgpiod 1.6's gpiod_chip_open_lookup takes them. NULL and
/// errno (ENOENT: no such chip) on failure.
struct kc_gpio_chip *_Nullable kc_gpio_chip_open(const char *_Nonnull lookup);
/// The chip's name (`gpiochip0`); valid while the chip is open.
const char *_Nonnull kc_gpio_chip_name(const struct kc_gpio_chip *_Nonnull chip);
/// The chip's label (`pinctrl-bcm2711`, `gpio-sim.0-node0`); valid while the chip is open.
const char *_Nonnull kc_gpio_chip_label(const struct kc_gpio_chip *_Nonnull chip);
/// How many lines the chip has (offsets 0 ... n - 1).
unsigned int kc_gpio_chip_num_lines(const struct kc_gpio_chip *_Nonnull chip);
/// The offset of the chip's line named `name`, or -1 and errno (ENOENT: no line of that name).
int kc_gpio_chip_find_line(struct kc_gpio_chip *_Nonnull chip, const char *_Nonnull name);
/// Closes the chip and frees it; its lines must have been released.
void kc_gpio_chip_close(struct kc_gpio_chip *_Nonnull chip);

/// Requests line `offset` of `chip` as an input with edge detection on both edges, for
/// `consumer` (the name the kernel shows), active-low when `active_low` is non-zero, with
/// `bias`. NULL and errno (EBUSY: another program holds the line) on failure.
struct kc_gpio_line *_Nullable kc_gpio_line_request(struct kc_gpio_chip *_Nonnull chip, unsigned int offset,
                                                    const char *_Nonnull consumer, int active_low,
                                                    enum kc_gpio_bias bias);
/// The line's offset on its chip.
unsigned int kc_gpio_line_offset(const struct kc_gpio_line *_Nonnull line);
/// The line's name (`GPIO17`), NULL when it has none; valid until the line is released.
const char *_Nullable kc_gpio_line_name(const struct kc_gpio_line *_Nonnull line);
/// The descriptor that becomes readable (POLLIN) when edge events are waiting; owned by the line.
int kc_gpio_line_fd(const struct kc_gpio_line *_Nonnull line);
/// The line's level now: 1 active, 0 inactive (active-low applied), -1 and errno on failure.
int kc_gpio_line_value(struct kc_gpio_line *_Nonnull line);
/// Reads up to `capacity` waiting edge events into `edges`, oldest first, without blocking: how
/// many (0: none waiting), or -1 and errno on failure (ENODEV: the chip went away).
int kc_gpio_line_read_edges(struct kc_gpio_line *_Nonnull line, struct kc_gpio_edge *_Nonnull edges,
                            unsigned int capacity);
/// Gives the line back to the kernel and frees it.
void kc_gpio_line_release(struct kc_gpio_line *_Nonnull line);

#endif
