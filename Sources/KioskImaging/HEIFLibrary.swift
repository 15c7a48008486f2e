// SPDX-License-Identifier: Apache-2.0
import CKioskShim
import CLibHeif
import Glibc

/// libheif, opened on first use with `dlopen("libheif.so.1")` rather than linked: libheif
/// links its codecs (libde265, dav1d, libaom, x265), whose loading and static initialisers
/// cost about 4 MiB of resident memory in every process that links them; a show without HEIF
/// or AVIF files does not pay it (it would take the whole program past its 32 MiB peak on
/// the small cases of docs/images.md "Limits"). The declarations come from libheif's
/// header (CLibHeif, which links nothing); the .deb depends on `libheif1` by name, since
/// dpkg-shlibdeps cannot see a library that is opened at run time.
///
/// Only the functions the decoder calls are looked up, each with the signature of its
/// declaration in `libheif/heif.h` (libheif 1.15's ABI, soname `libheif.so.1`). Opened once,
/// never closed; the lookup result (or why it failed) is kept.
struct HEIFLibrary: @unchecked Sendable {
    typealias Context = OpaquePointer
    typealias Handle = OpaquePointer
    typealias Image = OpaquePointer

    let contextAlloc: @convention(c) () -> Context?
    let contextFree: @convention(c) (Context?) -> Void
    let setMaximumImageSizeLimit: @convention(c) (Context?, Int32) -> Void
    let readFromMemoryWithoutCopy: @convention(c) (Context?, UnsafeRawPointer?, Int, OpaquePointer?) -> heif_error
    let primaryImageHandle: @convention(c) (Context?, UnsafeMutablePointer<Handle?>?) -> heif_error
    let handleRelease: @convention(c) (Handle?) -> Void
    let handleIspeWidth: @convention(c) (Handle?) -> Int32
    let handleIspeHeight: @convention(c) (Handle?) -> Int32
    let handleWidth: @convention(c) (Handle?) -> Int32
    let handleHeight: @convention(c) (Handle?) -> Int32
    let handleHasAlpha: @convention(c) (Handle?) -> Int32
    let handleLumaBits: @convention(c) (Handle?) -> Int32
    let haveDecoderForFormat: @convention(c) (heif_compression_format) -> Int32
    let decodingOptionsAlloc: @convention(c) () -> UnsafeMutablePointer<heif_decoding_options>?
    let decodingOptionsFree: @convention(c) (UnsafeMutablePointer<heif_decoding_options>?) -> Void
    let decodeImage: @convention(c) (Handle?, UnsafeMutablePointer<Image?>?, heif_colorspace, heif_chroma,
                                     UnsafePointer<heif_decoding_options>?) -> heif_error
    let imageWidth: @convention(c) (Image?, heif_channel) -> Int32
    let imageHeight: @convention(c) (Image?, heif_channel) -> Int32
    let imageBitsPerPixelRange: @convention(c) (Image?, heif_channel) -> Int32
    let imagePlane: @convention(c) (Image?, heif_channel, UnsafeMutablePointer<Int32>?) -> UnsafeMutablePointer<UInt8>?
    let imageRelease: @convention(c) (Image?) -> Void

    /// libde265 worker threads each HEVC decode starts (the CPUs the process may run on, at
    /// most `KC_HEIF_MAX_THREADS`): the project's HEVC plug-in (`kc_heif.h`) replaces
    /// libheif's own, which starts one. 0 when it could not be registered (then
    /// ``hevcPluginProblem`` says why and libheif's own plug-in decodes, on one thread).
    let hevcThreads: Int
    /// Why the project's HEVC plug-in is not in use, nil when it is.
    let hevcPluginProblem: String?

    /// How many images the project's HEVC plug-in has decoded in this process.
    static var hevcImagesDecoded: Int { kc_heif_hevc_images_decoded() }

    /// The shared library's soname (Debian package libheif1).
    static let soname = "libheif.so.1"

    /// The library, or why it could not be had (dlopen's or dlsym's message).
    static let shared: Result<HEIFLibrary, LoadError> = load()

    struct LoadError: Error {
        var message: String
    }

    private static func load() -> Result<HEIFLibrary, LoadError> {
        guard let library = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let message = dlerror().map { String(cString: $0) } ?? "dlopen failed"
            return .failure(LoadError(message: "cannot open \(soname) (install Debian's libheif1): \(message)"))
        }
        var missing: [String] = []
        func symbol<T>(_ name: String, _ type: T.Type) -> T? {
            guard let address = dlsym(library, name) else { missing.append(name); return nil }
            return unsafeBitCast(address, to: type)
        }
        let lookups = (
            symbol("heif_context_alloc", (@convention(c) () -> Context?).self),
            symbol("heif_context_free", (@convention(c) (Context?) -> Void).self),
            symbol("heif_context_set_maximum_image_size_limit", (@convention(c) (Context?, Int32) -> Void).self),
            symbol("heif_context_read_from_memory_without_copy",
                   (@convention(c) (Context?, UnsafeRawPointer?, Int, OpaquePointer?) -> heif_error).self),
            symbol("heif_context_get_primary_image_handle",
                   (@convention(c) (Context?, UnsafeMutablePointer<Handle?>?) -> heif_error).self),
            symbol("heif_image_handle_release", (@convention(c) (Handle?) -> Void).self),
            symbol("heif_image_handle_get_ispe_width", (@convention(c) (Handle?) -> Int32).self),
            symbol("heif_image_handle_get_ispe_height", (@convention(c) (Handle?) -> Int32).self),
            symbol("heif_image_handle_get_width", (@convention(c) (Handle?) -> Int32).self),
            symbol("heif_image_handle_get_height", (@convention(c) (Handle?) -> Int32).self),
            symbol("heif_image_handle_has_alpha_channel", (@convention(c) (Handle?) -> Int32).self),
            symbol("heif_image_handle_get_luma_bits_per_pixel", (@convention(c) (Handle?) -> Int32).self)
        )
        let lookups2 = (
            symbol("heif_have_decoder_for_format", (@convention(c) (heif_compression_format) -> Int32).self),
            symbol("heif_decoding_options_alloc",
                   (@convention(c) () -> UnsafeMutablePointer<heif_decoding_options>?).self),
            symbol("heif_decoding_options_free",
                   (@convention(c) (UnsafeMutablePointer<heif_decoding_options>?) -> Void).self),
            symbol("heif_decode_image",
                   (@convention(c) (Handle?, UnsafeMutablePointer<Image?>?, heif_colorspace, heif_chroma,
                                    UnsafePointer<heif_decoding_options>?) -> heif_error).self),
            symbol("heif_image_get_width", (@convention(c) (Image?, heif_channel) -> Int32).self),
            symbol("heif_image_get_height", (@convention(c) (Image?, heif_channel) -> Int32).self),
            symbol("heif_image_get_bits_per_pixel_range", (@convention(c) (Image?, heif_channel) -> Int32).self),
            symbol("heif_image_get_plane",
                   (@convention(c) (Image?, heif_channel, UnsafeMutablePointer<Int32>?)
                       -> UnsafeMutablePointer<UInt8>?).self),
            symbol("heif_image_release", (@convention(c) (Image?) -> Void).self)
        )
        guard missing.isEmpty,
              let a = lookups.0, let b = lookups.1, let c = lookups.2, let d = lookups.3, let e = lookups.4,
              let f = lookups.5, let g = lookups.6, let h = lookups.7, let i = lookups.8, let j = lookups.9,
              let k = lookups.10, let l = lookups.11,
              let m = lookups2.0, let n = lookups2.1, let o = lookups2.2, let p = lookups2.3, let q = lookups2.4,
              let r = lookups2.5, let s = lookups2.6, let t = lookups2.7, let u = lookups2.8 else {
            return .failure(LoadError(
                message: "\(soname) lacks \(missing.joined(separator: ", ")) (libheif 1.15 or later is needed)"))
        }
        return .success(HEIFLibrary(
            contextAlloc: a, contextFree: b, setMaximumImageSizeLimit: c, readFromMemoryWithoutCopy: d,
            primaryImageHandle: e, handleRelease: f, handleIspeWidth: g, handleIspeHeight: h, handleWidth: i,
            handleHeight: j, handleHasAlpha: k, handleLumaBits: l, haveDecoderForFormat: m, decodingOptionsAlloc: n,
            decodingOptionsFree: o, decodeImage: p, imageWidth: q, imageHeight: r, imageBitsPerPixelRange: s,
            imagePlane: t, imageRelease: u,
            hevcThreads: kc_heif_install_hevc_decoder(library) == 0 ? Int(kc_heif_hevc_decoder_threads()) : 0,
            hevcPluginProblem: kc_heif_hevc_decoder_error().map { String(cString: $0) }))
    }
}
