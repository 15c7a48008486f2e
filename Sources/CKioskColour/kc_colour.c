// SPDX-License-Identifier: Apache-2.0
// Colour transforms through Little CMS 2 with every allocation counted (see kc_colour.h).
//
// Memory: the context is made with a memory-handler plug-in (lcms2_plugin.h,
// cmsPluginMemHandler) whose functions find this kc_colour through the context's user data
// (cmsGetContextUserData; Little CMS passes a temporary context carrying the same user data
// while it allocates the context itself). Each block carries its size in front so that free and
// realloc can count it back. A request that would pass the limit gets NULL, which Little CMS
// turns into a failed call (and an error message through our handler).
#include "kc_colour.h"

#include <lcms2.h>
#include <lcms2_plugin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kc_colour {
    cmsContext context;
    cmsHPROFILE source, target;
    cmsHTRANSFORM transform;
    int layout;
    /// Bytes Little CMS holds now, its peak, the limit (0: none); updated atomically (a
    /// transform may be applied from several threads, though applying allocates nothing).
    size_t in_use, peak, limit;
    /// The size of the last request refused for the limit (0: none), for the message.
    size_t refused;
    char message[256];
};

/// Each block Little CMS gets carries its size in front.
typedef union kc_colour_block {
    size_t size;
    max_align_t align;
} kc_colour_block;

static kc_colour *owner(cmsContext context) { return (kc_colour *)cmsGetContextUserData(context); }

static void *kc_colour_malloc(cmsContext context, cmsUInt32Number size) {
    kc_colour *h = owner(context);
    if (h == NULL) return NULL;
    size_t in_use = __atomic_load_n(&h->in_use, __ATOMIC_RELAXED);
    if (h->limit != 0 && (size > h->limit || in_use > h->limit - size)) {
        h->refused = size;
        return NULL;
    }
    kc_colour_block *block = malloc(sizeof(kc_colour_block) + size);
    if (block == NULL) return NULL;
    block->size = size;
    size_t now = __atomic_add_fetch(&h->in_use, size, __ATOMIC_RELAXED);
    if (now > h->peak) h->peak = now;
    return block + 1;
}

static void kc_colour_free(cmsContext context, void *pointer) {
    if (pointer == NULL) return;
    kc_colour *h = owner(context);
    kc_colour_block *block = (kc_colour_block *)pointer - 1;
    if (h != NULL) __atomic_sub_fetch(&h->in_use, block->size, __ATOMIC_RELAXED);
    free(block);
}

static void *kc_colour_realloc(cmsContext context, void *pointer, cmsUInt32Number size) {
    if (pointer == NULL) return kc_colour_malloc(context, size);
    kc_colour_block *old = (kc_colour_block *)pointer - 1;
    void *fresh = kc_colour_malloc(context, size);
    if (fresh == NULL) return NULL;
    memcpy(fresh, pointer, old->size < size ? old->size : size);
    kc_colour_free(context, pointer);
    return fresh;
}

/// The memory handler (only the three required functions: Little CMS builds the others on them).
static cmsPluginMemHandler memory_plugin = {
    { cmsPluginMagicNumber, 2000, cmsPluginMemHandlerSig, NULL },
    kc_colour_malloc, kc_colour_free, kc_colour_realloc, NULL, NULL, NULL,
};

static void kc_colour_error_handler(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)code;
    kc_colour *h = owner(context);
    if (h == NULL) return;
    if (h->refused != 0) {
        snprintf(h->message, sizeof h->message,
                 "Little CMS asked for %zu bytes more with %zu in use, over its limit of %zu bytes: %s",
                 h->refused, h->in_use, h->limit, text);
    } else {
        snprintf(h->message, sizeof h->message, "Little CMS: %s", text);
    }
}

kc_colour *kc_colour_create(size_t memory_limit) {
    kc_colour *h = calloc(1, sizeof *h);
    if (h == NULL) return NULL;
    h->limit = memory_limit;
    h->context = cmsCreateContext(&memory_plugin, h);
    if (h->context == NULL) { free(h); return NULL; }
    cmsSetLogErrorHandlerTHR(h->context, kc_colour_error_handler);
    return h;
}

/// Records `text` as the error, with what Little CMS said during the step (its handler's
/// message, set since the step cleared it); returns -1.
static int fail(kc_colour *h, const char *text) {
    char library[sizeof h->message];
    snprintf(library, sizeof library, "%s", h->message);
    if (library[0] != 0) snprintf(h->message, sizeof h->message, "%s (%s)", text, library);
    else snprintf(h->message, sizeof h->message, "%s", text);
    return -1;
}

/// Starts a step: no message, no refusal yet.
static void begin(kc_colour *h) {
    h->message[0] = 0;
    h->refused = 0;
}

static int space_code(cmsHPROFILE profile) {
    if (profile == NULL) return KC_COLOUR_SPACE_OTHER;
    switch (cmsGetColorSpace(profile)) {
    case cmsSigRgbData: return KC_COLOUR_SPACE_RGB;
    case cmsSigGrayData: return KC_COLOUR_SPACE_GRAY;
    case cmsSigCmykData: return KC_COLOUR_SPACE_CMYK;
    default: return KC_COLOUR_SPACE_OTHER;
    }
}

int kc_colour_open_source_icc(kc_colour *h, const void *bytes, size_t length) {
    begin(h);
    if (h->source != NULL || h->transform != NULL) return fail(h, "a source profile is already open");
    if (length > UINT32_MAX) return fail(h, "the ICC profile is larger than 4 GiB");
    h->source = cmsOpenProfileFromMemTHR(h->context, bytes, (cmsUInt32Number)length);
    if (h->source == NULL) return fail(h, "the ICC profile cannot be read");
    return 0;
}

int kc_colour_open_source_rgb(kc_colour *h, const double white[2], const double primaries[6],
                              int curve_type, const double params[5]) {
    begin(h);
    if (h->source != NULL || h->transform != NULL) return fail(h, "a source profile is already open");
    cmsCIExyY wp = { white[0], white[1], 1.0 };
    cmsCIExyYTRIPLE prim = {
        { primaries[0], primaries[1], 1.0 }, { primaries[2], primaries[3], 1.0 }, { primaries[4], primaries[5], 1.0 },
    };
    cmsToneCurve *curve = cmsBuildParametricToneCurve(h->context, curve_type, params);
    if (curve == NULL) return fail(h, "cannot build the tone curve");
    cmsToneCurve *curves[3] = { curve, curve, curve };
    h->source = cmsCreateRGBProfileTHR(h->context, &wp, &prim, curves);
    cmsFreeToneCurve(curve);
    if (h->source == NULL) return fail(h, "cannot build a profile from these primaries and white point");
    return 0;
}

int kc_colour_open_source_srgb(kc_colour *h) {
    begin(h);
    if (h->source != NULL || h->transform != NULL) return fail(h, "a source profile is already open");
    h->source = cmsCreate_sRGBProfileTHR(h->context);
    if (h->source == NULL) return fail(h, "cannot build the sRGB profile");
    return 0;
}

size_t kc_colour_save_source(kc_colour *h, void *buffer, size_t size) {
    begin(h);
    if (h->source == NULL) { fail(h, "no source profile"); return 0; }
    cmsUInt32Number needed = 0;
    if (!cmsSaveProfileToMem(h->source, NULL, &needed)) { fail(h, "cannot save the profile"); return 0; }
    if (buffer == NULL || size < needed) return needed;
    if (!cmsSaveProfileToMem(h->source, buffer, &needed)) { fail(h, "cannot save the profile"); return 0; }
    return needed;
}

int kc_colour_open_target_icc(kc_colour *h, const void *bytes, size_t length) {
    begin(h);
    if (h->target != NULL || h->transform != NULL) return fail(h, "a target profile is already open");
    if (length > UINT32_MAX) return fail(h, "the ICC profile is larger than 4 GiB");
    h->target = cmsOpenProfileFromMemTHR(h->context, bytes, (cmsUInt32Number)length);
    if (h->target == NULL) return fail(h, "the screen's ICC profile cannot be read");
    return 0;
}

int kc_colour_source_space(const kc_colour *h) { return space_code(h->source); }
int kc_colour_target_space(const kc_colour *h) { return space_code(h->target); }

static size_t description(cmsHPROFILE profile, char *buffer, size_t size) {
    if (size == 0) return 0;
    buffer[0] = 0;
    if (profile == NULL) return 0;
    cmsUInt32Number n = cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", buffer,
                                               (cmsUInt32Number)(size > UINT32_MAX ? UINT32_MAX : size));
    buffer[size - 1] = 0;
    return n == 0 ? 0 : strlen(buffer);
}

size_t kc_colour_source_description(const kc_colour *h, char *buffer, size_t size) {
    return description(h->source, buffer, size);
}

size_t kc_colour_target_description(const kc_colour *h, char *buffer, size_t size) {
    return description(h->target, buffer, size);
}

/// The Little CMS pixel format of a layout.
static cmsUInt32Number input_format(int layout) {
    switch (layout) {
    case KC_COLOUR_IN_GRAY: return COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | BYTES_SH(1) | EXTRA_SH(3);
    case KC_COLOUR_IN_CMYK: return TYPE_CMYK_8;
    case KC_COLOUR_IN_CMYK_INVERTED: return TYPE_CMYK_8_REV;
    default: return TYPE_BGRA_8; // A (or X) is an extra channel, copied only with `alpha`
    }
}

int kc_colour_build(kc_colour *h, int layout, int intent, int alpha) {
    begin(h);
    if (h->transform != NULL) return fail(h, "the transform is already built");
    if (h->source == NULL) return fail(h, "no source profile");
    int space = space_code(h->source);
    int fits = (layout == KC_COLOUR_IN_BGRA && space == KC_COLOUR_SPACE_RGB) ||
               (layout == KC_COLOUR_IN_GRAY && space == KC_COLOUR_SPACE_GRAY) ||
               ((layout == KC_COLOUR_IN_CMYK || layout == KC_COLOUR_IN_CMYK_INVERTED) && space == KC_COLOUR_SPACE_CMYK);
    if (!fits) {
        static const char *names[] = { "another", "an RGB", "a gray", "a CMYK" };
        static const char *pixels[] = { "RGB", "gray", "CMYK", "CMYK" };
        char text[160];
        snprintf(text, sizeof text, "its ICC profile is for %s colour space, the pixels are %s",
                 names[space], pixels[layout < 0 || layout > 3 ? 0 : layout]);
        return fail(h, text);
    }
    if (h->target == NULL) {
        h->target = cmsCreate_sRGBProfileTHR(h->context);
        if (h->target == NULL) return fail(h, "cannot build the sRGB profile");
    } else if (space_code(h->target) != KC_COLOUR_SPACE_RGB) {
        return fail(h, "the screen's ICC profile is not an RGB profile");
    }
    cmsUInt32Number flags = cmsFLAGS_NOCACHE | (alpha && layout == KC_COLOUR_IN_BGRA ? cmsFLAGS_COPY_ALPHA : 0);
    cmsUInt32Number lcms_intent =
        intent == KC_COLOUR_RELATIVE_COLORIMETRIC ? INTENT_RELATIVE_COLORIMETRIC : INTENT_PERCEPTUAL;
    h->transform = cmsCreateTransformTHR(h->context, h->source, input_format(layout), h->target, TYPE_BGRA_8,
                                         lcms_intent, flags);
    cmsCloseProfile(h->source);
    cmsCloseProfile(h->target);
    h->source = h->target = NULL;
    if (h->transform == NULL) return fail(h, "Little CMS cannot make a transform of it");
    h->layout = layout;
    return 0;
}

/// The pixels kc_colour_is_identity converts: a lattice of 16 levels a channel, then 256 grays.
enum { TEST_LEVELS = 16, TEST_LATTICE = TEST_LEVELS * TEST_LEVELS * TEST_LEVELS, TEST_COUNT = TEST_LATTICE + 256 };
static uint8_t test_pixels[TEST_COUNT * 4];
static pthread_once_t test_pixels_once = PTHREAD_ONCE_INIT;

static void make_test_pixels(void) {
    size_t i = 0;
    for (int r = 0; r < TEST_LEVELS; r++)
        for (int g = 0; g < TEST_LEVELS; g++)
            for (int b = 0; b < TEST_LEVELS; b++, i++) {
                test_pixels[i * 4] = (uint8_t)(b * 17);
                test_pixels[i * 4 + 1] = (uint8_t)(g * 17);
                test_pixels[i * 4 + 2] = (uint8_t)(r * 17);
                test_pixels[i * 4 + 3] = 0xFF;
            }
    for (int v = 0; v < 256; v++, i++) {
        test_pixels[i * 4] = test_pixels[i * 4 + 1] = test_pixels[i * 4 + 2] = (uint8_t)v;
        test_pixels[i * 4 + 3] = 0xFF;
    }
}

int kc_colour_is_identity(const kc_colour *h) {
    if (h->transform == NULL || (h->layout != KC_COLOUR_IN_BGRA && h->layout != KC_COLOUR_IN_GRAY)) return 0;
    pthread_once(&test_pixels_once, make_test_pixels);
    const uint8_t *in = test_pixels;
    uint8_t out[TEST_COUNT * 4];
    size_t first = h->layout == KC_COLOUR_IN_GRAY ? TEST_LATTICE : 0; // a gray profile: the grays only
    cmsDoTransform(h->transform, in + first * 4, out + first * 4, (cmsUInt32Number)(TEST_COUNT - first));
    for (size_t i = first; i < TEST_COUNT; i++)
        if (memcmp(in + i * 4, out + i * 4, 3) != 0) return 0;
    return 1;
}

void kc_colour_apply(const kc_colour *h, void *pixels, size_t count) {
    if (h->transform == NULL) return;
    uint8_t *p = pixels;
    // cmsDoTransform takes a 32-bit count.
    while (count > 0) {
        cmsUInt32Number n = count > (1u << 30) ? (1u << 30) : (cmsUInt32Number)count;
        cmsDoTransform(h->transform, p, p, n);
        if (h->layout == KC_COLOUR_IN_CMYK || h->layout == KC_COLOUR_IN_CMYK_INVERTED) {
            // The output's fourth byte is an extra channel Little CMS leaves as it was (K).
            for (cmsUInt32Number i = 0; i < n; i++) p[i * 4 + 3] = 0xFF;
        }
        p += (size_t)n * 4;
        count -= n;
    }
}

size_t kc_colour_memory_in_use(const kc_colour *h) { return __atomic_load_n(&h->in_use, __ATOMIC_RELAXED); }
size_t kc_colour_memory_peak(const kc_colour *h) { return h->peak; }
const char *kc_colour_error(const kc_colour *h) { return h->message; }
int kc_colour_library_version(void) { return cmsGetEncodedCMMversion(); }

void kc_colour_destroy(kc_colour *h) {
    if (h == NULL) return;
    if (h->transform != NULL) cmsDeleteTransform(h->transform);
    if (h->source != NULL) cmsCloseProfile(h->source);
    if (h->target != NULL) cmsCloseProfile(h->target);
    cmsDeleteContext(h->context);
    free(h);
}
