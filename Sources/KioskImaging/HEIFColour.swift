// SPDX-License-Identifier: Apache-2.0
import CLibHeif
import Glibc

/// libheif's colour calls (heif.h, libheif 1.15), looked up in the same `libheif.so.1` that
/// ``HEIFLibrary`` opens (a second dlopen of a loaded library only counts a reference): the
/// `colr` box of an image (`nclx` code points, or a `prof`/`rICC` ICC profile) and the light
/// levels (`clli`, `mdcv`) of a decoded image. Separate from ``HEIFLibrary`` so that a libheif
/// without them still decodes, unconverted.
struct HEIFColourFunctions: @unchecked Sendable {
    typealias Handle = OpaquePointer
    typealias Image = OpaquePointer
    /// Where libheif puts the `nclx` profile it allocates.
    typealias NCLXOut = UnsafeMutablePointer<UnsafeMutablePointer<heif_color_profile_nclx>?>?
    /// Where libheif writes the `mdcv` values.
    typealias MasteringOut = UnsafeMutablePointer<heif_mastering_display_colour_volume>?

    let handleProfileType: @convention(c) (Handle?) -> heif_color_profile_type
    let handleRawProfileSize: @convention(c) (Handle?) -> Int
    let handleRawProfile: @convention(c) (Handle?, UnsafeMutableRawPointer?) -> heif_error
    let handleNCLX: @convention(c) (Handle?, NCLXOut) -> heif_error
    let imageProfileType: @convention(c) (Image?) -> heif_color_profile_type
    let imageRawProfileSize: @convention(c) (Image?) -> Int
    let imageRawProfile: @convention(c) (Image?, UnsafeMutableRawPointer?) -> heif_error
    let imageNCLX: @convention(c) (Image?, NCLXOut) -> heif_error
    let nclxFree: @convention(c) (UnsafeMutablePointer<heif_color_profile_nclx>?) -> Void
    let hasContentLightLevel: @convention(c) (Image?) -> Int32
    let contentLightLevel: @convention(c) (Image?, UnsafeMutablePointer<heif_content_light_level>?) -> Void
    let hasMasteringDisplay: @convention(c) (Image?) -> Int32
    let masteringDisplay: @convention(c) (Image?, MasteringOut) -> Void

    /// The functions, or nil when libheif cannot be opened or lacks one of them.
    static let shared: HEIFColourFunctions? = load()

    private static func load() -> HEIFColourFunctions? {
        guard let library = dlopen(HEIFLibrary.soname, RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<T>(_ name: String, _ type: T.Type) -> T? {
            dlsym(library, name).map { unsafeBitCast($0, to: type) }
        }
        guard let a = symbol("heif_image_handle_get_color_profile_type",
                             (@convention(c) (Handle?) -> heif_color_profile_type).self),
              let b = symbol("heif_image_handle_get_raw_color_profile_size", (@convention(c) (Handle?) -> Int).self),
              let c = symbol("heif_image_handle_get_raw_color_profile",
                             (@convention(c) (Handle?, UnsafeMutableRawPointer?) -> heif_error).self),
              let d = symbol("heif_image_handle_get_nclx_color_profile",
                             (@convention(c) (Handle?, NCLXOut) -> heif_error).self),
              let e = symbol("heif_image_get_color_profile_type",
                             (@convention(c) (Image?) -> heif_color_profile_type).self),
              let f = symbol("heif_image_get_raw_color_profile_size", (@convention(c) (Image?) -> Int).self),
              let g = symbol("heif_image_get_raw_color_profile",
                             (@convention(c) (Image?, UnsafeMutableRawPointer?) -> heif_error).self),
              let h = symbol("heif_image_get_nclx_color_profile",
                             (@convention(c) (Image?, NCLXOut) -> heif_error).self),
              let i = symbol("heif_nclx_color_profile_free",
                             (@convention(c) (UnsafeMutablePointer<heif_color_profile_nclx>?) -> Void).self),
              let j = symbol("heif_image_has_content_light_level", (@convention(c) (Image?) -> Int32).self),
              let k = symbol("heif_image_get_content_light_level",
                             (@convention(c) (Image?, UnsafeMutablePointer<heif_content_light_level>?) -> Void).self),
              let l = symbol("heif_image_has_mastering_display_colour_volume", (@convention(c) (Image?) -> Int32).self),
              let m = symbol("heif_image_get_mastering_display_colour_volume",
                             (@convention(c) (Image?, MasteringOut) -> Void).self)
        else { return nil }
        return HEIFColourFunctions(handleProfileType: a, handleRawProfileSize: b, handleRawProfile: c, handleNCLX: d,
                                   imageProfileType: e, imageRawProfileSize: f, imageRawProfile: g, imageNCLX: h,
                                   nclxFree: i, hasContentLightLevel: j, contentLightLevel: k, hasMasteringDisplay: l,
                                   masteringDisplay: m)
    }

    /// What a `colr` box says: the `nclx` code points or the ICC profile (`prof`, `rICC`; an
    /// image with both has its ICC profile taken, as libheif reports it first), of the image
    /// `handle` (before decoding) or of the decoded `image` (a colour description the codec's
    /// stream carried, HEVC's VUI, when the file has no `colr`). `.sRGB` for none; a profile
    /// over ``ColourDescription/maxProfileBytes`` is not copied, and its size is the second value.
    func description(handle: Handle? = nil, image: Image? = nil) -> (ColourDescription, oversized: Int?) {
        let type = handle.map { handleProfileType($0) } ?? image.map { imageProfileType($0) }
            ?? heif_color_profile_type_not_present
        switch type {
        case heif_color_profile_type_prof, heif_color_profile_type_rICC:
            let size = handle.map { handleRawProfileSize($0) } ?? image.map { imageRawProfileSize($0) } ?? 0
            guard size > 0 else { return (.sRGB, nil) }
            guard size <= ColourDescription.maxProfileBytes else { return (.sRGB, size) }
            var bytes = [UInt8](repeating: 0, count: size)
            let error = bytes.withUnsafeMutableBytes { raw in
                handle.map { handleRawProfile($0, raw.baseAddress) } ?? imageRawProfile(image, raw.baseAddress)
            }
            return error.code == heif_error_Ok ? (.icc(bytes), nil) : (.sRGB, nil)
        case heif_color_profile_type_nclx:
            var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
            let error = handle.map { handleNCLX($0, &nclx) } ?? imageNCLX(image, &nclx)
            guard error.code == heif_error_Ok, let nclx else { return (.sRGB, nil) }
            defer { nclxFree(nclx) }
            let p = nclx.pointee
            return (.codePoints(CodePoints(primaries: Int(p.color_primaries.rawValue),
                                           transfer: Int(p.transfer_characteristics.rawValue),
                                           matrix: Int(p.matrix_coefficients.rawValue),
                                           fullRange: p.full_range_flag != 0)),
                    nil)
        default:
            return (.sRGB, nil)
        }
    }

    /// The decoded image's light levels: its `clli` MaxCLL and its `mdcv` peak, the latter from
    /// its raw value in units of 0.0001 cd/m² (SMPTE ST 2086), not libheif's decoding, which
    /// gives 0 for a value out of range and so hides it.
    func lightLevels(_ image: Image) -> HDRMetadata {
        var result = HDRMetadata()
        if hasContentLightLevel(image) != 0 {
            var clli = heif_content_light_level()
            contentLightLevel(image, &clli)
            result.maxContentLightLevel = Double(clli.max_content_light_level)
        }
        if hasMasteringDisplay(image) != 0 {
            var mdcv = heif_mastering_display_colour_volume()
            masteringDisplay(image, &mdcv)
            result.masteringPeak = Double(mdcv.max_display_mastering_luminance) / 10000
        }
        return result
    }
}
