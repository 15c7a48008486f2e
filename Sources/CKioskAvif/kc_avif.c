// SPDX-License-Identifier: Apache-2.0
// libavif opened on first use; an image sequence played through it. See include/kc_avif.h.
#include "kc_avif.h"

#include <avif/avif.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if AVIF_VERSION_MAJOR >= 1
#define KC_AVIF_SONAME "libavif.so.16"
#else
#define KC_AVIF_SONAME "libavif.so.15"
#endif

// Each pointer has the type of libavif's own declaration (__typeof__), so a signature cannot
// drift from the header the project builds against.
#define KC_AVIF_FUNCTIONS(X) \
    X(avifVersion) X(avifResultToString) X(avifDecoderCreate) X(avifDecoderDestroy) \
    X(avifDecoderSetIOMemory) X(avifDecoderParse) X(avifDecoderNextImage) X(avifDecoderReset) \
    X(avifRGBImageSetDefaults) X(avifImageYUVToRGB)

static struct {
#define KC_FIELD(name) __typeof__(&name) name;
    KC_AVIF_FUNCTIONS(KC_FIELD)
#undef KC_FIELD
} api;
static int loaded;  // 1 when every symbol was found (written once, under `once`)
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // RTLD_LOCAL: libavif's symbols and its codecs' stay out of the global namespace; never
    // closed, so the pointers stay valid for the life of the process.
    void *library = dlopen(KC_AVIF_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "dlopen(" KC_AVIF_SONAME ") failed");
        return;
    }
#define KC_LOOKUP(name) \
    api.name = (__typeof__(&name))dlsym(library, #name); \
    if (!api.name) { snprintf(load_error, sizeof load_error, "%s: no symbol %s", KC_AVIF_SONAME, #name); return; }
    KC_AVIF_FUNCTIONS(KC_LOOKUP)
#undef KC_LOOKUP
    loaded = 1;
}

const char *kc_avif_soname(void) { return KC_AVIF_SONAME; }

int kc_avif_load(void) {
    pthread_once(&once, load);
    return loaded ? 0 : -1;
}

const char *kc_avif_load_error(void) { return kc_avif_load() == 0 ? NULL : load_error; }

const char *kc_avif_version(void) { return kc_avif_load() == 0 ? api.avifVersion() : NULL; }

struct kc_avif {
    avifDecoder *decoder;
    uint32_t width, height, depth;  // the sequence's, from avifDecoderParse
};

// libavif's result and, when it has one, its diagnostic (avifDiagnostics.error).
static void say(avifDecoder *decoder, avifResult result, char *error, size_t size) {
    if (!error || size == 0) return;
    const char *detail = decoder && decoder->diag.error[0] ? decoder->diag.error : NULL;
    snprintf(error, size, "%s%s%s", api.avifResultToString(result), detail ? ": " : "", detail ? detail : "");
}

kc_avif *kc_avif_open(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_side,
                      uint32_t max_frames, kc_avif_info *info, char *error, size_t error_size) {
    if (kc_avif_load() != 0) {
        snprintf(error, error_size, "libavif is not loaded: %s", load_error);
        return NULL;
    }
    avifDecoder *decoder = api.avifDecoderCreate();
    if (!decoder) {
        snprintf(error, error_size, "avifDecoderCreate failed (out of memory)");
        return NULL;
    }
    decoder->maxThreads = 1;
    decoder->imageSizeLimit = max_pixels;
    decoder->imageDimensionLimit = max_side;
    decoder->imageCountLimit = max_frames;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    avifResult result = api.avifDecoderSetIOMemory(decoder, data, size);
    if (result == AVIF_RESULT_OK) result = api.avifDecoderParse(decoder);
    if (result != AVIF_RESULT_OK) {
        say(decoder, result, error, error_size);
        api.avifDecoderDestroy(decoder);
        return NULL;
    }
    const avifImage *image = decoder->image;
    memset(info, 0, sizeof *info);
    info->width = image->width;
    info->height = image->height;
    info->depth = image->depth;
    info->frame_count = decoder->imageCount;
#if AVIF_VERSION_MAJOR >= 1
    info->repetition_count = decoder->repetitionCount >= 0 ? decoder->repetitionCount : -1;
#else
    info->repetition_count = -1;
#endif
    info->colour_primaries = (int)image->colorPrimaries;
    info->transfer_characteristics = (int)image->transferCharacteristics;
    info->matrix_coefficients = (int)image->matrixCoefficients;
    info->full_range = image->yuvRange == AVIF_RANGE_FULL;
    info->icc = image->icc.size ? image->icc.data : NULL;
    info->icc_size = image->icc.size;
    info->has_alpha = decoder->alphaPresent != 0;
    switch (image->yuvFormat) {
    case AVIF_PIXEL_FORMAT_YUV444: info->chroma = 444; break;
    case AVIF_PIXEL_FORMAT_YUV422: info->chroma = 422; break;
    case AVIF_PIXEL_FORMAT_YUV420: info->chroma = 420; break;
    case AVIF_PIXEL_FORMAT_YUV400: info->chroma = 400; break;
    default: info->chroma = 0; break;
    }
    kc_avif *avif = calloc(1, sizeof *avif);
    if (!avif) {
        api.avifDecoderDestroy(decoder);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    avif->decoder = decoder;
    avif->width = image->width;
    avif->height = image->height;
    avif->depth = image->depth;
    return avif;
}

int kc_avif_next(kc_avif *avif, uint8_t *out, size_t stride, int sixteen, double *duration,
                 char *error, size_t error_size) {
    avifDecoder *decoder = avif->decoder;
    avifResult result = api.avifDecoderNextImage(decoder);
    if (result == AVIF_RESULT_NO_IMAGES_REMAINING) return 0;
    if (result != AVIF_RESULT_OK) {
        say(decoder, result, error, error_size);
        return -1;
    }
    const avifImage *image = decoder->image;
    avifRGBImage rgb;
    api.avifRGBImageSetDefaults(&rgb, image);
    // A frame of another size or depth than the sequence's (its AV1 stream may say so) is
    // refused: the caller's buffer is the sequence's size.
    if (image->width != avif->width || image->height != avif->height || image->depth != avif->depth) {
        snprintf(error, error_size, "frame %d is %ux%u pixels of %u bits, the sequence %ux%u of %u",
                 decoder->imageIndex + 1, image->width, image->height, image->depth, avif->width, avif->height,
                 avif->depth);
        return -1;
    }
    rgb.format = sixteen ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_BGRA;
    rgb.depth = sixteen ? image->depth : 8;
    rgb.pixels = out;
    rgb.rowBytes = (uint32_t)stride;
    result = api.avifImageYUVToRGB(image, &rgb);
    if (result != AVIF_RESULT_OK) {
        say(decoder, result, error, error_size);
        return -1;
    }
    *duration = decoder->imageTiming.duration;
    return 1;
}

int kc_avif_reset(kc_avif *avif, char *error, size_t error_size) {
    avifResult result = api.avifDecoderReset(avif->decoder);
    if (result != AVIF_RESULT_OK) {
        say(avif->decoder, result, error, error_size);
        return -1;
    }
    return 0;
}

void kc_avif_close(kc_avif *avif) {
    if (!avif) return;
    api.avifDecoderDestroy(avif->decoder);
    free(avif);
}
