// SPDX-License-Identifier: Apache-2.0
// CKioskShim: the imaging C with bodies that Swift cannot express directly (setjmp-guarded
// libjpeg-turbo / libpng decode and PNG encode, kc_image.h; libheif's HEVC decoder plug-in on
// several threads, kc_heif.h). Every symbol carries the prefix
// kc_. The system calls are in CKioskSys, the libdrm page flip in CKioskDRM.
#ifndef KC_SHIM_H
#define KC_SHIM_H
#include "kc_image.h"
#include "kc_heif.h"
#endif
