// SPDX-License-Identifier: Apache-2.0
import CKioskShim
import Glibc
import KioskCore
import KioskSystem

/// Writes a ``Bitmap`` as a PNG file (libpng 1.6, kc_png.c), atomically (``AtomicFile``): the
/// data goes to a temporary file in the same directory, which is then renamed over `path`, so a
/// reader never sees half a file. Used by the offscreen display for every presented frame.
public enum PNGWriter {
    /// Writes `bitmap` to `path`: 8 bits per channel, colour type 2 (RGB, the X byte dropped)
    /// or, when `bitmap.hasAlpha`, colour type 6 (RGBA, straight alpha). libpng reads the
    /// B,G,R,X / B,G,R,A rows in place (png_set_bgr, png_set_filler), no copy is made. The file's
    /// mode is 0644 whatever the umask (frames are for looking at).
    ///
    /// - Parameters:
    ///   - compressionLevel: zlib level 0...9 (clamped). 1, the default, is fast (about 55 ms for
    ///     a 1920x1080 photo frame here); levels 1...3 use the SUB filter with zlib's Z_RLE
    ///     strategy, higher ones libpng's adaptive filtering and the default strategy, 0 none.
    /// - Throws: ``ImageError/writeFailed(path:reason:)`` naming the failed step and errno
    ///   (open of the temporary file, write, close, rename). The temporary file is removed on
    ///   failure. The data is not fsync'ed: the rename makes it atomic for readers, not durable
    ///   across a power cut.
    public static func write(_ bitmap: Bitmap, to path: String, compressionLevel: Int32 = 1) throws(ImageError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let file: FileDescriptor
        do { file = try AtomicFile.createTemporary(in: directory, tag: base) } catch {
            throw .writeFailed(path: path, reason: error.description)
        }
        let temporary = file.path
        _ = fchmod(file.rawValue, 0o644)

        var message = [CChar](repeating: 0, count: Int(KC_IMG_MESSAGE_MAX))
        // kc_png_write_fd closes the descriptor, on success and on error.
        let code = kc_png_write_fd(file.release(), bitmap.pixels, Int32(bitmap.width), Int32(bitmap.height),
                                   bitmap.bytesPerRow, bitmap.hasAlpha ? 1 : 0, compressionLevel, &message)
        if Int(code) != KC_IMG_OK {
            unlink(temporary)
            throw .writeFailed(path: path, reason: String(cString: message))
        }
        do {
            try AtomicFile.commit(temporary: temporary, to: path, directory: directory, durable: false)
        } catch {
            unlink(temporary)
            throw .writeFailed(path: path, reason: error.description)
        }
    }

    /// Encodes `bitmap` as PNG (as ``write(_:to:compressionLevel:)`` does) into `fd`, an open
    /// file the caller made (written from its offset), which is closed on return, on success
    /// and on failure alike. `name` is the file's name in errors.
    /// - Throws: ``ImageError/writeFailed(path:reason:)`` with libpng's or the write's message.
    public static func write(
        _ bitmap: Bitmap, toDescriptor fd: Int32, name: String, compressionLevel: Int32 = 1
    ) throws(ImageError) {
        var message = [CChar](repeating: 0, count: Int(KC_IMG_MESSAGE_MAX))
        let code = kc_png_write_fd(fd, bitmap.pixels, Int32(bitmap.width), Int32(bitmap.height),
                                   bitmap.bytesPerRow, bitmap.hasAlpha ? 1 : 0, compressionLevel, &message)
        if Int(code) != KC_IMG_OK { throw .writeFailed(path: name, reason: String(cString: message)) }
    }

}
