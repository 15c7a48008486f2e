// SPDX-License-Identifier: Apache-2.0
#ifndef KC_AVIF_H
#define KC_AVIF_H
// An AVIF image sequence (the `avis` brand, AV1 Image File Format section 7) played frame by
// frame through libavif's decoder (avif/avif.h: avifDecoderParse, avifDecoderNextImage,
// avifImageYUVToRGB). libavif is opened with dlopen on first use instead of linked: it links
// libaom, dav1d, libgav1, rav1e, SVT-AV1 and libyuv, whose loading would cost every process
// resident memory for a format few shows play. The .deb depends on the libavif package by name
// (dpkg-shlibdeps cannot see a library opened at run time).
//
// The structures of avif.h stay in this file, so the Swift side does not depend on which
// libavif the project is built against (Debian 12's 0.11, soname 15; Debian 13's 1.x, soname 16).
#include <stddef.h>
#include <stdint.h>

/// The soname opened, chosen by the header built against (libavif's ABI 15 for 0.x, 16 for 1.x).
const char *kc_avif_soname(void);
/// Opens libavif and looks up every function used, once per process (thread-safe): 0 when
/// ready, -1 when not (then kc_avif_load_error() says why).
int kc_avif_load(void);
/// Why libavif could not be loaded (dlerror's text or the missing symbol), NULL when it was.
/// The string is static.
const char *kc_avif_load_error(void);
/// The loaded library's version ("0.11.1"), or NULL when it is not loaded.
const char *kc_avif_version(void);

/// What avifDecoderParse read from the container, before any frame is decoded.
typedef struct kc_avif_info {
    /// The frames' size, pixels (the track's `tkhd`/`ispe`, as libavif reports it).
    uint32_t width, height;
    /// Bits per sample: 8, 10 or 12.
    uint32_t depth;
    /// Frames in the sequence (avifDecoder.imageCount).
    int frame_count;
    /// How many times the sequence repeats after its first play (libavif 1.x's
    /// avifDecoder.repetitionCount; -1 when forever or unknown, always so with libavif 0.x).
    int repetition_count;
    /// The colour description of the sequence (ISO/IEC 23091-2 code points, as in `nclx`).
    int colour_primaries, transfer_characteristics, matrix_coefficients, full_range;
    /// An ICC profile (`colr` `prof`/`rICC`), owned by the decoder; NULL and 0 when none.
    const uint8_t *icc;
    size_t icc_size;
    /// Nonzero when the sequence has an alpha plane.
    int has_alpha;
    /// Chroma subsampling: 444, 422, 420 or 400 (monochrome); 0 when libavif does not say.
    int chroma;
} kc_avif_info;

/// An open sequence (an avifDecoder reading from memory).
typedef struct kc_avif kc_avif;

/// Parses the AVIF at `data` (`size` bytes, read in place: they must stay valid and unchanged
/// until kc_avif_close) as an image sequence, with libavif's limits set to `max_pixels` a frame,
/// `max_side` pixels a side and `max_frames` frames, and one decoding thread.
/// Returns NULL on failure with the reason in `error` (libavif's avifResultToString and its
/// diagnostics, or that libavif is not loaded).
kc_avif *kc_avif_open(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_side,
                      uint32_t max_frames, kc_avif_info *info, char *error, size_t error_size);

/// Decodes the next frame and converts it to RGB into `out` (rows of `stride` bytes,
/// info.height rows): with `sixteen` 0, B, G, R, A bytes (straight alpha, 255 without an
/// alpha plane: ARGB8888 read as a little-endian uint32); else R, G, B, A 16-bit samples with
/// the sequence's depth in their low bits. `*duration` is the frame's duration in seconds.
/// Returns 1 for a frame, 0 at the end of the sequence, -1 on an error (reason in `error`).
int kc_avif_next(kc_avif *avif, uint8_t *out, size_t stride, int sixteen, double *duration,
                 char *error, size_t error_size);

/// Back to before the first frame (avifDecoderReset): 0, or -1 with the reason in `error`.
int kc_avif_reset(kc_avif *avif, char *error, size_t error_size);

/// Destroys the decoder. NULL is allowed.
void kc_avif_close(kc_avif *avif);

#endif
