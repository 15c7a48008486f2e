// SPDX-License-Identifier: Apache-2.0
#ifndef KC_TIME_H
#define KC_TIME_H
// A wall-clock (CLOCK_REALTIME) timer for the display-off schedule: a timerfd that becomes
// readable at an absolute wall time, or at once when the clock is set (NTP step, `date -s`),
// so the frame loop can poll it with its other descriptors instead of polling the clock.

/// timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK). Returns the fd or -1 with errno.
int kc_wall_timer_create(void);

/// Arms `fd` to expire at `epoch_seconds` (absolute, CLOCK_REALTIME) with
/// TFD_TIMER_CANCEL_ON_SET: a clock step also wakes it. Returns 0 or -1 with errno.
int kc_wall_timer_arm(int fd, long long epoch_seconds);

/// Reads (and so clears) the expiry count. Returns 1 when it expired, 0 when not yet,
/// 2 when the clock was set (ECANCELED), -1 with errno on another error.
int kc_wall_timer_consume(int fd);

#endif
