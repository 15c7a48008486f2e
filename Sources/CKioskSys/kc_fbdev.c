// SPDX-License-Identifier: Apache-2.0
#include "kc_fbdev.h"

const unsigned long kc_FBIOGET_VSCREENINFO = FBIOGET_VSCREENINFO;
const unsigned long kc_FBIOPUT_VSCREENINFO = FBIOPUT_VSCREENINFO;
const unsigned long kc_FBIOGET_FSCREENINFO = FBIOGET_FSCREENINFO;
const unsigned long kc_FBIOPAN_DISPLAY = FBIOPAN_DISPLAY;
const unsigned long kc_FBIOBLANK = FBIOBLANK;
