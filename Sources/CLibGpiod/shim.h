// SPDX-License-Identifier: Apache-2.0
// libgpiod 1.6 (Debian: libgpiod-dev, runtime libgpiod2): GPIO lines through the GPIO character
// device (/dev/gpiochipN): chips by name, path, label or number, lines by offset or name, edge
// events with the kernel's timestamps on a descriptor to poll, active-low and bias flags.
#include <gpiod.h>
