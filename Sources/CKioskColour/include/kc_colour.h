// SPDX-License-Identifier: Apache-2.0
#ifndef KC_COLOUR_H
#define KC_COLOUR_H
// Colour transforms through Little CMS 2 (kc_colour.c) and the HDR to SDR tone mapping
// (kc_tonemap.c), for KioskImaging's ColourConversion.
//
// A kc_colour is one Little CMS context (cmsCreateContext) with a memory handler of our own,
// so that everything Little CMS allocates for it (the parsed profiles, the optimised
// transform's tables) is counted and refused past a limit, and an error handler that keeps
// the library's last message. Steps: open the source (an embedded ICC profile, or a profile
// built from primaries, white point and a tone curve), optionally the target (an ICC profile;
// sRGB when none is opened), then build the transform, which closes both profiles. Pixels are
// converted in place, 4 bytes a pixel; the output is always B,G,R,A (ARGB8888 as a
// little-endian uint32). A built transform is only read by kc_colour_apply, so it may be
// used from several threads at once (made with cmsFLAGS_NOCACHE: no one-pixel cache).
//
// Reference: Little CMS 2.14 API (lcms2.h, "LittleCMS2.14 API.pdf"), plug-in API
// (lcms2_plugin.h, "LittleCMS2.14 Plugin API.pdf", memory management plug-in).

#include <stddef.h>
#include <stdint.h>

/// What the pixels given to kc_colour_apply hold, 4 bytes each.
enum {
    /// B, G, R, A (or X): an RGB source profile. With `alpha`, A is kept as it is.
    KC_COLOUR_IN_BGRA = 0,
    /// B, G, R, X with B = G = R (a gray image expanded to RGB): a gray source profile, B read.
    KC_COLOUR_IN_GRAY = 1,
    /// C, M, Y, K with 0 = no ink: a CMYK source profile. A is set to 0xFF.
    KC_COLOUR_IN_CMYK = 2,
    /// C, M, Y, K with 255 = no ink (Adobe's inverted CMYK JPEGs): a CMYK source profile.
    KC_COLOUR_IN_CMYK_INVERTED = 3,
};

/// Rendering intents (ICC.1:2010 section 6.2; Little CMS's INTENT_ values).
enum {
    KC_COLOUR_PERCEPTUAL = 0,
    KC_COLOUR_RELATIVE_COLORIMETRIC = 1,
};

/// The colour space of an opened profile (its header's data colour space).
enum {
    KC_COLOUR_SPACE_OTHER = 0,
    KC_COLOUR_SPACE_RGB = 1,
    KC_COLOUR_SPACE_GRAY = 2,
    KC_COLOUR_SPACE_CMYK = 3,
};

/// A Little CMS context and, once built, its transform. Opaque.
typedef struct kc_colour kc_colour;

/// A new context whose allocations may not pass `memory_limit` bytes in all (0: no limit). NULL
/// only when out of memory.
kc_colour *kc_colour_create(size_t memory_limit);
/// Opens `length` bytes of an ICC profile as the source (copied by Little CMS's parser as it
/// reads the tags it needs). 0, or -1 with the reason in kc_colour_error (a malformed profile,
/// a tag that runs past the end, over the memory limit).
int kc_colour_open_source_icc(kc_colour *colour, const void *bytes, size_t length);
/// Builds the source profile from a white point and red, green, blue primaries (CIE 1931 x, y:
/// white[0..1], primaries[0..5] as rx, ry, gx, gy, bx, by) and one tone curve for the three
/// channels, a Little CMS parametric curve of `curve_type` (1: Y = X^g; 4: the sRGB form,
/// Y = (aX + b)^g for X >= d, else cX) with `params` g, a, b, c, d (cmsBuildParametricToneCurve).
/// 0, or -1 with the reason.
int kc_colour_open_source_rgb(kc_colour *colour, const double white[2], const double primaries[6],
                              int curve_type, const double params[5]);
/// Writes the opened source profile as ICC bytes (cmsSaveProfileToMem) into `buffer` when `size`
/// is enough; returns the size it needs (0 on error, with the reason).
size_t kc_colour_save_source(kc_colour *colour, void *buffer, size_t size);
/// Builds sRGB (cmsCreate_sRGBProfile) as the source: for a screen profile that is not sRGB.
int kc_colour_open_source_srgb(kc_colour *colour);
/// Opens an ICC profile as the target (the screen's). Without one the target is sRGB
/// (cmsCreate_sRGBProfile). 0, or -1 with the reason.
int kc_colour_open_target_icc(kc_colour *colour, const void *bytes, size_t length);
/// The colour space of the opened source or target profile (KC_COLOUR_SPACE_*).
int kc_colour_source_space(const kc_colour *colour);
int kc_colour_target_space(const kc_colour *colour);
/// The opened source profile's description tag (cmsInfoDescription, English), at most
/// size - 1 bytes and a NUL, "" when it has none. Returns the length written.
size_t kc_colour_source_description(const kc_colour *colour, char *buffer, size_t size);
/// The same for the opened target profile.
size_t kc_colour_target_description(const kc_colour *colour, char *buffer, size_t size);
/// Builds the transform from the opened source to the target for pixels of `layout`
/// (KC_COLOUR_IN_*), with `intent` (KC_COLOUR_PERCEPTUAL, KC_COLOUR_RELATIVE_COLORIMETRIC; a
/// profile without tables for it falls back as ICC.1 says), keeping A when `alpha`, and
/// closes both profiles. 0, or -1 with the reason (a layout that does not fit the source's
/// colour space, an output profile that is not RGB, over the memory limit).
int kc_colour_build(kc_colour *colour, int layout, int intent, int alpha);
/// 1 when the built transform leaves every pixel of a test set as it is (each of the 256 grays
/// and a lattice of 16 levels a channel, 0, 17, ... 255): an sRGB profile converted to sRGB.
/// 0 otherwise, and for CMYK.
int kc_colour_is_identity(const kc_colour *colour);
/// Converts `count` pixels in place (cmsDoTransform with the same buffer in and out: the
/// pixels are 4 bytes in both formats and each is read before it is written).
void kc_colour_apply(const kc_colour *colour, void *pixels, size_t count);
/// What Little CMS holds for this context now, and the most it held, in bytes.
size_t kc_colour_memory_in_use(const kc_colour *colour);
size_t kc_colour_memory_peak(const kc_colour *colour);
/// The last error ("" when none): Little CMS's own message, or ours.
const char *kc_colour_error(const kc_colour *colour);
/// Frees the transform, any profile still open and the context. NULL is allowed.
void kc_colour_destroy(kc_colour *colour);
/// Little CMS's version (cmsGetEncodedCMMversion: 2140 for 2.14).
int kc_colour_library_version(void);

// MARK: - HDR to SDR (kc_tonemap.c)

/// The HDR transfer functions of ITU-T H.273 (transfer_characteristics) handled.
enum {
    /// SMPTE ST 2084 perceptual quantiser, BT.2100 PQ (code point 16).
    KC_HDR_PQ = 16,
    /// ARIB STD-B67 hybrid log-gamma, BT.2100 HLG (code point 18).
    KC_HDR_HLG = 18,
};

/// How an HDR picture is mapped to an SDR screen (see kc_tonemap.c for the steps).
typedef struct kc_tonemap_params {
    /// KC_HDR_PQ or KC_HDR_HLG.
    int transfer;
    /// The brightest the picture was mastered for, in cd/m² (the EETF's source peak, BT.2390
    /// section 5.4.1 "Lw"): a PQ file's content light level or mastering display; 1000 for HLG
    /// (BT.2100's nominal HLG display). Between 1 and 10000.
    double source_peak;
    /// The SDR screen's white in cd/m² of the HDR signal: 203, BT.2408's HDR reference white,
    /// which the EETF's target peak is set to and which comes out as full SDR white.
    double sdr_white;
    /// Linear source RGB to linear BT.709 RGB, row-major (from the primaries, with Bradford
    /// adaptation when the white points differ).
    double matrix[9];
} kc_tonemap_params;

/// Lookup tables for one set of parameters and input bit depth (8, 10, 12 or 16). Opaque.
typedef struct kc_tonemap kc_tonemap;

/// Builds the tables (about 100 KiB, and 4 bytes per code: 116 KiB at 12 bits, 356 KiB at 16). NULL when out of
/// memory or for a bad parameter.
kc_tonemap *kc_tonemap_create(const kc_tonemap_params *params, int bits);
/// The tables' size in bytes.
size_t kc_tonemap_bytes(const kc_tonemap *map);
/// Converts `height` rows of `width` pixels in place: each row (`stride` bytes apart) holds
/// `channels` (3: R,G,B; 4: R,G,B,A) 16-bit little-endian samples a pixel whose low `bits`
/// carry the value (libheif's heif_chroma_interleaved_RRGGBB(AA)_LE), and gets B,G,R,A bytes
/// in its first width * 4 bytes (A is the alpha sample scaled to 8 bits, or 0xFF).
void kc_tonemap_rows16(const kc_tonemap *map, uint8_t *rows, size_t stride, int width, int height, int channels);
/// Converts `count` B,G,R,A pixels of 8-bit HDR samples (a map made with `bits` 8) in place.
void kc_tonemap_bgra8(const kc_tonemap *map, uint32_t *pixels, size_t count);
/// The luminance in cd/m² that the map shows for a gray of `nits` cd/m² (the EETF), for tests.
double kc_tonemap_luminance(const kc_tonemap *map, double nits);
void kc_tonemap_destroy(kc_tonemap *map);

#endif
