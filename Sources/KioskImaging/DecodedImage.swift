// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// A decoded image, ready for the compositor.
public struct DecodedImage: Sendable {
    /// The pixels, upright: the EXIF orientation is already applied (so for orientations 5-8
    /// width and height are the stored height and width, times the DCT scale).
    /// XRGB8888 (bytes B, G, R, 0xFF) for opaque images; ARGB8888 with straight (not
    /// premultiplied) alpha and `hasAlpha == true` for a PNG with an alpha channel or tRNS.
    /// The decoder hands it over; nobody else holds it.
    public let bitmap: Bitmap
    /// Width in pixels as stored in the file (JPEG SOF, PNG IHDR), before orientation and scaling.
    public let sourceWidth: Int
    /// Height in pixels as stored in the file.
    public let sourceHeight: Int
    /// The orientation read from the file (JPEG APP1 Exif, PNG eXIf) and applied to ``bitmap``.
    public let orientation: EXIFOrientation
    /// The libjpeg DCT scale used: the output is M/8 of the stored size (1...8); 8 for PNG.
    public let scaleNumerator: Int
    /// Problems the library recovered from (libjpeg corrupt-data warnings, libpng warnings such
    /// as a bad gAMA chunk), for the log. The image is still good enough to show.
    public let warnings: [String]
    /// The format decoded.
    public let format: ImageFormat
}
