// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskImaging

/// Which picture of a pair could not be decoded (``SlotPreparer/composePair(_:_:width:height:captioned:)``).
enum PairError: Error {
    /// The first: the slot's item fails as a picture alone would.
    case first(ImageError)
    /// The partner: the first is shown alone.
    case partner(ImageError)
}

extension SlotPreparer {
    /// The frame of a pair (`--pair-portraits`, docs/carousel.md "Pairs"): `job`'s picture
    /// fitted into the first half of a new `width` x `height` XRGB8888 frame and `partner`'s
    /// into the second (``PairLayout/halves(width:height:)``), each exactly as it would be fitted
    /// alone into a frame of its half's size (its own fit, the letterbox in ``background``; a
    /// `blur` letterbox within its half), each with its own caption drawn into its half. An
    /// animation shows its first frame. Ownership of the frame passes to the caller; not kept
    /// in the memory cache. Runs on the decode worker.
    /// - Throws: ``PairError`` saying which picture's ``ImageError`` it was.
    func composePair(_ job: Job, _ partner: Partner, width: Int, height: Int,
                     captioned: Bool) throws(PairError) -> (Bitmap, [String]) {
        let halves = partner.layout.halves(width: width, height: height)
        let frame = Bitmap(uninitializedWidth: width, height: height)  // both halves written whole
        var warnings: [String] = []
        do throws(ImageError) {
            warnings += try fitHalf(path: job.path, fit: job.fit ?? fit, into: frame, at: halves.first,
                                    caption: captioned ? caption(for: job) : nil)
        } catch {
            throw .first(error)
        }
        var second = job
        second.path = partner.path; second.source = partner.path
        second.fit = partner.fit; second.caption = partner.caption
        do throws(ImageError) {
            warnings += try fitHalf(path: partner.path, fit: partner.fit ?? fit, into: frame, at: halves.second,
                                    caption: captioned ? caption(for: second) : nil)
        } catch {
            throw .partner(error)
        }
        return (frame, warnings)
    }

    /// Decodes `path` fitted into a new bitmap of `rect`'s size, draws `caption` into it and
    /// copies it into `frame` at `rect`; returns the decoder's warnings. Throws ``ImageError``.
    private func fitHalf(path: String, fit: FitMode, into frame: Bitmap, at rect: PixelRect,
                         caption: String?) throws(ImageError) -> [String] {
        let options = DecodeOptions(maxPixels: maxPixels, targetWidth: rect.width, targetHeight: rect.height,
                                    fit: fit, colour: colour)
        let half = Bitmap(uninitializedWidth: rect.width, height: rect.height)  // decodeFitted writes every pixel
        let fitted = try ImageDecoder.decodeFitted(path: path, into: half, fit: fit, background: background,
                                                   options: options)
        drawCaption(text: caption, into: half)
        Compositor.copy(half, into: frame, x: rect.x, y: rect.y)
        return fitted.warnings
    }
}
