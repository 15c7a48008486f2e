// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskSystem

/// The frames of an animated GIF, WebP or AVIF one after another, each composed on the
/// animation's canvas and placed into a screen-sized frame (docs/images.md "Animations"). The
/// file is read as it plays: a GIF frame by frame through giflib (``GIFAnimation``), a WebP
/// through libwebp's `WebPAnimDecoder` (``WebPAnimation``), an AVIF image sequence through
/// libavif (``AVIFAnimation``; both hold the file whole, as their libraries read it from
/// memory); no animation is ever held decoded whole, so its length does not matter to memory.
///
/// Memory, checked against ``DecodeOptions/maxDecoderBytes`` when it is opened, before anything
/// canvas-sized is allocated: what the format's decoder holds (see each), and the copy of the
/// canvas that is placed (4 bytes per pixel; placing flattens alpha in place, and the canvas
/// itself must stay as it is for the next frame). The screen-sized frames it is placed into are
/// the caller's (``AnimationDecoder/framesAhead(frameBytes:)`` says how many fit beside it).
///
/// Frame durations: a frame of at most 10 ms lasts 100 ms (``effectiveDuration(milliseconds:)``).
/// One pass holds at most ``maxFrames`` frames: a GIF that has more starts again from its first.
///
/// Not thread-safe: one thread at a time (the decode worker); it may be handed from one thread
/// to another between calls.
public final class AnimationDecoder {
    /// The file, for errors.
    public let name: String
    /// The format: ``ImageFormat/gif``, ``ImageFormat/webp`` or ``ImageFormat/avif``.
    public let format: ImageFormat
    /// The canvas (GIF logical screen, WebP VP8X canvas), pixels.
    public let canvasWidth: Int, canvasHeight: Int
    /// How many times the animation plays (GIF NETSCAPE2.0 extension, WebP ANIM chunk); 0:
    /// forever. A GIF without the extension plays once, as browsers play it.
    public let loopCount: Int
    /// The number of frames where the header tells it (WebP), else nil (GIF: counted as it plays).
    public let frameCount: Int?
    /// The bytes held while it is open: the decoder's state and the placed copy.
    public let heldBytes: Int
    /// The frames decoded since it was opened (across passes).
    public private(set) var framesDecoded = 0
    /// The index in its pass of the frame decoded last (-1 before the first).
    public private(set) var frameIndex = -1

    /// The most frames one pass holds (65535, GIF's own limit of a 16-bit count is not one, so
    /// this is the project's): a GIF with more starts again from its first frame, a WebP that
    /// declares more is refused.
    public static let maxFrames = 65535

    private let backend: AnimationBackend
    /// The copy of the canvas placed into frames (alpha flattened in it).
    private let placed: Bitmap
    /// The colour conversion of the file's profile (a WebP ICCP), or nil.
    private let conversion: ColourConversion?
    /// Its warning, if any.
    public let warnings: [String]

    private init(name: String, format: ImageFormat, backend: AnimationBackend, placed: Bitmap, heldBytes: Int,
                 conversion: ColourConversion?, warnings: [String]) {
        self.name = name
        self.format = format
        self.backend = backend
        self.placed = placed
        canvasWidth = backend.canvasWidth
        canvasHeight = backend.canvasHeight
        loopCount = backend.loopCount
        frameCount = backend.frameCount
        self.heldBytes = heldBytes
        self.conversion = conversion
        self.warnings = warnings
    }

    /// Opens the animation at `path` (a regular file, as ``ImageDecoder/decode(path:options:)``
    /// opens it) for playing. The file stays open until this object goes.
    /// - Returns: nil when the file is not an animation this type plays (a JPEG, a still GIF or
    ///   WebP, a one-frame animated WebP, an AVIF that is not an image sequence of two frames or
    ///   more: shown as stills).
    /// - Throws: ``ImageError``: as ``ImageDecoder/decode(path:options:)`` for the header and
    ///   the limits (`sideTooLong`, `tooLarge`, `overMemoryBudget` naming what is held,
    ///   `unsupported` for more than ``maxFrames`` frames, `corrupt`).
    public static func open(path: String,
                            options: DecodeOptions = DecodeOptions()) throws(ImageError) -> AnimationDecoder? {
        let (file, format) = try ImageDecoder.openImageFile(path)
        let stream = OpenFile(file)
        switch format {
        case .gif:
            guard let gif = try GIFAnimation.open(GIFInput(.file(file)), owner: stream, name: path,
                                                  options: options) else { return nil }
            return try make(gif, name: path, format: .gif, options: options, conversion: nil, warnings: [])
        case .webp:
            guard let webp = try WebPAnimation.open(.file(file), name: path, options: options) else { return nil }
            let made = webp.colour
            return try make(webp, name: path, format: .webp, options: options, conversion: made.conversion,
                            warnings: made.warning.map { [$0] } ?? [])
        case .avif:
            guard let avif = try AVIFAnimation.open(.file(file), name: path, options: options) else { return nil }
            return try make(avif, name: path, format: .avif, options: options, conversion: nil,
                            warnings: avif.colour.warning.map { [$0] } ?? [])
        default:
            return nil
        }
    }

    /// ``open(path:options:)`` for bytes in memory (the fuzzer; a download held whole), read in
    /// place: they must stay valid and unchanged while the decoder lives.
    static func open(bytes: UnsafeRawBufferPointer, name: String,
                     options: DecodeOptions) throws(ImageError) -> AnimationDecoder? {
        switch FileFormat.identify(bytes.prefix(FileFormat.sniffLength)).decodable {
        case .gif:
            guard let gif = try GIFAnimation.open(GIFInput(.memory(bytes)), owner: nil, name: name,
                                                  options: options) else { return nil }
            return try make(gif, name: name, format: .gif, options: options, conversion: nil, warnings: [])
        case .webp:
            guard let webp = try WebPAnimation.open(.memory(bytes), name: name, options: options) else { return nil }
            let made = webp.colour
            return try make(webp, name: name, format: .webp, options: options, conversion: made.conversion,
                            warnings: made.warning.map { [$0] } ?? [])
        case .avif:
            guard let avif = try AVIFAnimation.open(.memory(bytes), name: name, options: options) else { return nil }
            return try make(avif, name: name, format: .avif, options: options, conversion: nil,
                            warnings: avif.colour.warning.map { [$0] } ?? [])
        default:
            return nil
        }
    }

    private static func make(_ backend: AnimationBackend, name: String, format: ImageFormat, options: DecodeOptions,
                             conversion: ColourConversion?, warnings: [String]) throws(ImageError) -> AnimationDecoder {
        let copy = MemoryUse.image(width: backend.canvasWidth, height: backend.canvasHeight,
                                   "the canvas's copy that is placed")
        let held = try checkMemory([backend.memory + [copy] + (conversion.map { [$0.memoryUse] } ?? [])],
                                   options: options, name: name)
        let placed = try allocateImage(width: backend.canvasWidth, height: backend.canvasHeight, hasAlpha: true,
                                       name: name)
        return AnimationDecoder(name: name, format: format, backend: backend, placed: placed, heldBytes: held,
                                conversion: conversion, warnings: warnings)
    }

    /// How many screen frames of `frameBytes` each may be decoded ahead beside this decoder
    /// within `options`' ``DecodeOptions/maxDecoderBytes``: between 1 and `limit`.
    public func framesAhead(frameBytes: Int, options: DecodeOptions, limit: Int = 3) -> Int {
        let room = options.maxDecoderBytes - heldBytes
        return max(1, min(limit, room / max(1, frameBytes)))
    }

    /// The duration a frame that asks for `milliseconds` is shown: Firefox's rule
    /// (`FrameTimeout::FromRawMilliseconds`, image/FrameTimeout.h: a timeout of 0 to 10 ms
    /// becomes 100 ms, since "many annoying ads specify a 0 duration"), which Chromium and
    /// WebKit follow too; so a GIF's delay of 0 or 1 centisecond plays at 10 frames a second.
    public static func effectiveDuration(milliseconds: Int) -> Int { milliseconds <= 10 ? 100 : milliseconds }

    /// Decodes the next frame onto the canvas and places it into `frame` as `fit` says over
    /// `background` (``Compositor/place(_:into:fit:background:)``: the canvas's alpha flattened,
    /// resampled). At the end of a pass it starts the next when ``loopCount`` allows
    /// (`rewinds`), else returns nil and `frame` is untouched.
    /// - Returns: how long the frame shows, in milliseconds (``effectiveDuration(milliseconds:)``),
    ///   and whether it is the first of a new pass.
    /// - Throws: ``ImageError/corrupt(path:reason:)`` for damage the frame runs into (then the
    ///   frame is partly drawn and must not be shown), `outOfMemory`.
    public func placeNext(into frame: Bitmap, fit: FitMode, background: RGBColor) throws(ImageError)
        -> (milliseconds: Int, newPass: Bool)? {
        guard let (milliseconds, newPass) = try next() else { return nil }
        memcpy(placed.pixels, backend.canvas, placed.byteCount)
        placed.hasAlpha = true
        conversion?.convert(placed)
        Compositor.place(placed, into: frame, fit: fit, background: background)
        return (milliseconds, newPass)
    }

    /// Decodes the next frame onto the canvas without placing it (the first frame, whose slot
    /// frame the still decoder made): how long it shows, milliseconds, or nil when the
    /// animation is over. Throws as ``placeNext(into:fit:background:)``.
    public func skipFrame() throws(ImageError) -> Int? { try next()?.milliseconds }

    /// The next frame on the canvas (``canvas``), starting a new pass at the end of one when
    /// ``loopCount`` allows; nil when the animation is over.
    func next() throws(ImageError) -> (milliseconds: Int, newPass: Bool)? {
        // Over is over: a GIF read past damage that ended its pass could find more frames.
        guard !over else { return nil }
        // Damage ends the animation too: the frame on screen stays.
        do throws(ImageError) {
            return try step()
        } catch {
            over = true
            throw error
        }
    }

    private func step() throws(ImageError) -> (milliseconds: Int, newPass: Bool)? {
        var newPass = false
        var delay = frameIndex + 1 < Self.maxFrames ? try backend.next() : nil
        if delay == nil {
            passes += 1
            guard frameIndex >= 0, loopCount == 0 || passes < loopCount else { over = true; return nil }
            try backend.rewind()
            frameIndex = -1
            newPass = true
            delay = try backend.next()
        }
        guard let delay else { over = true; return nil }
        frameIndex += 1
        framesDecoded += 1
        return (Self.effectiveDuration(milliseconds: delay), newPass)
    }

    /// Passes finished.
    private var passes = 0
    /// The animation ended (its passes played, a pass with no frame, or damage): no frame comes
    /// again.
    private var over = false

    /// The canvas as composed after the last ``next()``: `canvasWidth` x `canvasHeight` ARGB8888,
    /// straight alpha, owned by the decoder.
    var canvas: UnsafePointer<UInt32> { backend.canvas }
}

/// One format's way through an animation (``AnimationDecoder``).
protocol AnimationBackend: AnyObject {
    var canvasWidth: Int { get }
    var canvasHeight: Int { get }
    var loopCount: Int { get }
    var frameCount: Int? { get }
    /// What it holds, for the memory check.
    var memory: [MemoryUse] { get }
    /// The canvas after the last ``next()``.
    var canvas: UnsafePointer<UInt32> { get }
    /// Composes the next frame of the pass onto ``canvas``; its delay in milliseconds as the
    /// file gives it, or nil at the end of the pass.
    func next() throws(ImageError) -> Int?
    /// Back to the first frame, the canvas cleared.
    func rewind() throws(ImageError)
}

/// An open stdio stream, closed when this goes.
final class OpenFile {
    let file: UnsafeMutablePointer<FILE>
    init(_ file: UnsafeMutablePointer<FILE>) { self.file = file }
    deinit { fclose(file) }
}
