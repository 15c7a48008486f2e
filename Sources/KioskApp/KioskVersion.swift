// SPDX-License-Identifier: Apache-2.0
import CKioskSys
import CKioskCurl
import CLibCurl
import CLibJansson
import CLibJPEG
import CLibPNG
import KioskContent
import KioskImaging
import KioskMQTT
import KioskSystem
import KioskText

/// The program's version and the libraries it runs with, for `--version` and the control
/// socket's `status`.
public enum KioskVersion {
    /// The version of kiosk-carousel, e.g. "0.2.0": the first line of the repository's
    /// top-level VERSION file, compiled into the C shim (the .deb's version comes from the same
    /// file).
    public static var string: String { ProgramVersion.string }

    /// One library: its name, the version it reports at run time, the headers' version, the
    /// file the dynamic loader mapped, and why it is not installed (``LibraryVersion``).
    public typealias Library = LibraryVersion

    /// Every library the program uses, in `--version`'s order: the linked ones, found among the
    /// loaded shared objects by the start of their file name (the soname's stem, as Debian
    /// installs it), and those opened with dlopen on first use (libheif, libde265, libcurl,
    /// libcrypto, FreeType, HarfBuzz, fontconfig, libmosquitto), which are opened here to ask their version
    /// ("not installed" when one cannot be).
    public static var libraries: [Library] {
        // LIBJPEG_TURBO_VERSION_NUMBER is MMMmmmppp (jconfig.h); libjpeg-turbo 2.1 has no
        // run-time version call, so only the headers' version can be shown.
        let turbo = Int(LIBJPEG_TURBO_VERSION_NUMBER)
        let jpegBuilt = "\(turbo / 1_000_000).\(turbo / 1000 % 1000).\(turbo % 1000) (libjpeg API \(JPEG_LIB_VERSION))"
        return [
            Library(name: "libjpeg-turbo", running: nil, builtWith: jpegBuilt, loadedFile: loaded("libjpeg.so")),
            // png_get_libpng_ver returns the version string compiled into the library that is
            // loaded (png.c), PNG_LIBPNG_VER_STRING the headers' (png.h).
            Library(name: "libpng", running: png_get_libpng_ver(nil).map { String(cString: $0) },
                    builtWith: PNG_LIBPNG_VER_STRING, loadedFile: loaded("libpng16.so")),
        ] + ImagingLibraries.versions + [
            // libdrm and libevdev have no version call and no version in their headers.
            Library(name: "libdrm", running: nil, builtWith: nil, loadedFile: loaded("libdrm.so")),
            Library(name: "libevdev", running: nil, builtWith: nil, loadedFile: loaded("libevdev.so")),
            // curl_version_info describes the library that is loaded (its `version` field is in
            // every layout, so the first one is asked for: CURLVERSION_NOW is a macro Swift
            // cannot import); LIBCURL_VERSION is the headers' (curl/curlver.h).
            Library(name: "libcurl", running: kc_curl_version_info(CURLVERSION_FIRST)?.pointee.version.map { String(cString: $0) },
                    builtWith: LIBCURL_VERSION, loadedFile: loaded("libcurl"),
                    notInstalled: kc_curl_load() == 0 ? nil : kc_curl_load_error().map { String(cString: $0) } ?? KC_CURL_SONAME),
            CryptoVersion.version,
            // jansson_version_str gives the loaded library's version, JANSSON_VERSION the
            // headers' (jansson.h).
            Library(name: "libjansson", running: String(cString: jansson_version_str()),
                    builtWith: JANSSON_VERSION, loadedFile: loaded("libjansson")),
        ] + TextVersions.versions + [MosquittoVersion.version]
    }

    /// `kiosk-carousel --version`: the version on the first line, then one line per library
    /// (in the manner of `ffmpeg -version`).
    public static var report: String {
        var lines = ["kiosk-carousel \(string)"]
        let libraries = libraries
        let width = libraries.map(\.name.count).max() ?? 0
        for library in libraries {
            var parts: [String] = []
            if let running = library.running { parts.append("running \(running)") }
            if let built = library.builtWith { parts.append("built with \(built)") }
            if let reason = library.notInstalled {
                parts.insert("not installed (\(reason))", at: 0)
            } else {
                if library.running == nil && library.builtWith == nil { parts.append("reports no version") }
                parts.append(library.loadedFile.map { "loaded from \($0)" } ?? "not loaded")
            }
            lines.append(library.name + String(repeating: " ", count: width + 2 - library.name.count) + parts.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    private static func loaded(_ prefix: String) -> String? { SharedLibrary.loadedFile(prefix) }
}
