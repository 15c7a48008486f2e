// SPDX-License-Identifier: Apache-2.0
#ifndef KC_HEIF_H
#define KC_HEIF_H
// An HEVC decoder for libheif that decodes on several threads (kc_heif.c).
//
// Debian 12's libheif 1.15 decodes HEVC with libde265 through a built-in plug-in that starts
// one worker thread (de265_start_worker_threads(ctx, 1) in its decoder_libde265.cc), so a
// single-image HEIC is decoded on one core although x265 (heif-enc, and phones' encoders)
// codes its rows as wavefronts (the PPS's entropy_coding_sync_enabled_flag) that libde265
// can decode in parallel. kc_heif_install_hevc_decoder registers, with
// heif_register_decoder_plugin, a plug-in that does exactly what libheif's does (the same
// NAL units pushed, the same planes copied, the same nclx profile from the stream's VUI)
// with one worker thread per CPU the process may run on (at most KC_HEIF_MAX_THREADS), at a
// priority above the built-in one (heif_plugin.h: the largest value wins).
//
// Nothing is linked: libheif's functions are looked up in the handle its caller opened
// (dlopen of libheif.so.1), libde265's in libde265.so.0, which libheif.so.1 has loaded.

/// The most libde265 worker threads a decode starts (libde265 allows 32).
#define KC_HEIF_MAX_THREADS 8

/// Registers the plug-in with the libheif opened as `libheif` (a dlopen handle), once per
/// process (later calls return the first result). 0 when registered; -1 when not (then
/// kc_heif_hevc_decoder_error() says why, and libheif's own plug-in decodes HEVC).
int kc_heif_install_hevc_decoder(void *libheif);
/// Why the plug-in was not registered (a static string), NULL when it was.
const char *kc_heif_hevc_decoder_error(void);
/// The worker threads each decode starts (0 before the plug-in is registered).
int kc_heif_hevc_decoder_threads(void);
/// How many images the plug-in has decoded in this process (for tests and the benchmark).
long kc_heif_hevc_images_decoded(void);

#endif
