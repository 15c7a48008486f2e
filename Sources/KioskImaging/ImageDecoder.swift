import Glibc
import CKioskShim
import KioskCore

/// Decodes JPEG (libjpeg-turbo) and PNG (libpng 1.6) files into upright ``Bitmap``s.
///
/// The format is recognised from the first bytes, never from the file name. The pixel budget is
/// checked from the header before anything image-sized is allocated; a JPEG is decoded through
/// libjpeg's DCT scaling when the options give a target size; the EXIF orientation is applied.
/// Every library error becomes an ``ImageError``: a corrupt file never crashes the program and
/// leaks nothing. Safe to call from several threads at once (each call has its own decoder).
///
/// To show an image, ``decodeFitted(path:into:fit:background:options:)`` decodes it straight
/// into a screen-sized frame (a JPEG is streamed, never held whole); ``decode(path:options:)``
/// gives the whole upright bitmap.
public enum ImageDecoder {
    /// Decodes the file at `path`, read through stdio (the file is not loaded into memory whole).
    /// - Throws: ``ImageError``: `unreadable` (with errno) when it cannot be opened or read,
    ///   `notAnImage`, `corrupt` (empty, truncated, or rejected by the library, with its
    ///   message), `unsupported` (12-bit JPEG), `tooLarge`, `outOfMemory`.
    public static func decode(path: String, options: DecodeOptions = DecodeOptions()) throws(ImageError) -> DecodedImage {
        // "e": O_CLOEXEC, so a command the app starts meanwhile does not inherit the file.
        guard let file = fopen(path, "rbe") else { throw .unreadable(path: path, errno: errno) }
        defer { fclose(file) }
        var magic = [UInt8](repeating: 0, count: 8)
        let count = fread(&magic, 1, magic.count, file)
        if count < magic.count && ferror(file) != 0 { throw .unreadable(path: path, errno: errno) }
        let format = try sniff(magic[..<count], name: path)
        rewind(file)
        switch format {
        case .jpeg: return try JPEGDecoder.decode(.file(file), name: path, options: options)
        case .png: return try PNGDecoder.decode(.file(file), name: path, options: options)
        }
    }

    /// Decodes an image held in memory (a download, say). `name` stands in for the path in
    /// errors. The bytes are read in place, not copied.
    /// - Throws: as ``decode(path:options:)``, except `unreadable`.
    public static func decode(bytes: [UInt8], name: String, options: DecodeOptions = DecodeOptions()) throws(ImageError) -> DecodedImage {
        let format = try sniff(bytes.prefix(8), name: name)
        let result = bytes.withUnsafeBytes { buffer -> Result<DecodedImage, ImageError> in
            do throws(ImageError) {
                switch format {
                case .jpeg: return .success(try JPEGDecoder.decode(.memory(buffer), name: name, options: options))
                case .png: return .success(try PNGDecoder.decode(.memory(buffer), name: name, options: options))
                }
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The format announced by the first bytes (at least 2 for JPEG, 8 for PNG), or nil.
    public static func format(ofHeader header: some Collection<UInt8>) -> ImageFormat? {
        let bytes = Array(header.prefix(8))
        if bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8 { return .jpeg }  // SOI
        if bytes == pngSignature { return .png }
        return nil
    }

    /// The PNG file signature (PNG specification, section 5.2).
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The format, or the error for data that is empty, a damaged PNG signature, or neither.
    static func sniff(_ header: some Collection<UInt8>, name: String) throws(ImageError) -> ImageFormat {
        if header.isEmpty { throw .corrupt(path: name, reason: "the file is empty (0 bytes)") }
        if let format = format(ofHeader: header) { return format }
        // A PNG whose signature was damaged (by a text-mode transfer turning CR LF into LF, a
        // flipped bit...): say so rather than "not an image". 6 of 8 bytes still in place.
        let bytes = Array(header.prefix(8))
        let matching = zip(bytes, pngSignature).filter { $0 == $1 }.count
        if bytes.count == 8 && matching >= 6 {
            let hex = bytes.map { String($0, radix: 16).uppercased() }.map { $0.count < 2 ? "0" + $0 : $0 }
            throw .corrupt(path: name, reason: "damaged PNG signature \(hex.joined(separator: " ")) (expected 89 50 4E 47 0D 0A 1A 0A)")
        }
        throw .notAnImage(path: name)
    }
}

/// Where a decoder reads from: an open stdio file (kept open by the caller until the decoder
/// is destroyed) or bytes in memory (valid for as long).
enum ImageSource {
    case file(UnsafeMutablePointer<FILE>)
    case memory(UnsafeRawBufferPointer)
}

/// The ``ImageError`` for a `KC_IMG_*` code and the library's message.
func imageError(code: Int32, message: String, name: String) -> ImageError {
    switch Int(code) {
    case KC_IMG_UNSUPPORTED: return .unsupported(path: name, reason: message)
    case KC_IMG_NO_MEMORY: return .outOfMemory(path: name, reason: message)
    default: return .corrupt(path: name, reason: message)
    }
}

/// The warnings a handle kept, with a note for those it only counted.
func collectWarnings(count: Int32, _ warning: (Int32) -> UnsafePointer<CChar>) -> [String] {
    let kept = min(count, Int32(KC_IMG_WARNINGS_MAX))
    var list = (0..<kept).map { String(cString: warning($0)) }
    if count > kept { list.append("... and \(count - kept) more warnings") }
    return list
}

/// Refuses a stored size over the budget (`width * height > maxPixels`).
func checkBudget(width: Int, height: Int, options: DecodeOptions, name: String) throws(ImageError) {
    if width * height > options.maxPixels {
        throw .tooLarge(path: name, width: width, height: height, limit: options.maxPixels)
    }
}
