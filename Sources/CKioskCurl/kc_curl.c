// SPDX-License-Identifier: Apache-2.0
// Typed wrappers of libcurl's varargs calls; see include/kc_curl.h.
#include "kc_curl.h"

CURLcode kc_curl_setopt_long(CURL *easy, CURLoption option, long value) { return curl_easy_setopt(easy, option, value); }
CURLcode kc_curl_setopt_off(CURL *easy, CURLoption option, curl_off_t value) { return curl_easy_setopt(easy, option, value); }
CURLcode kc_curl_setopt_string(CURL *easy, CURLoption option, const char *value) { return curl_easy_setopt(easy, option, value); }
CURLcode kc_curl_setopt_pointer(CURL *easy, CURLoption option, void *value) { return curl_easy_setopt(easy, option, value); }
CURLcode kc_curl_setopt_callback(CURL *easy, CURLoption option, kc_curl_data_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}
CURLcode kc_curl_getinfo_long(CURL *easy, CURLINFO info, long *value) { return curl_easy_getinfo(easy, info, value); }
CURLcode kc_curl_getinfo_string(CURL *easy, CURLINFO info, char **value) { return curl_easy_getinfo(easy, info, value); }
CURLcode kc_curl_getinfo_private(CURL *easy, void **value) { return curl_easy_getinfo(easy, CURLINFO_PRIVATE, value); }
CURLMcode kc_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) { return curl_multi_setopt(multi, option, value); }
CURLcode kc_curl_message_result(const CURLMsg *message) { return message->data.result; }
