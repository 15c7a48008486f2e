// SPDX-License-Identifier: Apache-2.0
import CKioskShim
import Glibc
import KioskCore

/// Writes a ``Bitmap`` as a PNG file (libpng 1.6, kc_png.c), atomically: the data goes to a
/// temporary file in the same directory, which is then renamed over `path`, so a reader never
/// sees half a file. Used by the offscreen display for every presented frame.
public enum PNGWriter {
    /// Writes `bitmap` to `path`: 8 bits per channel, colour type 2 (RGB, the X byte dropped)
    /// or, when `bitmap.hasAlpha`, colour type 6 (RGBA, straight alpha). libpng reads the
    /// B,G,R,X / B,G,R,A rows in place (png_set_bgr, png_set_filler), no copy is made.
    ///
    /// - Parameters:
    ///   - compressionLevel: zlib level 0...9 (clamped). 1, the default, is fast (about 55 ms for
    ///     a 1920x1080 photo frame here); levels 1...3 use the SUB filter with zlib's Z_RLE
    ///     strategy, higher ones libpng's adaptive filtering and the default strategy, 0 none.
    /// - Throws: ``ImageError/writeFailed(path:reason:)`` naming the failed step and errno
    ///   (mkstemp, write, close, rename). The temporary file is removed on failure. The data is
    ///   not fsync'ed: the rename makes it atomic for readers, not durable across a power cut.
    public static func write(_ bitmap: Bitmap, to path: String, compressionLevel: Int32 = 1) throws(ImageError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array("\(directory).\(base).XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 {
            let code = errno
            throw .writeFailed(path: path, reason: "mkstemp \(String(cString: template)): \(describe(code))")
        }
        let temporary = String(cString: template)
        _ = fchmod(fd, 0o644)  // mkstemp makes 0600; frames are for looking at

        var message = [CChar](repeating: 0, count: Int(KC_IMG_MESSAGE_MAX))
        let code = kc_png_write_fd(fd, bitmap.pixels, Int32(bitmap.width), Int32(bitmap.height),
                                   bitmap.bytesPerRow, bitmap.hasAlpha ? 1 : 0, compressionLevel, &message)
        if Int(code) != KC_IMG_OK {
            unlink(temporary)
            throw .writeFailed(path: path, reason: String(cString: message))
        }
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw .writeFailed(path: path, reason: "rename \(temporary): \(describe(code))")
        }
    }

    /// Encodes `bitmap` as PNG (as ``write(_:to:compressionLevel:)`` does) into `fd`, an open
    /// file the caller made (written from its offset), which is closed on return, on success
    /// and on failure alike. `name` is the file's name in errors.
    /// - Throws: ``ImageError/writeFailed(path:reason:)`` with libpng's or the write's message.
    public static func write(_ bitmap: Bitmap, toDescriptor fd: Int32, name: String, compressionLevel: Int32 = 1) throws(ImageError) {
        var message = [CChar](repeating: 0, count: Int(KC_IMG_MESSAGE_MAX))
        let code = kc_png_write_fd(fd, bitmap.pixels, Int32(bitmap.width), Int32(bitmap.height),
                                   bitmap.bytesPerRow, bitmap.hasAlpha ? 1 : 0, compressionLevel, &message)
        if Int(code) != KC_IMG_OK { throw .writeFailed(path: name, reason: String(cString: message)) }
    }

    private static func describe(_ code: Int32) -> String { "\(String(cString: strerror(code))) (errno \(code))" }
}
