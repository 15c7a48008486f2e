// SPDX-License-Identifier: Apache-2.0
#include "kc_time.h"
#include <errno.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

int kc_wall_timer_create(void) { return timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK); }

int kc_wall_timer_arm(int fd, long long epoch_seconds) {
    struct itimerspec spec = { 0 };
    spec.it_value.tv_sec = (time_t)epoch_seconds;
    if (spec.it_value.tv_sec <= 0) spec.it_value.tv_sec = 1;   // 0 would disarm it
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL);
}

int kc_wall_timer_consume(int fd) {
    uint64_t n = 0;
    ssize_t r = read(fd, &n, sizeof n);
    if (r == (ssize_t)sizeof n) return 1;
    if (r < 0 && errno == EAGAIN) return 0;
    if (r < 0 && errno == ECANCELED) return 2;
    return -1;
}
