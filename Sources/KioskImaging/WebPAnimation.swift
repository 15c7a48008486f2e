// SPDX-License-Identifier: Apache-2.0
import CLibWebP
import CLibWebPDemux
import Glibc
import KioskCore

/// An animated WebP played through libwebp's animation decoder (`WebPAnimDecoder`, webp/demux.h,
/// libwebpdemux): each `ANMF` frame decoded and composed on the canvas by libwebp itself (its
/// blending and disposal, WebP container specification, RFC 9649 section 2.7.1.1), out as BGRA
/// with straight alpha (ARGB8888 in memory). Durations are the frames' own (libwebp gives each
/// frame's end as a timestamp); the loop count is the `ANIM` chunk's (0: forever).
///
/// Limits, from the RIFF chunks (``WebPContainer``) before libwebp is called: the VP8X canvas
/// against ``DecodeOptions/maxSide`` and ``DecodeOptions/maxPixels``, at most
/// ``AnimationDecoder/maxFrames`` `ANMF` chunks; libwebp's demuxer refuses a frame that lies
/// outside the canvas (the file is corrupt).
///
/// Memory (libwebp has no allocator hooks, so it is counted by what `WebPAnimDecoderNew` and
/// each frame's decode allocate, src/demux/anim_decode.c): the file held whole, the canvas
/// twice (the current frame and the previous one disposed of, 4 bytes per pixel each), the
/// demuxer's index (about 100 bytes a frame), and one frame's decoder: for a lossless frame
/// its ARGB buffer (4 bytes per pixel of the canvas at most) and its rows cache, for a lossy
/// one about 128 bytes per pixel of width, plus an alpha plane of 5 bytes per pixel (counted at
/// the canvas's size, as any frame may be as large).
final class WebPAnimation: AnimationBackend {
    let canvasWidth: Int, canvasHeight: Int
    let loopCount: Int
    let frameCount: Int?
    let memory: [MemoryUse]
    var canvas: UnsafePointer<UInt32> { UnsafePointer(current!) }
    /// The colour conversion of the file's ICCP profile (``ColourConversion``).
    let colour: ColourConversion.Made

    private let name: String
    private let file: EncodedBytes
    private let decoder: OpaquePointer
    private var current: UnsafeMutablePointer<UInt32>?
    /// The previous frame's end, milliseconds from the start of the pass.
    private var lastTimestamp = 0

    private init(name: String, file: EncodedBytes, decoder: OpaquePointer, info: WebPAnimInfo, memory: [MemoryUse],
                 colour: ColourConversion.Made) {
        self.name = name
        self.file = file
        self.decoder = decoder
        canvasWidth = Int(info.canvas_width)
        canvasHeight = Int(info.canvas_height)
        loopCount = Int(info.loop_count)
        frameCount = Int(info.frame_count)
        self.memory = memory
        self.colour = colour
    }

    deinit {
        WebPAnimDecoderDelete(decoder)
        withExtendedLifetime(file) {}
    }

    /// The animation in `source`, or nil for a WebP without the VP8X animation flag or, unless
    /// `oneFrame`, with one frame only (a still: ``WebPDecoder`` shows it through this, `oneFrame`).
    /// - Throws: the header's limits; `unsupported` for more than ``AnimationDecoder/maxFrames``
    ///   frames; `corrupt` when libwebp's demuxer refuses the file; `overMemoryBudget`.
    static func open(_ source: ImageSource, name: String, options: DecodeOptions,
                     oneFrame: Bool = false) throws(ImageError) -> WebPAnimation? {
        try open(EncodedBytes.load(source, name: name, options: options), name: name, options: options,
                 oneFrame: oneFrame)
    }

    /// ``open(_:name:options:oneFrame:)`` for the file already held (kept as long as the decoder).
    static func open(_ file: EncodedBytes, name: String, options: DecodeOptions,
                     oneFrame: Bool = false) throws(ImageError) -> WebPAnimation? {
        let bytes = file.bytes
        let container = WebPContainer.parse(bytes)
        guard container.animated, let canvas = container.canvas else { return nil }
        try checkHeader(width: canvas.width, height: canvas.height, options: options, name: name)
        guard container.frames > 1 || (oneFrame && container.frames == 1) else {
            if container.frames == 0 {
                throw .corrupt(path: name, reason: "an animated WebP without a frame (no ANMF chunk)")
            }
            return nil
        }
        if container.frames > AnimationDecoder.maxFrames {
            throw .unsupported(path: name, reason: "an animated WebP of more than \(AnimationDecoder.maxFrames) frames"
                               + " (\(container.frames) ANMF chunks)")
        }
        let memory = memoryUse(width: canvas.width, height: canvas.height, frames: container.frames,
                               fileBytes: file.heldBytes)
        let oversized = container.icc.flatMap {
            ColourConversion.oversizedProfile($0.count, name: name, options: options)
        }
        let description = container.icc.map { oversized == nil ? ColourDescription.icc(Array(bytes[$0])) : .sRGB }
            ?? .sRGB
        var made = ColourConversion.make(description, alpha: true, target: options.colour, name: name,
                                         budget: options.maxDecoderBytes - MemoryUse.total(memory))
        if let oversized { made.warning = oversized }
        try checkMemory([memory + (made.conversion.map { [$0.memoryUse] } ?? [])], options: options, name: name)
        var decoderOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&decoderOptions) != 0 else {
            throw .unsupported(path: name, reason: "libwebpdemux refused its decoder options (version mismatch)")
        }
        decoderOptions.color_mode = MODE_BGRA  // straight alpha, bytes B, G, R, A
        decoderOptions.use_threads = 0
        var data = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        guard let decoder = WebPAnimDecoderNew(&data, &decoderOptions) else {
            throw .corrupt(path: name, reason: "libwebp's demuxer refused the animation (a damaged chunk, or a frame"
                           + " outside the canvas)")
        }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0, Int(info.canvas_width) == canvas.width,
              Int(info.canvas_height) == canvas.height, info.frame_count > 0 else {
            WebPAnimDecoderDelete(decoder)
            throw .corrupt(path: name, reason: "libwebp's demuxer gives another canvas than the VP8X chunk")
        }
        return WebPAnimation(name: name, file: file, decoder: decoder, info: info, memory: memory, colour: made)
    }

    /// What an animation of a `width` x `height` canvas and `frames` frames holds (see the type).
    static func memoryUse(width: Int, height: Int, frames: Int, fileBytes: Int) -> [MemoryUse] {
        [EncodedBytes.memoryUse(fileBytes),
         MemoryUse(what: "libwebp's two canvases (\(width)x\(height) pixels, 4 bytes each)",
                   bytes: MemoryUse.product(width, height, 8)),
         MemoryUse(what: "libwebp's index of \(frames) frames", bytes: MemoryUse.product(frames, 100)),
         MemoryUse(what: "libwebp's decoder of one frame (lossless ARGB buffer, alpha plane, rows)",
                   bytes: MemoryUse.total([MemoryUse(what: "", bytes: MemoryUse.product(width, height, 5)),
                                           MemoryUse(what: "", bytes: MemoryUse.product(width, 256))]))]
    }

    func next() throws(ImageError) -> Int? {
        guard WebPAnimDecoderHasMoreFrames(decoder) != 0 else { return nil }
        var buffer: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &buffer, &timestamp) != 0, let buffer else {
            throw .corrupt(path: name, reason: "libwebp could not decode frame \(framesThisPass + 1) of the animation")
        }
        current = UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: UInt32.self)
        framesThisPass += 1
        let duration = max(0, Int(timestamp) - lastTimestamp)
        lastTimestamp = Int(timestamp)
        return duration
    }

    func rewind() throws(ImageError) {
        WebPAnimDecoderReset(decoder)
        lastTimestamp = 0
        framesThisPass = 0
    }

    private var framesThisPass = 0
}
