// SPDX-License-Identifier: Apache-2.0
// jansson's allocations counted per thread, with a budget per parse; see include/kc_json.h.
#include "kc_json.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

// Each block carries its size in front (16 bytes keep malloc's alignment for jansson's structs).
enum { KC_JSON_HEADER = 16 };

static _Thread_local size_t kc_json_limit;     // 0: none
static _Thread_local size_t kc_json_used;      // bytes allocated on this thread, not yet freed
static _Thread_local int kc_json_exceeded;

static void *kc_json_malloc(size_t size) {
    if (size > SIZE_MAX - KC_JSON_HEADER) return NULL;
    size_t total = size + KC_JSON_HEADER;
    if (kc_json_limit != 0 && (kc_json_used > kc_json_limit || total > kc_json_limit - kc_json_used)) {
        kc_json_exceeded = 1;
        return NULL;
    }
    size_t *block = malloc(total);
    if (block == NULL) return NULL;
    block[0] = total;
    kc_json_used += total;
    return (char *)block + KC_JSON_HEADER;
}

static void kc_json_free(void *pointer) {
    if (pointer == NULL) return;
    size_t *block = (size_t *)((char *)pointer - KC_JSON_HEADER);
    // A value freed on another thread than the one that made it only lowers that thread's count.
    kc_json_used = block[0] < kc_json_used ? kc_json_used - block[0] : 0;
    free(block);
}

static pthread_once_t kc_json_once = PTHREAD_ONCE_INIT;
static void kc_json_install(void) { json_set_alloc_funcs(kc_json_malloc, kc_json_free); }

void kc_json_prepare(void) { pthread_once(&kc_json_once, kc_json_install); }

json_t *kc_json_loadb(const char *buffer, size_t length, size_t flags, size_t limit,
                      json_error_t *error, int *exceeded) {
    kc_json_prepare();
    size_t saved_limit = kc_json_limit;
    kc_json_limit = limit == 0 ? 0 : (kc_json_used > SIZE_MAX - limit ? SIZE_MAX : kc_json_used + limit);
    kc_json_exceeded = 0;
    json_t *value = json_loadb(buffer, length, flags, error);
    *exceeded = kc_json_exceeded;
    kc_json_limit = saved_limit;
    return value;
}
