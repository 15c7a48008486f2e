// SPDX-License-Identifier: Apache-2.0
// libcrypto opened on first use; see include/kc_crypto.h.
#include "kc_crypto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct kc_crypto_api api;
static int loaded;  // 1 when every symbol was found (written once, under `once`)
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // RTLD_LOCAL and never closed, as libcurl (kc_curl.c).
    void *library = dlopen(KC_CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "dlopen(" KC_CRYPTO_SONAME ") failed");
        return;
    }
#define KC_LOOKUP(name) \
    api.name = (__typeof__(&name))dlsym(library, #name); \
    if (!api.name) { snprintf(load_error, sizeof load_error, "%s: no symbol %s", KC_CRYPTO_SONAME, #name); return; }
    KC_CRYPTO_FUNCTIONS(KC_LOOKUP)
#undef KC_LOOKUP
    loaded = 1;
}

const struct kc_crypto_api *kc_crypto_load(void) {
    pthread_once(&once, load);
    return loaded ? &api : NULL;
}

const char *kc_crypto_load_error(void) {
    return kc_crypto_load() ? NULL : load_error;
}
