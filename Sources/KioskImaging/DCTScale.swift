// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// libjpeg's DCT scaling: a JPEG can be decoded straight to M/8 of its size (M = 1...16 in
/// libjpeg-turbo; we use 1...8, never enlarging), which is much cheaper than decoding at full
/// size and shrinking afterwards. The choice is a pure function of the sizes and the coding
/// process (``decodeNumerator(imageWidth:imageHeight:orientation:targetWidth:targetHeight:fit:progressive:)``).
public enum DCTScale {
    /// The size libjpeg outputs for `size` pixels at `numerator`/8: `ceil(size * numerator / 8)`
    /// (jdiv_round_up in jpeg_calc_output_dimensions, libjpeg-turbo jdmaster.c).
    public static func scaledSize(_ size: Int, numerator: Int) -> Int {
        (size * numerator + 7) / 8
    }

    /// The smallest M in 1...8 whose output, once EXIF-oriented, is at least as large as the
    /// image will be drawn in the target frame, so the resampler only ever shrinks.
    ///
    /// - Parameters:
    ///   - imageWidth, imageHeight: the stored size in pixels (JPEG SOF).
    ///   - orientation: the EXIF orientation; 5...8 swap width and height before placement.
    ///   - targetWidth, targetHeight: the frame in pixels; nil (or not positive) leaves that axis
    ///     unconstrained. Both nil: 8 (full size).
    ///   - fit: with both target sides given, the size to cover is
    ///     `fit.placement(imageWidth:imageHeight:frameWidth:frameHeight:)` of the oriented image
    ///     (for `stretch` that is the frame).
    /// - Returns: M, the numerator of M/8; 8 when even the full size does not cover the target.
    public static func numerator(imageWidth: Int, imageHeight: Int, orientation: EXIFOrientation = .topLeft,
                                 targetWidth: Int?, targetHeight: Int?, fit: FitMode) -> Int {
        guard imageWidth > 0, imageHeight > 0 else { return 8 }
        let oriented = orientation.orientedSize(width: imageWidth, height: imageHeight)
        let frameWidth = targetWidth.flatMap { $0 > 0 ? $0 : nil }
        let frameHeight = targetHeight.flatMap { $0 > 0 ? $0 : nil }
        let needWidth: Int, needHeight: Int
        switch (frameWidth, frameHeight) {
        case (nil, nil):
            return 8
        case let (w?, h?):
            let placed = fit.placement(imageWidth: oriented.width, imageHeight: oriented.height,
                                       frameWidth: w, frameHeight: h)
            (needWidth, needHeight) = (placed.width, placed.height)
        case let (w?, nil):
            (needWidth, needHeight) = (w, 0)
        case let (nil, h?):
            (needWidth, needHeight) = (0, h)
        }
        for m in 1...8 where scaledSize(oriented.width, numerator: m) >= needWidth
            && scaledSize(oriented.height, numerator: m) >= needHeight {
            return m
        }
        return 8
    }

    /// The M to decode at, chosen by total cost (decode + area-average to the placed size)
    /// rather than by size alone: the smallest covering M of
    /// ``numerator(imageWidth:imageHeight:orientation:targetWidth:targetHeight:fit:)``, except
    /// that a sequential (baseline) JPEG is decoded at 4/8 where 3/8 would cover.
    ///
    /// Why: libjpeg-turbo's SIMD inverse DCTs are the 8x8, 4x4, 2x2 and 1x1 ones
    /// (jsimd_idct_islow/ifast, jsimd_idct_4x4, jsimd_idct_2x2 in simd/x86_64); 3/8 runs the
    /// plain-C 3x3 IDCT (jidctint.c). Measured on the 6000x4000 4:2:0 baseline benchmark photo
    /// (CPU time, Debian 12 x86-64, libjpeg-turbo 2.1.5): `djpeg -scale 3/8` 64 ms, 1/2 54 ms,
    /// and our decode + fit to 1920x1080 69 ms at 4/8 against 76 ms at 3/8, although 4/8
    /// decodes 1.8x the pixels. The larger decode is area-averaged down, so the picture is at
    /// least as sharp. A progressive JPEG keeps the covering M: its scans' entropy decoding
    /// dominates (djpeg 245 ms at both 3/8 and 1/2 on the 5120x2880 photo) and the larger
    /// decode only adds resampling (our decode + fit: 251 ms at 3/8, 268 ms at 4/8; measured
    /// again with callgrind, 1,739 million instructions at 3/8 against 1,877 million at 4/8, for
    /// 48.5 against 48.9 dB PSNR from the full-size decode area-averaged to 1920x1080). 5/8 to 7/8
    /// are kept too: 8/8 decodes faster than them, but holds up to 2.6x the pixels, which the
    /// decoder's memory budget may not allow.
    public static func decodeNumerator(imageWidth: Int, imageHeight: Int, orientation: EXIFOrientation = .topLeft,
                                       targetWidth: Int?, targetHeight: Int?, fit: FitMode, progressive: Bool) -> Int {
        let covering = numerator(imageWidth: imageWidth, imageHeight: imageHeight, orientation: orientation,
                                 targetWidth: targetWidth, targetHeight: targetHeight, fit: fit)
        return !progressive && covering == 3 ? 4 : covering
    }
}
