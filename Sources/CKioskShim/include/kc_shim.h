// CKioskShim: the few C functions with bodies that Swift cannot express directly.
// Every symbol carries the prefix kc_. Sub-headers by area:
//   kc_image.h  setjmp-guarded libjpeg-turbo / libpng decode and PNG encode
//   kc_ioctl.h  ioctl request macros (fbdev, KD, DRM, evdev) as functions and constants
#ifndef KC_SHIM_H
#define KC_SHIM_H
#include "kc_image.h"
#include "kc_ioctl.h"
#endif
