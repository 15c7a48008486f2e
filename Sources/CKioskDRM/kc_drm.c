// SPDX-License-Identifier: Apache-2.0
#include "kc_drm.h"
#include <errno.h>
#include <poll.h>
#include <time.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>

const uint32_t kc_drm_format_xrgb8888 = DRM_FORMAT_XRGB8888;
const uint32_t kc_drm_format_argb8888 = DRM_FORMAT_ARGB8888;

static void kc_drm_on_page_flip(int fd, unsigned int sequence, unsigned int tv_sec,
                                unsigned int tv_usec, void *user_data) {
    (void)fd; (void)sequence; (void)tv_sec; (void)tv_usec;
    if (user_data) *(volatile int *)user_data = 1;
}

int kc_drm_page_flip(int fd, uint32_t crtc_id, uint32_t fb_id, volatile int *done) {
    *done = 0;
    // libdrm's mode calls return -errno; normalise to -1 + errno like a system call.
    int r = drmModePageFlip(fd, crtc_id, fb_id, DRM_MODE_PAGE_FLIP_EVENT, (void *)done);
    if (r < 0) { if (r != -1) errno = -r; return -1; }
    return 0;
}

static long long kc_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kc_drm_wait_page_flip(int fd, int timeout_ms, volatile int *done) {
    drmEventContext ctx = { 0 };
    ctx.version = 2;  // page_flip_handler (DRM_EVENT_CONTEXT_VERSION >= 2)
    ctx.page_flip_handler = kc_drm_on_page_flip;
    long long deadline = kc_now_ms() + timeout_ms;
    while (!*done) {
        long long left = deadline - kc_now_ms();
        if (left <= 0) return 0;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int n = poll(&p, 1, (int)left);
        if (n < 0) { if (errno == EINTR) continue; return -1; }
        if (n == 0) return 0;
        if (p.revents & (POLLERR | POLLNVAL)) { errno = EIO; return -1; }
        if (drmHandleEvent(fd, &ctx) != 0) { if (errno == EINTR || errno == EAGAIN) continue; return -1; }
    }
    return 1;
}
