// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// How ``ImageDecoder`` decodes: the limits a file must keep to and the size the image will be
/// shown at.
///
/// Three limits, all checked from the header before anything large is allocated, so that no
/// file can make the decoder trap or exhaust memory:
/// - ``maxSide``: 65535 pixels a side (JPEG's own limit), for any format;
/// - ``maxPixels``: the stored pixel count;
/// - ``maxDecoderBytes``: the decoder's working memory, the buffers that grow with the image:
///   the DCT coefficients libjpeg keeps for a progressive (or multi-scan) JPEG, 128 bytes per
///   8x8 block of each component, whatever the output scale (6 bytes per pixel at 4:4:4, 3 at
///   4:2:0, 2 for grayscale); the decoded image when it is held whole (4 bytes per pixel of the
///   DCT-scaled image, twice when its EXIF orientation turns it, as the turned copy is made
///   beside it); the ring of rows a streamed image goes through (rows x width x 4 bytes); and
///   everything libjpeg and libpng allocate themselves (their tables, row buffers, zlib's
///   inflate state and window, the saved EXIF), counted as they ask for it through libjpeg's
///   memory manager and libpng's allocator hooks and refused before it is allocated when it
///   would pass what our buffers leave of the budget. Nothing ancillary is kept beyond a bound:
///   of a PNG only an eXIf of at most 64 KiB (text, iCCP, sPLT and unknown chunks are skipped
///   unread), of a JPEG only the first APP1 Exif segment. The destination frame is the
///   caller's and not counted. libwebp and libheif have no allocator hooks: their buffers
///   are counted from the header by what they allocate for the image (see `WebPDecoder` and
///   `HEIFDecoder`), with the file they read from memory; for a GIF, the canvas and a line
///   are counted, giflib's fixed state (about 25 KB) is not (see `GIFDecoder`).
public struct DecodeOptions: Sendable, Equatable {
    /// The largest stored image accepted, in pixels (`width * height` from the file header).
    /// Larger images are refused with ``ImageError/tooLarge(path:width:height:limit:)`` before
    /// anything image-sized is allocated. Default 100 megapixels (`--max-pixels`).
    public var maxPixels: Int = 100_000_000
    /// The most working memory a decode may take, in bytes (see above for what counts).
    /// An image that needs more is refused with
    /// ``ImageError/overMemoryBudget(path:needed:limit:reason:)`` before the memory is
    /// allocated; what the libraries allocate themselves is refused beyond what our buffers
    /// leave of it (libjpeg is also given that as `max_memory_to_use`). Default
    /// ``defaultMaxDecoderBytes`` (192 MiB), which with the frames a show holds stays under the
    /// systemd unit's `MemoryMax=256M`.
    ///
    /// What that admits with the defaults, shown with
    /// ``ImageDecoder/decodeFitted(path:into:fit:background:options:)``: any upright baseline
    /// JPEG and any upright non-interlaced PNG up to ``maxPixels`` (both streamed); a
    /// progressive JPEG up to about 33 megapixels at 4:4:4, 67 at 4:2:0; an interlaced PNG up
    /// to about 50 megapixels, an EXIF-rotated one up to 25; an EXIF-rotated JPEG whose
    /// DCT-scaled image fits twice. ``ImageDecoder/decode(path:options:)`` holds every image
    /// whole, so there a PNG, too, must fit in 4 bytes per pixel.
    public var maxDecoderBytes: Int = DecodeOptions.defaultMaxDecoderBytes
    /// The frame the image will be placed in, in pixels. When given, a JPEG is decoded through
    /// libjpeg's DCT scaling at the smallest M/8 that still covers the placement (see
    /// ``DCTScale``); nil means full size. A WebP is decoded by libwebp's scaling straight at
    /// the placement's size when that is smaller; PNG, HEIF, AVIF and GIF always at full size.
    public var targetWidth: Int?
    /// See ``targetWidth``.
    public var targetHeight: Int?
    /// How the image will be placed in the target frame; decides which size must be covered.
    public var fit: FitMode = .fit
    /// The colour space pictures are converted to (``ColourTarget``): sRGB by default.
    public var colour: ColourTarget = .sRGB

    /// 192 MiB.
    public static let defaultMaxDecoderBytes = 192 << 20

    /// The longest side accepted, in pixels: 65535, the largest size a JPEG header can hold
    /// (libjpeg itself stops at 65500). Wider or taller images of any format are refused with
    /// ``ImageError/sideTooLong(path:width:height:limit:)``; it also keeps every size
    /// computation of the decoder far from overflow (65535 x 65535 x 4 < 2^35).
    public static let maxSide = 65535

    /// Options with the given limits (pixels, bytes), target frame (pixels; nil = full size),
    /// fit and colour target.
    public init(maxPixels: Int = 100_000_000, maxDecoderBytes: Int = DecodeOptions.defaultMaxDecoderBytes,
                targetWidth: Int? = nil, targetHeight: Int? = nil, fit: FitMode = .fit, colour: ColourTarget = .sRGB) {
        self.maxPixels = maxPixels
        self.maxDecoderBytes = maxDecoderBytes
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.fit = fit
        self.colour = colour
    }
}
