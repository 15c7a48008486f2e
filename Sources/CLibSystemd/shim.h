// SPDX-License-Identifier: Apache-2.0
// libsystemd (Debian: libsystemd-dev, runtime libsystemd0): sd_notify(3) and
// sd_watchdog_enabled(3) for a Type=notify service with WatchdogSec=.
#include <systemd/sd-daemon.h>
