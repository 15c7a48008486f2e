// SPDX-License-Identifier: Apache-2.0
// libevdev (Debian: libevdev-dev, runtime libevdev2): evdev devices, their capabilities and
// axis ranges, the event stream with SYN_DROPPED resynchronisation, EVIOCGRAB, EVIOCSCLOCKID.
// linux/input.h (struct input_event, EVIOCG*) and linux/input-event-codes.h (EV_*, ABS_*, BTN_*,
// INPUT_PROP_*) come in through libevdev.h.
#include <libevdev/libevdev.h>
#include <sys/inotify.h>
