// SPDX-License-Identifier: Apache-2.0
import CLibHeif
import Glibc
import KioskCore
import KioskSystem

/// HEIF/HEIC (HEVC, decoded by libde265) and AVIF (AV1, decoded by dav1d or libaom) through
/// libheif: the primary image, whole or a grid of tiles (a phone's 12 MP HEIC is 48 tiles of
/// 512x512), with its alpha plane, composited over the background when placed. 10-bit and
/// 12-bit images are reduced to 8 bits by libheif (`convert_hdr_to_8bit`), except an HDR one
/// (a `colr` box with PQ or HLG), decoded at 16 bits a sample and tone-mapped from those
/// (``HDRToneMap``). Colour: the `colr` box (an ICC profile or `nclx` code points), or the
/// codec's own colour description (HEVC's VUI) when there is none, converted to the screen's
/// space (``ColourConversion``) on the decoded image; an HDR picture whose only colour
/// description is in its stream is tone-mapped from its 8-bit reduction.
///
/// Orientation: libheif applies the file's `irot` (rotation), `imir` (mirror) and `clap`
/// (crop) transforms itself while decoding, and those are the HEIF's orientation; the EXIF
/// orientation a HEIF may carry as well (phones often write both) describes the same turn
/// and is NOT applied again. ``FittedImage/orientation`` is therefore always
/// ``EXIFOrientation/topLeft``, and the sizes are those after the transforms.
///
/// Limits: the size of the primary image (from its `ispe` box, before anything is decoded)
/// is checked against ``DecodeOptions/maxSide`` and ``DecodeOptions/maxPixels``; libheif's
/// own size limit is set to the same side (`heif_context_set_maximum_image_size_limit`) and
/// its security limits (boxes, items, tiles per grid) are its defaults.
///
/// Memory (``DecodeOptions/maxDecoderBytes``): libheif 1.15 has no allocator hook, so its
/// allocations are counted from the header by what it makes for the image, before it decodes
/// anything, at their largest: the file held whole; the decoded YCbCr image (counted at
/// 4:4:4, 3 samples per pixel, 2 bytes per sample above 8 bits) with the codec's pictures
/// (counted as large again: a grid decodes tile by tile, a single image in one picture) and
/// the alpha plane; then that with the RGBA image it is converted to (4 bytes per pixel);
/// and only when a transform makes libheif copy the image (an `irot` turning it or a `clap`
/// cropping it, ``ISOMediaHeader/hasCopyingTransform(_:)``; `imir` mirrors in place), the
/// decoded image with that copy, which libheif makes before the RGBA image exists, so it never
/// passes the first phase. ``ImageDecoder/decode(path:options:)`` adds the bitmap it hands out.
/// The image cannot be decoded at a smaller size: it is decoded whole, then placed.
enum HEIFDecoder {
    static func decode(_ source: ImageSource, format: ImageFormat, name: String,
                       options: DecodeOptions) throws(ImageError) -> DecodedImage {
        let image = try HEIFImage.decode(source, format: format, name: name, options: options, handedOut: true)
        let bitmap = try allocateImage(width: image.width, height: image.height, hasAlpha: image.hasAlpha, name: name)
        for y in 0..<image.height {
            bitmap.row(y).update(from: image.row(y), count: image.width)
        }
        return DecodedImage(bitmap: bitmap, sourceWidth: image.width, sourceHeight: image.height,
                            orientation: .topLeft, scaleNumerator: 8, warnings: image.warnings, format: format)
    }

    /// ``ImageDecoder/decodeFitted(path:into:fit:background:options:)`` for HEIF and AVIF: the
    /// image decoded whole by libheif, its alpha flattened over `background`, its rows placed
    /// straight from libheif's buffer.
    static func decodeFitted(_ source: ImageSource, format: ImageFormat, name: String, into frame: Bitmap,
                             fit: FitMode, background: RGBColor, options: DecodeOptions) throws(ImageError) -> FittedImage {
        let image = try HEIFImage.decode(source, format: format, name: name, options: options, handedOut: false)
        if image.hasAlpha {
            for y in 0..<image.height { Compositor.flattenAlpha(image.row(y), count: image.width, over: background) }
        }
        let plan = Compositor.placement(imageWidth: image.width, imageHeight: image.height, into: frame, fit: fit)
        Compositor.place(plan, into: frame, background: background) { first, count, rows in
            for k in 0..<count { rows[k] = UnsafePointer(image.row(first + k)) }
        }
        return FittedImage(sourceWidth: image.width, sourceHeight: image.height, orientation: .topLeft,
                           scaleNumerator: 8, decodedWidth: image.width, decodedHeight: image.height,
                           decodedRows: 0..<image.height, streamed: false, warnings: image.warnings, format: format,
                           animated: image.imageSequence)
    }
}

/// The codec of a HEIF's primary image, from the item type that codes it (ISO/IEC 23008-12
/// and its amendments: `hvc1`/`hev1` HEVC, `av01` AV1, `avc1` H.264, `jpeg` JPEG, `j2k1`
/// JPEG 2000, `vvc1` VVC, `evc1` EVC), else from the file's brand (HEVC, or AV1 for AVIF).
struct HEIFCoding {
    let compression: heif_compression_format
    /// The codec's name, as the log says it.
    let name: String
    /// The item type it was read from, nil when told from the brand.
    let itemType: String?

    init(itemType: String?, format: ImageFormat) {
        let known: [String: (heif_compression_format, String)] = [
            "hvc1": (heif_compression_HEVC, "HEVC"), "hev1": (heif_compression_HEVC, "HEVC"),
            "av01": (heif_compression_AV1, "AV1"), "avc1": (heif_compression_AVC, "H.264 (AVC)"),
            "jpeg": (heif_compression_JPEG, "JPEG"), "j2k1": (heif_compression_JPEG2000, "JPEG 2000"),
            "vvc1": (heif_compression_VVC, "VVC (H.266)"), "evc1": (heif_compression_EVC, "EVC")]
        if let itemType, let (compression, name) = known[itemType] {
            (self.compression, self.name, self.itemType) = (compression, name, itemType)
        } else {
            (compression, name) = format == .avif ? (heif_compression_AV1, "AV1") : (heif_compression_HEVC, "HEVC")
            self.itemType = nil
        }
    }

    /// The log's reason when libheif has no decoder for this codec: which codec, and which
    /// ones Debian's libheif1 decodes (libde265, dav1d and libaom are built into it).
    var missingDecoder: String {
        let coded = itemType.map { " (its primary image is coded as '\($0)')" } ?? ""
        switch compression {
        case heif_compression_HEVC: return "this libheif has no HEVC decoder\(coded) (Debian's libheif1 uses libde265)"
        case heif_compression_AV1: return "this libheif has no AV1 decoder\(coded) (Debian's libheif1 uses dav1d or libaom)"
        default: return "this libheif has no \(name) decoder\(coded); Debian's libheif1 decodes HEVC and AV1 only"
        }
    }
}

/// The primary image of a HEIF file decoded by libheif into interleaved 8-bit RGBA, its
/// bytes then reordered in place to B, G, R, A (ARGB8888, straight alpha), so that each row
/// is a row of ``Bitmap`` pixels. Owns the `heif_image` (released on deinit).
final class HEIFImage {
    private let library: HEIFLibrary
    private let image: OpaquePointer
    private let plane: UnsafeMutablePointer<UInt8>
    /// Bytes from one row to the next in libheif's buffer.
    let stride: Int
    /// The size after libheif's transforms, in pixels.
    let width: Int, height: Int
    let hasAlpha: Bool
    /// The colour conversion's warning, if any (a profile that cannot be used, light levels out
    /// of range).
    var warnings: [String] = []
    /// The file is an AVIF image sequence (the `avis` brand) that libavif can play: this is
    /// its primary image, ``AVIFAnimation`` plays the frames.
    var imageSequence = false

    private init(library: HEIFLibrary, image: OpaquePointer, plane: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int,
                 hasAlpha: Bool) {
        self.library = library
        self.image = image
        self.plane = plane
        self.stride = stride
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
    }

    deinit { library.imageRelease(image) }

    /// Row `y`: `width` pixels, 0xAARRGGBB.
    func row(_ y: Int) -> UnsafeMutablePointer<UInt32> {
        UnsafeMutableRawPointer(plane + y * stride).assumingMemoryBound(to: UInt32.self)
    }

    /// Reads and decodes the primary image. `handedOut`: the caller will copy it into a bitmap
    /// of its own (counted in the memory check).
    static func decode(_ source: ImageSource, format: ImageFormat, name: String, options: DecodeOptions,
                       handedOut: Bool) throws(ImageError) -> HEIFImage {
        let file = try EncodedBytes.load(source, name: name, options: options)
        defer { withExtendedLifetime(file) {} }  // the library reads the bytes in place
        // The primary image's size from its ispe box, before libheif is even loaded.
        let stored = ISOMediaHeader.primaryImageSize(file.bytes)
        if let stored { try checkHeader(width: stored.width, height: stored.height, options: options, name: name) }
        // What the coded stream really asks the decoder for (its parameter sets or sequence
        // headers, in the configuration box and in the item data): libheif decodes that size
        // whatever the ispe box says, past every limit checked from it. A stream coding more
        // than the ispe declares (a few rows and columns of coding blocks aside) is refused.
        if let problem = ISOMediaCodedSize.gridProblem(file.bytes) { throw .corrupt(path: name, reason: problem) }
        let streamName = format == .avif ? "AV1" : "HEVC"
        let reading = format == .avif ? ISOMediaCodedSize.largestAV1(file.bytes) : ISOMediaCodedSize.largestHEVC(file.bytes)
        guard reading.complete else {
            throw .corrupt(path: name, reason: "its \(streamName) items' extents add up to more than the file")
        }
        if reading.items > 0 && reading.largest == nil {
            // A decoder could not start without one either; libheif would still be handed it.
            throw .corrupt(path: name, reason: format == .avif ? "its AV1 stream has no sequence header to read its size from"
                           : "its HEVC stream has no sequence parameter set to read its size from")
        }
        let coded = reading.largest
        if let coded {
            try checkHeader(width: coded.width, height: coded.height, options: options, name: name)
            if let stored, coded.width > stored.width + 64 || coded.height > stored.height + 64 {
                throw .corrupt(path: name, reason: "its \(streamName) stream codes \(coded.width)x\(coded.height) pixels, "
                               + "more than the \(stored.width)x\(stored.height) its ispe box declares")
            }
        }
        let lib: HEIFLibrary
        switch HEIFLibrary.shared {
        case .success(let loaded): lib = loaded
        case .failure(let error): throw .unsupported(path: name, reason: error.message)
        }
        // Before libheif reads the file: libheif 1.15 does not take an item it has no decoder
        // for as an image at all, and would call the file damaged.
        let coding = HEIFCoding(itemType: ISOMediaCodedSize.primaryCoding(file.bytes), format: format)
        guard lib.haveDecoderForFormat(coding.compression) != 0 else {
            throw .unsupported(path: name, reason: coding.missingDecoder)
        }
        guard let context = lib.contextAlloc() else {
            throw .outOfMemory(path: name, reason: "cannot create a libheif context")
        }
        defer { lib.contextFree(context) }
        lib.setMaximumImageSizeLimit(context, Int32(DecodeOptions.maxSide))
        var error = lib.readFromMemoryWithoutCopy(context, file.bytes.baseAddress, file.bytes.count, nil)
        guard error.code == heif_error_Ok else { throw failure(error, name: name, reading: true) }
        var handle: OpaquePointer?
        error = lib.primaryImageHandle(context, &handle)
        guard error.code == heif_error_Ok, let handle else { throw failure(error, name: name, reading: true) }
        defer { lib.handleRelease(handle) }

        // The decoder's pictures are counted at the larger of the ispe size and the coded size
        // (which may pass the ispe by up to a coding block's worth of rows and columns).
        let storedWidth = max(Int(lib.handleIspeWidth(handle)), coded?.width ?? 0)
        let storedHeight = max(Int(lib.handleIspeHeight(handle)), coded?.height ?? 0)
        try checkHeader(width: storedWidth, height: storedHeight, options: options, name: name)
        let width = Int(lib.handleWidth(handle)), height = Int(lib.handleHeight(handle))
        try checkHeader(width: width, height: height, options: options, name: name)
        let hasAlpha = lib.handleHasAlpha(handle) != 0
        let bits = Int(lib.handleLumaBits(handle))
        let sampleBytes = bits > 0 && bits <= 8 ? 1 : 2
        // The colr box: an HDR picture (PQ or HLG) of more than 8 bits is decoded at 16 bits a
        // sample and tone-mapped from those (kc_tonemap_rows16); every other one at 8.
        let colours = HEIFColourFunctions.shared
        let declared = options.colour.enabled ? colours?.description(handle: handle) : nil
        let hdr16: Bool = {
            guard bits > 8, case .codePoints(let points)? = declared?.0 else { return false }
            return points.isHDR
        }()
        let channels = hasAlpha ? 4 : 3

        let held = EncodedBytes.memoryUse(file.heldBytes)
        let ycbcr = MemoryUse(what: "the decoded YCbCr image (\(storedWidth)x\(storedHeight) pixels, \(3 * sampleBytes) bytes each at most)",
                              bytes: MemoryUse.product(storedWidth, storedHeight, 3 * sampleBytes))
        let pictures = MemoryUse(what: "the codec's pictures (as large again)", bytes: ycbcr.bytes)
        let alpha = MemoryUse(what: "the alpha plane", bytes: hasAlpha ? MemoryUse.product(storedWidth, storedHeight, sampleBytes) : 0)
        let rgba = hdr16
            ? MemoryUse(what: "the RGB image at 16 bits a sample (\(width)x\(height) pixels, "
                            + "\(2 * channels) bytes each)",
                        bytes: MemoryUse.product(width, height, 2 * channels))
            : MemoryUse.image(width: width, height: height, "the RGBA image")
        var phases = [[held, pictures, ycbcr, alpha], [held, ycbcr, alpha, rgba]]
        // libheif 1.15 applies irot and clap to the decoded image before it makes the RGBA
        // image (heif_context.cc, decode_image_planar): a copy as large as that image beside
        // it (HeifPixelImage::rotate_ccw, crop), no RGBA-sized copy; imir mirrors in place.
        if ISOMediaHeader.hasCopyingTransform(file.bytes) {
            phases.append([held, ycbcr, MemoryUse(what: "its copy turned by irot or cropped by clap", bytes: ycbcr.bytes), alpha])
        }
        if handedOut { phases.append([rgba, MemoryUse.image(width: width, height: height, "the bitmap handed out")]) }
        let needed = try checkMemory(phases, options: options, name: name)

        guard let decoding = lib.decodingOptionsAlloc() else {
            throw .outOfMemory(path: name, reason: "cannot allocate libheif's decoding options")
        }
        defer { lib.decodingOptionsFree(decoding) }
        decoding.pointee.convert_hdr_to_8bit = hdr16 ? 0 : 1
        var decoded: OpaquePointer?
        let chroma = !hdr16 ? heif_chroma_interleaved_RGBA
            : hasAlpha ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RRGGBB_LE
        error = lib.decodeImage(handle, &decoded, heif_colorspace_RGB, chroma, UnsafePointer(decoding))
        guard error.code == heif_error_Ok, let decoded else { throw failure(error, name: name, reading: false) }
        var stride: Int32 = 0
        let outWidth = Int(lib.imageWidth(decoded, heif_channel_interleaved))
        let outHeight = Int(lib.imageHeight(decoded, heif_channel_interleaved))
        let range = Int(lib.imageBitsPerPixelRange(decoded, heif_channel_interleaved))
        guard let plane = lib.imagePlane(decoded, heif_channel_interleaved, &stride),
              outWidth > 0, outHeight > 0, Int(stride) >= outWidth * (hdr16 ? 2 * channels : 4),
              hdr16 ? range > 8 && range <= 16 : range == 8 else {
            lib.imageRelease(decoded)
            throw .corrupt(path: name,
                           reason: hdr16 ? "libheif gave no 16-bit RGB image" : "libheif gave no 8-bit RGBA image")
        }
        let result = HEIFImage(library: lib, image: decoded, plane: plane, stride: Int(stride), width: outWidth, height: outHeight,
                               hasAlpha: hasAlpha)
        // The colours: the colr box's, else what the codec's stream said (the image's own nclx).
        var description = declared?.0 ?? .sRGB
        var oversized = declared?.oversized
        if options.colour.enabled, description == .sRGB, oversized == nil, let colours {
            (description, oversized) = colours.description(image: decoded)
        }
        let light = colours?.lightLevels(decoded) ?? HDRMetadata()
        var made = ColourConversion.make(description, alpha: hasAlpha, target: options.colour, name: name,
                                         bits: hdr16 ? range : 8, hdr: light, budget: options.maxDecoderBytes - needed)
        if let size = oversized, let warning = ColourConversion.oversizedProfile(size, name: name, options: options) {
            made.warning = warning
        }
        result.warnings = made.warning.map { [$0] } ?? []
        if format == .avif, ISOMediaHeader.isImageSequence(file.bytes) {
            if AVIFAnimation.unavailable == nil {
                result.imageSequence = true
            } else if let note = AVIFSequence.note(for: name) {
                result.warnings.append(note)
            }
        }
        if hdr16 {
            if let conversion = made.conversion, conversion.isToneMap {
                conversion.convertRows16(plane, stride: Int(stride), width: outWidth, height: outHeight,
                                         channels: channels)
            } else {
                result.reduceRows16(bits: range, channels: channels)
            }
            return result
        }
        // R, G, B, A bytes (0xAABBGGRR read as a little-endian UInt32) to 0xAARRGGBB.
        for y in 0..<outHeight {
            let p = result.row(y)
            for x in 0..<outWidth {
                let v = p[x]
                p[x] = (v & 0xFF00_FF00) | (v & 0xFF) << 16 | (v >> 16) & 0xFF
            }
        }
        made.conversion?.convertRows(outHeight, width: outWidth) { result.row($0) }
        return result
    }

    /// 16-bit R, G, B (, A) samples of `bits` to B, G, R, A bytes at the start of each row, by
    /// dropping the low bits as libheif's `convert_hdr_to_8bit` does: for an HDR picture whose
    /// tone map could not be made (its warning says so).
    func reduceRows16(bits: Int, channels: Int) {
        let shift = UInt16(max(0, bits - 8))
        for y in 0..<height {
            let row = plane + y * stride
            row.withMemoryRebound(to: UInt16.self, capacity: width * channels) { samples in
                for x in 0..<width {
                    let r = UInt8(truncatingIfNeeded: UInt16(littleEndian: samples[x * channels]) >> shift)
                    let g = UInt8(truncatingIfNeeded: UInt16(littleEndian: samples[x * channels + 1]) >> shift)
                    let b = UInt8(truncatingIfNeeded: UInt16(littleEndian: samples[x * channels + 2]) >> shift)
                    let a = channels == 4
                        ? UInt8(truncatingIfNeeded: UInt16(littleEndian: samples[x * channels + 3]) >> shift) : 0xFF
                    // Pixel x's 4 bytes end before pixel x + 1's samples begin (6 or 8 bytes a pixel).
                    row[x * 4] = b; row[x * 4 + 1] = g; row[x * 4 + 2] = r; row[x * 4 + 3] = a
                }
            }
        }
    }

    /// A libheif message as one line of the log: some end in a newline ("…outside of file bounds
    /// (points to file position 681)\n"), some hold several; lines joined with "; ", trimmed.
    static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline)
            .map { line in String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()) }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }

    /// The ``ImageError`` for a libheif error, with its message.
    private static func failure(_ error: heif_error, name: String, reading: Bool) -> ImageError {
        let message = error.message.map { oneLine(String(cString: $0)) } ?? "error \(error.code.rawValue)"
        switch error.code {
        case heif_error_Memory_allocation_error where error.subcode == heif_suberror_Security_limit_exceeded:
            return .unsupported(path: name, reason: "over libheif's security limits: \(message)")
        case heif_error_Memory_allocation_error:
            return .outOfMemory(path: name, reason: "libheif: \(message)")
        case heif_error_Unsupported_feature where error.subcode == heif_suberror_Unsupported_codec:
            return .unsupported(path: name, reason: "libheif has no decoder for its codec: \(message)")
        case heif_error_Unsupported_feature:
            return .unsupported(path: name, reason: "libheif: \(message)")
        default:
            let what = reading ? "the HEIF structure is damaged or truncated" : "the image data is damaged or truncated"
            return .corrupt(path: name, reason: "\(what) (libheif: \(message))")
        }
    }
}

/// AVIF image sequences (the `avis` brand, AV1 Image File Format section 7) where libavif cannot
/// be opened: libheif 1.15, the decoder of Debian 12, has no sequence API and decodes the
/// primary image, so the first frame is shown, and the log says so once per file with the reason
/// (docs/images.md "Animations").
enum AVIFSequence {
    /// The paths already reported.
    private static let reported = Locked<Set<String>>([])

    /// The note for `name`, the first time it is decoded; nil after that.
    static func note(for name: String) -> String? {
        guard reported.withLock({ $0.insert(name).inserted }) else { return nil }
        let reason = AVIFAnimation.unavailable ?? "unknown"
        return "an animated AVIF shows its first frame: \(AVIFAnimation.soname) could not be opened (\(reason))"
    }
}
