// SPDX-License-Identifier: Apache-2.0
// fbdev (Linux framebuffer) ioctl request numbers for Swift, from <linux/fb.h>.
// The structs (struct fb_var_screeninfo, struct fb_fix_screeninfo, struct fb_bitfield) and the
// FB_VISUAL_* / FB_TYPE_* constants come in through <linux/fb.h> itself, which Swift imports.
#ifndef KC_FBDEV_H
#define KC_FBDEV_H
#include <linux/fb.h>

/// FBIOGET_VSCREENINFO (0x4600): reads struct fb_var_screeninfo (resolution, virtual size,
/// pan offsets, bits per pixel, colour bitfields).
extern const unsigned long kc_FBIOGET_VSCREENINFO;
/// FBIOPUT_VSCREENINFO (0x4601): writes struct fb_var_screeninfo (mode set; with
/// FB_ACTIVATE_NOW, also how a saved mode is put back).
extern const unsigned long kc_FBIOPUT_VSCREENINFO;
/// FBIOGET_FSCREENINFO (0x4602): reads struct fb_fix_screeninfo (smem_start/smem_len,
/// line_length, visual, ypanstep).
extern const unsigned long kc_FBIOGET_FSCREENINFO;
/// FBIOPAN_DISPLAY (0x4606): shows the part of the virtual screen at the xoffset/yoffset of the
/// struct fb_var_screeninfo passed in (page flipping when yres_virtual >= 2 * yres).
extern const unsigned long kc_FBIOPAN_DISPLAY;
/// FBIOBLANK (0x4611): blanks or unblanks the screen, argument FB_BLANK_UNBLANK (0) ...
/// FB_BLANK_POWERDOWN (4). On a regular file it fails with ENOTTY.
extern const unsigned long kc_FBIOBLANK;

#endif
