// SPDX-License-Identifier: Apache-2.0
#ifndef KC_DRM_H
#define KC_DRM_H
// DRM/KMS helpers for KioskDisplay's DRMDisplay: the page-flip event trampoline and the
// few libdrm values that are function-like C macros Swift cannot import.
// This header deliberately includes no libdrm header, so a module that imports CKioskDRM
// compiles without libdrm's include path; only kc_drm.c includes libdrm.
#include <stdint.h>

/// DRM_FORMAT_XRGB8888 from drm_fourcc.h (fourcc 'X','R','2','4' = 0x34325258):
/// 32 bits per pixel, bytes B, G, R, X in memory.
extern const uint32_t kc_drm_format_xrgb8888;

/// DRM_FORMAT_ARGB8888 from drm_fourcc.h ('A','R','2','4' = 0x34325241): bytes B, G, R, A in
/// memory; KMS planes take its alpha as premultiplied unless a "pixel blend mode" property says
/// otherwise (drm_blend.c).
extern const uint32_t kc_drm_format_argb8888;

/// drmModePageFlip(fd, crtc_id, fb_id, DRM_MODE_PAGE_FLIP_EVENT, done): queues a flip to
/// `fb_id` on the next vertical blank and asks for a completion event. `*done` is set to 0
/// now and to 1 by kc_drm_wait_page_flip when the event for this flip arrives; `done` must
/// stay valid until then (or until the fd is closed).
/// Returns 0, or -1 with errno set (EBUSY: a flip is still pending; EINVAL, EACCES ...).
int kc_drm_page_flip(int fd, uint32_t crtc_id, uint32_t fb_id, volatile int *done);

/// Waits until `*done` becomes 1: poll(2) on `fd` for at most `timeout_ms` milliseconds in
/// total, handing each DRM event to drmHandleEvent, whose page-flip handler sets the `done`
/// flag that was given to the flip. Returns 1 when the flip completed, 0 on timeout,
/// -1 with errno set when poll or reading the event failed (EINTR is retried inside).
int kc_drm_wait_page_flip(int fd, int timeout_ms, volatile int *done);

#endif
