// SPDX-License-Identifier: Apache-2.0
import CLibGif
import CLibHeif
import CLibWebP
import KioskSystem

/// The image libraries beside libjpeg-turbo and libpng, for `--version`: libwebp and giflib
/// (linked), libheif (opened on first use, HEIFLibrary.swift) and libde265 (the HEVC decoder
/// the project's libheif plug-in calls, `kc_heif.c`). libheif and libde265 are opened here to
/// ask their versions, so only `--version` loads them without a HEIF to show.
public enum ImagingLibraries {
    public static var versions: [LibraryVersion] {
        // WebPGetDecoderVersion gives 0xMMmmpp (webp/decode.h); the headers carry only ABI
        // numbers, no release.
        let webp = Int(WebPGetDecoderVersion())
        return [
            LibraryVersion(name: "libwebp", running: "\(webp >> 16).\((webp >> 8) & 0xFF).\(webp & 0xFF)", builtWith: nil,
                           loadedFile: SharedLibrary.loadedFile("libwebp.so")),
            // giflib has no run-time version call; gif_lib.h gives GIFLIB_MAJOR.MINOR.RELEASE.
            LibraryVersion(name: "giflib", running: nil, builtWith: "\(GIFLIB_MAJOR).\(GIFLIB_MINOR).\(GIFLIB_RELEASE)",
                           loadedFile: SharedLibrary.loadedFile("libgif.so")),
            // heif_get_version (heif.h) names the loaded library's release; LIBHEIF_VERSION is
            // the headers' (heif_version.h).
            SharedLibrary.stringVersion("libheif", soname: HEIFLibrary.soname, function: "heif_get_version",
                                        builtWith: LIBHEIF_VERSION),
            // de265_get_version (libde265/de265.h); the project's plug-in is built against
            // libde265-dev's headers, whose version CLibHeif does not include.
            SharedLibrary.stringVersion("libde265", soname: "libde265.so.0", function: "de265_get_version", builtWith: nil),
        ]
    }
}
