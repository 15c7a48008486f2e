// SPDX-License-Identifier: Apache-2.0
// libheif's HEVC decoding through libde265 on several threads; see include/kc_heif.h.
#define _GNU_SOURCE
#include "kc_heif.h"

#include <dlfcn.h>
#include <libde265/de265.h>
#include <libheif/heif.h>
#include <libheif/heif_plugin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Each pointer has the type of the library's own declaration (__typeof__), so a signature
// cannot drift from the headers the project builds against.
#define KC_HEIF_FUNCTIONS(X) \
    X(heif_register_decoder_plugin) X(heif_image_create) X(heif_image_add_plane) \
    X(heif_image_get_plane) X(heif_image_release) X(heif_nclx_color_profile_alloc) \
    X(heif_nclx_color_profile_free) X(heif_nclx_color_profile_set_color_primaries) \
    X(heif_nclx_color_profile_set_transfer_characteristics) \
    X(heif_nclx_color_profile_set_matrix_coefficients) X(heif_image_set_nclx_color_profile) \
    X(heif_get_version_number)
#define KC_DE265_FUNCTIONS(X) \
    X(de265_new_decoder) X(de265_start_worker_threads) X(de265_free_decoder) X(de265_push_NAL) \
    X(de265_flush_data) X(de265_decode) X(de265_get_next_picture) X(de265_release_next_picture) \
    X(de265_get_image_width) X(de265_get_image_height) X(de265_get_chroma_format) \
    X(de265_get_bits_per_pixel) X(de265_get_image_plane) X(de265_get_image_colour_primaries) \
    X(de265_get_image_transfer_characteristics) X(de265_get_image_matrix_coefficients) \
    X(de265_get_image_full_range_flag) X(de265_get_error_text)

static struct {
#define KC_FIELD(name) __typeof__(&name) name;
    KC_HEIF_FUNCTIONS(KC_FIELD)
    KC_DE265_FUNCTIONS(KC_FIELD)
#undef KC_FIELD
} api;

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int install_result = 1;  // 1: not tried yet; then 0 or -1
static char install_error[256];
static int threads;
static atomic_long images_decoded;

struct kc_de265_decoder {
    de265_decoder_context *context;
};

static const char *plugin_name(void) { return "libde265 HEVC decoder, wavefront rows on several threads (kiosk-carousel)"; }

static int does_support_format(enum heif_compression_format format) {
    // Above the built-in libde265 plug-in's 100.
    return format == heif_compression_HEVC ? 150 : 0;
}

static struct heif_error ok(void) { return (struct heif_error){heif_error_Ok, heif_suberror_Unspecified, "Success"}; }

static struct heif_error new_decoder(void **out) {
    struct kc_de265_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder) decoder->context = api.de265_new_decoder();
    if (!decoder || !decoder->context) {
        free(decoder);
        return (struct heif_error){heif_error_Memory_allocation_error, heif_suberror_Unspecified,
                                   "cannot create a libde265 decoder"};
    }
    // Without worker threads libde265 decodes on the calling thread; with them, the rows of a
    // wavefront-coded picture go to the threads (a stream without wavefronts or tiles is
    // decoded by one of them, as libheif's own plug-in does).
    api.de265_start_worker_threads(decoder->context, threads);
    *out = decoder;
    return ok();
}

static void free_decoder(void *raw) {
    struct kc_de265_decoder *decoder = raw;
    api.de265_free_decoder(decoder->context);
    free(decoder);
}

static void set_strict_decoding(void *raw, int flag) { (void)raw; (void)flag; }

// libheif hands the hvcC's parameter sets and then the item's data, every NAL unit with a
// 4-byte big-endian length (as its own plug-in reads them).
static struct heif_error push_data(void *raw, const void *data, size_t size) {
    struct kc_de265_decoder *decoder = raw;
    const uint8_t *bytes = data;
    size_t at = 0;
    while (at < size) {
        if (size - at < 4) {
            return (struct heif_error){heif_error_Decoder_plugin_error, heif_suberror_End_of_data,
                                       "a NAL unit's length is cut off"};
        }
        uint32_t length = (uint32_t)bytes[at] << 24 | (uint32_t)bytes[at + 1] << 16 | (uint32_t)bytes[at + 2] << 8 | bytes[at + 3];
        at += 4;
        if (length > size - at || length > INT32_MAX) {
            return (struct heif_error){heif_error_Decoder_plugin_error, heif_suberror_End_of_data,
                                       "a NAL unit runs past the end of the data"};
        }
        api.de265_push_NAL(decoder->context, bytes + at, (int)length, 0, NULL);
        at += length;
    }
    return ok();
}

// The picture's planes copied into a new heif_image, with the VUI's colour description as
// its nclx profile (an item's colr box, when it has one, replaces it in libheif).
static struct heif_error convert(const struct de265_image *picture, struct heif_image **out) {
    int mono = api.de265_get_chroma_format(picture) == de265_chroma_mono;
    struct heif_error error = api.heif_image_create(api.de265_get_image_width(picture, 0), api.de265_get_image_height(picture, 0),
                                                    mono ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                                    (enum heif_chroma)api.de265_get_chroma_format(picture), out);
    if (error.code != heif_error_Ok) return error;
    static const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    int bits = api.de265_get_bits_per_pixel(picture, 0);
    for (int c = 0; c < (mono ? 1 : 3); c++) {
        int w = api.de265_get_image_width(picture, c), h = api.de265_get_image_height(picture, c);
        if (api.de265_get_bits_per_pixel(picture, c) != bits) {
            error = (struct heif_error){heif_error_Unsupported_feature, heif_suberror_Unsupported_color_conversion,
                                        "Channels with different number of bits per pixel are not supported"};
        } else if (w <= 0 || h <= 0) {
            error = (struct heif_error){heif_error_Decoder_plugin_error, heif_suberror_Invalid_image_size,
                                        "libde265 gave a plane without pixels"};
        } else {
            error = api.heif_image_add_plane(*out, channels[c], w, h, bits);
        }
        if (error.code != heif_error_Ok) {
            api.heif_image_release(*out);
            *out = NULL;
            return error;
        }
        int from_stride = 0, to_stride = 0;
        const uint8_t *from = api.de265_get_image_plane(picture, c, &from_stride);
        uint8_t *to = api.heif_image_get_plane(*out, channels[c], &to_stride);
        size_t row = (size_t)w * (size_t)((bits + 7) / 8);
        for (int y = 0; y < h; y++) memcpy(to + (size_t)y * (size_t)to_stride, from + (size_t)y * (size_t)from_stride, row);
    }
    struct heif_color_profile_nclx *nclx = api.heif_nclx_color_profile_alloc();
    if (nclx) {
        // As libheif's plug-in without strict decoding: a value the setter refuses is left
        // as it set it, and the image still decodes.
        (void)api.heif_nclx_color_profile_set_color_primaries(nclx, (uint16_t)api.de265_get_image_colour_primaries(picture));
        (void)api.heif_nclx_color_profile_set_transfer_characteristics(nclx, (uint16_t)api.de265_get_image_transfer_characteristics(picture));
        (void)api.heif_nclx_color_profile_set_matrix_coefficients(nclx, (uint16_t)api.de265_get_image_matrix_coefficients(picture));
        nclx->full_range_flag = (uint8_t)(api.de265_get_image_full_range_flag(picture) != 0);
        api.heif_image_set_nclx_color_profile(*out, nclx);
        api.heif_nclx_color_profile_free(nclx);
    }
    return ok();
}

static struct heif_error decode_image(void *raw, struct heif_image **out) {
    struct kc_de265_decoder *decoder = raw;
    *out = NULL;
    api.de265_flush_data(decoder->context);
    int more;
    do {
        more = 0;
        de265_error status = api.de265_decode(decoder->context, &more);
        if (status != DE265_OK) break;  // DE265_ERROR_WAITING_FOR_INPUT_DATA at the end, or a real error
        const struct de265_image *picture = api.de265_get_next_picture(decoder->context);
        if (picture) {
            if (*out) api.heif_image_release(*out);  // the last picture is kept, as libheif's plug-in does
            struct heif_error error = convert(picture, out);
            api.de265_release_next_picture(decoder->context);
            if (error.code != heif_error_Ok) return error;
        }
    } while (more);
    if (!*out) {
        return (struct heif_error){heif_error_Decoder_plugin_error, heif_suberror_Unspecified,
                                   "libde265 decoded no picture from the HEVC data"};
    }
    atomic_fetch_add(&images_decoded, 1);
    return ok();
}

static const struct heif_decoder_plugin plugin = {
    .plugin_api_version = 3,
    .get_plugin_name = plugin_name,
    .init_plugin = NULL,
    .deinit_plugin = NULL,
    .does_support_format = does_support_format,
    .new_decoder = new_decoder,
    .free_decoder = free_decoder,
    .push_data = push_data,
    .decode_image = decode_image,
    .set_strict_decoding = set_strict_decoding,
    .id_name = "libde265-threads",
};

static int fail(const char *what, const char *detail) {
    snprintf(install_error, sizeof install_error, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    return -1;
}

static int install(void *libheif) {
    if (!libheif) return fail("libheif is not open", NULL);
    void *de265 = dlopen("libde265.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!de265) return fail("cannot open libde265.so.0", dlerror());
#define KC_LOOKUP(handle, name) \
    api.name = (__typeof__(&name))dlsym(handle, #name); \
    if (!api.name) return fail("no symbol " #name, NULL);
#define KC_LOOKUP_HEIF(name) KC_LOOKUP(libheif, name)
#define KC_LOOKUP_DE265(name) KC_LOOKUP(de265, name)
    KC_HEIF_FUNCTIONS(KC_LOOKUP_HEIF)
    KC_DE265_FUNCTIONS(KC_LOOKUP_DE265)
#undef KC_LOOKUP_DE265
#undef KC_LOOKUP_HEIF
#undef KC_LOOKUP
    // libheif 1.21 and later register a plug-in of API version 3 but refuse it when it is chosen
    // to decode ("Decoder plugin needs to be at least version 5"): with it registered above the
    // built-in one, every HEVC picture would fail. There, libheif's own plug-in decodes.
    uint32_t version = (uint32_t)api.heif_get_version_number();
    if (version >= 0x01150000u) {
        snprintf(install_error, sizeof install_error,
                 "libheif %u.%u.%u takes decoder plug-ins of API version 5 or later only; this one is version 3",
                 version >> 24, (version >> 16) & 0xff, (version >> 8) & 0xff);
        return -1;
    }
    cpu_set_t cpus;
    int count = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    threads = count < 1 ? 1 : count > KC_HEIF_MAX_THREADS ? KC_HEIF_MAX_THREADS : count;
    struct heif_error error = api.heif_register_decoder_plugin(&plugin);
    if (error.code != heif_error_Ok) {
        threads = 0;
        return fail("heif_register_decoder_plugin failed", error.message);
    }
    return 0;
}

int kc_heif_install_hevc_decoder(void *libheif) {
    pthread_mutex_lock(&install_lock);
    if (install_result == 1) install_result = install(libheif);
    int result = install_result;
    pthread_mutex_unlock(&install_lock);
    return result;
}

const char *kc_heif_hevc_decoder_error(void) { return install_result == 0 ? NULL : install_error; }
int kc_heif_hevc_decoder_threads(void) { return threads; }
long kc_heif_hevc_images_decoded(void) { return atomic_load(&images_decoded); }
