// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// EXIF/TIFF tag 0x0112 "Orientation" (TIFF 6.0 section 8; EXIF 2.32 section 4.6.4): how the
/// stored rows and columns relate to the picture the right way up. The case names are the TIFF
/// names: where the stored row 0 and column 0 lie in the upright picture. To show the picture,
/// ``apply(to:)`` turns the stored pixels accordingly.
public enum EXIFOrientation: Int, CaseIterable, Sendable {
    /// 1: stored upright (also what 0, a missing tag, or a value outside 1...8 means).
    case topLeft = 1
    /// 2: mirrored left to right.
    case topRight = 2
    /// 3: upside down (rotate 180°).
    case bottomRight = 3
    /// 4: mirrored top to bottom.
    case bottomLeft = 4
    /// 5: transposed (mirror left to right, then rotate 90° counter-clockwise).
    case leftTop = 5
    /// 6: rotate 90° clockwise to show (the usual value for a photo taken in portrait).
    case rightTop = 6
    /// 7: transversed (mirror left to right, then rotate 90° clockwise).
    case rightBottom = 7
    /// 8: rotate 90° counter-clockwise to show.
    case leftBottom = 8

    /// The tag's value; 0 and anything outside 1...8 mean ``topLeft`` (EXIF: "other: reserved").
    public init(exifValue: Int) {
        self = EXIFOrientation(rawValue: exifValue) ?? .topLeft
    }

    /// True for 5...8: the upright picture's width is the stored height.
    public var swapsAxes: Bool { rawValue >= 5 }

    /// The upright size of a picture stored as `width` x `height` pixels.
    public func orientedSize(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsAxes ? (height, width) : (width, height)
    }

    // MARK: Parsing

    /// The orientation in a JPEG APP1 segment's payload (after the marker and length bytes):
    /// `"Exif\0\0"` then a TIFF structure. Only IFD0 (the main image) counts; IFD1 describes
    /// the thumbnail. Anything malformed (wrong prefix, bad byte order mark, offsets or counts
    /// pointing outside the segment) gives ``topLeft``; the parser never reads out of bounds.
    public static func parse(exifSegment: UnsafeRawBufferPointer) -> EXIFOrientation {
        let prefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0] // "Exif\0\0"
        guard exifSegment.count >= 6, exifSegment.prefix(6).elementsEqual(prefix) else { return .topLeft }
        return parse(tiff: UnsafeRawBufferPointer(rebasing: exifSegment[6...]))
    }

    /// ``parse(exifSegment:)`` for an array.
    public static func parse(exifSegment: [UInt8]) -> EXIFOrientation {
        exifSegment.withUnsafeBytes { parse(exifSegment: $0) }
    }

    /// The orientation in a bare TIFF structure (TIFF 6.0 section 2: byte order `II` little-endian
    /// or `MM` big-endian, the number 42, the offset of IFD0; then IFD0: a 2-byte entry count and
    /// 12-byte entries tag, type, count, value). This is what a PNG eXIf chunk holds.
    /// Accepts the tag as SHORT (type 3, the EXIF type) or LONG (4).
    public static func parse(tiff: UnsafeRawBufferPointer) -> EXIFOrientation {
        guard let structure = TIFFStructure(Array(tiff)),
              let entry = structure.entry(0x0112, inIFDAt: structure.ifd0) else { return .topLeft }
        return EXIFOrientation(exifValue: structure.integer(of: entry) ?? 1)
    }

    /// ``parse(tiff:)`` for an array.
    public static func parse(tiff: [UInt8]) -> EXIFOrientation {
        tiff.withUnsafeBytes { parse(tiff: $0) }
    }

    // MARK: Applying

    /// A new bitmap holding `bitmap` turned the right way up: the same size for 1...4,
    /// width and height swapped for 5...8. Alpha and pixel format are kept. (For ``topLeft``
    /// it is a plain copy; the decoder does not call it then.)
    /// - Precondition: the turned copy can be allocated (the decoder itself allocates it
    ///   fallibly).
    public func apply(to bitmap: Bitmap) -> Bitmap {
        let size = orientedSize(width: bitmap.width, height: bitmap.height)
        let out = Bitmap(uninitializedWidth: size.width, height: size.height, hasAlpha: bitmap.hasAlpha)
        turn(bitmap, into: out)
        return out
    }

    /// The upright picture of a decoded `bitmap`: `bitmap` itself for ``topLeft``, else a turned
    /// copy allocated fallibly (``ImageError/outOfMemory(path:reason:)`` when it cannot be).
    func upright(_ bitmap: Bitmap, name: String) throws(ImageError) -> Bitmap {
        if self == .topLeft { return bitmap }
        let size = orientedSize(width: bitmap.width, height: bitmap.height)
        let out = try allocateImage(width: size.width, height: size.height, hasAlpha: bitmap.hasAlpha, name: name)
        turn(bitmap, into: out)
        return out
    }

    /// Writes `bitmap` turned the right way up into `out`, which has the oriented size.
    private func turn(_ bitmap: Bitmap, into out: Bitmap) {
        let w = bitmap.width, h = bitmap.height
        // The destination index of source pixel (x, y) is origin + x * stepX + y * stepY.
        let origin: Int, stepX: Int, stepY: Int
        switch self {
        case .topLeft:     (origin, stepX, stepY) = (0, 1, w)
        case .topRight:    (origin, stepX, stepY) = (w - 1, -1, w)
        case .bottomRight: (origin, stepX, stepY) = ((h - 1) * w + w - 1, -1, -w)
        case .bottomLeft:  (origin, stepX, stepY) = ((h - 1) * w, 1, -w)
        case .leftTop:     (origin, stepX, stepY) = (0, h, 1)                   // (x, y) -> (y, x)
        case .rightTop:    (origin, stepX, stepY) = (h - 1, h, -1)              // -> (h-1-y, x)
        case .rightBottom: (origin, stepX, stepY) = ((w - 1) * h + h - 1, -h, -1) // -> (h-1-y, w-1-x)
        case .leftBottom:  (origin, stepX, stepY) = ((w - 1) * h, -h, 1)        // -> (y, w-1-x)
        }
        // 64x64 tiles keep the strided side (the writes, for 5...8) within the cache.
        let tile = 64
        let dst = out.pixels
        var tileY = 0
        while tileY < h {
            let yEnd = min(tileY + tile, h)
            var tileX = 0
            while tileX < w {
                let xEnd = min(tileX + tile, w)
                for y in tileY..<yEnd {
                    let src = bitmap.row(y)
                    var d = origin &+ tileX &* stepX &+ y &* stepY
                    var x = tileX
                    while x < xEnd {
                        dst[d] = src[x]
                        d &+= stepX
                        x &+= 1
                    }
                }
                tileX += tile
            }
            tileY += tile
        }
    }
}
