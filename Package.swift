// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
//
// kiosk-carousel: a slideshow for Linux kiosks that draws straight to DRM/KMS or fbdev.
//
// Layers (dependencies point one way; docs/architecture.md has the map and the data path):
//   KioskCore (pure Swift, imports nothing: carousel, scenes, gestures, rotation, compositing,
//     the image format table),
//   KioskSystem (POSIX glue: errno funnel, file descriptors, Mailbox, WorkerThread, inotify,
//     signal pipe, JSONValue, log lines; C: CKioskSys); the two do not import each other
//     <- KioskImaging (the codec table: libjpeg-turbo, libpng through CKioskShim; libwebp,
//          giflib; libheif opened on first use; PNG writing)
//        KioskDisplay (DRM/KMS through CKioskDRM and libdrm, fbdev, offscreen; backlight, HDMI-CEC;
//          also KioskImaging)
//        KioskInput (evdev touchscreens, libevdev; a motion sensor on a GPIO line, libgpiod
//          through CKioskGpio)
//        KioskText (FreeType, HarfBuzz, fontconfig: status screens, captions, the clock)
//        KioskContent (sources, playlist, manifest, disk cache, downloads; libcrypto, libcurl
//          through CKioskCurl; KioskCore's format table checks a download's first bytes)
//        KioskMQTT (the MQTT client on its own thread, the event outbox, Home Assistant discovery,
//          command payloads; libmosquitto through CKioskMQTT)
//       <- KioskApp (options, frame loop, decode worker, control socket, systemd notify)
//         <- kiosk-carousel (main.swift only)
// Beside them: kiosk-bench (the benchmarks), kiosk-cache-writer (a test helper, not installed),
// kiosk-man (writes the manual page deploy/kiosk-carousel.1 from the option table, not installed),
// and one test target per module (KioskCoreTests ... KioskAppTests) testing that module's types.
import PackageDescription
#if canImport(Glibc)
import Glibc
#endif

/// The first line of the top-level VERSION file, the one place the version is written. The C
/// shim embeds the file itself (#embed, rebuilt when it changes); this copy is only for a
/// compiler without #embed.
let version: String = {
    let path = String(#filePath.dropLast("Package.swift".count)) + "VERSION"
    guard let file = fopen(path, "r") else { return "unknown" }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 64)
    guard fgets(&line, Int32(line.count), file) != nil else { return "unknown" }
    return line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        .split(whereSeparator: { $0 == "\n" || $0 == "\r" }).first.map(String.init) ?? "unknown"
}()

/// FreeType's, HarfBuzz's and FriBidi's header folders on Debian (`pkg-config --cflags freetype2
/// harfbuzz fribidi`),
/// for the targets that read their headers (the libraries themselves are opened with dlopen):
/// CKioskText, and every Swift module, since one that imports KioskText, even indirectly, may
/// read CKioskText's header (release builds optimise across modules; see the end of the file).
let textHeaders = ["/usr/include/freetype2", "/usr/include/harfbuzz", "/usr/include/fribidi"]

let package = Package(
    name: "kiosk-carousel",
    products: [
        .executable(name: "kiosk-carousel", targets: ["kiosk-carousel"]),
        .executable(name: "kiosk-bench", targets: ["kiosk-bench"]),
    ],
    targets: [
        // C libraries from Debian, found through pkg-config.
        .systemLibrary(name: "CLibJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CLibPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CLibDRM", pkgConfig: "libdrm",
                       providers: [.apt(["libdrm-dev"])]),
        .systemLibrary(name: "CLibEvdev", pkgConfig: "libevdev",
                       providers: [.apt(["libevdev-dev"])]),
        .systemLibrary(name: "CLibCrypto", providers: [.apt(["libssl-dev"])]),  // header only: CKioskCrypto opens it
        .systemLibrary(name: "CLibWebP", pkgConfig: "libwebp",
                       providers: [.apt(["libwebp-dev"])]),
        // libwebp's demux and animation decoder (WebPAnimDecoder) for animated WebP (runtime: libwebpdemux2).
        .systemLibrary(name: "CLibWebPDemux", pkgConfig: "libwebpdemux",
                       providers: [.apt(["libwebp-dev"])]),
        // libheif's header only: the library is opened on first use (HEIFLibrary.swift); the
        // HEVC plug-in (kc_heif.c) includes libde265's, which libheif-dev depends on.
        .systemLibrary(name: "CLibHeif", providers: [.apt(["libheif-dev", "libde265-dev"])]),
        // libavif's header only: CKioskAvif opens the library when an AVIF image sequence plays.
        .systemLibrary(name: "CLibAvif", providers: [.apt(["libavif-dev"])]),
        // giflib ships no .pc file on Debian 12; the modulemap links libgif itself.
        .systemLibrary(name: "CLibGif", providers: [.apt(["libgif-dev"])]),
        // Little CMS 2, colour management: ICC profiles, colour descriptions to the screen's
        // space (runtime: liblcms2-2).
        .systemLibrary(name: "CLibLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // The JSON parser and writer behind JSONValue: strict RFC 8259 (runtime: libjansson4).
        .systemLibrary(name: "CLibJansson", pkgConfig: "jansson",
                       providers: [.apt(["libjansson-dev"])]),
        // The fetcher's HTTP(S) client (runtime: libcurl4).
        .systemLibrary(name: "CLibCurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        // Text: glyphs, shaping, font lookup and the bidirectional algorithm for KioskText
        // (runtime: libfreetype6, libharfbuzz0b, libfontconfig1, libfribidi0; fonts-dejavu-core
        // is the default font). Headers only: CKioskText opens the libraries on first use; no
        // pkgConfig, which would link them, so their header folders are given as `textHeaders`.
        .systemLibrary(name: "CLibFreeType", providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(name: "CLibHarfBuzz", providers: [.apt(["libharfbuzz-dev"])]),
        .systemLibrary(name: "CLibFontconfig", providers: [.apt(["libfontconfig-dev"])]),
        .systemLibrary(name: "CLibFriBidi", providers: [.apt(["libfribidi-dev"])]),
        // MQTT for KioskMQTT (runtime: libmosquitto1). Header only: CKioskMQTT opens the library
        // when --mqtt is given.
        .systemLibrary(name: "CLibMosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // The only C with bodies, in small targets by what they link:
        // ioctl wrappers, request macros, the console restore and the wall timer (libc only),
        .target(name: "CKioskSys", cSettings: [.define("KC_VERSION_MANIFEST", to: "\"\(version)\"")]),
        // the page-flip event handler (libdrm),
        .target(name: "CKioskDRM", dependencies: ["CLibDRM"]),
        // setjmp-guarded libjpeg/libpng steps, and libheif's HEVC decoder on several threads
        // (libheif and libde265 looked up in the libheif that KioskImaging opens, not linked).
        .target(name: "CKioskShim", dependencies: ["CLibJPEG", "CLibPNG", "CLibHeif"],
                cSettings: [.unsafeFlags(["-O2"])]),

        // AVIF image sequences through libavif, opened on first use (its structures kept in C).
        .target(name: "CKioskAvif", dependencies: ["CLibAvif"], cSettings: [.unsafeFlags(["-O2"])]),

        // Little CMS's allocations counted, with a budget per transform; the HDR tone mapping.
        .target(name: "CKioskColour", dependencies: ["CLibLCMS2"], cSettings: [.unsafeFlags(["-O2"])]),
        // jansson's allocations counted, with a budget per parse.
        .target(name: "CKioskJSON", dependencies: ["CLibJansson"]),
        // Typed wrappers of libcurl's varargs setopt/getinfo calls.
        .target(name: "CKioskCurl", dependencies: ["CLibCurl"]),
        // libcrypto opened at the first SHA-256 (a table of its EVP digest functions).
        .target(name: "CKioskCrypto", dependencies: ["CLibCrypto"]),
        // FreeType, HarfBuzz, fontconfig and FriBidi opened on first use (a table of their functions).
        .target(name: "CKioskText", dependencies: ["CLibFreeType", "CLibHarfBuzz", "CLibFontconfig", "CLibFriBidi"],
                cSettings: [.unsafeFlags(textHeaders.map { "-I" + $0 })]),
        // libmosquitto opened when --mqtt is given (a table of its functions).
        .target(name: "CKioskMQTT", dependencies: ["CLibMosquitto"]),
        // A motion sensor on a GPIO line (--presence gpio:CHIP:LINE): libgpiod opened at the first
        // request, its 2.x API (runtime: libgpiod3, Debian 13) or its 1.6 API (libgpiod2, Debian 12);
        // no header needed.
        .target(name: "CKioskGpio"),

        .target(name: "KioskCore"),
        .target(name: "KioskSystem", dependencies: ["CKioskSys", "CLibJansson", "CKioskJSON"]),
        .target(name: "KioskImaging", dependencies: ["KioskCore", "KioskSystem", "CKioskShim", "CLibJPEG", "CLibPNG",
                                                     "CLibWebP", "CLibWebPDemux", "CLibHeif", "CLibGif", "CKioskAvif",
                                                     "CKioskColour"]),
        .target(name: "KioskText", dependencies: ["KioskCore", "KioskSystem", "CKioskText"]),
        .target(name: "KioskDisplay", dependencies: ["KioskCore", "KioskSystem", "KioskImaging", "CKioskSys",
                                                     "CKioskDRM"]),
        .target(name: "KioskInput", dependencies: ["KioskCore", "KioskSystem", "CLibEvdev", "CKioskGpio"]),
        .target(name: "KioskContent", dependencies: ["KioskCore", "KioskSystem", "CKioskCrypto", "CLibCurl",
                                                     "CKioskCurl"]),
        .target(name: "KioskMQTT", dependencies: ["KioskCore", "KioskSystem", "CKioskMQTT", "CLibMosquitto"]),
        .target(name: "KioskApp", dependencies: ["KioskCore", "KioskSystem", "KioskImaging", "KioskDisplay",
                                                 "KioskInput", "KioskContent", "KioskText", "KioskMQTT"]),
        .executableTarget(name: "kiosk-carousel", dependencies: ["KioskApp"]),
        // Test helper: writes a disk-cache entry slowly so a test can SIGKILL it mid-write.
        .executableTarget(name: "kiosk-cache-writer", dependencies: ["KioskContent", "KioskSystem"]),
        // Writes deploy/kiosk-carousel.1 from its template and the option table (not installed).
        .executableTarget(name: "kiosk-man", dependencies: ["KioskApp", "KioskSystem"]),
        .executableTarget(name: "kiosk-bench",
                          dependencies: ["KioskCore", "KioskSystem", "KioskImaging", "KioskDisplay", "KioskContent",
                                         "KioskText", "KioskApp"],
                          exclude: ["reference"]),

        .testTarget(name: "KioskCoreTests", dependencies: ["KioskCore"]),
        .testTarget(name: "KioskSystemTests", dependencies: ["KioskSystem"]),
        .testTarget(name: "KioskImagingTests", dependencies: ["KioskImaging"],
                    // run by the tests with /usr/bin/python3
                    exclude: ["pil_reference.py", "make_formats.py", "make_colour.py"]),
        .testTarget(name: "KioskTextTests", dependencies: ["KioskText", "KioskImaging"],
                    exclude: ["pil_text.py"]), // run by the tests with /usr/bin/python3
        .testTarget(name: "KioskDisplayTests", dependencies: ["KioskDisplay", "KioskImaging"]),
        .testTarget(name: "KioskInputTests", dependencies: ["KioskInput"]),
        .testTarget(name: "KioskContentTests", dependencies: ["KioskContent", "kiosk-cache-writer", "kiosk-carousel"]),
        .testTarget(name: "KioskMQTTTests", dependencies: ["KioskMQTT", "kiosk-carousel"]),
        .testTarget(name: "KioskAppTests", dependencies: ["KioskApp", "KioskImaging", "KioskText", "kiosk-carousel"]),
    ],
    swiftLanguageModes: [.v5]
)

// The libFuzzer targets (docs/fuzzing.md): declared only when Tests/fuzz/run.sh builds them with
// `-sanitize=fuzzer,address` on its own scratch path, so `swift build` and `swift test` never see them.
if Context.environment["KIOSK_FUZZ"] == "1" {
    package.targets.append(.executableTarget(
        name: "kiosk-fuzz",
        dependencies: ["KioskCore", "KioskSystem", "KioskImaging", "KioskInput", "KioskContent", "KioskMQTT",
                       "KioskApp"],
        path: "Tests/fuzz/Sources"))
}

// The text libraries' header folders for every Swift module (see `textHeaders`).
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(textHeaders.flatMap { ["-Xcc", "-I" + $0] })]
}
