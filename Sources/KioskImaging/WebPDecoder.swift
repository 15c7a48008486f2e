// SPDX-License-Identifier: Apache-2.0
import CLibWebP
import CLibWebPDemux  // webp/demux.h includes decode.h: its names come through this module too
import Glibc
import KioskCore

/// WebP through libwebp (`WebPDecode`): lossy (VP8), lossless (VP8L) and the extended format
/// (VP8X) with alpha, which comes out straight (not premultiplied) as ARGB8888 and is
/// composited over the background when placed. The orientation of the `EXIF` chunk is
/// applied (libwebp ignores it), and the `ICCP` chunk's profile converted to the screen's space
/// (``ColourConversion``) on the decoded image. Of an animated WebP (the VP8X animation flag)
/// the first frame is decoded here, by libwebp's animation decoder (``WebPAnimation``), and
/// ``AnimationDecoder`` plays the rest; one of a single frame is a still.
///
/// Size: when the options give a target frame, the image is decoded straight at the size
/// its placement needs (`WebPDecoderOptions.use_scaling`, libwebp's area-averaging rescaler
/// working on the rows as they are decoded), never larger than stored; so a lossy
/// 16383x16383 WebP shown on a 1920x1080 frame is never held whole.
///
/// Memory (``DecodeOptions/maxDecoderBytes``), checked from the headers (RIFF chunks, the VP8X
/// canvas, the VP8/VP8L frame header through `WebPGetFeatures`) before anything image-sized
/// is allocated: the file held whole (libwebp decodes from a buffer), the output image
/// (4 bytes per pixel at the scaled size, twice while the EXIF orientation turns it), and
/// libwebp's own buffers, which cannot be hooked (libwebp has no allocator callback) and are
/// counted by what its decoder allocates for the image's header: a lossless image keeps
/// every pixel as a 32-bit ARGB value (4 bytes per pixel at full size) plus its rows cache,
/// a lossy one about 128 bytes per pixel of width for its macroblock rows, filter cache and
/// rescaler, plus its alpha plane (`ALPH` chunk): 1 byte per pixel for the plane, and when the
/// plane is compressed (lossless, compression method 1) 4 bytes per pixel more for the VP8L
/// decoder's ARGB buffer and 128 bytes per pixel of width for its cache rows. libwebp uses a
/// 1-byte-per-pixel buffer instead only when the alpha stream is colour-indexed without a
/// colour cache (`VP8LDecodeAlphaHeader` in src/dec/vp8l_dec.c), which the headers do not tell.
enum WebPDecoder {
    static func decode(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> DecodedImage {
        let stored = try decodeStored(source, name: name, options: options)
        let upright = try stored.orientation.upright(stored.bitmap, name: name)
        return DecodedImage(bitmap: upright, sourceWidth: stored.width, sourceHeight: stored.height,
                            orientation: stored.orientation, scaleNumerator: 8, warnings: stored.warnings,
                            format: .webp)
    }

    /// ``ImageDecoder/decodeFitted(path:into:fit:background:options:)`` for a WebP: decoded
    /// at the placement's size, turned upright, placed.
    static func decodeFitted(_ source: ImageSource, name: String, into frame: Bitmap, fit: FitMode,
                             background: RGBColor, options: DecodeOptions) throws(ImageError) -> FittedImage {
        var targeted = options
        targeted.targetWidth = frame.width
        targeted.targetHeight = frame.height
        targeted.fit = fit
        let stored = try decodeStored(source, name: name, options: targeted)
        let upright = try stored.orientation.upright(stored.bitmap, name: name)
        Compositor.place(upright, into: frame, fit: fit, background: background)
        return FittedImage(sourceWidth: stored.width, sourceHeight: stored.height, orientation: stored.orientation,
                           scaleNumerator: 8, decodedWidth: upright.width, decodedHeight: upright.height,
                           decodedRows: 0..<stored.bitmap.height, streamed: false, warnings: stored.warnings,
                           format: .webp, animated: stored.animated)
    }

    private struct Stored {
        /// In stored orientation, at the decoded (scaled) size.
        var bitmap: Bitmap
        /// The stored size.
        var width: Int, height: Int
        var orientation: EXIFOrientation
        /// The colour conversion's warning, if any.
        var warnings: [String]
        /// An animation of more than one frame, of which this is the first.
        var animated = false
    }

    /// The first frame of an animated WebP (the VP8X animation flag), composed on its canvas by
    /// libwebp's animation decoder (``WebPAnimation``), at the canvas's size; one with a single
    /// frame (ffmpeg and other tools write stills so) is a still like any other. The `EXIF`
    /// orientation is applied as for a still.
    private static func decodeFirstFrame(_ file: EncodedBytes, container: WebPContainer, name: String,
                                         options: DecodeOptions) throws(ImageError) -> Stored {
        guard let animation = try WebPAnimation.open(file, name: name, options: options, oneFrame: true),
              try animation.next() != nil else {
            throw .corrupt(path: name, reason: "libwebp found no frame in the animated WebP")
        }
        let width = animation.canvasWidth, height = animation.canvasHeight
        let orientation = container.exif.map { range in
            EXIFOrientation.parseWebP(exif: UnsafeRawBufferPointer(rebasing: file.bytes[range]))
        } ?? .topLeft
        var phases = [animation.memory + [MemoryUse.image(width: width, height: height, "the first frame's copy")]]
        if orientation != .topLeft {
            phases.append([MemoryUse.image(width: width, height: height, "the first frame's copy"),
                           MemoryUse.image(width: width, height: height, "its copy turned upright")])
        }
        try checkMemory(phases, options: options, name: name)
        let bitmap = try allocateImage(width: width, height: height, hasAlpha: true, name: name)
        memcpy(bitmap.pixels, animation.canvas, bitmap.byteCount)
        animation.colour.conversion?.convert(bitmap)
        return Stored(bitmap: bitmap, width: width, height: height, orientation: orientation,
                      warnings: animation.colour.warning.map { [$0] } ?? [], animated: animation.frameCount ?? 1 > 1)
    }

    /// The size to decode a `width` x `height` image at for `options`' target: the placement's
    /// size where it is smaller than the stored size (per axis, in stored orientation), else
    /// the stored size.
    static func outputSize(width: Int, height: Int, orientation: EXIFOrientation,
                           options: DecodeOptions) -> (width: Int, height: Int) {
        guard let tw = options.targetWidth, let th = options.targetHeight, tw > 0, th > 0 else { return (width, height) }
        let up = orientation.orientedSize(width: width, height: height)
        let rect = options.fit.placement(imageWidth: up.width, imageHeight: up.height, frameWidth: tw, frameHeight: th)
        let w = min(up.width, rect.width), h = min(up.height, rect.height)
        return orientation.swapsAxes ? (h, w) : (w, h)
    }

    private static func decodeStored(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> Stored {
        let file = try EncodedBytes.load(source, name: name, options: options)
        defer { withExtendedLifetime(file) {} }  // the library reads the bytes in place
        let bytes = file.bytes
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .corrupt(path: name, reason: "the file is empty (0 bytes)")
        }
        let container = WebPContainer.parse(bytes)
        if let canvas = container.canvas {
            try checkHeader(width: canvas.width, height: canvas.height, options: options, name: name)
        }
        if container.animated { return try decodeFirstFrame(file, container: container, name: name, options: options) }
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw .unsupported(path: name, reason: "libwebp refused its decoder configuration (version mismatch)")
        }
        let features = WebPGetFeatures(base, bytes.count, &config.input)
        guard features == VP8_STATUS_OK else { throw failure(features, name: name, headerOnly: true) }
        let width = Int(config.input.width), height = Int(config.input.height)
        try checkHeader(width: width, height: height, options: options, name: name)
        let hasAlpha = config.input.has_alpha != 0
        let orientation = container.exif.map { range in
            EXIFOrientation.parseWebP(exif: UnsafeRawBufferPointer(rebasing: bytes[range]))
        } ?? .topLeft
        let out = outputSize(width: width, height: height, orientation: orientation, options: options)

        let lossless = config.input.format == 2
        let library = lossless
            ? MemoryUse(what: "libwebp's ARGB buffer of the lossless image (\(width)x\(height) pixels, 4 bytes each)",
                        bytes: MemoryUse.total([MemoryUse(what: "", bytes: MemoryUse.product(width, height, 4)),
                                                MemoryUse(what: "", bytes: MemoryUse.product(width, 128))]))
            : MemoryUse(what: "libwebp's macroblock rows, filter cache and rescaler (about 128 bytes per pixel of width)",
                        bytes: MemoryUse.product(width, 128))
        let alphaCompressed = container.alphaCompression != 0  // unknown counts as compressed
        let alphaPlane = MemoryUse(what: alphaCompressed
                                       ? "libwebp's alpha plane and its lossless decoder (5 bytes per pixel)"
                                       : "libwebp's alpha plane (1 byte per pixel)",
                                   bytes: !hasAlpha || lossless ? 0 : MemoryUse.total([
                                       MemoryUse(what: "", bytes: MemoryUse.product(width, height, alphaCompressed ? 5 : 1)),
                                       MemoryUse(what: "", bytes: alphaCompressed ? MemoryUse.product(width, 128) : 0)]))
        let image = MemoryUse.image(width: out.width, height: out.height,
                                    out.width == width ? "the decoded image" : "the decoded image at its placed size")
        // The profile is copied out only when it is within the limit.
        let oversized = container.icc.flatMap {
            ColourConversion.oversizedProfile($0.count, name: name, options: options)
        }
        let colour = container.icc.map { oversized == nil ? ColourDescription.icc(Array(bytes[$0])) : .sRGB } ?? .sRGB
        let others = MemoryUse.total([EncodedBytes.memoryUse(file.heldBytes), library, alphaPlane, image])
        var made = ColourConversion.make(colour, alpha: hasAlpha, target: options.colour, name: name,
                                         budget: options.maxDecoderBytes - others)
        if let oversized { made.warning = oversized }
        var phases = [[EncodedBytes.memoryUse(file.heldBytes), library, alphaPlane, image]
                      + (made.conversion.map { [$0.memoryUse] } ?? [])]
        if orientation != .topLeft {
            let turned = orientation.orientedSize(width: out.width, height: out.height)
            phases.append([image, MemoryUse.image(width: turned.width, height: turned.height, "its copy turned upright")])
        }
        try checkMemory(phases, options: options, name: name)

        let bitmap = try allocateImage(width: out.width, height: out.height, hasAlpha: hasAlpha, name: name)
        if out.width != width || out.height != height {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(out.width)
            config.options.scaled_height = Int32(out.height)
        }
        config.options.use_threads = 1
        config.output.colorspace = MODE_BGRA  // straight alpha, bytes B, G, R, A: ARGB8888 in memory
        config.output.is_external_memory = 1
        config.output.u.RGBA.rgba = UnsafeMutableRawPointer(bitmap.pixels).assumingMemoryBound(to: UInt8.self)
        config.output.u.RGBA.stride = Int32(bitmap.bytesPerRow)
        config.output.u.RGBA.size = bitmap.byteCount
        let status = WebPDecode(base, bytes.count, &config)
        WebPFreeDecBuffer(&config.output)  // frees nothing of ours (external memory), any internal state
        guard status == VP8_STATUS_OK else { throw failure(status, name: name, headerOnly: false) }
        made.conversion?.convert(bitmap)
        return Stored(bitmap: bitmap, width: width, height: height, orientation: orientation,
                      warnings: made.warning.map { [$0] } ?? [])
    }

    /// The ``ImageError`` for a libwebp status.
    private static func failure(_ status: VP8StatusCode, name: String, headerOnly: Bool) -> ImageError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA:
            return .corrupt(path: name, reason: headerOnly
                            ? "the file is truncated (libwebp: not enough data for the WebP header)"
                            : "the file is truncated (libwebp: not enough data for the image)")
        case VP8_STATUS_OUT_OF_MEMORY:
            return .outOfMemory(path: name, reason: "libwebp ran out of memory")
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            return .unsupported(path: name, reason: "libwebp: unsupported WebP feature")
        case VP8_STATUS_INVALID_PARAM:
            return .corrupt(path: name, reason: "libwebp: invalid parameter (a WebP header it cannot use)")
        default:
            return .corrupt(path: name, reason: "libwebp: bitstream error (the WebP data is damaged)")
        }
    }
}

/// The RIFF chunks of a WebP file that libwebp's simple decoder does not report: the VP8X
/// canvas size and flags and the `EXIF` chunk (WebP container specification, RFC 9649
/// section 2.7). Chunks are walked from byte 12, each a FourCC, a little-endian 32-bit size
/// and its payload padded to an even length; the walk stops at the end of the data or at a
/// chunk that runs past it. Nothing is copied.
struct WebPContainer {
    /// VP8X canvas width and height (24-bit fields holding the size minus one), in pixels.
    var canvas: (width: Int, height: Int)?
    /// VP8X animation flag (bit 1 of its first byte).
    var animated = false
    /// The byte range of the `EXIF` chunk's payload.
    var exif: Range<Int>?
    /// The byte range of the `ICCP` chunk's payload (an ICC profile).
    var icc: Range<Int>?
    /// The `ALPH` chunk's compression method (bits 0-1 of its first byte: 0 none, 1 lossless),
    /// nil without one.
    var alphaCompression: Int?
    /// The number of `ANMF` chunks (the frames of an animation).
    var frames = 0

    static func parse(_ b: UnsafeRawBufferPointer) -> WebPContainer {
        var result = WebPContainer()
        func u32(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
        func u24(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 }
        func fourCC(_ at: Int) -> String { String(decoding: b[at..<(at + 4)], as: UTF8.self) }
        var offset = 12
        while offset + 8 <= b.count {
            let type = fourCC(offset), size = u32(offset + 4)
            let payload = offset + 8
            guard size <= b.count - payload else { break }
            switch type {
            case "VP8X" where size >= 10:
                result.animated = b[payload] & 0x02 != 0
                result.canvas = (u24(payload + 4) + 1, u24(payload + 7) + 1)
            case "EXIF" where result.exif == nil:
                result.exif = payload..<(payload + size)
            case "ICCP" where result.icc == nil:
                result.icc = payload..<(payload + size)
            case "ANMF":
                result.frames += 1
            case "ALPH" where size >= 1 && result.alphaCompression == nil:
                result.alphaCompression = Int(b[payload] & 0x03)
            default:
                break
            }
            offset = payload + size + (size & 1)
        }
        return result
    }
}

extension EXIFOrientation {
    /// The orientation in a WebP `EXIF` chunk: a bare TIFF structure (as the container
    /// specification says), or one after the `Exif\0\0` prefix of a JPEG APP1 segment, which
    /// some writers copy along.
    static func parseWebP(exif: UnsafeRawBufferPointer) -> EXIFOrientation {
        let prefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
        if exif.count >= 6 && exif.prefix(6).elementsEqual(prefix) { return parse(exifSegment: exif) }
        return parse(tiff: exif)
    }
}
