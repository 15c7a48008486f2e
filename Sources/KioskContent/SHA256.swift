// SPDX-License-Identifier: Apache-2.0
import CLibCrypto

/// SHA-256 (FIPS 180-4) through OpenSSL's EVP digest interface (libcrypto). Feed bytes with
/// ``update(_:)``, then read ``finalizeHex()`` once (the context is finished by it).
public final class SHA256 {
    private let context: OpaquePointer

    public init() {
        // EVP_MD_CTX_new fails only when malloc does.
        context = EVP_MD_CTX_new()!
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds `bytes` to the digest.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count > 0 { EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
    }

    public func update<S: Sequence<UInt8>>(_ bytes: S) {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    /// The 32-byte digest as 64 lowercase hex digits.
    public func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
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
