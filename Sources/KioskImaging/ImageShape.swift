// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore

extension ImageDecoder {
    /// The upright size of the still picture at `path` in pixels (its EXIF orientation applied:
    /// a portrait stored landscape with Orientation 6 is taller than wide), read from its header
    /// only (libjpeg-turbo / libpng; nothing image-sized is decoded). nil for a format whose
    /// size is not read this way (WebP, GIF, HEIF, AVIF: they may be animations or sequences),
    /// which `--pair-portraits` leaves unpaired. Blocks on the file: call it off the frame loop.
    /// - Throws: ``ImageError`` as ``decode(path:options:)`` for the file and header (it cannot
    ///   be opened, is not a regular file, is corrupt, or is over the side and pixel limits).
    public static func uprightSize(path: String, options: DecodeOptions = DecodeOptions())
        throws(ImageError) -> (width: Int, height: Int)? {
        let (file, format) = try openImageFile(path)
        defer { fclose(file) }
        switch format {
        case .jpeg:
            let jpeg = try JPEGHandle.open(.file(file), name: path, options: options)
            return jpeg.orientation.orientedSize(width: jpeg.width, height: jpeg.height)
        case .png:
            let png = try PNGHandle.open(.file(file), name: path, options: options)
            return png.orientation.orientedSize(width: png.width, height: png.height)
        default:
            return nil
        }
    }
}
