// SPDX-License-Identifier: Apache-2.0
// OpenSSL's libcrypto (Debian: libssl-dev): SHA-256 through the EVP digest interface, for the
// disk cache's file names (SHA-256 of the URL) and for checking a body against a manifest hash.
// Opened with dlopen by CKioskCrypto (nothing links it).
#include <openssl/evp.h>
#include <openssl/sha.h>
