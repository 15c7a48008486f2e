// SPDX-License-Identifier: Apache-2.0
import CKioskShim
import Glibc
import KioskCore

/// PNG through libpng 1.6 (kc_png.c): every colour type and bit depth (16-bit reduced to 8 by
/// keeping the high byte), Adam7, palette and tRNS, gray + alpha, gAMA (corrected for a 2.2
/// display), and the orientation of an eXIf chunk that precedes IDAT. Always full size. Colour:
/// a cICP, iCCP or cHRM chunk is converted to the screen's space (``ColourConversion``) on the
/// decoded rows, before alpha is flattened.
///
/// Shown with ``ImageDecoder/decodeFitted(path:into:fit:background:options:)``, a
/// non-interlaced PNG stored upright is streamed like a JPEG: rows read one by one
/// (png_read_row) into a ``RowRing``, alpha flattened over the background row by row, the
/// resampler fed as they come. An interlaced (Adam7) PNG, whose rows arrive in seven passes,
/// and one turned by its eXIf orientation are decoded whole, then placed: 4 bytes per pixel,
/// twice when turned, within ``DecodeOptions/maxDecoderBytes``.
enum PNGDecoder {
    static func decode(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> DecodedImage {
        let stored = try decodeStored(PNGHandle.open(source, name: name, options: options), options: options,
                                      why: "the decoded image")
        // libpng's memory is gone by now.
        let upright = try stored.orientation.upright(stored.bitmap, name: name)
        return DecodedImage(bitmap: upright, sourceWidth: stored.width, sourceHeight: stored.height,
                            orientation: stored.orientation, scaleNumerator: 8, warnings: stored.warnings, format: .png)
    }

    /// ``ImageDecoder/decodeFitted(path:into:fit:background:options:)`` for a PNG.
    static func decodeFitted(_ source: ImageSource, name: String, into frame: Bitmap, fit: FitMode,
                             background: RGBColor, options: DecodeOptions) throws(ImageError) -> FittedImage {
        switch try streamOrDecode(source, name: name, into: frame, fit: fit, background: background, options: options) {
        case .streamed(let fitted):
            return fitted
        case .whole(let stored):
            let upright = try stored.orientation.upright(stored.bitmap, name: name)
            Compositor.place(upright, into: frame, fit: fit, background: background)
            return FittedImage(sourceWidth: stored.width, sourceHeight: stored.height, orientation: stored.orientation,
                               scaleNumerator: 8, decodedWidth: upright.width, decodedHeight: upright.height,
                               decodedRows: 0..<stored.height, streamed: false, warnings: stored.warnings,
                               format: .png)
        }
    }

    private enum Outcome {
        case streamed(FittedImage)
        case whole(Stored)
    }

    /// Everything that needs the libpng reader (destroyed when this returns).
    private static func streamOrDecode(_ source: ImageSource, name: String, into frame: Bitmap, fit: FitMode,
                                       background: RGBColor, options: DecodeOptions) throws(ImageError) -> Outcome {
        let png = try PNGHandle.open(source, name: name, options: options)
        if png.interlaced {
            return .whole(try decodeStored(png, options: options,
                                           why: "the decoded image, held whole as an interlaced (Adam7) PNG "
                                               + "cannot be streamed"))
        }
        if png.orientation != .topLeft {
            return .whole(try decodeStored(png, options: options,
                                           why: "the decoded image, held whole to be turned by its EXIF "
                                               + "orientation \(png.orientation.rawValue)"))
        }
        let plan = Compositor.placement(imageWidth: png.width, imageHeight: png.height, into: frame, fit: fit)
        let conversion = png.colourConversion(options: options)
        try png.reserve([[RowRing.memoryUse(width: png.width, plan: plan)] + (conversion.map { [$0.memoryUse] } ?? [])],
                        options: options)
        try png.start()
        let ring = try RowRing(png, width: png.width, plan: plan, flattenOver: png.hasAlpha ? background : nil,
                               converting: conversion, name: name)
        try Compositor.place(plan, into: frame, background: background) { (first, count, rows) throws(ImageError) in
            try ring.rows(first, count, into: rows)
        }
        // A PNG cannot skip: rows above a fill crop were decoded too, and dropped.
        return .streamed(FittedImage(sourceWidth: png.width, sourceHeight: png.height, orientation: .topLeft,
                                     scaleNumerator: 8, decodedWidth: png.width, decodedHeight: png.height,
                                     decodedRows: 0..<ring.next, streamed: true, warnings: png.warnings, format: .png))
    }

    private struct Stored {
        var bitmap: Bitmap
        var width: Int, height: Int
        var orientation: EXIFOrientation
        var warnings: [String]
    }

    /// The whole image in its stored orientation. `why` names the decoded image in the memory
    /// error; the check counts it with its turned copy when the orientation turns it.
    private static func decodeStored(
        _ png: PNGHandle, options: DecodeOptions, why: String
    ) throws(ImageError) -> Stored {
        let image = MemoryUse.image(width: png.width, height: png.height, why)
        let conversion = png.colourConversion(options: options)
        var phases = [[image] + (conversion.map { [$0.memoryUse] } ?? [])]
        if png.orientation != .topLeft {
            let turned = png.orientation.orientedSize(width: png.width, height: png.height)
            phases.append([image, MemoryUse.image(width: turned.width, height: turned.height,
                                                  "its copy turned upright")])
        }
        try png.reserve(phases, options: options)
        let bitmap = try allocateImage(width: png.width, height: png.height, hasAlpha: png.hasAlpha, name: png.name)
        let code = kc_png_read_pixels(png.handle, bitmap.pixels, bitmap.bytesPerRow)
        guard Int(code) == KC_IMG_OK else { throw png.failure(code) }
        conversion?.convert(bitmap)
        return Stored(bitmap: bitmap, width: png.width, height: png.height, orientation: png.orientation,
                      warnings: png.warnings)
    }
}

/// A libpng reader with its header read (IHDR and the chunks before IDAT), the side and pixel
/// limits checked and the eXIf orientation parsed. Owns the kc_png handle: destroyed (every
/// libpng allocation freed) when the last reference goes.
final class PNGHandle: RowSource {
    let handle: OpaquePointer
    let name: String
    /// IHDR size in pixels.
    let width: Int, height: Int
    /// Adam7.
    let interlaced: Bool
    /// The output has alpha (an alpha channel or tRNS).
    let hasAlpha: Bool
    let orientation: EXIFOrientation
    /// What ``reserve(_:options:)`` counted, and the budget: for the error of libpng's limit.
    private var reserved = 0, budget = 0
    /// What the file says about its colours: cICP, else iCCP, else sRGB, else cHRM with gAMA
    /// (PNG third edition, 4.3: that order of precedence); a gAMA alone is libpng's gamma
    /// correction, as is a cHRM of sRGB's primaries (within 0.002) with its gAMA.
    let colour: ColourDescription
    /// Gray (colour type 0 or 4): a gray ICC profile applies to the expanded gray.
    private let gray: Bool
    private var colourWarning: String?

    private init(handle: OpaquePointer, name: String, header: kc_png_header, orientation: EXIFOrientation) {
        self.handle = handle
        self.name = name
        width = Int(header.width)
        height = Int(header.height)
        interlaced = header.interlaced != 0
        hasAlpha = header.has_alpha != 0
        self.orientation = orientation
        gray = header.color_type & 2 == 0 && header.color_type != 3
        colour = Self.description(header)
    }

    private static func description(_ h: kc_png_header) -> ColourDescription {
        if h.has_cicp != 0 {
            let c = h.cicp
            return .codePoints(CodePoints(primaries: Int(c.0), transfer: Int(c.1), matrix: Int(c.2),
                                          fullRange: c.3 != 0))
        }
        if let icc = h.icc { return .icc(Array(UnsafeBufferPointer(start: icc, count: h.icc_length))) }
        if h.has_srgb != 0 || h.has_chrm == 0 { return .sRGB }
        let c = h.chrm
        let chroma = Chromaticities(white: .init(c.0, c.1), red: .init(c.2, c.3), green: .init(c.4, c.5),
                                    blue: .init(c.6, c.7), gamma: h.has_gamma != 0 && h.gamma > 0 ? h.gamma : nil)
        // sRGB's primaries: only the gamma differs, and libpng corrects that as for a gAMA alone.
        if chroma.isClose(to: .sRGB) { return .sRGB }
        return .chromaticities(chroma)
    }

    /// The colour conversion of the decoded rows (nil: none), made before reading starts: when
    /// the file's description is used, libpng's own gamma correction is turned off (the
    /// description's curve replaces it).
    func colourConversion(options: DecodeOptions) -> ColourConversion? {
        guard colour != .sRGB || options.colour.screenProfile != nil else { return nil }
        var layout = PixelLayout.bgra
        if gray, let profile = colour.profile, profile.count >= 20, Array(profile[16..<20]) == Array("GRAY".utf8) {
            layout = .gray
        }
        let made = ColourConversion.make(colour, layout: layout, alpha: hasAlpha, target: options.colour, name: name,
                                         budget: options.maxDecoderBytes - Int(kc_png_memory_in_use(handle)))
        colourWarning = made.warning
        if made.warning == nil, colour != .sRGB, options.colour.enabled { kc_png_set_gamma_correction(handle, 0) }
        return made.conversion
    }

    /// Creates the reader on `source`, reads the header and checks the side and pixel limits.
    static func open(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> PNGHandle {
        let created: OpaquePointer?
        switch source {
        case .file(let file): created = kc_png_create_file(file)
        case .memory(let bytes): created = kc_png_create_memory(bytes.baseAddress, bytes.count)
        }
        guard let created else { throw .outOfMemory(path: name, reason: "cannot create a libpng reader") }
        // Whatever the header's chunks make libpng allocate counts against the whole budget.
        kc_png_set_memory_limit(created, max(1, options.maxDecoderBytes))
        var header = kc_png_header()
        let code = kc_png_read_header(created, &header)
        let orientation = header.exif.map {
            EXIFOrientation.parse(tiff: UnsafeRawBufferPointer(start: $0, count: header.exif_length))
        } ?? .topLeft
        let png = PNGHandle(handle: created, name: name, header: header, orientation: orientation)
        png.budget = options.maxDecoderBytes
        guard Int(code) == KC_IMG_OK else { throw png.failure(code) }
        try checkHeader(width: png.width, height: png.height, options: options, name: name)
        return png
    }

    deinit { kc_png_destroy(handle) }

    /// Checks the decode's memory (``checkMemory(_:options:name:)``), with what libpng holds
    /// already in the first phase, and gives libpng what is left of the budget besides our
    /// buffers of that phase: its row buffers and zlib's window must fit there, so ours and
    /// libpng's together stay within ``DecodeOptions/maxDecoderBytes``.
    func reserve(_ phases: [[MemoryUse]], options: DecodeOptions) throws(ImageError) {
        var counted = phases
        let held = Int(kc_png_memory_in_use(handle))
        counted[0].append(MemoryUse(what: "what libpng holds after the header (\(byteSize(held)))", bytes: held))
        reserved = try checkMemory(counted, options: options, name: name)
        let ours = MemoryUse.total(phases[0])
        kc_png_set_memory_limit(handle, max(1, options.maxDecoderBytes - ours))
    }

    func failure(_ code: Int32) -> ImageError {
        let message = String(cString: kc_png_error(handle))
        if Int(code) == KC_IMG_OVER_BUDGET {
            return .overMemoryBudget(path: name, needed: reserved, limit: budget, reason: message)
        }
        return imageError(code: code, message: message, name: name)
    }

    /// libpng's warnings (those about an iCCP chunk, the profile libpng refused, once per file:
    /// the picture is then shown as sRGB) and the colour conversion's.
    var warnings: [String] {
        let library = collectWarnings(count: kc_png_warning_count(handle)) { kc_png_warning(handle, $0) }.compactMap {
            $0.hasPrefix("iCCP")
                ? ColourConversion.warnOnce(name: name, $0 + " (its ICC profile is not used; shown as sRGB)") : $0
        }
        return library + (colourWarning.map { [$0] } ?? [])
    }

    /// kc_png_start: the transforms set, reading begun, for ``readRows(_:count:)``.
    func start() throws(ImageError) {
        let code = kc_png_start(handle)
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
    }

    // MARK: RowSource

    func readRows(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) throws(ImageError) {
        let code = kc_png_read_rows(handle, rows, Int32(count))
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
    }

    /// A PNG cannot skip: the rows are decoded into `scratch` and dropped.
    func skipRows(_ count: Int, scratch: UnsafeMutablePointer<UInt8>) throws(ImageError) {
        var row: UnsafeMutablePointer<UInt8>? = scratch
        for _ in 0..<count {
            let code = kc_png_read_rows(handle, &row, 1)
            guard Int(code) == KC_IMG_OK else { throw failure(code) }
        }
    }
}
