// SPDX-License-Identifier: Apache-2.0
// FreeType, HarfBuzz, fontconfig and FriBidi opened on first use; see include/kc_text.h.
#include "kc_text.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct kc_text_api api;
static int loaded;  // 1 when every symbol was found (written once, under `once`)
static const char *failed_soname;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

// The library of each function: FT_ from FreeType, hb_ from HarfBuzz, Fc from fontconfig,
// fribidi_ from FriBidi.
static void *library_of(const char *name, void *freetype, void *harfbuzz, void *fontconfig, void *fribidi) {
    if (name[0] == 'F' && name[1] == 'T') return freetype;
    if (name[0] == 'h' && name[1] == 'b') return harfbuzz;
    if (name[0] == 'f' && name[1] == 'r') return fribidi;
    return fontconfig;
}

static const char *soname_of(void *library, void *freetype, void *harfbuzz, void *fribidi) {
    return library == freetype ? KC_FREETYPE_SONAME : library == harfbuzz ? KC_HARFBUZZ_SONAME
        : library == fribidi ? KC_FRIBIDI_SONAME : KC_FONTCONFIG_SONAME;
}

static void *open_library(const char *soname) {
    // RTLD_LOCAL: their symbols (and their dependencies') stay out of the global namespace;
    // never closed, so the pointers stay valid for the life of the process.
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        failed_soname = soname;
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "dlopen failed");
    }
    return library;
}

static void load(void) {
    void *freetype = open_library(KC_FREETYPE_SONAME);
    if (!freetype) return;
    void *harfbuzz = open_library(KC_HARFBUZZ_SONAME);
    if (!harfbuzz) return;
    void *fontconfig = open_library(KC_FONTCONFIG_SONAME);
    if (!fontconfig) return;
    void *fribidi = open_library(KC_FRIBIDI_SONAME);
    if (!fribidi) return;
#define KC_LOOKUP(name) { \
        void *library = library_of(#name, freetype, harfbuzz, fontconfig, fribidi); \
        api.name = (__typeof__(&name))dlsym(library, #name); \
        if (!api.name) { \
            failed_soname = soname_of(library, freetype, harfbuzz, fribidi); \
            snprintf(load_error, sizeof load_error, "no symbol %s", #name); \
            return; \
        } \
    }
    KC_TEXT_FUNCTIONS(KC_LOOKUP)
#undef KC_LOOKUP
    loaded = 1;
}

const struct kc_text_api *kc_text_load(void) {
    pthread_once(&once, load);
    return loaded ? &api : NULL;
}

const char *kc_text_load_error(void) {
    return kc_text_load() ? NULL : load_error;
}

const char *kc_text_load_failed_soname(void) {
    return kc_text_load() ? NULL : failed_soname;
}
