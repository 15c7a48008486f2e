// SPDX-License-Identifier: Apache-2.0
import CKioskColour

/// An HDR picture's light levels, as its file gives them (HEIF/AVIF `clli` and `mdcv` boxes).
public struct HDRMetadata: Sendable, Hashable {
    /// The content's brightest pixel, MaxCLL (CTA-861.3), in cd/m²; 0 when not given.
    public var maxContentLightLevel: Double
    /// The mastering display's peak (SMPTE ST 2086 `max_display_mastering_luminance`), in cd/m²;
    /// 0 when not given.
    public var masteringPeak: Double

    public init(maxContentLightLevel: Double = 0, masteringPeak: Double = 0) {
        self.maxContentLightLevel = maxContentLightLevel
        self.masteringPeak = masteringPeak
    }
}

/// The HDR to SDR tone mapping of a PQ or HLG picture (`kc_tonemap.c`, which has the formulas):
/// BT.2100's EOTF (PQ) or inverse OETF and OOTF (HLG) to display light, BT.2390's EETF from the
/// picture's peak to BT.2408's HDR reference white, 203 cd/m², which becomes SDR white, applied to
/// max(R, G, B); then the picture's primaries to BT.709's (clipped), and the sRGB curve.
enum HDRToneMap {
    /// BT.2408's HDR reference white (diffuse white), 203 cd/m²: what SDR white stands for.
    static let referenceWhite = 203.0
    /// The peak assumed for a PQ picture that gives none, and HLG's nominal peak (BT.2100):
    /// 1000 cd/m².
    static let defaultPeak = 1000.0
    /// PQ's own ceiling: 10000 cd/m².
    static let pqCeiling = 10000.0

    /// A built table and what it is.
    struct Map {
        var table: OpaquePointer
        var bytes: Int
        var what: String
        /// A light level of the file that was not used (out of range), for the log.
        var warning: String?
    }

    enum Outcome {
        case success(Map)
        case failure(String)
    }

    /// The tone map for samples of `bits` (8 to 16) coded as `points` say, with `primaries`.
    static func make(_ points: CodePoints, primaries: Chromaticities, bits: Int, hdr: HDRMetadata,
                     name: String) -> Outcome {
        guard let matrix = ColourMath.conversion(from: primaries, to: .sRGB) else {
            return .failure("its colour primaries \(points.primaries) give no RGB to XYZ matrix; shown as sRGB")
        }
        let (peak, warning) = points.transfer == CodePoints.pq ? sourcePeak(hdr) : (defaultPeak, nil)
        var params = kc_tonemap_params()
        params.transfer = Int32(points.transfer)
        params.source_peak = peak
        params.sdr_white = referenceWhite
        withUnsafeMutableBytes(of: &params.matrix) { raw in
            let m = raw.bindMemory(to: Double.self)
            for i in 0..<9 { m[i] = matrix[i] }
        }
        guard let table = kc_tonemap_create(&params, Int32(bits)) else {
            return .failure("cannot build the HDR tone map (\(bits)-bit samples, peak \(Int(peak)) cd/m²); "
                            + "shown as sRGB")
        }
        let curve = points.transfer == CodePoints.pq ? "PQ" : "HLG"
        return .success(Map(table: table, bytes: Int(kc_tonemap_bytes(table)),
                            what: "\(curve) \(points.primariesName) HDR (peak \(Int(peak)) cd/m²) tone-mapped to sRGB",
                            warning: warning))
    }

    /// The EETF's source peak for a PQ picture: the smaller of its MaxCLL and its mastering
    /// display's peak where they are given and plausible (1 to 10000 cd/m², PQ's range), else
    /// ``defaultPeak``; a value given outside that range is named in the warning and not used.
    static func sourcePeak(_ hdr: HDRMetadata) -> (peak: Double, warning: String?) {
        var candidates: [Double] = []
        var ignored: [String] = []
        for (value, label) in [(hdr.maxContentLightLevel, "MaxCLL"), (hdr.masteringPeak, "mastering display peak")] {
            guard value != 0 else { continue }
            if value >= 1 && value <= pqCeiling && value.isFinite {
                candidates.append(value)
            } else {
                ignored.append("\(label) of \(value.isFinite ? String(Int(value.rounded())) : "\(value)") cd/m²")
            }
        }
        let peak = candidates.min() ?? defaultPeak
        let warning = ignored.isEmpty ? nil
            : "its \(ignored.joined(separator: " and ")) \(ignored.count > 1 ? "are" : "is") outside 1 to 10000 cd/m² "
              + "and not used; tone-mapped "
              + "from a peak of \(Int(peak)) cd/m²"
        return (peak, warning)
    }
}

/// Matrices between linear RGB spaces given by their primaries (row-major 3x3, `[Double]` of 9).
enum ColourMath {
    /// Linear RGB to CIE XYZ for primaries and white point `c` (the usual derivation: the
    /// primaries' XYZ at Y = 1 as columns, scaled so that RGB 1,1,1 gives the white point).
    static func rgbToXYZ(_ c: Chromaticities) -> [Double]? {
        func xyz(_ p: Chromaticities.XY) -> [Double]? {
            guard p.y != 0 else { return nil }
            return [p.x / p.y, 1, (1 - p.x - p.y) / p.y]
        }
        guard let r = xyz(c.red), let g = xyz(c.green), let b = xyz(c.blue), let w = xyz(c.white) else { return nil }
        let primaries = [r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]]
        guard let inverse = inverse(primaries) else { return nil }
        let s = multiply(inverse, vector: w)
        return [r[0] * s[0], g[0] * s[1], b[0] * s[2], r[1] * s[0], g[1] * s[1], b[1] * s[2],
                r[2] * s[0], g[2] * s[1], b[2] * s[2]]
    }

    /// Linear RGB of `source` to linear RGB of `target`, with a Bradford chromatic adaptation
    /// when their white points differ (ICC.1:2010 annex E).
    static func conversion(from source: Chromaticities, to target: Chromaticities) -> [Double]? {
        guard let toXYZ = rgbToXYZ(source), let targetToXYZ = rgbToXYZ(target),
              let fromXYZ = inverse(targetToXYZ) else { return nil }
        var m = toXYZ
        if abs(source.white.x - target.white.x) > 1e-4 || abs(source.white.y - target.white.y) > 1e-4 {
            guard let adapt = bradford(from: source.white, to: target.white) else { return nil }
            m = multiply(adapt, m)
        }
        return multiply(fromXYZ, m)
    }

    /// The Bradford adaptation from white `a` to white `b` in XYZ.
    static func bradford(from a: Chromaticities.XY, to b: Chromaticities.XY) -> [Double]? {
        let cone: [Double] = [0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296]
        guard a.y != 0, b.y != 0, let back = inverse(cone) else { return nil }
        let wa = multiply(cone, vector: [a.x / a.y, 1, (1 - a.x - a.y) / a.y])
        let wb = multiply(cone, vector: [b.x / b.y, 1, (1 - b.x - b.y) / b.y])
        guard wa.allSatisfy({ $0 != 0 }) else { return nil }
        let scale: [Double] = [wb[0] / wa[0], 0, 0, 0, wb[1] / wa[1], 0, 0, 0, wb[2] / wa[2]]
        return multiply(back, multiply(scale, cone))
    }

    static func multiply(_ a: [Double], _ b: [Double]) -> [Double] {
        var m = [Double](repeating: 0, count: 9)
        for i in 0..<3 { for j in 0..<3 { for k in 0..<3 { m[i * 3 + j] += a[i * 3 + k] * b[k * 3 + j] } } }
        return m
    }

    static func multiply(_ a: [Double], vector v: [Double]) -> [Double] {
        // Typed, and in two steps: Swift 6.0.3 (Debian 13) gives up type-checking the one expression.
        (0..<3).map { (i: Int) -> Double in
            let row: Int = i * 3
            return a[row] * v[0] + a[row + 1] * v[1] + a[row + 2] * v[2]
        }
    }

    static func inverse(_ m: [Double]) -> [Double]? {
        let (a, b, c, d, e, f, g, h, i) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        let det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        guard abs(det) > 1e-12 else { return nil }
        return [(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det,
                (f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det,
                (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]
    }
}
