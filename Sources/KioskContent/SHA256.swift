// SPDX-License-Identifier: Apache-2.0
internal import CKioskCrypto

/// SHA-256 (FIPS 180-4) through OpenSSL's EVP digest interface (libcrypto). Feed bytes with
/// ``update(_:)``, then read ``finalizeHex()`` once (the context is finished by it).
///
/// libcrypto is opened with dlopen by the first digest (`Sources/CKioskCrypto`): a show of
/// local files never hashes, so never maps it. It is a dependency of the .deb (libssl3) and of
/// libcurl4: a system without it cannot fetch at all, and the first digest stops the program
/// with the loader's reason (a precondition, not a thrown error).
public final class SHA256 {
    private let context: OpaquePointer
    private let api: UnsafePointer<kc_crypto_api>

    /// The loaded libcrypto; stops the program, naming the loader's reason, when it is missing.
    private static let library: UnsafePointer<kc_crypto_api> = {
        guard let api = kc_crypto_load() else {
            fatalError("\(String(cString: kc_crypto_load_error()!)) (install libssl3)")
        }
        return api
    }()

    public init() {
        api = Self.library
        // EVP_MD_CTX_new fails only when malloc does.
        context = api.pointee.EVP_MD_CTX_new()!
        _ = api.pointee.EVP_DigestInit_ex(context, api.pointee.EVP_sha256(), nil)
    }

    deinit { api.pointee.EVP_MD_CTX_free(context) }

    /// Adds `bytes` to the digest.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count > 0 { _ = api.pointee.EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
    }

    public func update<S: Sequence<UInt8>>(_ bytes: S) {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    /// The 32-byte digest as 64 lowercase hex digits.
    public func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = api.pointee.EVP_DigestFinal_ex(context, &digest, &length)
        return hexString(digest.prefix(Int(length)))
    }

    /// The SHA-256 of `text`'s UTF-8 bytes, as 64 lowercase hex digits.
    public static func hex(of text: String) -> String {
        let h = SHA256()
        h.update(Array(text.utf8))
        return h.finalizeHex()
    }

    /// The SHA-256 of `bytes`, as 64 lowercase hex digits.
    public static func hex<S: Sequence<UInt8>>(ofBytes bytes: S) -> String {
        let h = SHA256()
        h.update(bytes)
        return h.finalizeHex()
    }
}

/// Lowercase hex of `bytes`.
func hexString<S: Sequence<UInt8>>(_ bytes: S) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
