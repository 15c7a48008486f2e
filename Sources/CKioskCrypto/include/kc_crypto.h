// SPDX-License-Identifier: Apache-2.0
#ifndef KC_CRYPTO_H
#define KC_CRYPTO_H
// OpenSSL's libcrypto, opened with dlopen at the first SHA-256 (a disk-cache key or a body
// check, so only a show with remote images) instead of linked: linked, it cost every start
// about 2.5 million instructions of loading and relocation and 1.7 MiB of resident memory
// (docs/benchmarks.md). libcurl4 depends on it too, so a show that fetches maps it anyway.
// The .deb depends on libssl3 by name, since dpkg-shlibdeps cannot see it.
//
// kc_crypto_load() returns a table of the EVP digest functions used, each field typed as
// OpenSSL's own declaration (__typeof__); see EVP_DigestInit(3ssl).
#include <openssl/evp.h>

/// The soname opened: OpenSSL 3's libcrypto, which Debian 12's libssl3 provides.
#define KC_CRYPTO_SONAME "libcrypto.so.3"

#define KC_CRYPTO_FUNCTIONS(X) \
    X(EVP_MD_CTX_new) X(EVP_MD_CTX_free) X(EVP_DigestInit_ex) X(EVP_DigestUpdate) \
    X(EVP_DigestFinal_ex) X(EVP_sha256)

/// The functions of libcrypto the SHA-256 digest calls, never NULL once loaded.
struct kc_crypto_api {
#define KC_CRYPTO_FIELD(name) __typeof__(&name) _Nonnull name;
    KC_CRYPTO_FUNCTIONS(KC_CRYPTO_FIELD)
#undef KC_CRYPTO_FIELD
};

/// Opens libcrypto and looks up every function, once per process (thread-safe): the table
/// (static, valid for the life of the process), or NULL when the library or a symbol is
/// missing (then kc_crypto_load_error() says why).
const struct kc_crypto_api *_Nullable kc_crypto_load(void);
/// Why libcrypto could not be loaded (dlerror's text or the missing symbol), NULL when it was.
/// The string is static.
const char *_Nullable kc_crypto_load_error(void);

#endif
