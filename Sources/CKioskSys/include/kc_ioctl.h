// SPDX-License-Identifier: Apache-2.0
#ifndef KC_IOCTL_H
#define KC_IOCTL_H
// ioctl(2) is variadic, so Swift cannot call it: these two wrappers are the only way in.
// Request numbers that are C macros (FBIOGET_VSCREENINFO, KDSETMODE, EVIOCGABS(n), ...)
// are exposed below as constants or functions with the kc_ prefix.

/// ioctl(fd, request, arg) with a pointer argument. Returns what ioctl returns; errno is set on -1.
int kc_ioctl_ptr(int fd, unsigned long request, void *arg);
/// ioctl(fd, request, value) with an integer argument (KDSETMODE, FBIOBLANK, EVIOCGRAB ...).
int kc_ioctl_int(int fd, unsigned long request, unsigned long value);

#endif
