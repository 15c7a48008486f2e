// SPDX-License-Identifier: Apache-2.0
internal import CKioskCrypto
import KioskSystem

/// OpenSSL's libcrypto for `--version` (the show opens it at the first SHA-256, SHA256.swift):
/// opened here to ask OpenSSL_version(OPENSSL_VERSION_STRING) (crypto.h, "3.0.11"); the
/// headers' version is OPENSSL_VERSION_STR (opensslv.h).
public enum CryptoVersion {
    public static var version: LibraryVersion {
        SharedLibrary.version("libcrypto", soname: KC_CRYPTO_SONAME, builtWith: OPENSSL_VERSION_STR) { library in
            library.function("OpenSSL_version", (@convention(c) (Int32) -> UnsafePointer<CChar>?).self)
                .flatMap { $0(Int32(OPENSSL_VERSION_STRING)) }.map { String(cString: $0) }
        }
    }
}
