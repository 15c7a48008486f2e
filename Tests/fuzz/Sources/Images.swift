// SPDX-License-Identifier: Apache-2.0
// The image decoders' fuzz targets: bytes to a fitted frame, each format's decoder forced so a
// damaged signature still reaches it.
import KioskCore
@testable import KioskImaging

/// The decoder budget under the fuzzer: small enough that libFuzzer's `-malloc_limit_mb`
/// (run.sh: 96) catches any single allocation past it as a crash.
let fuzzDecodeOptions = DecodeOptions(maxPixels: 16_000_000, maxDecoderBytes: 48 << 20)

/// A pixel no decode writes: alpha 0 in a frame without alpha (every written pixel is opaque).
let unwrittenPixel: UInt32 = 0x0012_3456

/// `data` decoded as `format` into a 48x32 frame (the fit chosen by the input's length), both
/// straight into the frame (streamed where it can be) and whole then placed. Invariants: a frame
/// that decodes has every pixel written, opaque, at the frame's size; the two ways give the same
/// frame pixel for pixel when both succeed; the fitted image's sizes and rows are consistent.
func fuzzImage(_ data: [UInt8], format: ImageFormat) {
    let width = 48, height = 32
    let fit = FitMode.allCases[data.count % FitMode.allCases.count]
    let background = RGBColor(red: 0x20, green: 0x40, blue: 0x60)
    let frame = Bitmap(width: width, height: height, fill: unwrittenPixel)
    let fitted: FittedImage? = data.withUnsafeBytes { buffer in
        try? ImageDecoder.decodeFitted(.memory(buffer), format: format, name: "fuzz", into: frame, fit: fit,
                                       background: background, options: fuzzDecodeOptions)
    }
    var options = fuzzDecodeOptions
    options.targetWidth = width; options.targetHeight = height; options.fit = fit
    let decoded: DecodedImage? = data.withUnsafeBytes { buffer in
        try? ImageDecoder.decode(.memory(buffer), format: format, name: "fuzz", options: options)
    }
    if let decoded {
        let b = decoded.bitmap
        guard b.width > 0, b.height > 0, b.width <= DecodeOptions.maxSide, b.height <= DecodeOptions.maxSide,
              b.width * b.height * 4 <= fuzzDecodeOptions.maxDecoderBytes else {
            fuzzFailure("decoded bitmap \(b.width)x\(b.height) out of the limits", data)
        }
    }
    guard let fitted else { return }
    guard frame.width == width, frame.height == height else { fuzzFailure("frame resized", data) }
    for i in 0 ..< frame.pixelCount where frame.pixels[i] >> 24 != 0xFF {
        fuzzFailure("\(format) \(fit): pixel \(i % width),\(i / width) not written or not opaque: \(String(frame.pixels[i], radix: 16)) (\(fitted))", data)
    }
    guard fitted.decodedWidth > 0, fitted.decodedHeight > 0, fitted.decodedRows.lowerBound >= 0,
          fitted.decodedRows.upperBound <= (fitted.orientation.swapsAxes ? fitted.decodedWidth : fitted.decodedHeight), fitted.sourceWidth > 0, fitted.sourceHeight > 0 else {
        fuzzFailure("fitted image inconsistent: \(fitted)", data)
    }
    guard let decoded else { return }
    let placed = Bitmap(width: width, height: height, fill: unwrittenPixel)
    Compositor.place(decoded.bitmap, into: placed, fit: fit, background: background)
    for i in 0 ..< frame.pixelCount where frame.pixels[i] != placed.pixels[i] {
        fuzzFailure("\(format) \(fit): fitted and placed frames differ at \(i % width),\(i / width): \(String(frame.pixels[i], radix: 16)) vs \(String(placed.pixels[i], radix: 16)) (\(fitted))", data)
    }
}

func fuzzJPEG(_ data: [UInt8]) { fuzzImage(data, format: .jpeg) }
func fuzzPNG(_ data: [UInt8]) { fuzzImage(data, format: .png) }
func fuzzWebP(_ data: [UInt8]) { fuzzImage(data, format: .webp) }
func fuzzGIF(_ data: [UInt8]) { fuzzImage(data, format: .gif) }
/// HEIF or AVIF as the brand says (libheif decodes both; an unknown brand goes to HEIF).
func fuzzHEIF(_ data: [UInt8]) {
    let format = FileFormat.identify(data.prefix(FileFormat.sniffLength)).decodable
    fuzzImage(data, format: format == .avif ? .avif : .heif)
}

/// `data` opened as an animation (GIF or WebP as its first bytes say) and played for up to 200
/// frames into a 48x32 frame, the fit chosen by the input's
/// length. Invariants: what it holds is within the budget; every frame placed has every pixel
/// written and opaque; each duration is at least 11 ms (short ones are 100 ms); a pass restarts
/// at frame 0; nothing after the end of the animation.
func fuzzAnimation(_ data: [UInt8]) {
    let width = 48, height = 32
    let fit = FitMode.allCases[data.count % FitMode.allCases.count]
    let background = RGBColor(red: 0x20, green: 0x40, blue: 0x60)
    data.withUnsafeBytes { buffer in
        guard let decoder = try? AnimationDecoder.open(bytes: buffer, name: "fuzz", options: fuzzDecodeOptions) else {
            return
        }
        guard decoder.heldBytes <= fuzzDecodeOptions.maxDecoderBytes, decoder.canvasWidth > 0,
              decoder.canvasHeight > 0 else {
            fuzzFailure("animation \(decoder.canvasWidth)x\(decoder.canvasHeight) holding \(decoder.heldBytes)", data)
        }
        for _ in 0..<200 {
            let frame = Bitmap(width: width, height: height, fill: unwrittenPixel)
            let next: (milliseconds: Int, newPass: Bool)?
            do { next = try decoder.placeNext(into: frame, fit: fit, background: background) } catch { return }
            guard let next else {
                if (try? decoder.placeNext(into: frame, fit: fit, background: background)) ?? nil != nil {
                    fuzzFailure("a frame after the animation ended", data)
                }
                return
            }
            guard next.milliseconds > 10 else { fuzzFailure("a duration of \(next.milliseconds) ms", data) }
            guard !next.newPass || decoder.frameIndex == 0 else { fuzzFailure("a pass not at frame 0", data) }
            for i in 0 ..< frame.pixelCount where frame.pixels[i] >> 24 != 0xFF {
                fuzzFailure("frame \(decoder.framesDecoded) \(fit): pixel \(i % width),\(i / width) not written",
                            data)
            }
        }
    }
}
