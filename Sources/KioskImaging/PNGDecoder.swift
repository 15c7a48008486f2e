import CKioskShim
import Glibc
import KioskCore

/// PNG through libpng 1.6 (kc_png.c): every colour type and bit depth (16-bit reduced to 8 by
/// keeping the high byte), Adam7, palette and tRNS, gray + alpha, gAMA (corrected for a 2.2
/// display), and the orientation of an eXIf chunk that precedes IDAT. Always full size.
enum PNGDecoder {
    static func decode(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> DecodedImage {
        let created: OpaquePointer?
        switch source {
        case .file(let file): created = kc_png_create_file(file)
        case .memory(let bytes): created = kc_png_create_memory(bytes.baseAddress, bytes.count)
        }
        guard let png = created else { throw .outOfMemory(path: name, reason: "cannot create a libpng reader") }
        var destroyed = false
        defer { if !destroyed { kc_png_destroy(png) } }
        func failure(_ code: Int32) -> ImageError {
            imageError(code: code, message: String(cString: kc_png_error(png)), name: name)
        }

        var header = kc_png_header()
        var code = kc_png_read_header(png, &header)
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
        let width = Int(header.width), height = Int(header.height)
        try checkBudget(width: width, height: height, options: options, name: name)
        let orientation = header.exif.map {
            EXIFOrientation.parse(tiff: UnsafeRawBufferPointer(start: $0, count: header.exif_length))
        } ?? .topLeft

        let bitmap = Bitmap(uninitializedWidth: width, height: height, hasAlpha: header.has_alpha != 0)
        code = kc_png_read_pixels(png, bitmap.pixels, bitmap.bytesPerRow)
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
        let warnings = collectWarnings(count: kc_png_warning_count(png)) { kc_png_warning(png, $0) }
        kc_png_destroy(png)
        destroyed = true

        let upright = orientation == .topLeft ? bitmap : orientation.apply(to: bitmap)
        return DecodedImage(bitmap: upright, sourceWidth: width, sourceHeight: height,
                            orientation: orientation, scaleNumerator: 8, warnings: warnings, format: .png)
    }
}
