// SPDX-License-Identifier: Apache-2.0
import CKioskSys
import Glibc

/// One library the program uses, as `--version` reports it: its name, the version it reports at
/// run time (nil when it has no call for that, or is not installed), the version of the headers
/// it was built with (nil when they do not say), the file the dynamic loader mapped (nil when
/// not loaded), and, for a library opened with dlopen that could not be, why (dlerror's text).
public struct LibraryVersion: Equatable, Sendable {
    public var name: String
    public var running: String?
    public var builtWith: String?
    public var loadedFile: String?
    /// Why the library could not be opened; nil when it was (or is linked).
    public var notInstalled: String?

    public init(name: String, running: String?, builtWith: String?, loadedFile: String?, notInstalled: String? = nil) {
        self.name = name; self.running = running; self.builtWith = builtWith
        self.loadedFile = loadedFile; self.notInstalled = notInstalled
    }
}

/// A shared library opened at run time (dlopen(3)), for the libraries the program loads on
/// first use (libcurl, libcrypto, libheif, FreeType, HarfBuzz, fontconfig): `--version` opens
/// them to ask their version.
public struct SharedLibrary: @unchecked Sendable {
    /// dlopen's handle; the library is never closed.
    public let handle: UnsafeMutableRawPointer

    /// `dlopen(soname, RTLD_LAZY | RTLD_LOCAL)` (a library already loaded is handed back, not
    /// loaded twice). Fails with dlerror's text, which names the file.
    public static func open(_ soname: String) -> Result<SharedLibrary, LoadFailure> {
        guard let handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL) else {
            return .failure(LoadFailure(message: dlerror().map { String(cString: $0) } ?? "dlopen(\(soname)) failed"))
        }
        return .success(SharedLibrary(handle: handle))
    }

    /// Why a library could not be opened (dlerror's text).
    public struct LoadFailure: Error, Sendable { public var message: String }

    /// The function `name` typed as `type` (a `@convention(c)` function type written as the
    /// library's declaration), or nil when the library lacks it.
    public func function<T>(_ name: String, _ type: T.Type) -> T? {
        dlsym(handle, name).map { unsafeBitCast($0, to: type) }
    }

    /// The path (symbolic links resolved) of the first shared object loaded into this process
    /// whose file name starts with `prefix` ("libpng16.so"), or nil when none is
    /// (dl_iterate_phdr(3), through `kc_loaded_library`).
    public static func loadedFile(_ prefix: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard kc_loaded_library(prefix, &buffer, buffer.count) == 1 else { return nil }
        return String(cString: buffer)
    }

    /// The version of the library `soname` through its function `function`, which takes no
    /// argument and returns a C string (`heif_get_version`, `hb_version_string`,
    /// `de265_get_version`): a ``LibraryVersion`` named `name`, with `builtWith`, the file
    /// mapped, or why it is not installed.
    public static func stringVersion(_ name: String, soname: String, function: String,
                                     builtWith: String?) -> LibraryVersion {
        version(name, soname: soname, builtWith: builtWith) { library in
            library.function(function, (@convention(c) () -> UnsafePointer<CChar>?).self)
                .flatMap { $0() }.map { String(cString: $0) }
        }
    }

    /// A ``LibraryVersion`` for `soname`: opened, `ask` reads its version, and the file mapped
    /// is looked up (by the soname's stem, "libheif.so"); or, when it cannot be opened, not
    /// installed with dlerror's text.
    public static func version(_ name: String, soname: String, builtWith: String?,
                               ask: (SharedLibrary) -> String?) -> LibraryVersion {
        switch open(soname) {
        case .failure(let failure):
            return LibraryVersion(name: name, running: nil, builtWith: builtWith, loadedFile: nil,
                                  notInstalled: failure.message)
        case .success(let library):
            let stem = soname.firstRange(of: ".so").map { String(soname[..<$0.upperBound]) } ?? soname
            return LibraryVersion(name: name, running: ask(library), builtWith: builtWith, loadedFile: loadedFile(stem))
        }
    }
}
