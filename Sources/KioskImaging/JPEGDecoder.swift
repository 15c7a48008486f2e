import CKioskShim
import Glibc
import KioskCore

/// JPEG through libjpeg-turbo (kc_jpeg.c): baseline, progressive, arithmetic-coded; grayscale,
/// YCbCr, RGB, CMYK and YCCK (Adobe-inverted or not). 12-bit files are refused as unsupported.
enum JPEGDecoder {
    static func decode(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> DecodedImage {
        let decoded = try decodeStored(source, name: name, options: options)
        // libjpeg's memory is gone by now; only the stored-orientation bitmap is alive.
        let upright = decoded.orientation == .topLeft ? decoded.bitmap : decoded.orientation.apply(to: decoded.bitmap)
        return DecodedImage(bitmap: upright, sourceWidth: decoded.width, sourceHeight: decoded.height,
                            orientation: decoded.orientation, scaleNumerator: decoded.scale,
                            warnings: decoded.warnings, format: .jpeg)
    }

    private struct Stored {
        var bitmap: Bitmap
        var width: Int, height: Int
        var orientation: EXIFOrientation
        var scale: Int
        var warnings: [String]
    }

    /// Header, budget, EXIF, scale, pixels: everything that needs the libjpeg handle.
    private static func decodeStored(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> Stored {
        let created: OpaquePointer?
        switch source {
        case .file(let file): created = kc_jpeg_create_file(file)
        case .memory(let bytes): created = kc_jpeg_create_memory(bytes.baseAddress, bytes.count)
        }
        guard let jpeg = created else { throw .outOfMemory(path: name, reason: "cannot create a libjpeg decompressor") }
        defer { kc_jpeg_destroy(jpeg) }
        func failure(_ code: Int32) -> ImageError {
            imageError(code: code, message: String(cString: kc_jpeg_error(jpeg)), name: name)
        }

        var header = kc_jpeg_header()
        var code = kc_jpeg_read_header(jpeg, &header)
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
        let width = Int(header.width), height = Int(header.height)
        try checkBudget(width: width, height: height, options: options, name: name)

        let orientation = header.exif.map {
            EXIFOrientation.parse(exifSegment: UnsafeRawBufferPointer(start: $0, count: header.exif_length))
        } ?? .topLeft
        let scale = DCTScale.numerator(imageWidth: width, imageHeight: height, orientation: orientation,
                                       targetWidth: options.targetWidth, targetHeight: options.targetHeight,
                                       fit: options.fit)
        var outWidth: Int32 = 0, outHeight: Int32 = 0
        code = kc_jpeg_start(jpeg, Int32(scale), &outWidth, &outHeight)
        guard Int(code) == KC_IMG_OK else { throw failure(code) }

        let bitmap = Bitmap(uninitializedWidth: Int(outWidth), height: Int(outHeight))
        code = kc_jpeg_read_pixels(jpeg, bitmap.pixels, bitmap.bytesPerRow)
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
        let warnings = collectWarnings(count: kc_jpeg_warning_count(jpeg)) { kc_jpeg_warning(jpeg, $0) }
        return Stored(bitmap: bitmap, width: width, height: height, orientation: orientation,
                      scale: scale, warnings: warnings)
    }
}
