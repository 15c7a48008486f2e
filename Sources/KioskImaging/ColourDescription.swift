// SPDX-License-Identifier: Apache-2.0

/// What an image file says about the colours its samples stand for, as its decoder read it
/// (docs/colour.md). Converted to the screen's space by ``ColourConversion``.
public enum ColourDescription: Sendable, Hashable {
    /// Nothing, or sRGB said outright (a PNG `sRGB` chunk): the samples are sRGB.
    case sRGB
    /// An embedded ICC profile (ICC.1:2010): a JPEG's APP2 `ICC_PROFILE` segments joined, a
    /// PNG's `iCCP` (inflated by libpng), a WebP's `ICCP` chunk, a HEIF's `colr` box of type
    /// `prof` or `rICC`. At most ``ColourDescription/maxProfileBytes``.
    case icc([UInt8])
    /// ITU-T H.273 code points: a PNG's `cICP` chunk, a HEIF's or AVIF's `colr` box of type `nclx`.
    case codePoints(CodePoints)
    /// A PNG's `cHRM` chunk with its `gAMA` (PNG specification, sections 11.3.3.2 and 11.3.3.3):
    /// the primaries, the white point and the encoding gamma.
    case chromaticities(Chromaticities)

    /// The largest embedded ICC profile used, in bytes: 4 MiB. Display profiles are a few
    /// hundred bytes to a few KiB, camera and printer (CMYK) profiles up to a few MiB; a larger
    /// one is not read (the picture is shown as sRGB, with a warning once per file).
    public static let maxProfileBytes = 4 << 20

    /// The ICC profile's bytes, when this is one.
    public var profile: [UInt8]? {
        if case .icc(let bytes) = self { return bytes }
        return nil
    }
}

/// CIE 1931 xy chromaticities of a white point and three primaries.
public struct Chromaticities: Sendable, Hashable {
    public var white: XY, red: XY, green: XY, blue: XY
    /// The encoding gamma (PNG `gAMA` / 100000: 0.45455 for 1/2.2); samples are decoded with
    /// its inverse. nil: the sRGB transfer function.
    public var gamma: Double?

    /// One chromaticity.
    public struct XY: Sendable, Hashable {
        public var x: Double, y: Double
        public init(_ x: Double, _ y: Double) { self.x = x; self.y = y }
    }

    public init(white: XY, red: XY, green: XY, blue: XY, gamma: Double? = nil) {
        self.white = white; self.red = red; self.green = green; self.blue = blue; self.gamma = gamma
    }

    /// BT.709's primaries with D65, the primaries of sRGB (IEC 61966-2-1).
    public static let sRGB = Chromaticities(white: XY(0.3127, 0.3290), red: XY(0.640, 0.330),
                                            green: XY(0.300, 0.600), blue: XY(0.150, 0.060))

    /// Whether each coordinate is within `tolerance` of `other`'s (the gamma is not compared).
    public func isClose(to other: Chromaticities, tolerance: Double = 0.002) -> Bool {
        let mine = [white, red, green, blue], theirs = [other.white, other.red, other.green, other.blue]
        return zip(mine, theirs).allSatisfy { abs($0.x - $1.x) <= tolerance && abs($0.y - $1.y) <= tolerance }
    }
}

/// ITU-T H.273 colour code points (`colour_primaries`, `transfer_characteristics`,
/// `matrix_coefficients`, `video_full_range_flag`), as HEIF's `nclx` and PNG's `cICP` carry them.
public struct CodePoints: Sendable, Hashable, CustomStringConvertible {
    public var primaries: Int, transfer: Int, matrix: Int
    public var fullRange: Bool

    public init(primaries: Int, transfer: Int, matrix: Int, fullRange: Bool) {
        self.primaries = primaries; self.transfer = transfer; self.matrix = matrix; self.fullRange = fullRange
    }

    /// `transfer` 16: SMPTE ST 2084, BT.2100's perceptual quantiser.
    public static let pq = 16
    /// `transfer` 18: ARIB STD-B67, BT.2100's hybrid log-gamma.
    public static let hlg = 18

    /// An HDR transfer function (PQ or HLG): tone-mapped (``HDRToneMap``).
    public var isHDR: Bool { transfer == Self.pq || transfer == Self.hlg }

    /// The primaries and white point of `primaries` (H.273 table 2), nil for a code point it
    /// does not define. 2 (unspecified) is taken as 1 (BT.709, sRGB's).
    public var chromaticities: Chromaticities? {
        typealias XY = Chromaticities.XY
        let d65 = XY(0.3127, 0.3290), illuminantC = XY(0.310, 0.316)
        switch primaries {
        case 1, 2: return .sRGB
        case 4: return Chromaticities(white: illuminantC, red: XY(0.67, 0.33), green: XY(0.21, 0.71),
                                      blue: XY(0.14, 0.08))
        case 5: return Chromaticities(white: d65, red: XY(0.64, 0.33), green: XY(0.29, 0.60), blue: XY(0.15, 0.06))
        case 6, 7: return Chromaticities(white: d65, red: XY(0.630, 0.340), green: XY(0.310, 0.595),
                                         blue: XY(0.155, 0.070))
        case 8: return Chromaticities(white: illuminantC, red: XY(0.681, 0.319), green: XY(0.243, 0.692),
                                      blue: XY(0.145, 0.049))
        case 9: return Chromaticities(white: d65, red: XY(0.708, 0.292), green: XY(0.170, 0.797),
                                      blue: XY(0.131, 0.046))
        case 10: return Chromaticities(white: XY(1.0 / 3, 1.0 / 3), red: XY(1, 0), green: XY(0, 1), blue: XY(0, 0))
        case 11: return Chromaticities(white: XY(0.314, 0.351), red: XY(0.680, 0.320), green: XY(0.265, 0.690),
                                       blue: XY(0.150, 0.060))
        case 12: return Chromaticities(white: d65, red: XY(0.680, 0.320), green: XY(0.265, 0.690),
                                       blue: XY(0.150, 0.060))
        case 22: return Chromaticities(white: d65, red: XY(0.630, 0.340), green: XY(0.295, 0.605),
                                       blue: XY(0.155, 0.077))
        default: return nil
        }
    }

    /// How samples of `transfer` are decoded for an SDR picture: the sRGB transfer function for
    /// sRGB (13), for BT.709's family of camera curves (1, 6, 14, 15: pictures made for a screen
    /// whose response is close to sRGB's, as browsers show them) and for 0 and 2 (unspecified);
    /// a pure power for 4 (2.2), 5 (2.8) and 8 (linear, 1). nil for the HDR curves and those not
    /// handled (log curves, BT.1361, SMPTE 240M, ST 428-1).
    public var sdrGamma: SDRTransfer? {
        switch transfer {
        case 0, 1, 2, 6, 13, 14, 15: return .sRGB
        case 4: return .gamma(2.2)
        case 5: return .gamma(2.8)
        case 8: return .gamma(1.0)
        default: return nil
        }
    }

    /// An SDR tone curve.
    public enum SDRTransfer: Sendable, Hashable {
        /// IEC 61966-2-1.
        case sRGB
        /// Linear light = sample ^ gamma.
        case gamma(Double)
    }

    /// Whether the samples are sRGB as they are (BT.709 primaries, an sRGB-like transfer).
    public var isSRGB: Bool { (primaries == 1 || primaries == 2) && sdrGamma == .sRGB }

    public var description: String {
        "\(primaries)/\(transfer)/\(matrix)\(fullRange ? " full range" : " limited range")"
    }

    /// The name of `primaries`, for the log.
    public var primariesName: String {
        switch primaries {
        case 1: return "BT.709"
        case 2: return "unspecified"
        case 9: return "BT.2020"
        case 11: return "DCI-P3"
        case 12: return "Display P3"
        default: return "primaries \(primaries)"
        }
    }
}
