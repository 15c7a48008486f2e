// SPDX-License-Identifier: Apache-2.0
// CKioskSys: the C with bodies that POSIX glue needs and Swift cannot express, on libc and
// kernel headers alone. Every symbol carries the prefix kc_. Sub-headers by area:
//   kc_ioctl.h    ioctl(2) wrappers (ioctl is variadic)
//   kc_fbdev.h    fbdev request numbers (<linux/fb.h>)
//   kc_console.h  VT console mode requests and the async-signal-safe restore
//   kc_time.h     the wall-clock timerfd of the display-off schedule
//   kc_version.h  the program's version (the top-level VERSION file) and the loaded libraries
//   kc_malloc.h   glibc's allocator settings (mallopt)
//   kc_cpu.h      the CPUs this process may run on (sched_getaffinity)
//   kc_cec.h      the kernel's HDMI-CEC ioctls (<linux/cec.h>)
//   kc_thread.h   thread names (pthread_setname_np)
#ifndef KC_SYS_H
#define KC_SYS_H
#include "kc_ioctl.h"
#include "kc_fbdev.h"
#include "kc_console.h"
#include "kc_time.h"
#include "kc_version.h"
#include "kc_malloc.h"
#include "kc_cpu.h"
#include "kc_cec.h"
#include "kc_thread.h"
#endif
