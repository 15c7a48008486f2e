// SPDX-License-Identifier: Apache-2.0
// libcurl opened on first use, and typed wrappers of its varargs calls; see include/kc_curl.h.
#include "kc_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Each pointer has the type of libcurl's own declaration in <curl/curl.h> (__typeof__), so a
// signature cannot drift from the header the project builds against.
#define KC_CURL_FUNCTIONS(X) \
    X(curl_global_init) X(curl_version_info) X(curl_easy_init) X(curl_easy_cleanup) \
    X(curl_easy_setopt) X(curl_easy_getinfo) X(curl_easy_strerror) X(curl_free) \
    X(curl_multi_init) X(curl_multi_cleanup) X(curl_multi_add_handle) X(curl_multi_remove_handle) \
    X(curl_multi_perform) X(curl_multi_info_read) X(curl_multi_poll) X(curl_multi_wakeup) \
    X(curl_multi_setopt) X(curl_slist_append) X(curl_slist_free_all) X(curl_url) \
    X(curl_url_cleanup) X(curl_url_set) X(curl_url_get)

static struct {
#define KC_FIELD(name) __typeof__(&name) name;
    KC_CURL_FUNCTIONS(KC_FIELD)
#undef KC_FIELD
} api;
static int loaded;  // 1 when every symbol was found (written once, under `once`)
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // RTLD_LOCAL: libcurl's symbols (and its 30-odd dependencies') stay out of the global
    // namespace; never closed, so pointers stay valid for the life of the process.
    void *library = dlopen(KC_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "dlopen(" KC_CURL_SONAME ") failed");
        return;
    }
#define KC_LOOKUP(name) \
    api.name = (__typeof__(&name))dlsym(library, #name); \
    if (!api.name) { snprintf(load_error, sizeof load_error, "%s: no symbol %s", KC_CURL_SONAME, #name); return; }
    KC_CURL_FUNCTIONS(KC_LOOKUP)
#undef KC_LOOKUP
    loaded = 1;
}

int kc_curl_load(void) {
    pthread_once(&once, load);
    return loaded ? 0 : -1;
}

const char *kc_curl_load_error(void) {
    return kc_curl_load() == 0 ? NULL : load_error;
}

#define KC_READY(failure) if (kc_curl_load() != 0) return failure

CURLcode kc_curl_global_init(long flags) { KC_READY(CURLE_FAILED_INIT); return api.curl_global_init(flags); }
curl_version_info_data *kc_curl_version_info(CURLversion age) { KC_READY(NULL); return api.curl_version_info(age); }
CURL *kc_curl_easy_init(void) { KC_READY(NULL); return api.curl_easy_init(); }
void kc_curl_easy_cleanup(CURL *easy) { KC_READY(); api.curl_easy_cleanup(easy); }
const char *kc_curl_easy_strerror(CURLcode code) {
    KC_READY("libcurl is not loaded");
    return api.curl_easy_strerror(code);
}
void kc_curl_free(void *pointer) { KC_READY(); api.curl_free(pointer); }

CURLM *kc_curl_multi_init(void) { KC_READY(NULL); return api.curl_multi_init(); }
CURLMcode kc_curl_multi_cleanup(CURLM *multi) { KC_READY(CURLM_INTERNAL_ERROR); return api.curl_multi_cleanup(multi); }
CURLMcode kc_curl_multi_add_handle(CURLM *multi, CURL *easy) { KC_READY(CURLM_INTERNAL_ERROR); return api.curl_multi_add_handle(multi, easy); }
CURLMcode kc_curl_multi_remove_handle(CURLM *multi, CURL *easy) { KC_READY(CURLM_INTERNAL_ERROR); return api.curl_multi_remove_handle(multi, easy); }
CURLMcode kc_curl_multi_perform(CURLM *multi, int *running) { KC_READY(CURLM_INTERNAL_ERROR); return api.curl_multi_perform(multi, running); }
CURLMsg *kc_curl_multi_info_read(CURLM *multi, int *left) { KC_READY(NULL); return api.curl_multi_info_read(multi, left); }
CURLMcode kc_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms, int *ready) {
    KC_READY(CURLM_INTERNAL_ERROR);
    return api.curl_multi_poll(multi, extra, count, timeout_ms, ready);
}
CURLMcode kc_curl_multi_wakeup(CURLM *multi) { KC_READY(CURLM_INTERNAL_ERROR); return api.curl_multi_wakeup(multi); }

struct curl_slist *kc_curl_slist_append(struct curl_slist *list, const char *line) { KC_READY(NULL); return api.curl_slist_append(list, line); }
void kc_curl_slist_free_all(struct curl_slist *list) { KC_READY(); api.curl_slist_free_all(list); }

CURLU *kc_curl_url(void) { KC_READY(NULL); return api.curl_url(); }
void kc_curl_url_cleanup(CURLU *url) { KC_READY(); api.curl_url_cleanup(url); }
CURLUcode kc_curl_url_set(CURLU *url, CURLUPart part, const char *text, unsigned int flags) {
    KC_READY(CURLUE_OUT_OF_MEMORY);
    return api.curl_url_set(url, part, text, flags);
}
CURLUcode kc_curl_url_get(CURLU *url, CURLUPart part, char **text, unsigned int flags) {
    KC_READY(CURLUE_OUT_OF_MEMORY);
    return api.curl_url_get(url, part, text, flags);
}

// The varargs calls: loaded is checked by the caller's kc_curl_easy_init / kc_curl_multi_init,
// without which there is no handle to pass.
CURLcode kc_curl_setopt_long(CURL *easy, CURLoption option, long value) { return api.curl_easy_setopt(easy, option, value); }
CURLcode kc_curl_setopt_off(CURL *easy, CURLoption option, curl_off_t value) { return api.curl_easy_setopt(easy, option, value); }
CURLcode kc_curl_setopt_string(CURL *easy, CURLoption option, const char *value) { return api.curl_easy_setopt(easy, option, value); }
CURLcode kc_curl_setopt_pointer(CURL *easy, CURLoption option, void *value) { return api.curl_easy_setopt(easy, option, value); }
CURLcode kc_curl_setopt_callback(CURL *easy, CURLoption option, kc_curl_data_callback callback) {
    return api.curl_easy_setopt(easy, option, callback);
}
CURLcode kc_curl_setopt_opensocket(CURL *easy, kc_curl_opensocket_callback callback) {
    return api.curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, callback);
}
CURLcode kc_curl_getinfo_long(CURL *easy, CURLINFO info, long *value) { return api.curl_easy_getinfo(easy, info, value); }
CURLcode kc_curl_getinfo_string(CURL *easy, CURLINFO info, char **value) { return api.curl_easy_getinfo(easy, info, value); }
CURLcode kc_curl_getinfo_private(CURL *easy, void **value) { return api.curl_easy_getinfo(easy, CURLINFO_PRIVATE, value); }
CURLMcode kc_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) { return api.curl_multi_setopt(multi, option, value); }
CURLcode kc_curl_message_result(const CURLMsg *message) { return message->data.result; }
