// SPDX-License-Identifier: Apache-2.0
import CLibGif
import Glibc
import KioskCore

/// A GIF played frame by frame through giflib 5 (DGifGetRecordType, DGifGetLine), composed on
/// its logical screen as GIF89a section 23 says: each frame drawn at its offset over what the
/// canvas holds (its transparent index leaves the canvas as it is), then disposed of by its
/// Graphics Control Extension's disposal method before the next: 0 and 1 leave it, 2 clears
/// its rectangle (to transparent, as browsers do, not to the background colour: the logical
/// screen's background index is ignored by Firefox and Chromium), 3 restores the canvas as it
/// was before the frame. The delay is the extension's, in hundredths of a second. The loop
/// count is the NETSCAPE2.0 application extension's (0: forever; none: played once).
///
/// Limits as ``GIFDecoder``'s, checked when it is opened: the logical screen's size (the first
/// frame's when the screen is 0x0); frames may lie partly or wholly off the screen (the part
/// off it is read and dropped).
///
/// Memory: the canvas and the canvas before a frame with disposal method 3 (4 bytes per pixel
/// each), a line of the widest frame (up to 65535 bytes); giflib's own state is fixed (its LZW
/// tables, about 25 KB; a colour table of at most 768 bytes), as the descriptor giflib keeps
/// of every frame read (`SavedImages`, with a copy of its colour table) is freed after each.
final class GIFAnimation: AnimationBackend {
    let canvasWidth: Int, canvasHeight: Int
    let loopCount: Int
    var frameCount: Int? { nil }
    var memory: [MemoryUse] { Self.memory(width: canvasWidth, height: canvasHeight) }
    var canvas: UnsafePointer<UInt32> { UnsafePointer(canvasBitmap.pixels) }

    private let name: String
    private let input: GIFInput
    /// The stream `input` reads, kept open for as long.
    private let owner: OpenFile?
    private var gif: UnsafeMutablePointer<GifFileType>
    private let canvasBitmap: Bitmap
    /// The canvas before the last frame whose disposal method is 3; allocated on first use.
    private var previous: Bitmap?
    /// The last frame's rectangle (clipped to the canvas) and disposal method, applied before
    /// the next frame is drawn.
    private var pending: (x0: Int, y0: Int, x1: Int, y1: Int, disposal: Int)?
    /// The frame's line as giflib gives it (at most 65535 indices).
    private let line = UnsafeMutablePointer<GifPixelType>.allocate(capacity: 65536)

    static func memory(width: Int, height: Int) -> [MemoryUse] {
        [MemoryUse.image(width: width, height: height, "the animation's canvas"),
         MemoryUse.image(width: width, height: height, "the canvas kept for disposal method 3"),
         MemoryUse(what: "a line of a frame (at most 65535 bytes)", bytes: 65536)]
    }

    private init(canvasWidth: Int, canvasHeight: Int, loopCount: Int, name: String, input: GIFInput, owner: OpenFile?,
                 gif: UnsafeMutablePointer<GifFileType>, canvas: Bitmap) {
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.loopCount = loopCount
        self.name = name
        self.input = input
        self.owner = owner
        self.gif = gif
        canvasBitmap = canvas
        canvas.fill(0)
    }

    deinit {
        var code: Int32 = 0
        DGifCloseFile(gif, &code)
        line.deallocate()
        withExtendedLifetime(input) {}
    }

    /// Opens the GIF read by `input` and reads up to its second frame: nil when it has one
    /// frame only (a still, shown by ``GIFDecoder``) or is damaged before its second (the still
    /// decoder says how). Then reads it again from its header, to play.
    static func open(_ input: GIFInput, owner: OpenFile?, name: String,
                     options: DecodeOptions) throws(ImageError) -> GIFAnimation? {
        let scan = try openHandle(input, name: name)
        var code: Int32 = 0
        defer { DGifCloseFile(scan, &code) }
        var screenWidth = Int(scan.pointee.SWidth), screenHeight = Int(scan.pointee.SHeight)
        if screenWidth != 0 || screenHeight != 0 {
            try checkHeader(width: screenWidth, height: screenHeight, options: options, name: name)
        }
        var frames = 0
        var firstSize: (Int, Int)?
        var loops = 1
        records: while frames < 2 {
            var type = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(scan, &type) == GIF_OK else { break records }
            switch type {
            case EXTENSION_RECORD_TYPE:
                guard let found = try? readExtension(scan, name: name) else { break records }
                if let count = found.loopCount { loops = count }
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(scan) == GIF_OK else { break records }
                frames += 1
                if firstSize == nil { firstSize = (Int(scan.pointee.Image.Width), Int(scan.pointee.Image.Height)) }
                if frames < 2 { guard skipFrame(scan) else { break records } }
            default:
                break records
            }
        }
        guard frames >= 2, let firstSize else { return nil }
        if screenWidth == 0 || screenHeight == 0 {
            (screenWidth, screenHeight) = firstSize
            try checkHeader(width: screenWidth, height: screenHeight, options: options, name: name)
        }
        try checkMemory([memory(width: screenWidth, height: screenHeight)], options: options, name: name)
        let canvas = try allocateImage(width: screenWidth, height: screenHeight, hasAlpha: true, name: name)
        let gif = try openHandle(input, name: name)
        return GIFAnimation(canvasWidth: screenWidth, canvasHeight: screenHeight, loopCount: loops, name: name,
                            input: input, owner: owner, gif: gif, canvas: canvas)
    }

    /// giflib's handle on `input` from its first byte.
    private static func openHandle(_ input: GIFInput,
                                   name: String) throws(ImageError) -> UnsafeMutablePointer<GifFileType> {
        input.rewind()
        var code: Int32 = 0
        guard let gif = DGifOpen(Unmanaged.passUnretained(input).toOpaque(), gifRead, &code) else {
            throw GIFDecoder.failure(code, name: name, while: "reading the GIF header")
        }
        return gif
    }

    func rewind() throws(ImageError) {
        var code: Int32 = 0
        DGifCloseFile(gif, &code)
        gif = try Self.openHandle(input, name: name)
        canvasBitmap.fill(0)
        pending = nil
    }

    func next() throws(ImageError) -> Int? {
        var control: (disposal: Int, delay: Int, transparent: Int?)?
        while true {
            var type = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &type) == GIF_OK else {
                // Damage after a frame ends the pass there (the frames before it play).
                return nil
            }
            switch type {
            case EXTENSION_RECORD_TYPE:
                guard let found = try? Self.readExtension(gif, name: name) else { return nil }
                if let c = found.control { control = c }
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { return nil }
                try draw(control: control)
                return control?.delay.multipliedReportingOverflow(by: 10).partialValue ?? 0
            default:
                return nil  // the trailer, or an unknown record
            }
        }
    }

    /// Disposes of the previous frame, then draws the frame whose descriptor was just read.
    private func draw(control: (disposal: Int, delay: Int, transparent: Int?)?) throws(ImageError) {
        let canvas = canvasBitmap
        if let p = pending {
            switch p.disposal {
            case 2:
                for y in p.y0..<p.y1 { (canvas.row(y) + p.x0).update(repeating: 0, count: p.x1 - p.x0) }
            case 3:
                if let previous {
                    for y in p.y0..<p.y1 {
                        (canvas.row(y) + p.x0).update(from: previous.row(y) + p.x0, count: p.x1 - p.x0)
                    }
                }
            default:
                break
            }
        }
        let desc = gif.pointee.Image
        let width = Int(desc.Width), height = Int(desc.Height), left = Int(desc.Left), top = Int(desc.Top)
        let x0 = min(max(0, left), canvas.width), x1 = max(x0, min(canvas.width, left + width))
        let y0 = min(max(0, top), canvas.height), y1 = max(y0, min(canvas.height, top + height))
        let disposal = control?.disposal ?? 0
        if disposal == 3, x0 < x1, y0 < y1 {
            if previous == nil {
                previous = try allocateImage(width: canvas.width, height: canvas.height, hasAlpha: true, name: name)
            }
            for y in y0..<y1 { (previous!.row(y) + x0).update(from: canvas.row(y) + x0, count: x1 - x0) }
        }
        pending = (x0, y0, x1, y1, disposal)
        var palette = [UInt32](repeating: 0xFF00_0000, count: 256)
        if let colors = desc.ColorMap ?? gif.pointee.SColorMap, let entries = colors.pointee.Colors {
            for i in 0..<min(256, max(0, Int(colors.pointee.ColorCount))) {
                let c = entries[i]
                palette[i] = 0xFF00_0000 | UInt32(c.Red) << 16 | UInt32(c.Green) << 8 | UInt32(c.Blue)
            }
        }
        let transparent = control?.transparent ?? -1
        var rows: [Int] = []
        rows.reserveCapacity(height)
        if desc.Interlace {
            for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
                rows += Swift.stride(from: start, to: height, by: step)
            }
        } else {
            rows += 0..<height
        }
        for y in rows {
            guard DGifGetLine(gif, line, Int32(width)) == GIF_OK else {
                throw GIFDecoder.failure(gif.pointee.Error, name: name, while: "reading a frame's pixels")
            }
            let cy = top + y
            guard cy >= y0, cy < y1, x0 < x1 else { continue }
            let out = canvas.row(cy)
            for x in x0..<x1 {
                let index = Int(line[x - left])
                if index != transparent { out[x] = palette[index] }
            }
        }
        Self.freeSavedImages(gif)
    }

    /// What an extension said: the Graphics Control Extension's disposal, delay and
    /// transparent index, or the NETSCAPE2.0 loop count.
    private struct Extension {
        var control: (disposal: Int, delay: Int, transparent: Int?)?
        var loopCount: Int?
    }

    /// Reads one extension and its sub-blocks.
    private static func readExtension(_ gif: UnsafeMutablePointer<GifFileType>,
                                      name: String) throws(ImageError) -> Extension {
        var result = Extension()
        var extCode: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetExtension(gif, &extCode, &block) == GIF_OK else {
            throw GIFDecoder.failure(gif.pointee.Error, name: name, while: "reading an extension block")
        }
        // Graphics Control Extension (GIF89a section 23): packed fields (disposal in bits 2-4,
        // transparent flag in bit 0), a 16-bit little-endian delay, the transparent index.
        if extCode == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4 {
            result.control = (Int((block[1] >> 2) & 7), Int(block[2]) | Int(block[3]) << 8,
                              block[1] & 1 != 0 ? Int(block[4]) : nil)
        }
        var netscape = false
        if extCode == APPLICATION_EXT_FUNC_CODE, let block, block[0] >= 11 {
            let id = (1...11).map { block[$0] }
            netscape = id == Array("NETSCAPE2.0".utf8) || id == Array("ANIMEXTS1.0".utf8)
        }
        while block != nil {
            guard DGifGetExtensionNext(gif, &block) == GIF_OK else {
                throw GIFDecoder.failure(gif.pointee.Error, name: name, while: "reading an extension block")
            }
            // The NETSCAPE2.0 sub-block: 1, then the loop count, 16-bit little-endian.
            if netscape, let b = block, b[0] >= 3, b[1] == 1 {
                result.loopCount = Int(b[2]) | Int(b[3]) << 8
                netscape = false
            }
        }
        return result
    }

    /// Reads a frame's lines without drawing them (the first pass through the header).
    private static func skipFrame(_ gif: UnsafeMutablePointer<GifFileType>) -> Bool {
        let width = Int(gif.pointee.Image.Width), height = Int(gif.pointee.Image.Height)
        let line = UnsafeMutablePointer<GifPixelType>.allocate(capacity: max(1, width))
        defer { line.deallocate() }
        for _ in 0..<height where DGifGetLine(gif, line, Int32(width)) != GIF_OK { return false }
        freeSavedImages(gif)
        return true
    }

    /// Frees the descriptor (and colour table copy) giflib keeps of every frame read.
    private static func freeSavedImages(_ gif: UnsafeMutablePointer<GifFileType>) {
        GifFreeSavedImages(gif)
        gif.pointee.SavedImages = nil
        gif.pointee.ImageCount = 0
    }

}
