// SPDX-License-Identifier: Apache-2.0
#ifndef KC_CURL_H
#define KC_CURL_H
// libcurl, opened with dlopen on first use instead of linked: Debian's libcurl4 brings about
// 30 more libraries (GnuTLS, Kerberos, LDAP, libssh2, nghttp2, ...) whose loading costs every
// process about 5 ms and 6 MiB of resident memory; a show of local files never pays it
// (docs/benchmarks.md). The .deb depends on libcurl4 by name, since dpkg-shlibdeps cannot see it.
//
// Every kc_curl_* function below stands for the libcurl function of the same name (see its
// man page, e.g. curl_multi_poll(3)) and loads the library first; when it cannot be loaded
// they return the failure value given with each (NULL, CURLE_FAILED_INIT, ...) and
// kc_curl_load_error() says why. The varargs calls (curl_easy_setopt, curl_easy_getinfo,
// curl_multi_setopt), which Swift cannot call directly, get typed wrappers; they need a
// handle, so the library is loaded by then. Each returns libcurl's own code (CURLE_OK /
// CURLM_OK on success); see curl_easy_setopt(3), curl_easy_getinfo(3).
#include <curl/curl.h>

/// The soname opened: libcurl's ABI 4, which Debian 12's libcurl4 (7.88) provides.
#define KC_CURL_SONAME "libcurl.so.4"

/// Opens libcurl and looks up every function used, once per process (thread-safe):
/// 0 when ready, -1 when not (then kc_curl_load_error() says why).
int kc_curl_load(void);
/// Why libcurl could not be loaded (dlerror's text or the missing symbol), NULL when it was.
/// The string is static.
const char *kc_curl_load_error(void);

/// curl_global_init; CURLE_FAILED_INIT when libcurl is not loaded.
CURLcode kc_curl_global_init(long flags);
/// curl_version_info of the loaded library; NULL when it is not loaded.
curl_version_info_data *kc_curl_version_info(CURLversion age);
/// curl_easy_init; NULL when libcurl is not loaded.
CURL *kc_curl_easy_init(void);
/// curl_easy_cleanup.
void kc_curl_easy_cleanup(CURL *easy);
/// curl_easy_strerror (a static string).
const char *kc_curl_easy_strerror(CURLcode code);
/// curl_free.
void kc_curl_free(void *pointer);
/// curl_multi_init; NULL when libcurl is not loaded.
CURLM *kc_curl_multi_init(void);
/// curl_multi_cleanup.
CURLMcode kc_curl_multi_cleanup(CURLM *multi);
/// curl_multi_add_handle.
CURLMcode kc_curl_multi_add_handle(CURLM *multi, CURL *easy);
/// curl_multi_remove_handle.
CURLMcode kc_curl_multi_remove_handle(CURLM *multi, CURL *easy);
/// curl_multi_perform.
CURLMcode kc_curl_multi_perform(CURLM *multi, int *running);
/// curl_multi_info_read: the message is owned by libcurl until the next call.
CURLMsg *kc_curl_multi_info_read(CURLM *multi, int *left);
/// curl_multi_poll, waiting at most `timeout_ms` milliseconds.
CURLMcode kc_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms, int *ready);
/// curl_multi_wakeup.
CURLMcode kc_curl_multi_wakeup(CURLM *multi);
/// curl_slist_append: libcurl copies `line`; NULL when out of memory or not loaded.
struct curl_slist *kc_curl_slist_append(struct curl_slist *list, const char *line);
/// curl_slist_free_all.
void kc_curl_slist_free_all(struct curl_slist *list);
/// curl_url; NULL when libcurl is not loaded.
CURLU *kc_curl_url(void);
/// curl_url_cleanup.
void kc_curl_url_cleanup(CURLU *url);
/// curl_url_set; CURLUE_OUT_OF_MEMORY when libcurl is not loaded.
CURLUcode kc_curl_url_set(CURLU *url, CURLUPart part, const char *text, unsigned int flags);
/// curl_url_get: `*text` is freed with kc_curl_free; CURLUE_OUT_OF_MEMORY when not loaded.
CURLUcode kc_curl_url_get(CURLU *url, CURLUPart part, char **text, unsigned int flags);

/// The signature of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION: `size * nmemb` bytes at
/// `data` (not NUL-terminated, owned by libcurl for the call only); returns the bytes taken
/// (anything else ends the transfer with CURLE_WRITE_ERROR).
typedef size_t (*kc_curl_data_callback)(char *data, size_t size, size_t nmemb, void *user);

/// The signature of CURLOPT_OPENSOCKETFUNCTION (curl_opensocket_callback in curl/curl.h):
/// `address` is the address about to be connected to (its `addr` member is followed by room
/// for the whole sockaddr_in6); returns a new socket, or CURL_SOCKET_BAD to refuse the address
/// (libcurl then tries the next one, or fails with CURLE_COULDNT_CONNECT).
typedef curl_socket_t (*kc_curl_opensocket_callback)(void *user, curlsocktype purpose, struct curl_sockaddr *address);

/// curl_easy_setopt for CURLOPT_OPENSOCKETFUNCTION.
CURLcode kc_curl_setopt_opensocket(CURL *easy, kc_curl_opensocket_callback callback);

/// curl_easy_setopt for a `long` option (CURLOPTTYPE_LONG).
CURLcode kc_curl_setopt_long(CURL *easy, CURLoption option, long value);
/// curl_easy_setopt for a `curl_off_t` option (CURLOPTTYPE_OFF_T), e.g. CURLOPT_MAXFILESIZE_LARGE.
CURLcode kc_curl_setopt_off(CURL *easy, CURLoption option, curl_off_t value);
/// curl_easy_setopt for a string option: libcurl copies `value` (may be NULL to reset).
CURLcode kc_curl_setopt_string(CURL *easy, CURLoption option, const char *value);
/// curl_easy_setopt for a pointer option (CURLOPT_HTTPHEADER's slist, CURLOPT_ERRORBUFFER,
/// CURLOPT_WRITEDATA, CURLOPT_PRIVATE): the caller keeps `value` alive for the transfer.
CURLcode kc_curl_setopt_pointer(CURL *easy, CURLoption option, void *value);
/// curl_easy_setopt for CURLOPT_WRITEFUNCTION / CURLOPT_HEADERFUNCTION.
CURLcode kc_curl_setopt_callback(CURL *easy, CURLoption option, kc_curl_data_callback callback);

/// curl_easy_getinfo for a `long` (CURLINFO_LONG), e.g. CURLINFO_RESPONSE_CODE.
CURLcode kc_curl_getinfo_long(CURL *easy, CURLINFO info, long *value);
/// curl_easy_getinfo for a string (CURLINFO_STRING), e.g. CURLINFO_EFFECTIVE_URL; `*value`
/// is owned by the handle and valid until it is cleaned up.
CURLcode kc_curl_getinfo_string(CURL *easy, CURLINFO info, char **value);
/// curl_easy_getinfo for CURLINFO_PRIVATE.
CURLcode kc_curl_getinfo_private(CURL *easy, void **value);

/// curl_multi_setopt for a `long` option, e.g. CURLMOPT_MAX_TOTAL_CONNECTIONS.
CURLMcode kc_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// The CURLcode of a CURLMSG_DONE message (the `data.result` member of its union).
CURLcode kc_curl_message_result(const CURLMsg *message);

#endif
