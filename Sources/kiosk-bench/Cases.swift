// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskApp
import KioskCore
import KioskDisplay
import KioskImaging

/// The measurements that run inside a child process (`kiosk-bench --case NAME ...`), so that
/// each gets its own peak RSS and the parent stays small. Each prints one line on stdout.
enum ChildCase {
    static let frameWidth = 1920, frameHeight = 1080

    /// Runs the case named by `arguments[0]`; returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first else { return usage() }
        let rest = Array(arguments.dropFirst())
        func int(_ i: Int, _ fallback: Int) -> Int { i < rest.count ? Int(rest[i]) ?? fallback : fallback }
        switch name {
        case "noop":
            return 0
        case "decode":
            guard let path = rest.first else { return usage() }
            return decode(path: path)
        case "decode-full":
            guard let path = rest.first else { return usage() }
            return decodeFull(path: path)
        case "decode-warm":
            guard let path = rest.first else { return usage() }
            return decodeWarm(path: path, iterations: int(1, 5))
        case "decode-probe":
            // Diagnostics: decode for a different target (so a different DCT scale), then fit.
            guard rest.count >= 3 else { return usage() }
            return decodeProbe(path: rest[0], targetWidth: int(1, 1920), targetHeight: int(2, 1080))
        case "blend":
            return kernel(iterations: int(0, 50), warmup: int(1, 5), .blend)
        case "rgb565":
            return kernel(iterations: int(0, 50), warmup: int(1, 5), int(2, 0) != 0 ? .rgb565Dither : .rgb565)
        case "xrgb":
            return kernel(iterations: int(0, 50), warmup: int(1, 5), int(2, 0) == 90 ? .xrgbRotate90 : .xrgbCopy)
        case "resample":
            // Diagnostics: Resampler.draw of a deterministic SWxSH frame into 1920x1080.
            return resample(width: int(0, 2560), height: int(1, 1440), iterations: int(2, 30))
        case "touch-latency":
            // touch-latency SWIPES PHOTO...
            guard rest.count >= 3 else { return usage() }
            return TouchLatency.run(photos: Array(rest.dropFirst()), swipes: int(0, 20))
        case "cache-write":
            // cache-write ENTRIES WRITES: the disk cache's write cost when full (CacheWrite.swift).
            return CacheWriteCase.run(entries: int(0, 10_000), writes: int(1, 300))
        case "text":
            // text PHOTO RUNS: caption prepare and clock overlay costs (TextCost.swift).
            guard let photo = rest.first else { return usage() }
            return TextCostCase.run(photo: photo, runs: int(1, 21))
        case "colour":
            // colour JPEG AVIF RUNS: the cost of colour conversion and tone mapping (ColourCost.swift).
            guard rest.count >= 2 else { return usage() }
            return ColourCostCase.run(jpeg: rest[0], avif: rest[1], iterations: int(2, 7))
        case "blur-prepare":
            // blur-prepare PHOTO N: what --fit blur adds to a slot's preparation (BlurPrepare.swift).
            guard let photo = rest.first else { return usage() }
            return BlurPrepareCase.run(photo: photo, iterations: int(1, 15))
        case "animation-frame":
            // animation-frame PATH N: an animated GIF's or WebP's frame made at 1080p (AnimationFrame.swift).
            guard let path = rest.first else { return usage() }
            return AnimationFrameCase.run(path: path, iterations: int(1, 50))
        case "fade-4k":
            // fade-4k [FRAMES] [DEVICE]: a 3840x2160 fade frame on one core and on all; the plane path's CPU time.
            return FadeFourKCase.run(frames: int(0, 120), device: rest.count > 1 ? rest[1] : nil)
        case "ken-burns":
            // ken-burns [FRAMES] [PHOTO]: a Ken Burns frame against a plain fade frame (KenBurnsCost.swift).
            return KenBurnsCostCase.run(frames: int(0, 60), photo: rest.count > 1 ? rest[1] : nil)
        case "pairs":
            // pairs [RUNS] PHOTO PHOTO: a --pair-portraits frame's prepare against a single fit (PairCost.swift).
            let photos = rest.filter { Int($0) == nil }
            guard photos.count >= 2 else { return usage() }
            return PairCostCase.run(runs: rest.first.flatMap { Int($0) } ?? 9, photos: Array(photos.prefix(2)))
        case "scanout-dimmed":
            // scanout-dimmed [N]: the copy to scanout at full brightness and dimmed by the pixels.
            return ScanoutDimmedCase.run(iterations: int(0, 40))
        case "mirrored-outputs":
            // mirrored-outputs PHOTO PHOTO [RUNS]: a second output's peak RSS against the first's
            // (MirroredOutputs.swift).
            guard rest.count >= 2 else { return usage() }
            return MirroredOutputsCase.run(photos: Array(rest.prefix(2)), runs: int(2, 3))
        case "mirrored-outputs-run":
            // mirrored-outputs-run WxH[,WxH...] PHOTO PHOTO: the show on those outputs (the child).
            guard rest.count == 3 else { return usage() }
            return MirroredOutputsCase.child(sizes: rest[0], photos: Array(rest.dropFirst()))
        case "app":
            // Fallback for the whole-program figure when no kiosk-carousel binary sits next to
            // kiosk-bench: the very same entry point the kiosk-carousel executable calls.
            return KioskApp.main(rest)
        default:
            return usage()
        }
    }

    static func usage() -> Int32 {
        fputs("kiosk-bench --case noop | decode PATH | decode-full PATH | decode-warm PATH N | blend N W"
              + " | rgb565 N W DITHER | xrgb N W ROTATION | app ARGS... | decode-probe PATH TARGETW TARGETH"
              + " | resample SW SH N | cache-write ENTRIES WRITES | blur-prepare PHOTO N | fade-4k [FRAMES] [DEVICE]"
              + " | scanout-dimmed [N] | mirrored-outputs PHOTO PHOTO [RUNS] | ken-burns [FRAMES] [PHOTO]"
              + " | animation-frame PATH N | pairs [RUNS] PHOTO PHOTO\n", stderr)
        return 64
    }

    // MARK: - Decode + fit

    /// What the app does for each image (SlotPreparer.prepare): a new 1920x1080 frame, then
    /// ImageDecoder.decodeFitted with the same options (DCT scaling for the frame; a JPEG
    /// stored upright is streamed into the frame). Returns the frame and what decodeFitted
    /// reports (DCT scale, decoded size, whether it streamed).
    static func decodeAndFit(_ path: String) throws(ImageError) -> (frame: Bitmap, fitted: FittedImage) {
        let options = DecodeOptions(maxPixels: 100_000_000, targetWidth: frameWidth, targetHeight: frameHeight, fit: .fit)
        let frame = Bitmap(uninitializedWidth: frameWidth, height: frameHeight)
        let fitted = try ImageDecoder.decodeFitted(path: path, into: frame, fit: .fit, background: .black, options: options)
        return (frame, fitted)
    }

    /// One decode + fit, as the first thing this process does. Prints
    /// `<in-process ms> <scale numerator> <centre pixel> <decoded WxH> <streamed|whole>`
    /// (nothing that costs time: the parent times this whole process).
    static func decode(path: String) -> Int32 {
        let t0 = nowMs()
        do {
            let (frame, fitted) = try decodeAndFit(path)
            let t = nowMs() - t0
            print("\(t) \(fitted.scaleNumerator) \(String(frame[frame.width / 2, frame.height / 2], radix: 16))"
                  + " \(fitted.decodedWidth)x\(fitted.decodedHeight) \(fitted.streamed ? "streamed" : "whole")")
            return 0
        } catch {
            fputs("kiosk-bench: \(error)\n", stderr)
            return 1
        }
    }

    /// The same picture without DCT scaling, as the first thing this process does: the whole
    /// image decoded at 8/8 (ImageDecoder.decode with no target frame, a decoder budget of
    /// 1 GiB so that any benchmark photo fits), then placed in a new 1920x1080 frame
    /// (Compositor.place, area-averaging). Prints `<in-process ms> <decoded WxH>`.
    static func decodeFull(path: String) -> Int32 {
        let t0 = nowMs()
        do {
            let options = DecodeOptions(maxPixels: 100_000_000, maxDecoderBytes: 1 << 30)
            let decoded = try ImageDecoder.decode(path: path, options: options)
            let frame = Bitmap(uninitializedWidth: frameWidth, height: frameHeight)
            Compositor.place(decoded.bitmap, into: frame, fit: .fit, background: .black)
            let t = nowMs() - t0
            print("\(t) \(decoded.bitmap.width)x\(decoded.bitmap.height)")
            return 0
        } catch {
            fputs("kiosk-bench: \(error)\n", stderr)
            return 1
        }
    }

    /// One warm-up decode + fit as the app does it (``decodeAndFit(_:)``), then `iterations`
    /// more; then the same for the two steps of the whole-image path, the decode
    /// (ImageDecoder.decode) and the fit (new frame + Compositor.place). Prints the medians in ms
    /// of the first, of the decode and of the fit. (Two loops rather than one alternating
    /// loop: interleaving them changes where glibc puts libjpeg's large buffers, which moves a
    /// progressive decode by 10 % either way.)
    static func decodeWarm(path: String, iterations: Int) -> Int32 {
        var total: [Double] = [], decode: [Double] = [], fit: [Double] = []
        let options = DecodeOptions(maxPixels: 100_000_000, targetWidth: frameWidth, targetHeight: frameHeight, fit: .fit)
        do {
            for i in 0...max(1, iterations) {
                let t0 = nowMs()
                _ = try decodeAndFit(path)
                if i > 0 { total.append(nowMs() - t0) }
            }
            for i in 0...max(1, iterations) {
                let t0 = nowMs()
                let decoded = try ImageDecoder.decode(path: path, options: options)
                let t1 = nowMs()
                let frame = Bitmap(uninitializedWidth: frameWidth, height: frameHeight)
                Compositor.place(decoded.bitmap, into: frame, fit: .fit, background: .black)
                let t2 = nowMs()
                if i > 0 { decode.append(t1 - t0); fit.append(t2 - t1) }
            }
        } catch {
            fputs("kiosk-bench: \(error)\n", stderr)
            return 1
        }
        print("\(median(total)) \(median(decode)) \(median(fit))")
        return 0
    }

    static func decodeProbe(path: String, targetWidth: Int, targetHeight: Int) -> Int32 {
        let options = DecodeOptions(maxPixels: 100_000_000, targetWidth: targetWidth, targetHeight: targetHeight, fit: .fit)
        var decode: [Double] = [], fit: [Double] = []
        var scale = 0
        for i in 0...5 {
            let t0 = nowMs()
            guard let decoded = try? ImageDecoder.decode(path: path, options: options) else { return 1 }
            let t1 = nowMs()
            let frame = Bitmap(width: frameWidth, height: frameHeight)
            Compositor.place(decoded.bitmap, into: frame, fit: .fit, background: .black)
            let t2 = nowMs()
            scale = decoded.scaleNumerator
            if i > 0 { decode.append(t1 - t0); fit.append(t2 - t1) }
        }
        print("scale \(scale)/8 decode \(median(decode)) fit \(median(fit))")
        return 0
    }

    /// Times `Resampler.draw` of a deterministic `width` x `height` frame into 1920x1080
    /// (3 untimed runs first). Prints `<median ms> <checksum of the output>`.
    static func resample(width: Int, height: Int, iterations: Int) -> Int32 {
        let source = testFrame(width: width, height: height, seed: 3)
        let out = Bitmap(width: frameWidth, height: frameHeight, fill: 0)
        let rect = PixelRect(x: 0, y: 0, width: frameWidth, height: frameHeight)
        var times: [Double] = []
        for i in -3..<max(1, iterations) {
            let t0 = nowMs()
            Resampler.draw(source, into: out, rect: rect)
            let t = nowMs() - t0
            if i >= 0 { times.append(t) }
        }
        print("\(median(times)) \(hex(checksum(UnsafeRawPointer(out.pixels), out.byteCount)))")
        return 0
    }

    // MARK: - Per-frame kernels

    enum Kernel { case blend, rgb565, rgb565Dither, xrgbCopy, xrgbRotate90 }

    /// DRM-like pitch of a 1920-pixel XRGB8888 scanout row.
    static let pitch = 7680

    /// Times `kernel` on deterministic 1920x1080 test frames (the same ones the C reference
    /// builds), `warmup` untimed runs first. Prints `<median ms> <checksum of the output>`.
    static func kernel(iterations: Int, warmup: Int, _ kernel: Kernel) -> Int32 {
        let w = frameWidth, h = frameHeight
        // For 90 degrees the logical frame is portrait (1080x1920) and the panel 1920x1080.
        let rotated = kernel == .xrgbRotate90
        let a = testFrame(width: rotated ? h : w, height: rotated ? w : h, seed: 1)
        let b = testFrame(width: w, height: h, seed: 2)
        let out = Bitmap(width: w, height: h, fill: 0)
        let scanBytes = h * pitch
        let scan = UnsafeMutableRawPointer.allocate(byteCount: scanBytes, alignment: 64)
        defer { scan.deallocate() }
        scan.initializeMemory(as: UInt8.self, repeating: 0, count: scanBytes)

        let step: () -> Void
        let result: (UnsafeRawPointer, Int)
        switch kernel {
        case .blend:
            step = { Compositor.blend(a, b, weight: 128, into: out) }
            result = (UnsafeRawPointer(out.pixels), out.byteCount)
        case .rgb565, .rgb565Dither:
            let dither = kernel == .rgb565Dither
            step = {
                ScanoutWriter.copy(a, to: scan, stride: w * 2, format: .rgb565, rotation: .none,
                                   dither: dither, swapRedBlue: false)
            }
            result = (UnsafeRawPointer(scan), w * h * 2)
        case .xrgbCopy, .xrgbRotate90:
            let rotation: Rotation = rotated ? .clockwise90 : .none
            step = {
                ScanoutWriter.copy(a, to: scan, stride: pitch, format: .xrgb8888, rotation: rotation,
                                   dither: false, swapRedBlue: false)
            }
            result = (UnsafeRawPointer(scan), scanBytes)
        }
        var times: [Double] = []
        times.reserveCapacity(iterations)
        for i in -warmup..<max(1, iterations) {
            let t0 = nowMs()
            step()
            let t = nowMs() - t0
            if i >= 0 { times.append(t) }
        }
        print("\(median(times)) \(hex(checksum(result.0, result.1)))")
        return 0
    }

    /// The deterministic test frame shared with the C reference (`test_pixel` there).
    static func testFrame(width: Int, height: Int, seed: UInt32) -> Bitmap {
        let f = Bitmap(width: width, height: height, fill: 0)
        let p = f.pixels
        for i in 0..<(width * height) { p[i] = testPixel(UInt32(truncatingIfNeeded: i), seed: seed) }
        return f
    }

    @inline(__always)
    static func testPixel(_ i: UInt32, seed: UInt32) -> UInt32 {
        var x = i &* 2_654_435_761 &+ seed
        x ^= x &>> 15
        x = x &* 2_246_822_519
        x ^= x &>> 13
        return 0xFF00_0000 | (x & 0x00FF_FFFF)
    }

    /// FNV-1a over `count` bytes, as `fnv1a` in the C reference.
    static func checksum(_ p: UnsafeRawPointer, _ count: Int) -> UInt64 {
        let b = p.assumingMemoryBound(to: UInt8.self)
        var h: UInt64 = 14_695_981_039_346_656_037
        for i in 0..<count { h = (h ^ UInt64(b[i])) &* 1_099_511_628_211 }
        return h
    }

    static func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
