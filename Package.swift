// swift-tools-version:6.0
//
// kiosk-carousel: a slideshow for Linux kiosks that draws straight to DRM/KMS or fbdev.
//
// Layers (dependencies point one way):
//   KioskCore (pure Swift: carousel, timing, compositing)
//     <- KioskSystem (POSIX glue), KioskImaging (libjpeg-turbo, libpng), KioskDisplay (fbdev, DRM, offscreen)
//       <- KioskApp (options, frame loop, logging) <- kiosk-carousel (main.swift only)
import PackageDescription

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
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        // sd_notify / sd_watchdog_enabled for the Type=notify unit (runtime: libsystemd0).
        .systemLibrary(name: "CLibSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        // The JSON parser and writer behind JSONValue: strict RFC 8259 (runtime: libjansson4).
        .systemLibrary(name: "CLibJansson", pkgConfig: "jansson",
                       providers: [.apt(["libjansson-dev"])]),
        // The fetcher's HTTP(S) client (runtime: libcurl4).
        .systemLibrary(name: "CLibCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        // The only C with bodies, in three small targets by what they link:
        // ioctl wrappers, request macros, the console restore and the wall timer (libc only),
        .target(name: "CKioskSys"),
        // the page-flip event handler (libdrm),
        .target(name: "CKioskDRM", dependencies: ["CLibDRM"]),
        // setjmp-guarded libjpeg/libpng steps.
        .target(name: "CKioskShim", dependencies: ["CLibJPEG", "CLibPNG"],
                cSettings: [.unsafeFlags(["-O2"])]),

        // Typed wrappers of libcurl's varargs setopt/getinfo calls.
        .target(name: "CKioskCurl", dependencies: ["CLibCurl"]),

        .target(name: "KioskCore"),
        .target(name: "KioskSystem", dependencies: ["CKioskSys", "CLibJansson"]),
        .target(name: "KioskImaging", dependencies: ["KioskCore", "KioskSystem", "CKioskShim"]),
        .target(name: "KioskDisplay", dependencies: ["KioskCore", "KioskSystem", "KioskImaging", "CKioskSys", "CKioskDRM"]),
        .target(name: "KioskInput", dependencies: ["KioskCore", "KioskSystem", "CLibEvdev"]),
        .target(name: "KioskContent", dependencies: ["KioskCore", "KioskSystem", "CLibCrypto", "CLibCurl", "CKioskCurl"]),
        .target(name: "KioskApp", dependencies: ["KioskCore", "KioskSystem", "KioskImaging", "KioskDisplay", "KioskInput", "KioskContent", "CLibSystemd"]),
        .executableTarget(name: "kiosk-carousel", dependencies: ["KioskApp"]),
        // Test helper: writes a disk-cache entry slowly so a test can SIGKILL it mid-write.
        .executableTarget(name: "kiosk-cache-writer", dependencies: ["KioskContent", "KioskSystem"]),
        .executableTarget(name: "kiosk-bench",
                          dependencies: ["KioskCore", "KioskImaging", "KioskDisplay", "KioskApp"],
                          exclude: ["reference"]),

        .testTarget(name: "KioskCoreTests", dependencies: ["KioskCore"]),
        .testTarget(name: "KioskSystemTests", dependencies: ["KioskSystem"]),
        .testTarget(name: "KioskImagingTests", dependencies: ["KioskImaging"],
                    exclude: ["pil_reference.py"]), // run by the tests with /usr/bin/python3
        .testTarget(name: "KioskDisplayTests", dependencies: ["KioskDisplay", "KioskImaging"]),
        .testTarget(name: "KioskInputTests", dependencies: ["KioskInput"]),
        .testTarget(name: "KioskContentTests", dependencies: ["KioskContent", "kiosk-cache-writer", "kiosk-carousel"]),
        .testTarget(name: "KioskAppTests", dependencies: ["KioskApp", "KioskImaging", "kiosk-carousel"]),
    ],
    swiftLanguageModes: [.v5]
)
