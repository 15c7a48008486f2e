// SPDX-License-Identifier: Apache-2.0
// libmosquitto opened on first use; see include/kc_mqtt.h.
#include "kc_mqtt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct kc_mqtt_api api;
static int loaded;  // 1 when every symbol was found and the library initialised (written under `once`)
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // RTLD_LOCAL and never closed, as libcurl (kc_curl.c).
    void *library = dlopen(KC_MQTT_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "dlopen(" KC_MQTT_SONAME ") failed");
        return;
    }
#define KC_LOOKUP(name) \
    api.name = (__typeof__(&name))dlsym(library, #name); \
    if (!api.name) { snprintf(load_error, sizeof load_error, "%s: no symbol %s", KC_MQTT_SONAME, #name); return; }
    KC_MQTT_FUNCTIONS(KC_LOOKUP)
#undef KC_LOOKUP
    // mosquitto_lib_init: once per process, before any other call (mosquitto.h); it also
    // initialises OpenSSL for TLS.
    int rc = api.mosquitto_lib_init();
    if (rc != MOSQ_ERR_SUCCESS) {
        snprintf(load_error, sizeof load_error, "mosquitto_lib_init: %s", api.mosquitto_strerror(rc));
        return;
    }
    loaded = 1;
}

const struct kc_mqtt_api *kc_mqtt_load(void) {
    pthread_once(&once, load);
    return loaded ? &api : NULL;
}

const char *kc_mqtt_load_error(void) {
    return kc_mqtt_load() ? NULL : load_error;
}
