// SPDX-License-Identifier: Apache-2.0
// libcurl (Debian: libcurl4-openssl-dev, runtime libcurl4): the HTTP(S) client of the fetcher,
// used through its multi interface. Options and info calls are C varargs, which Swift cannot
// call: CKioskCurl wraps them in typed kc_curl_* functions, and it opens the library on first
// use (nothing links it).
#include <curl/curl.h>
