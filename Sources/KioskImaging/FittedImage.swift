// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore

/// What ``ImageDecoder/decodeFitted(path:into:fit:background:options:)`` did: the image it
/// read and how it got into the frame. The pixels themselves are in the caller's frame.
public struct FittedImage: Sendable, Equatable {
    /// Width in pixels as stored in the file (JPEG SOF, PNG IHDR), before orientation and scaling.
    public let sourceWidth: Int
    /// Height in pixels as stored in the file.
    public let sourceHeight: Int
    /// The orientation read from the file and applied (anything but ``EXIFOrientation/topLeft``
    /// means the image was decoded whole, then turned).
    public let orientation: EXIFOrientation
    /// The libjpeg DCT scale used: the decoded image is M/8 of the stored size (1...8); 8 for the
    /// other formats (a WebP decoded at its placed size says so in ``decodedWidth``).
    public let scaleNumerator: Int
    /// Size in pixels of the upright decoded image that was resampled into the frame (the
    /// stored size times the DCT scale, width and height swapped for orientations 5...8).
    public let decodedWidth: Int, decodedHeight: Int
    /// The rows of the decoded image that were decoded: for a JPEG, rows above were skipped
    /// (jpeg_skip_scanlines); rows from the upper bound on were never decoded. Both happen
    /// only when streaming a `fill` placement that crops top and bottom. A PNG cannot skip, so
    /// for a streamed PNG the range starts at 0 (the rows above the crop are decoded and
    /// dropped). `0..<decodedHeight` when the image was decoded whole (in stored orientation).
    public let decodedRows: Range<Int>
    /// True when the image was streamed: decoded rows fed the resampler through a ring of a few
    /// rows, and the decoded image never existed whole. False when it was decoded into a
    /// bitmap and placed (an interlaced PNG, an image with an EXIF orientation other than 1).
    public let streamed: Bool
    /// Problems the library recovered from, for the log (see ``DecodedImage/warnings``).
    public let warnings: [String]
    /// The format decoded.
    public let format: ImageFormat
    /// The file is an animation of more than one frame (GIF, WebP) and this is its first frame:
    /// ``AnimationDecoder`` plays the rest (docs/images.md "Animations").
    public var animated = false
}

extension ImageDecoder {
    /// Decodes the image at `path` straight into `frame`, placed as `fit` says over
    /// `background` (for `blur`, the letterbox then filled by
    /// ``Compositor/fillLetterboxBlurred(_:imageRect:)``): the same frame, pixel for pixel, as ``decode(path:options:)`` with `frame`'s
    /// size and `fit` as the target, followed by ``Compositor/place(_:into:fit:background:)``,
    /// without holding the decoded image when it can avoid it.
    ///
    /// A JPEG stored upright (no EXIF orientation, or 1), of any colour space, baseline or
    /// progressive, is **streamed**: decoded at the DCT scale ``DCTScale`` picks for the frame,
    /// its rows read a few at a time into a ring and fed to the resampler's vertical pass as
    /// they arrive; rows that a `fill` placement crops off the top are skipped
    /// (jpeg_skip_scanlines) and those it crops off the bottom are never decoded. A
    /// non-interlaced PNG stored upright is streamed the same way at full size (png_read_row;
    /// rows above a `fill` crop are decoded and dropped, as PNG cannot skip), its alpha
    /// flattened over `background` row by row as ``Compositor/place(_:into:fit:background:)``
    /// flattens a whole image. Memory held beyond `frame`: the ring,
    /// `(taps + 8) * width * 4` bytes with `width` the (DCT-scaled) width in pixels and `taps`
    /// at most `ceil(decoded height / placed height) + 1` (usually 2 or 3): about 100 KB for a
    /// 6000x4000 photo on a 1920x1080 frame (11 rows of 2250 pixels); the resampler's tap
    /// tables and two rows of temporaries (24 bytes per source column); and the library's own
    /// buffers (for a progressive JPEG those hold every DCT coefficient of the image: 2 bytes
    /// per sample at full size).
    /// Every other image (an interlaced PNG, an image whose EXIF orientation turns it, since
    /// its file rows are then not rows of the picture) is decoded whole, then placed: that
    /// holds the decoded bitmap (4 bytes per pixel of the DCT-scaled image), and its turned
    /// copy, until this returns. All of it is checked against
    /// ``DecodeOptions/maxDecoderBytes`` from the header, before it is allocated.
    ///
    /// A streamed image reads only the rows the frame shows: damage below the last row a
    /// `fill` placement uses goes unnoticed (the picture shown is complete and right).
    ///
    /// - Parameters:
    ///   - frame: the destination, every pixel of which is written (the image, plus
    ///     `background` where it does not cover the frame).
    ///   - options: the limits apply (``DecodeOptions/maxPixels``,
    ///     ``DecodeOptions/maxDecoderBytes``, ``DecodeOptions/maxSide``); its target size and
    ///     fit are replaced by `frame`'s size and `fit`.
    /// - Throws: ``ImageError`` with `path`, as ``decode(path:options:)``: `unreadable`,
    ///   `notRegularFile`, `otherFormat`, `corrupt` (including a file that ends before the last
    ///   row the frame needs, found mid-stream), `unsupported`, `sideTooLong`, `tooLarge`,
    ///   `overMemoryBudget` (from the header, before anything image-sized is allocated),
    ///   `outOfMemory`. The library's memory and the ring are freed on every path. After a
    ///   throw `frame` is partly drawn and must not be shown.
    public static func decodeFitted(path: String, into frame: Bitmap, fit: FitMode, background: RGBColor,
                                    options: DecodeOptions = DecodeOptions()) throws(ImageError) -> FittedImage {
        let (file, format) = try openImageFile(path)
        defer { fclose(file) }
        return try decodeFitted(.file(file), format: format, name: path, into: frame, fit: fit,
                                background: background, options: options)
    }

    /// ``decodeFitted(path:into:fit:background:options:)`` for an image held in memory; `name`
    /// stands in for the path in errors. The bytes are read in place, not copied.
    /// - Throws: as ``decodeFitted(path:into:fit:background:options:)``, except `unreadable`.
    public static func decodeFitted(bytes: [UInt8], name: String, into frame: Bitmap, fit: FitMode,
                                    background: RGBColor,
                                    options: DecodeOptions = DecodeOptions()) throws(ImageError) -> FittedImage {
        let format = try sniff(bytes.prefix(FileFormat.sniffLength), name: name)
        let result = bytes.withUnsafeBytes { buffer -> Result<FittedImage, ImageError> in
            do throws(ImageError) {
                return .success(try decodeFitted(.memory(buffer), format: format, name: name, into: frame, fit: fit,
                                                 background: background, options: options))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func decodeFitted(_ source: ImageSource, format: ImageFormat, name: String, into frame: Bitmap,
                             fit: FitMode, background: RGBColor, options: DecodeOptions) throws(ImageError) -> FittedImage {
        guard fit == .blur else {
            return try decodePlaced(source, format: format, name: name, into: frame, fit: fit, background: background,
                                    options: options)
        }
        // `blur`: decoded and placed as `fit`, then the letterbox filled from the fitted image
        // (pure compositing, once per prepared frame).
        let fitted = try decodePlaced(source, format: format, name: name, into: frame, fit: .fit, background: background,
                                      options: options)
        let rect = FitMode.fit.placement(imageWidth: fitted.decodedWidth, imageHeight: fitted.decodedHeight,
                                         frameWidth: frame.width, frameHeight: frame.height)
        Compositor.fillLetterboxBlurred(frame, imageRect: rect)
        return fitted
    }

    /// The fitted decoder of `format` (its row of ``ImageCodec/table``) on `source`.
    private static func decodePlaced(_ source: ImageSource, format: ImageFormat, name: String, into frame: Bitmap,
                                     fit: FitMode, background: RGBColor,
                                     options: DecodeOptions) throws(ImageError) -> FittedImage {
        try codec(format, name: name).decodeFitted(source, name, frame, fit, background, options)
    }
}
