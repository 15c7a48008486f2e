// SPDX-License-Identifier: Apache-2.0
import CKioskShim
import Glibc
import KioskCore

/// JPEG through libjpeg-turbo (kc_jpeg.c): baseline, progressive, arithmetic-coded; grayscale,
/// YCbCr, RGB, CMYK and YCCK (Adobe-inverted or not). 12-bit files are refused as unsupported,
/// so are files with more than `KC_JPEG_MAX_SCANS` (1000) scans or whose scans pass over the
/// image's 8x8 blocks more than `KC_JPEG_MAX_BLOCK_PASSES` (32) times on average (the work of
/// a decode is bounded, not only its memory). Of the APPn and COM segments only the first
/// APP1 "Exif" (at most 64 KiB, all a segment holds) and the APP2 "ICC_PROFILE" segments (at
/// most 4 MiB in all) are kept.
///
/// Colour: an embedded ICC profile (RGB, gray or CMYK) is converted to the screen's space
/// (``ColourConversion``) on the decoded rows, before they are resampled; a CMYK file with one
/// is converted by it instead of the naive formula.
///
/// Memory (``DecodeOptions/maxDecoderBytes``): a multi-scan file (progressive, or sequential
/// with its components in separate scans) keeps every DCT coefficient of the image in libjpeg
/// until its last scan, whatever the output scale; that buffer's size is known from the header
/// (`kc_jpeg_header.coefficient_bytes`) and is checked, with what the decode holds besides (the
/// decoded image, or the ring of a streamed one), before libjpeg allocates anything. Everything
/// libjpeg's memory manager is asked for is counted against the budget too (from the header
/// on, the whole budget; from `jpeg_start_decompress` on, what our buffers leave of it), and is
/// refused before it is allocated when it does not fit; libjpeg is also given that as
/// `max_memory_to_use`. The coefficient buffer is advised for transparent huge pages
/// (kc_jpeg.c): the same bytes, far fewer page faults while the scans fill it.
enum JPEGDecoder {
    static func decode(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> DecodedImage {
        let decoded = try decodeStored(JPEGHandle.open(source, name: name, options: options), options: options)
        // libjpeg's memory is gone by now; only the stored-orientation bitmap is alive.
        let upright = try decoded.orientation.upright(decoded.bitmap, name: name)
        return DecodedImage(bitmap: upright, sourceWidth: decoded.width, sourceHeight: decoded.height,
                            orientation: decoded.orientation, scaleNumerator: decoded.scale,
                            warnings: decoded.warnings, format: .jpeg)
    }

    /// ``ImageDecoder/decodeFitted(path:into:fit:background:options:)`` for a JPEG: streams
    /// when the file is stored upright (EXIF orientation 1), else decodes the whole image,
    /// turns it upright and places it.
    static func decodeFitted(_ source: ImageSource, name: String, into frame: Bitmap, fit: FitMode,
                             background: RGBColor, options: DecodeOptions) throws(ImageError) -> FittedImage {
        switch try streamOrDecode(source, name: name, into: frame, fit: fit, background: background, options: options) {
        case .streamed(let fitted):
            return fitted
        case .whole(let stored):
            // As decode(): libjpeg's memory is gone before the image is turned and placed.
            let upright = try stored.orientation.upright(stored.bitmap, name: name)
            Compositor.place(upright, into: frame, fit: fit, background: background)
            return FittedImage(sourceWidth: stored.width, sourceHeight: stored.height, orientation: stored.orientation,
                               scaleNumerator: stored.scale, decodedWidth: upright.width, decodedHeight: upright.height,
                               decodedRows: 0..<stored.bitmap.height, streamed: false, warnings: stored.warnings,
                               format: .jpeg)
        }
    }

    private enum Outcome {
        case streamed(FittedImage)
        case whole(Stored)
    }

    /// Everything that needs the libjpeg handle (destroyed when this returns): the streamed
    /// placement, or the whole stored-orientation image when the rows of the file are not the
    /// rows of the picture.
    private static func streamOrDecode(_ source: ImageSource, name: String, into frame: Bitmap, fit: FitMode,
                                       background: RGBColor, options: DecodeOptions) throws(ImageError) -> Outcome {
        var targeted = options
        targeted.targetWidth = frame.width
        targeted.targetHeight = frame.height
        targeted.fit = fit
        let jpeg = try JPEGHandle.open(source, name: name, options: targeted)
        guard jpeg.orientation == .topLeft else { return .whole(try decodeStored(jpeg, options: targeted)) }

        let scale = jpeg.scale(for: targeted)
        // The output size libjpeg will give (DCTScale.scaledSize is jpeg_calc_output_dimensions),
        // known before jpeg_start_decompress allocates anything.
        let expected = (width: DCTScale.scaledSize(jpeg.width, numerator: scale),
                        height: DCTScale.scaledSize(jpeg.height, numerator: scale))
        let expectedPlan = Compositor.placement(imageWidth: expected.width, imageHeight: expected.height,
                                                into: frame, fit: fit)
        let conversion = jpeg.colourConversion(options: targeted)
        try jpeg.reserve([[jpeg.coefficientUse, RowRing.memoryUse(width: expected.width, plan: expectedPlan)]
                          + (conversion.map { [$0.memoryUse] } ?? [])], options: targeted)
        let (width, height) = try jpeg.start(scale: scale)
        let plan = (width, height) == expected ? expectedPlan
            : Compositor.placement(imageWidth: width, imageHeight: height, into: frame, fit: fit)
        let ring = try RowRing(jpeg, width: width, plan: plan, flattenOver: nil, converting: conversion, name: name)
        try Compositor.place(plan, into: frame, background: background) { (first, count, rows) throws(ImageError) in
            try ring.rows(first, count, into: rows)
        }
        return .streamed(FittedImage(sourceWidth: jpeg.width, sourceHeight: jpeg.height, orientation: .topLeft,
                                     scaleNumerator: scale, decodedWidth: width, decodedHeight: height,
                                     decodedRows: ring.readRows, streamed: true, warnings: jpeg.warnings,
                                     format: .jpeg))
    }

    private struct Stored {
        var bitmap: Bitmap
        var width: Int, height: Int
        var orientation: EXIFOrientation
        var scale: Int
        var warnings: [String]
    }

    /// Scale and pixels of an opened file: the whole image in its stored orientation. The
    /// memory check counts the coefficients with the image, and the image with its turned copy
    /// (made after libjpeg's memory is freed).
    private static func decodeStored(_ jpeg: JPEGHandle, options: DecodeOptions) throws(ImageError) -> Stored {
        let scale = jpeg.scale(for: options)
        let outWidth = DCTScale.scaledSize(jpeg.width, numerator: scale)
        let outHeight = DCTScale.scaledSize(jpeg.height, numerator: scale)
        let image = MemoryUse.image(width: outWidth, height: outHeight, "the decoded image")
        var phases = [[jpeg.coefficientUse, image]]
        if jpeg.orientation != .topLeft {
            phases.append([image, MemoryUse.image(width: outHeight, height: outWidth,
                                                  "its copy turned upright")])
        }
        let conversion = jpeg.colourConversion(options: options)
        if let conversion { phases[0].append(conversion.memoryUse) }
        try jpeg.reserve(phases, options: options)
        let (width, height) = try jpeg.start(scale: scale)
        let bitmap = try allocateImage(width: width, height: height, hasAlpha: false, name: jpeg.name)
        let code = kc_jpeg_read_pixels(jpeg.handle, bitmap.pixels, bitmap.bytesPerRow)
        guard Int(code) == KC_IMG_OK else { throw jpeg.failure(code) }
        conversion?.convert(bitmap)
        return Stored(bitmap: bitmap, width: jpeg.width, height: jpeg.height, orientation: jpeg.orientation,
                      scale: scale, warnings: jpeg.warnings)
    }
}

/// A libjpeg decompressor with its header read, the side and pixel limits checked and the EXIF
/// orientation parsed. Owns the kc_jpeg handle: destroyed (every libjpeg allocation freed)
/// when the last reference goes, on success and on every error path.
final class JPEGHandle: RowSource {
    let handle: OpaquePointer
    let name: String
    /// Stored size in pixels (SOF).
    let width: Int, height: Int
    let orientation: EXIFOrientation
    /// Progressive (SOF2/SOF10) rather than sequential.
    let progressive: Bool
    /// The whole-image coefficient buffer libjpeg allocates in jpeg_start_decompress, in bytes
    /// (0 for a single-scan file).
    let coefficientBytes: Int
    /// What ``reserve(_:options:)`` counted, and the limit: for the error of libjpeg's own check.
    private var reserved = 0, budget = 0
    /// The embedded ICC profile (APP2 ICC_PROFILE), or sRGB.
    let colour: ColourDescription
    /// How the output rows are laid out for a colour conversion: gray expanded, RGB, or the
    /// CMYK samples (Adobe-inverted when the file has an APP14 Adobe marker).
    let layout: PixelLayout
    /// Why the ICC_PROFILE segments gave no profile (too large, malformed), for the warnings.
    private let iccProblem: String?
    /// The colour conversion's warning, once made (``colourConversion(options:)``).
    private var colourWarning: String?

    private init(handle: OpaquePointer, name: String, header: kc_jpeg_header, orientation: EXIFOrientation) {
        self.handle = handle
        self.name = name
        width = Int(header.width)
        height = Int(header.height)
        self.orientation = orientation
        progressive = header.progressive != 0
        coefficientBytes = header.coefficient_bytes > UInt(Int.max) ? Int.max : Int(header.coefficient_bytes)
        switch Int(header.color_space) {
        case KC_JPEG_CS_CMYK, KC_JPEG_CS_YCCK: layout = header.saw_adobe_marker != 0 ? .cmykInverted : .cmyk
        case KC_JPEG_CS_GRAYSCALE: layout = .gray
        default: layout = .bgra
        }
        if let icc = header.icc {
            colour = .icc(Array(UnsafeBufferPointer(start: icc, count: header.icc_length)))
            iccProblem = nil
        } else {
            colour = .sRGB
            switch Int(header.icc_problem) {
            case KC_JPEG_ICC_TOO_LARGE:
                iccProblem = "its ICC profile segments hold \(byteSize(header.icc_length)), over the "
                    + "\(byteSize(ColourDescription.maxProfileBytes)) limit; shown as sRGB"
            case KC_JPEG_ICC_MALFORMED:
                iccProblem = "its ICC profile segments (APP2 ICC_PROFILE) are numbered wrongly or incomplete; "
                    + "shown as sRGB"
            default:
                iccProblem = nil
            }
        }
    }

    /// The colour conversion for the output rows (nil: none needed, or none possible), made
    /// before kc_jpeg_start: for a CMYK file with a profile the rows are then kept as CMYK
    /// samples (kc_jpeg_keep_cmyk) for the conversion to turn into B,G,R,X; without one, libjpeg's
    /// rows are converted by kc_jpeg.c's formula. The gray layout needs a gray profile: an RGB
    /// one on a gray JPEG is applied as RGB to the expanded gray.
    func colourConversion(options: DecodeOptions) -> ColourConversion? {
        var layout = self.layout
        if layout == .gray, let profile = colour.profile, profile.count >= 20,
           profile[16] == 0x52, profile[17] == 0x47, profile[18] == 0x42 {  // 'RGB ' data colour space
            layout = .bgra
        }
        // Little CMS gets what libjpeg leaves of the budget now (its tables are counted with our
        // buffers afterwards, in reserve).
        let made = ColourConversion.make(colour, layout: layout, alpha: false, target: options.colour, name: name,
                                         budget: options.maxDecoderBytes - Int(kc_jpeg_memory_in_use(handle)))
        if let problem = iccProblem, options.colour.enabled {
            colourWarning = ColourConversion.warnOnce(name: name, problem)
        } else {
            colourWarning = made.warning
        }
        if made.conversion != nil, layout == .cmyk || layout == .cmykInverted { kc_jpeg_keep_cmyk(handle, 1) }
        return made.conversion
    }

    /// Creates the decompressor on `source`, reads the header and checks the side and pixel limits.
    /// - Throws: the header's ``ImageError`` (the decompressor is destroyed first).
    static func open(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> JPEGHandle {
        let created: OpaquePointer?
        switch source {
        case .file(let file): created = kc_jpeg_create_file(file)
        case .memory(let bytes): created = kc_jpeg_create_memory(bytes.baseAddress, bytes.count)
        }
        guard let created else { throw .outOfMemory(path: name, reason: "cannot create a libjpeg decompressor") }
        // From here the handle owns the decompressor: every throw below destroys it.
        // What the header makes libjpeg allocate counts against the whole budget.
        kc_jpeg_set_memory_limit(created, max(1, options.maxDecoderBytes))
        var header = kc_jpeg_header()
        let code = kc_jpeg_read_header(created, &header)
        let orientation = header.exif.map {
            EXIFOrientation.parse(exifSegment: UnsafeRawBufferPointer(start: $0, count: header.exif_length))
        } ?? .topLeft
        let jpeg = JPEGHandle(handle: created, name: name, header: header, orientation: orientation)
        jpeg.budget = options.maxDecoderBytes
        guard Int(code) == KC_IMG_OK else { throw jpeg.failure(code) }
        try checkHeader(width: jpeg.width, height: jpeg.height, options: options, name: name)
        return jpeg
    }

    deinit { kc_jpeg_destroy(handle) }

    func failure(_ code: Int32) -> ImageError {
        let message = String(cString: kc_jpeg_error(handle))
        if Int(code) == KC_IMG_OVER_BUDGET {
            return .overMemoryBudget(path: name, needed: reserved, limit: budget,
                                     reason: coefficientBytes > 0
                                         ? "\(message) (\(coefficientUse.what), with libjpeg's own tables)" : message)
        }
        return imageError(code: code, message: message, name: name)
    }

    /// The coefficient buffer as a ``MemoryUse`` (0 bytes for a single-scan file).
    var coefficientUse: MemoryUse {
        guard coefficientBytes > 0 else { return MemoryUse(what: "", bytes: 0) }
        let perPixel = Double(coefficientBytes) / Double(MemoryUse.product(width, height))
        let tenths = (perPixel * 10).rounded()
        let bpp = tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(tenths / 10)
        let kind = progressive ? "progressive" : "multi-scan"
        return MemoryUse(what: "the DCT coefficients a \(kind) \(width)x\(height) JPEG keeps until its last scan"
                            + " (\(byteSize(coefficientBytes)), \(bpp) bytes per pixel)",
                         bytes: coefficientBytes)
    }

    /// Checks the decode's memory (``checkMemory(_:options:name:)``, with what libjpeg holds
    /// after the header) before jpeg_start_decompress, and gives libjpeg what is left of the
    /// budget for everything it allocates (``kc_jpeg_set_memory_limit``, also its
    /// `max_memory_to_use`): the limit less what the phase with the coefficients holds besides
    /// them, so that ours and libjpeg's together stay within it.
    func reserve(_ phases: [[MemoryUse]], options: DecodeOptions) throws(ImageError) {
        var counted = phases
        let held = Int(kc_jpeg_memory_in_use(handle))
        counted[0].append(MemoryUse(what: "what libjpeg holds after the header (\(byteSize(held)))", bytes: held))
        reserved = try checkMemory(counted, options: options, name: name)
        budget = options.maxDecoderBytes
        let others = MemoryUse.total(phases[0]) - coefficientBytes
        kc_jpeg_set_memory_limit(handle, max(1, options.maxDecoderBytes - others))
    }

    /// The DCT scale numerator for the options' target frame, by total cost (``DCTScale``).
    func scale(for options: DecodeOptions) -> Int {
        DCTScale.decodeNumerator(imageWidth: width, imageHeight: height, orientation: orientation,
                                 targetWidth: options.targetWidth, targetHeight: options.targetHeight, fit: options.fit,
                                 progressive: progressive)
    }

    /// jpeg_start_decompress at `scale`/8; the output size in pixels, stored orientation.
    func start(scale: Int) throws(ImageError) -> (width: Int, height: Int) {
        var outWidth: Int32 = 0, outHeight: Int32 = 0
        let code = kc_jpeg_start(handle, Int32(scale), &outWidth, &outHeight)
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
        return (Int(outWidth), Int(outHeight))
    }

    /// The warnings libjpeg emitted so far, "JPEG ends without its EOI marker" first when the
    /// data ended there.
    var warnings: [String] {
        let kept = collectWarnings(count: kc_jpeg_warning_count(handle)) { kc_jpeg_warning(handle, $0) }
            + (colourWarning.map { [$0] } ?? [])
        return kc_jpeg_eoi_missing(handle) != 0 ? [Self.missingEOI] + kept : kept
    }

    /// The warning of a file whose data is complete but that ends without its EOI marker.
    static let missingEOI = "JPEG ends without its EOI marker"

    // MARK: RowSource

    func readRows(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) throws(ImageError) {
        let code = kc_jpeg_read_rows(handle, rows, Int32(count))
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
    }

    /// kc_jpeg_skip_rows: jpeg_skip_scanlines from the top (the scratch row is not needed).
    func skipRows(_ count: Int, scratch: UnsafeMutablePointer<UInt8>) throws(ImageError) {
        let code = kc_jpeg_skip_rows(handle, Int32(count))
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
    }
}
