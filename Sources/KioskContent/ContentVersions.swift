// SPDX-License-Identifier: Apache-2.0
internal import CKioskCrypto
import CKioskCurl
import CLibCurl
import KioskSystem

/// The libraries of downloads, for `--version`: libcurl and OpenSSL's libcrypto, both opened
/// on first use (the fetcher's first transfer, the first SHA-256), so opened here to ask.
public enum ContentVersions {
    /// libcurl, then libcrypto.
    public static var versions: [LibraryVersion] {
        [
            // curl_version_info describes the library that is loaded (its `version` field is in
            // every layout, so the first one is asked for: CURLVERSION_NOW is a macro Swift
            // cannot import); LIBCURL_VERSION is the headers' (curl/curlver.h).
            LibraryVersion(name: "libcurl",
                           running: kc_curl_version_info(CURLVERSION_FIRST)?.pointee.version
                               .map { String(cString: $0) },
                           builtWith: LIBCURL_VERSION, loadedFile: SharedLibrary.loadedFile("libcurl"),
                           notInstalled: kc_curl_load() == 0 ? nil
                               : kc_curl_load_error().map { String(cString: $0) } ?? KC_CURL_SONAME),
            // OpenSSL_version(OPENSSL_VERSION_STRING) (crypto.h, "3.0.11"); the headers' version
            // is OPENSSL_VERSION_STR (opensslv.h).
            SharedLibrary.version("libcrypto", soname: KC_CRYPTO_SONAME, builtWith: OPENSSL_VERSION_STR) { library in
                library.function("OpenSSL_version", (@convention(c) (Int32) -> UnsafePointer<CChar>?).self)
                    .flatMap { $0(Int32(OPENSSL_VERSION_STRING)) }.map { String(cString: $0) }
            },
        ]
    }
}
