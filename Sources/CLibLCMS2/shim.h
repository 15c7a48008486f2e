// SPDX-License-Identifier: Apache-2.0
// Little CMS 2 (Debian: liblcms2-dev; runtime liblcms2-2), with its plug-in API for the memory
// handler that counts what it allocates (CKioskColour, kc_colour.c).
#include <lcms2.h>
#include <lcms2_plugin.h>
