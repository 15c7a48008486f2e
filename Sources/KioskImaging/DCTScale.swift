import KioskCore

/// libjpeg's DCT scaling: a JPEG can be decoded straight to M/8 of its size (M = 1...16 in
/// libjpeg-turbo; we use 1...8, never enlarging), which is much cheaper than decoding at full
/// size and shrinking afterwards. The choice is a pure function of the sizes.
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
}
