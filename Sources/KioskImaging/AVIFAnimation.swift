// SPDX-License-Identifier: Apache-2.0
import CKioskAvif
import Glibc
import KioskCore

/// An AVIF image sequence (the `avis` brand, AV1 Image File Format section 7) played through
/// libavif's decoder (`avifDecoderNextImage`, then `avifImageYUVToRGB`; `Sources/CKioskAvif`),
/// libavif opened with dlopen when the first sequence plays. libheif, which decodes every other
/// HEIF and AVIF, has no sequence API in Debian 12 (1.15); libavif 0.11 has one.
///
/// Frames are whole pictures (AV1 codes the differences; libavif hands each frame complete), so
/// the canvas is the frame, out as B, G, R, A bytes with straight alpha (ARGB8888 in memory).
/// Durations are the track's (`stts`), in milliseconds; libavif 1.x gives the loop count
/// (`edts`), libavif 0.x does not, and then a sequence plays forever.
///
/// Colour: the sequence's ICC profile or its code points (`colr` `nclx`) converted as a still
/// AVIF's are (``ColourConversion``); a PQ or HLG sequence of 10 or 12 bits is tone-mapped from
/// its 16-bit samples (``ColourConversion/convertRows16(_:stride:width:height:channels:)``).
///
/// Limits, given to libavif before it parses: ``DecodeOptions/maxPixels`` a frame,
/// ``DecodeOptions/maxSide`` a side, ``AnimationDecoder/maxFrames`` frames (libavif refuses a
/// sequence that declares more). Memory (libavif has no allocator hooks, so it is counted by what
/// it allocates, measured with `avifdec --info -j 1` on 1920x1080 sequences in 4:4:4 and 4:2:0):
/// the file held whole, dav1d's pictures (8 frames of the YUV planes, with alpha, at the
/// sequence's depth: its reference frames) and its frame state (about 12 bytes a pixel), the
/// 16-bit samples of a tone map (8 bytes a pixel) and the frame in RGB (4 bytes a pixel).
final class AVIFAnimation: AnimationBackend {
    let canvasWidth: Int, canvasHeight: Int
    let loopCount: Int
    let frameCount: Int?
    let memory: [MemoryUse]
    var canvas: UnsafePointer<UInt32> { UnsafePointer(pixels) }
    /// The colour conversion of the sequence's description, applied to each frame here.
    let colour: ColourConversion.Made

    private let name: String
    private let file: EncodedBytes
    private let decoder: OpaquePointer
    private let pixels: UnsafeMutablePointer<UInt32>
    /// 16-bit R, G, B, A rows for a tone map (8 bytes a pixel), else nil.
    private let wide: UnsafeMutablePointer<UInt8>?

    private init(name: String, file: EncodedBytes, decoder: OpaquePointer, info: kc_avif_info, memory: [MemoryUse],
                 colour: ColourConversion.Made, pixels: UnsafeMutablePointer<UInt32>,
                 wide: UnsafeMutablePointer<UInt8>?) {
        self.name = name
        self.file = file
        self.decoder = decoder
        canvasWidth = Int(info.width)
        canvasHeight = Int(info.height)
        loopCount = info.repetition_count >= 0 ? Int(info.repetition_count) + 1 : 0
        frameCount = Int(info.frame_count)
        self.memory = memory
        self.colour = colour
        self.pixels = pixels
        self.wide = wide
    }

    deinit {
        kc_avif_close(decoder)
        pixels.deallocate()
        wide?.deallocate()
        withExtendedLifetime(file) {}
    }

    /// Whether libavif can be opened; when not, why (dlopen's message), for the note that the
    /// first frame is shown alone.
    static var unavailable: String? { kc_avif_load_error().map { String(cString: $0) } }

    /// The soname opened (`libavif.so.15` on Debian 12).
    static var soname: String { String(cString: kc_avif_soname()) }

    /// The sequence in `source`, or nil when the file is not an image sequence (no `avis` brand)
    /// or has one frame (a still: libheif shows it).
    /// - Throws: ``ImageError``: `unsupported` when libavif cannot be opened; `corrupt` when it
    ///   refuses the file (its result and diagnostic named) or a frame; `sideTooLong`/`tooLarge`
    ///   for the frames' size; `overMemoryBudget`.
    static func open(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> AVIFAnimation? {
        let file = try EncodedBytes.load(source, name: name, options: options)
        guard ISOMediaHeader.isImageSequence(file.bytes) else { return nil }
        if let reason = unavailable {
            throw .unsupported(path: name, reason: "an AVIF image sequence needs libavif (\(soname)): \(reason)")
        }
        guard let base = file.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var info = kc_avif_info()
        var error = [CChar](repeating: 0, count: 512)
        let limit = { (n: Int) in UInt32(clamping: n) }
        guard let decoder = kc_avif_open(base, file.bytes.count, limit(options.maxPixels), limit(DecodeOptions.maxSide),
                                         limit(AnimationDecoder.maxFrames), &info, &error, error.count) else {
            throw .corrupt(path: name, reason: "libavif refused the image sequence: " + String(cString: error))
        }
        var opened: OpaquePointer? = decoder
        defer { if let opened { kc_avif_close(opened) } }
        let width = Int(info.width), height = Int(info.height)
        try checkHeader(width: width, height: height, options: options, name: name)
        guard info.frame_count > 1 else { return nil }
        let points = CodePoints(primaries: Int(info.colour_primaries),
                                                  transfer: Int(info.transfer_characteristics),
                                                  matrix: Int(info.matrix_coefficients),
                                                  fullRange: info.full_range != 0)
        // A PQ or HLG sequence is tone-mapped from its 16-bit samples when the conversion is a
        // tone map; anything else goes through 8-bit samples.
        let plain = memoryUse(width: width, height: height, depth: Int(info.depth), chroma: Int(info.chroma),
                              alpha: info.has_alpha != 0, sixteen: false, fileBytes: file.heldBytes)
        let budget = options.maxDecoderBytes - MemoryUse.total(plain)
        var made = colourConversion(info, points: points, bits: Int(info.depth), name: name, options: options,
                                    budget: budget)
        let sixteen = info.depth > 8 && made.conversion?.isToneMap == true
        if !sixteen && info.depth > 8 {
            made = colourConversion(info, points: points, bits: 8, name: name, options: options, budget: budget)
        }
        let memory = !sixteen ? plain
            : memoryUse(width: width, height: height, depth: Int(info.depth), chroma: Int(info.chroma),
                        alpha: info.has_alpha != 0, sixteen: true, fileBytes: file.heldBytes)
        try checkMemory([memory + (made.conversion.map { [$0.memoryUse] } ?? [])], options: options, name: name)
        let pixels = UnsafeMutablePointer<UInt32>.allocate(capacity: width * height)
        let wide = sixteen ? UnsafeMutablePointer<UInt8>.allocate(capacity: width * height * 8) : nil
        opened = nil
        return AVIFAnimation(name: name, file: file, decoder: decoder, info: info, memory: memory, colour: made,
                             pixels: pixels, wide: wide)
    }

    /// The conversion for the sequence's ICC profile, else its code points (see the type).
    private static func colourConversion(_ info: kc_avif_info, points: CodePoints, bits: Int,
                                         name: String, options: DecodeOptions, budget: Int) -> ColourConversion.Made {
        guard options.colour.enabled else { return ColourConversion.Made() }
        var description = ColourDescription.codePoints(points)
        var oversized: String?
        if let icc = info.icc, info.icc_size > 0 {
            oversized = ColourConversion.oversizedProfile(info.icc_size, name: name, options: options)
            description = oversized == nil ? .icc(Array(UnsafeBufferPointer(start: icc, count: info.icc_size))) : .sRGB
        }
        var made = ColourConversion.make(description, alpha: info.has_alpha != 0, target: options.colour, name: name,
                                         bits: bits, budget: budget)
        if let oversized { made.warning = oversized }
        return made
    }

    /// What a sequence of `width` x `height` frames of `depth` bits holds (see the type), its
    /// chroma subsampling `chroma` (444, 422, 420, 400; 0 is counted as 444).
    static func memoryUse(width: Int, height: Int, depth: Int, chroma: Int, alpha: Bool, sixteen: Bool,
                          fileBytes: Int) -> [MemoryUse] {
        let sample = depth > 8 ? 2 : 1
        // Samples a pixel, in quarters: Y plus the two chroma planes at their subsampling.
        let quarters = (chroma == 400 ? 4 : chroma == 420 ? 6 : chroma == 422 ? 8 : 12) + (alpha ? 4 : 0)
        let picture = MemoryUse.product(width, height, quarters, sample) / 4
        let format = chroma == 400 ? "4:0:0" : chroma == 420 ? "4:2:0" : chroma == 422 ? "4:2:2" : "4:4:4"
        var uses = [EncodedBytes.memoryUse(fileBytes),
                    MemoryUse(what: "dav1d's pictures (8 of \(width)x\(height), \(format) at \(depth) bits"
                                  + (alpha ? " with alpha)" : ")"),
                              bytes: MemoryUse.product(picture, 8)),
                    MemoryUse(what: "dav1d's frame state (12 bytes a pixel)",
                              bytes: MemoryUse.product(width, height, 12)),
                    MemoryUse.image(width: width, height: height, "the frame converted to RGB")]
        if sixteen {
            uses.append(MemoryUse(what: "the frame's 16-bit samples for the tone map",
                                  bytes: MemoryUse.product(width, height, 8)))
        }
        return uses
    }

    func next() throws(ImageError) -> Int? {
        var duration = 0.0
        var error = [CChar](repeating: 0, count: 512)
        let target = wide ?? UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: UInt8.self)
        let stride = canvasWidth * (wide == nil ? 4 : 8)
        switch kc_avif_next(decoder, target, stride, wide == nil ? 0 : 1, &duration, &error, error.count) {
        case 1: break
        case 0: return nil
        default:
            throw .corrupt(path: name, reason: "libavif could not decode frame \(framesThisPass + 1) of the sequence: "
                           + String(cString: error))
        }
        framesThisPass += 1
        if let wide, let conversion = colour.conversion {
            conversion.convertRows16(wide, stride: stride, width: canvasWidth, height: canvasHeight,
                                     channels: 4)
            for y in 0..<canvasHeight {
                memcpy(pixels + y * canvasWidth, wide + y * stride, canvasWidth * 4)
            }
        } else if let conversion = colour.conversion {
            let pixels = pixels, width = canvasWidth
            conversion.convertRows(canvasHeight, width: width) { pixels + $0 * width }
        }
        return duration.isFinite && duration > 0 ? Int((duration * 1000).rounded()) : 0
    }

    func rewind() throws(ImageError) {
        var error = [CChar](repeating: 0, count: 512)
        guard kc_avif_reset(decoder, &error, error.count) == 0 else {
            throw .corrupt(path: name,
                           reason: "libavif could not go back to the first frame: " + String(cString: error))
        }
        framesThisPass = 0
    }

    private var framesThisPass = 0
}
