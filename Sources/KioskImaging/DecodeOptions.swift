import KioskCore

/// How ``ImageDecoder`` decodes: the pixel budget and the size the image will be shown at.
public struct DecodeOptions: Sendable, Equatable {
    /// The largest stored image accepted, in pixels (`width * height` from the file header).
    /// Larger images are refused with ``ImageError/tooLarge(path:width:height:limit:)`` before
    /// anything image-sized is allocated. Default 100 megapixels (`--max-pixels`).
    public var maxPixels: Int = 100_000_000
    /// The frame the image will be placed in, in pixels. When given, a JPEG is decoded through
    /// libjpeg's DCT scaling at the smallest M/8 that still covers the placement (see
    /// ``DCTScale``); nil means full size. PNG is always decoded at full size.
    public var targetWidth: Int?
    /// See ``targetWidth``.
    public var targetHeight: Int?
    /// How the image will be placed in the target frame; decides which size must be covered.
    public var fit: FitMode = .fit

    /// Options with the given budget (pixels), target frame (pixels; nil = full size) and fit.
    public init(maxPixels: Int = 100_000_000, targetWidth: Int? = nil, targetHeight: Int? = nil,
                fit: FitMode = .fit) {
        self.maxPixels = maxPixels
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.fit = fit
    }
}
