// SPDX-License-Identifier: Apache-2.0
#include "kc_ioctl.h"
#include <sys/ioctl.h>

int kc_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }
int kc_ioctl_int(int fd, unsigned long request, unsigned long value) { return ioctl(fd, request, value); }
