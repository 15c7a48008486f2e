// SPDX-License-Identifier: Apache-2.0
#ifndef KC_CURL_H
#define KC_CURL_H
// Typed wrappers of libcurl's varargs calls (curl_easy_setopt, curl_easy_getinfo,
// curl_multi_setopt), which Swift cannot call directly. Each returns libcurl's own code
// (CURLE_OK / CURLM_OK on success); see curl_easy_setopt(3), curl_easy_getinfo(3).
#include <curl/curl.h>

/// The signature of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION: `size * nmemb` bytes at
/// `data` (not NUL-terminated, owned by libcurl for the call only); returns the bytes taken
/// (anything else ends the transfer with CURLE_WRITE_ERROR).
typedef size_t (*kc_curl_data_callback)(char *data, size_t size, size_t nmemb, void *user);

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
