// SPDX-License-Identifier: Apache-2.0
import CLibGif
import Glibc
import KioskCore
import KioskSystem

/// GIF through giflib 5 (DGifOpen, DGifGetLine): the first frame, drawn on the logical screen
/// (the GIF's canvas) at its offset; pixels of its transparent colour (from the Graphics
/// Control Extension before the frame) and the canvas outside the frame are transparent and
/// composited over the background when placed. Of an animated GIF (a second image descriptor
/// follows the first) this is the first frame, and ``FittedImage/animated`` says so:
/// ``AnimationDecoder`` (``GIFAnimation``) plays the rest.
///
/// Limits, from the 13-byte header (logical screen descriptor) that DGifOpen reads, before
/// anything image-sized is allocated: the logical screen's size (or, when the screen is given
/// as 0x0, the first frame's) against ``DecodeOptions/maxSide`` and ``DecodeOptions/maxPixels``,
/// so a GIF declaring a 65535x65535 screen is refused in its first bytes; then the first
/// frame's own size, which may lie partly off the screen (the part off it is read and dropped).
///
/// Memory (``DecodeOptions/maxDecoderBytes``): the canvas, 4 bytes per pixel of the screen,
/// and one line of the frame, 1 byte per pixel of its width, are ours and counted. giflib's
/// own allocations cannot be hooked and are not counted: its decoder state (the LZW tables,
/// about 25 KB, fixed), the colour tables (at most 768 bytes each) and a small descriptor per
/// image read (two: the first frame and the next one that shows the GIF is animated); none
/// grows with the image, as the frame's pixels come out a line at a time into our buffer
/// (DGifSlurp, which would hold every frame, is not used). Only the first frame is decoded:
/// the file is read no further than the next image descriptor.
enum GIFDecoder {
    static func decode(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> DecodedImage {
        let frame = try decodeFirstFrame(source, name: name, options: options)
        return DecodedImage(bitmap: frame.canvas, sourceWidth: frame.canvas.width, sourceHeight: frame.canvas.height,
                            orientation: .topLeft, scaleNumerator: 8, warnings: [], format: .gif)
    }

    /// ``ImageDecoder/decodeFitted(path:into:fit:background:options:)`` for a GIF: the first
    /// frame decoded onto its canvas, then placed.
    static func decodeFitted(_ source: ImageSource, name: String, into frame: Bitmap, fit: FitMode,
                             background: RGBColor, options: DecodeOptions) throws(ImageError) -> FittedImage {
        let first = try decodeFirstFrame(source, name: name, options: options)
        let canvas = first.canvas
        Compositor.place(canvas, into: frame, fit: fit, background: background)
        return FittedImage(sourceWidth: canvas.width, sourceHeight: canvas.height, orientation: .topLeft,
                           scaleNumerator: 8, decodedWidth: canvas.width, decodedHeight: canvas.height,
                           decodedRows: 0..<canvas.height, streamed: false, warnings: [], format: .gif,
                           animated: first.animated)
    }

    private static func decodeFirstFrame(_ source: ImageSource, name: String,
                                         options: DecodeOptions)
        throws(ImageError) -> (canvas: Bitmap, animated: Bool) {
        let input = GIFInput(source)
        var code: Int32 = 0
        guard let gif = withExtendedLifetime(input, {
            DGifOpen(Unmanaged.passUnretained(input).toOpaque(), gifRead, &code)
        }) else {
            throw failure(code, name: name, while: "reading the GIF header")
        }
        defer {
            var closeCode: Int32 = 0
            DGifCloseFile(gif, &closeCode)
            withExtendedLifetime(input) {}
        }
        var screenWidth = Int(gif.pointee.SWidth), screenHeight = Int(gif.pointee.SHeight)
        if screenWidth != 0 || screenHeight != 0 {
            try checkHeader(width: screenWidth, height: screenHeight, options: options, name: name)
        }

        var transparent: Int?
        var canvas: Bitmap?
        var animated = false
        records: while true {
            var type = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &type) == GIF_OK else {
                if canvas != nil { break records }  // damage after the first frame: it is shown
                throw failure(gif.pointee.Error, name: name, while: "looking for the first frame")
            }
            switch type {
            case EXTENSION_RECORD_TYPE:
                var extCode: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &extCode, &block) == GIF_OK else {
                    if canvas != nil { break records }
                    throw failure(gif.pointee.Error, name: name, while: "reading an extension block")
                }
                // Graphics Control Extension (GIF89a section 23): 4 bytes, flags bit 0 = a
                // transparent colour index, in byte 4.
                if canvas == nil, extCode == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4 {
                    transparent = block[1] & 1 != 0 ? Int(block[4]) : nil
                }
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else {
                        if canvas != nil { break records }
                        throw failure(gif.pointee.Error, name: name, while: "reading an extension block")
                    }
                }
            case IMAGE_DESC_RECORD_TYPE:
                if canvas != nil { animated = true; break records }
                guard DGifGetImageDesc(gif) == GIF_OK else {
                    throw failure(gif.pointee.Error, name: name, while: "reading the first image descriptor")
                }
                let desc = gif.pointee.Image
                let frameWidth = Int(desc.Width), frameHeight = Int(desc.Height)
                try checkHeader(width: frameWidth, height: frameHeight, options: options, name: name)
                if screenWidth == 0 || screenHeight == 0 {
                    screenWidth = frameWidth
                    screenHeight = frameHeight
                    try checkHeader(width: screenWidth, height: screenHeight, options: options, name: name)
                }
                guard let colors = desc.ColorMap ?? gif.pointee.SColorMap else {
                    throw .corrupt(path: name, reason: "the first frame has no colour table (neither local nor global)")
                }
                try checkMemory([[MemoryUse.image(width: screenWidth, height: screenHeight, "the canvas (logical screen)"),
                                  MemoryUse(what: "a line of the frame (\(frameWidth) bytes)", bytes: frameWidth)]],
                                options: options, name: name)
                let image = try allocateImage(width: screenWidth, height: screenHeight, hasAlpha: true, name: name)
                try drawFrame(gif, desc: desc, colors: colors, transparent: transparent, into: image, name: name)
                canvas = image
            case TERMINATE_RECORD_TYPE:
                break records
            default:
                if canvas != nil { break records }
                throw .corrupt(path: name, reason: "an unknown GIF record before the first frame")
            }
        }
        guard let canvas else {
            throw .corrupt(path: name, reason: "the GIF has no image (it ends after its header)")
        }
        return (canvas, animated)
    }

    /// Reads the frame's lines (in interlaced order when it is interlaced, GIF89a appendix E)
    /// and draws them onto `canvas`, which is first cleared to transparent. Clears
    /// `hasAlpha` when every canvas pixel ends up opaque.
    private static func drawFrame(_ gif: UnsafeMutablePointer<GifFileType>, desc: GifImageDesc,
                                  colors: UnsafeMutablePointer<ColorMapObject>, transparent: Int?,
                                  into canvas: Bitmap, name: String) throws(ImageError) {
        var palette = [UInt32](repeating: 0xFF00_0000, count: 256)
        let count = min(256, max(0, Int(colors.pointee.ColorCount)))
        if let entries = colors.pointee.Colors {
            for i in 0..<count {
                let c = entries[i]
                palette[i] = 0xFF00_0000 | UInt32(c.Red) << 16 | UInt32(c.Green) << 8 | UInt32(c.Blue)
            }
        }
        if let transparent { palette[transparent] = 0 }
        canvas.pixels.update(repeating: 0, count: canvas.pixelCount)
        let width = Int(desc.Width), height = Int(desc.Height), left = Int(desc.Left), top = Int(desc.Top)
        let line = UnsafeMutablePointer<GifPixelType>.allocate(capacity: max(1, width))
        defer { line.deallocate() }
        let x0 = max(0, left), x1 = min(canvas.width, left + width)
        var rows: [Int] = []
        rows.reserveCapacity(height)
        if desc.Interlace {
            for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] { rows += Swift.stride(from: start, to: height, by: step) }
        } else {
            rows += 0..<height
        }
        var usedTransparent = false
        for y in rows {
            guard DGifGetLine(gif, line, Int32(width)) == GIF_OK else {
                throw failure(gif.pointee.Error, name: name, while: "reading the first frame's pixels")
            }
            let cy = top + y
            guard cy >= 0, cy < canvas.height, x0 < x1 else { continue }
            let out = canvas.row(cy)
            for x in x0..<x1 {
                let index = Int(line[x - left])
                if index == transparent { usedTransparent = true }
                out[x] = palette[index]
            }
        }
        let covers = x0 == 0 && x1 == canvas.width && top <= 0 && top + height >= canvas.height
        canvas.hasAlpha = usedTransparent || !covers
    }

    /// The ``ImageError`` for a giflib error code.
    static func failure(_ code: Int32, name: String, while step: String) -> ImageError {
        let message = GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
        switch code {
        case D_GIF_ERR_READ_FAILED, D_GIF_ERR_EOF_TOO_SOON:
            return .corrupt(path: name, reason: "the file is truncated: it ends while \(step) (giflib: \(message))")
        case D_GIF_ERR_NOT_ENOUGH_MEM:
            return .outOfMemory(path: name, reason: "giflib: \(message)")
        default:
            return .corrupt(path: name, reason: "the GIF is damaged while \(step) (giflib: \(message))")
        }
    }
}

/// Where giflib's read callback takes its bytes from: the open stdio file, or the bytes in
/// memory from an offset.
final class GIFInput {
    let source: ImageSource
    var offset = 0

    init(_ source: ImageSource) { self.source = source }

    /// Back to the first byte (a GIF played again from its header).
    func rewind() {
        switch source {
        case .file(let file): _ = fseek(file, 0, SEEK_SET)
        case .memory: offset = 0
        }
    }

    /// Copies up to `count` bytes into `buffer`; the count copied (short at the end of data).
    func read(_ buffer: UnsafeMutablePointer<GifByteType>, _ count: Int) -> Int {
        switch source {
        case .file(let file):
            return fread(buffer, 1, count, file)
        case .memory(let bytes):
            let n = max(0, min(count, bytes.count - offset))
            if n > 0, let base = bytes.baseAddress { memcpy(buffer, base + offset, n) }
            offset += n
            return n
        }
    }
}

/// giflib's InputFunc: reads through the ``GIFInput`` in `UserData`.
func gifRead(_ gif: UnsafeMutablePointer<GifFileType>?, _ buffer: UnsafeMutablePointer<GifByteType>?,
                     _ count: Int32) -> Int32 {
    guard let gif, let buffer, count > 0, let user = gif.pointee.UserData else { return 0 }
    let input = Unmanaged<GIFInput>.fromOpaque(user).takeUnretainedValue()
    return Int32(input.read(buffer, Int(count)))
}
