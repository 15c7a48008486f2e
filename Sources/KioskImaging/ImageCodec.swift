// SPDX-License-Identifier: Apache-2.0
import CLibGif
import CLibHeif
import CLibJPEG
import CLibPNG
import CLibWebP
import CLibWebPDemux  // webp/demux.h includes decode.h: its names come through this module too
import KioskCore
import KioskSystem

/// One row of the codec table (``ImageCodec/table``, docs/formats.md): how a format of
/// ``ImageFormat/shown`` is decoded, whole and fitted into a frame, and the libraries that do it
/// with their versions. The format's magic bytes, extensions and names are its ``ImageFormat``
/// row (KioskCore, so that content can read them without the decoders).
public struct ImageCodec: Sendable {
    /// The format decoded.
    public let format: ImageFormat
    /// The libraries it decodes with, in the order `--version` lists them.
    public let libraries: [CodecLibrary]
    /// Decodes the whole upright image (``ImageDecoder/decode(path:options:)``).
    let decode: @Sendable (_ source: ImageSource, _ name: String, _ options: DecodeOptions)
        throws(ImageError) -> DecodedImage
    /// Decodes straight into `frame`, placed as `fit` says over `background`
    /// (``ImageDecoder/decodeFitted(path:into:fit:background:options:)``; `blur` is done by the
    /// caller from a `fit` placement).
    let decodeFitted: @Sendable (_ source: ImageSource, _ name: String, _ frame: Bitmap, _ fit: FitMode,
                                 _ background: RGBColor, _ options: DecodeOptions) throws(ImageError) -> FittedImage

    /// The row for `format`, nil for a format not shown.
    public static func codec(for format: ImageFormat) -> ImageCodec? { table.first { $0.format == format } }

    /// Every library of the table once, for `--version`: first those linked, then those opened
    /// with dlopen on first use (each in table order), each asked for its version now.
    public static var libraryVersions: [LibraryVersion] {
        var seen: Set<String> = []
        let libraries = table.flatMap(\.libraries).filter { seen.insert($0.name).inserted }
        return (libraries.filter(\.isLinked) + libraries.filter { !$0.isLinked }).map { $0.version() }
    }

    /// The codec table: one row per format of ``ImageFormat/shown``, in its order.
    public static let table: [ImageCodec] = [
        ImageCodec(format: .jpeg, libraries: [.libjpegTurbo],
                   decode: { source, name, options throws(ImageError) in
                       try JPEGDecoder.decode(source, name: name, options: options)
                   },
                   decodeFitted: { source, name, frame, fit, background, options throws(ImageError) in
                       try JPEGDecoder.decodeFitted(source, name: name, into: frame, fit: fit,
                                                    background: background, options: options)
                   }),
        ImageCodec(format: .png, libraries: [.libpng],
                   decode: { source, name, options throws(ImageError) in
                       try PNGDecoder.decode(source, name: name, options: options)
                   },
                   decodeFitted: { source, name, frame, fit, background, options throws(ImageError) in
                       var targeted = options
                       targeted.targetWidth = frame.width
                       targeted.targetHeight = frame.height
                       targeted.fit = fit
                       return try PNGDecoder.decodeFitted(source, name: name, into: frame, fit: fit,
                                                          background: background, options: targeted)
                   }),
        ImageCodec(format: .webp, libraries: [.libwebp, .libwebpdemux],
                   decode: { source, name, options throws(ImageError) in
                       try WebPDecoder.decode(source, name: name, options: options)
                   },
                   decodeFitted: { source, name, frame, fit, background, options throws(ImageError) in
                       try WebPDecoder.decodeFitted(source, name: name, into: frame, fit: fit,
                                                    background: background, options: options)
                   }),
        ImageCodec(format: .heif, libraries: [.libheif, .libde265],
                   decode: { source, name, options throws(ImageError) in
                       try HEIFDecoder.decode(source, format: .heif, name: name, options: options)
                   },
                   decodeFitted: { source, name, frame, fit, background, options throws(ImageError) in
                       try HEIFDecoder.decodeFitted(source, format: .heif, name: name, into: frame, fit: fit,
                                                    background: background, options: options)
                   }),
        ImageCodec(format: .avif, libraries: [.libheif],
                   decode: { source, name, options throws(ImageError) in
                       try HEIFDecoder.decode(source, format: .avif, name: name, options: options)
                   },
                   decodeFitted: { source, name, frame, fit, background, options throws(ImageError) in
                       try HEIFDecoder.decodeFitted(source, format: .avif, name: name, into: frame, fit: fit,
                                                    background: background, options: options)
                   }),
        ImageCodec(format: .gif, libraries: [.giflib],
                   decode: { source, name, options throws(ImageError) in
                       try GIFDecoder.decode(source, name: name, options: options)
                   },
                   decodeFitted: { source, name, frame, fit, background, options throws(ImageError) in
                       try GIFDecoder.decodeFitted(source, name: name, into: frame, fit: fit,
                                                   background: background, options: options)
                   }),
    ]
}

/// A library a codec decodes with: its name, whether it is linked or opened on first use
/// (dlopen), and how to ask its version (``LibraryVersion``: the version it reports at run time,
/// the headers' version, the file the dynamic loader mapped).
public struct CodecLibrary: Sendable {
    /// The library's name as `--version` prints it: `libjpeg-turbo`, `libheif`.
    public let name: String
    /// True for a library linked into the program; false for one opened with dlopen on first
    /// use (asking its version opens it).
    public let isLinked: Bool
    /// Asks the version now.
    public let version: @Sendable () -> LibraryVersion

    /// libjpeg-turbo, linked. LIBJPEG_TURBO_VERSION_NUMBER is MMMmmmppp (jconfig.h);
    /// libjpeg-turbo 2.1 has no run-time version call, so only the headers' version is known.
    public static let libjpegTurbo = CodecLibrary(name: "libjpeg-turbo", isLinked: true) {
        let turbo = Int(LIBJPEG_TURBO_VERSION_NUMBER)
        let built = "\(turbo / 1_000_000).\(turbo / 1000 % 1000).\(turbo % 1000) (libjpeg API \(JPEG_LIB_VERSION))"
        return LibraryVersion(name: "libjpeg-turbo", running: nil, builtWith: built,
                              loadedFile: SharedLibrary.loadedFile("libjpeg.so"))
    }

    /// libpng, linked. png_get_libpng_ver returns the version string compiled into the library
    /// that is loaded (png.c), PNG_LIBPNG_VER_STRING the headers' (png.h).
    public static let libpng = CodecLibrary(name: "libpng", isLinked: true) {
        LibraryVersion(name: "libpng", running: png_get_libpng_ver(nil).map { String(cString: $0) },
                       builtWith: PNG_LIBPNG_VER_STRING, loadedFile: SharedLibrary.loadedFile("libpng16.so"))
    }

    /// libwebp, linked. WebPGetDecoderVersion gives 0xMMmmpp (webp/decode.h); the headers carry
    /// only ABI numbers, no release.
    public static let libwebp = CodecLibrary(name: "libwebp", isLinked: true) {
        let webp = Int(WebPGetDecoderVersion())
        return LibraryVersion(name: "libwebp", running: "\(webp >> 16).\((webp >> 8) & 0xFF).\(webp & 0xFF)",
                              builtWith: nil, loadedFile: SharedLibrary.loadedFile("libwebp.so"))
    }

    /// libwebpdemux (animated WebP, ``WebPAnimation``), linked. WebPGetDemuxVersion gives 0xMMmmpp
    /// (webp/demux.h).
    public static let libwebpdemux = CodecLibrary(name: "libwebpdemux", isLinked: true) {
        let demux = Int(WebPGetDemuxVersion())
        return LibraryVersion(name: "libwebpdemux", running: "\(demux >> 16).\((demux >> 8) & 0xFF).\(demux & 0xFF)",
                              builtWith: nil, loadedFile: SharedLibrary.loadedFile("libwebpdemux.so"))
    }

    /// giflib, linked. It has no run-time version call; gif_lib.h gives
    /// GIFLIB_MAJOR.MINOR.RELEASE.
    public static let giflib = CodecLibrary(name: "giflib", isLinked: true) {
        LibraryVersion(name: "giflib", running: nil, builtWith: "\(GIFLIB_MAJOR).\(GIFLIB_MINOR).\(GIFLIB_RELEASE)",
                       loadedFile: SharedLibrary.loadedFile("libgif.so"))
    }

    /// libheif, opened on first use (HEIFLibrary.swift). heif_get_version (heif.h) names the
    /// loaded library's release; LIBHEIF_VERSION is the headers' (heif_version.h).
    public static let libheif = CodecLibrary(name: "libheif", isLinked: false) {
        SharedLibrary.stringVersion("libheif", soname: HEIFLibrary.soname, function: "heif_get_version",
                                    builtWith: LIBHEIF_VERSION)
    }

    /// libde265, the HEVC decoder the project's libheif plug-in calls (`kc_heif.c`), looked up
    /// in the libheif that is opened. de265_get_version (libde265/de265.h); the plug-in is
    /// built against libde265-dev's headers, whose version CLibHeif does not include.
    public static let libde265 = CodecLibrary(name: "libde265", isLinked: false) {
        SharedLibrary.stringVersion("libde265", soname: "libde265.so.0", function: "de265_get_version", builtWith: nil)
    }
}
