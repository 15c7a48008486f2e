// SPDX-License-Identifier: Apache-2.0
internal import CKioskText

/// FreeType, HarfBuzz, fontconfig and FriBidi, opened with dlopen on the first use of text
/// (`Sources/CKioskText`; the program does it on a thread of its own, never the frame loop's):
/// a show that never draws words never maps them nor the libraries they depend on
/// (docs/benchmarks.md).
enum TextLibraries {
    /// The table of every function KioskText calls (static, valid for the life of the
    /// process), loading the four libraries on the first call (thread-safe).
    /// - Throws: ``TextError/libraryMissing(soname:reason:)`` when one of them cannot be opened
    ///   or lacks a function; every later call throws the same.
    static func load() throws(TextError) -> UnsafePointer<kc_text_api> {
        if let api = kc_text_load() { return api }
        let soname = kc_text_load_failed_soname().map { String(cString: $0) } ?? "?"
        var reason = kc_text_load_error().map { String(cString: $0) } ?? "unknown"
        if reason.hasPrefix(soname + ": ") { reason.removeFirst(soname.count + 2) }  // dlerror names it too
        throw TextError.libraryMissing(soname: soname, reason: reason)
    }
}
