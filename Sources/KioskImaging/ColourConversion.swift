// SPDX-License-Identifier: Apache-2.0
import CKioskColour
import Glibc
import KioskCore
import KioskSystem

/// How the pixels handed to a ``ColourConversion`` are laid out, 4 bytes each.
enum PixelLayout: Sendable, Hashable {
    /// B, G, R, A (or X): the decoders' ARGB8888 / XRGB8888.
    case bgra
    /// B, G, R, X with B = G = R (a gray image expanded by its decoder), for a gray profile.
    case gray
    /// C, M, Y, K with 0 = no ink (libjpeg's CMYK output of a JPEG without an Adobe marker).
    case cmyk
    /// C, M, Y, K with 255 = no ink: Adobe's inverted CMYK (a JPEG with an APP14 Adobe marker).
    case cmykInverted

    /// How a picture of this layout is shown when its profile cannot be used, for the warning.
    var fallback: String {
        self == .cmyk || self == .cmykInverted ? "shown with the plain CMYK formula" : "shown as sRGB"
    }

    var code: Int32 {
        switch self {
        case .bgra: return Int32(KC_COLOUR_IN_BGRA)
        case .gray: return Int32(KC_COLOUR_IN_GRAY)
        case .cmyk: return Int32(KC_COLOUR_IN_CMYK)
        case .cmykInverted: return Int32(KC_COLOUR_IN_CMYK_INVERTED)
        }
    }
}

/// The conversion of one picture's pixels from what its file says they are
/// (``ColourDescription``) to the screen's space (``ColourTarget``), made once per decode (or
/// taken from a small cache) and applied in place to the decoded rows, before they are resampled
/// and composited: an ICC profile or a profile built from primaries and a tone curve, through a
/// Little CMS transform (`kc_colour.c`); a PQ or HLG picture through the tone mapping
/// (`kc_tonemap.c`, ``HDRToneMap``), then, for a screen profile, sRGB to it. Pixels that are
/// sRGB for an sRGB screen get no conversion at all (``make(_:layout:alpha:target:name:bits:hdr:)``
/// returns nil, so they stay byte for byte as they were), nor does an embedded profile whose
/// transform changes no pixel of a test lattice (an sRGB profile).
///
/// Memory: Little CMS's allocations (the profiles while they are parsed, the transform's tables)
/// are counted through its memory plug-in and refused past ``libraryLimit`` (or the decoder's
/// budget, when smaller); what the transform keeps is ``memoryUse``, which the decoders count
/// against ``DecodeOptions/maxDecoderBytes`` with their own buffers. Converting allocates
/// nothing. Thread-safe: a transform is only read while converting.
final class ColourConversion: @unchecked Sendable {
    private enum Engine {
        case lcms(OpaquePointer)
        case toneMap(OpaquePointer)
    }

    private let engine: Engine
    /// For a tone map and a screen profile: sRGB to the screen, after it.
    private let then: ColourConversion?
    /// What is converted to what, for tests and the log ("Display P3 (ICC profile) to sRGB").
    let what: String
    /// The bytes the conversion holds (Little CMS's tables, or the tone map's).
    let bytes: Int

    private init(engine: Engine, then: ColourConversion? = nil, what: String, bytes: Int) {
        self.engine = engine
        self.then = then
        self.what = what
        self.bytes = bytes + (then?.bytes ?? 0)
    }

    deinit {
        switch engine {
        case .lcms(let h): kc_colour_destroy(h)
        case .toneMap(let t): kc_tonemap_destroy(t)
        }
    }

    /// The conversion as a ``MemoryUse`` for the decoders' checks.
    var memoryUse: MemoryUse {
        MemoryUse(what: "the colour conversion (\(what), \(byteSize(bytes)))", bytes: bytes)
    }

    /// True for the HDR tone mapping (whose input is the HDR samples, see ``convertRows16``).
    var isToneMap: Bool {
        if case .toneMap = engine { return true }
        return false
    }

    /// Converts `count` pixels at `pixels` in place (4 bytes each, laid out as the conversion
    /// was made for; B, G, R, A afterwards).
    func convert(_ pixels: UnsafeMutablePointer<UInt32>, count: Int) {
        guard count > 0 else { return }
        switch engine {
        case .lcms(let h): kc_colour_apply(h, pixels, count)
        case .toneMap(let t): kc_tonemap_bgra8(t, pixels, count)
        }
        then?.convert(pixels, count: count)
    }

    /// Converts every pixel of `bitmap` in place, its rows split over the CPUs
    /// (``convertRows(_:width:row:)``).
    func convert(_ bitmap: Bitmap) {
        convertRows(bitmap.height, width: bitmap.width) { bitmap.row($0) }
    }

    /// Converts `count` pixels at each of the rows `row(0 ..< rows)` in place. Little CMS does
    /// about 10 ns a pixel on one core (its 8-bit matrix-shaper path: 120 ms for 12 MP), so
    /// when there are at least ``parallelPixels`` the rows are split over every CPU
    /// (``KioskSystem/ParallelRows``, one team for all conversions; a conversion that finds it
    /// busy runs on its own thread).
    /// `row` is `@escaping` because the team's threads call it (``KioskSystem/ParallelRows``);
    /// it is not kept after the return.
    func convertRows(_ rows: Int, width: Int, row: @escaping (Int) -> UnsafeMutablePointer<UInt32>) {
        guard rows > 0, width > 0 else { return }
        if rows * width >= Self.parallelPixels, rows > 1, let team = Self.takeTeam() {
            defer { Self.giveBack(team) }
            team.splitRows(rows, granularity: 1) { band in
                for y in band { self.convert(row(y), count: width) }
            }
            return
        }
        for y in 0..<rows { convert(row(y), count: width) }
    }

    /// Fewer pixels than this are converted on the caller's thread: 64 Ki (about 0.6 ms).
    static let parallelPixels = 1 << 16
    /// The CPUs' team, nil while a conversion uses it.
    private static let team = Locked<ParallelRows?>(nil)
    private static let teamMade = Locked(false)

    private static func takeTeam() -> ParallelRows? {
        guard ParallelRows.availableCPUs > 1 else { return nil }
        let first = teamMade.withLock { made -> Bool in
            defer { made = true }
            return !made
        }
        if first { return ParallelRows() }
        return team.withLock { t in
            defer { t = nil }
            return t
        }
    }

    private static func giveBack(_ rows: ParallelRows) { team.withLock { $0 = rows } }

    /// For a tone map: converts rows of 16-bit R, G, B (, A) samples (`channels` 3 or 4, little
    /// endian, the map's bit depth in their low bits) to B, G, R, A bytes at the start of each row,
    /// then to the screen's profile when there is one. See `kc_tonemap_rows16`.
    func convertRows16(_ rows: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int, channels: Int) {
        guard case .toneMap(let t) = engine else { return }
        func band(_ band: Range<Int>) {
            kc_tonemap_rows16(t, rows + band.lowerBound * stride, stride, Int32(width), Int32(band.count),
                              Int32(channels))
            guard let then else { return }
            for y in band {
                let row = UnsafeMutableRawPointer(rows + y * stride).assumingMemoryBound(to: UInt32.self)
                then.convert(row, count: width)
            }
        }
        if width * height >= Self.parallelPixels, height > 1, let team = Self.takeTeam() {
            defer { Self.giveBack(team) }
            team.splitRows(height, granularity: 1, band)
        } else {
            band(0..<height)
        }
    }

    // MARK: - Making one

    /// The most Little CMS may allocate for one transform: 32 MiB (a CMYK printer profile's
    /// 16-bit tables and the transform made from them fit several times over).
    static let libraryLimit = 32 << 20

    /// A conversion, or why there is none.
    struct Made {
        /// nil: the pixels are shown as they are (already in the screen's space, or the
        /// description could not be used).
        var conversion: ColourConversion?
        /// Why the description was not used (a malformed profile, an unknown code point), once
        /// per file and problem; the picture is then shown as sRGB.
        var warning: String?
    }

    /// The conversion for pixels of `layout` described by `description`, to `target`. `alpha`:
    /// the A byte is alpha, kept as it is. `bits`: the samples' depth for a tone map (8 when the
    /// decoder hands 8-bit samples). `hdr`: the file's light levels, for PQ. `name` is the file
    /// the warning names. Never throws: a description that cannot be used gives a warning and,
    /// for an RGB or gray layout, the conversion sRGB gets (for a CMYK layout nil, and the
    /// decoder's own CMYK formula is used).
    static func make(_ description: ColourDescription, layout: PixelLayout = .bgra, alpha: Bool, target: ColourTarget,
                     name: String, bits: Int = 8, hdr: HDRMetadata = HDRMetadata(), budget: Int = Int.max) -> Made {
        guard target.enabled else { return Made() }
        let key = CacheKey(description: description, layout: layout, alpha: alpha, target: target, bits: bits, hdr: hdr)
        let limit = max(1, min(libraryLimit, budget))
        if let cached = cache.withLock({ $0.take(key) }), cached.bytes <= limit { return Made(conversion: cached) }
        var made: Made
        switch description {
        case .sRGB:
            made = Made(conversion: fromSRGB(target: target, layout: layout, alpha: alpha, limit: limit))
        case .icc(let profile):
            made = fromICC(profile, layout: layout, alpha: alpha, target: target, name: name, limit: limit)
        case .codePoints(let points):
            made = fromCodePoints(points, layout: layout, alpha: alpha, target: target, name: name, bits: bits,
                                  hdr: hdr, limit: limit)
        case .chromaticities(let c):
            made = fromPrimaries(c, curve: c.gamma.map { .gamma(1 / $0) } ?? .sRGB, what: "its cHRM and gAMA chunks",
                                 layout: layout, alpha: alpha, target: target, name: name, limit: limit)
        }
        if let conversion = made.conversion, made.warning == nil {
            cache.withLock { $0.insert(key, conversion, profileBytes: description.profile?.count ?? 0) }
        }
        if let warning = made.warning { made.warning = warnOnce(name: name, warning) }
        return made
    }

    /// sRGB pixels for `target`: nil for an sRGB screen, else sRGB to its profile.
    private static func fromSRGB(target: ColourTarget, layout: PixelLayout, alpha: Bool,
                                 limit: Int) -> ColourConversion? {
        guard let screen = target.screenProfile, layout == .bgra || layout == .gray else { return nil }
        guard let h = kc_colour_create(limit) else { return nil }
        guard kc_colour_open_source_srgb(h) == 0 else { kc_colour_destroy(h); return nil }
        return build(h, layout: .bgra, alpha: alpha, target: target, what: "sRGB to \(screen.name)")
            .conversion
    }

    private static func fromICC(_ profile: [UInt8], layout: PixelLayout, alpha: Bool, target: ColourTarget,
                                name: String, limit: Int) -> Made {
        let sRGB = { () -> ColourConversion? in fromSRGB(target: target, layout: layout, alpha: alpha, limit: limit) }
        let shown = layout.fallback
        if profile.count > ColourDescription.maxProfileBytes {
            return Made(conversion: sRGB(), warning: "its ICC profile of \(byteSize(profile.count)) is over the "
                        + "\(byteSize(ColourDescription.maxProfileBytes)) limit; \(shown)")
        }
        guard let h = kc_colour_create(limit) else {
            return Made(conversion: sRGB(), warning: "cannot create a Little CMS context; \(shown)")
        }
        let opened = profile.withUnsafeBytes { kc_colour_open_source_icc(h, $0.baseAddress, $0.count) }
        guard opened == 0 else {
            let reason = String(cString: kc_colour_error(h))
            kc_colour_destroy(h)
            return Made(conversion: sRGB(), warning: "its ICC profile (\(byteSize(profile.count))) cannot be used: "
                        + "\(reason); \(shown)")
        }
        var text = [CChar](repeating: 0, count: 128)
        kc_colour_source_description(h, &text, text.count)
        let label = String(cString: text)
        let what = (label.isEmpty ? "its ICC profile" : "\(label) (its ICC profile)") + " to \(target.name)"
        var made = build(h, layout: layout, alpha: alpha, target: target, what: what, identityAllowed: true,
                         subject: "its ICC profile (\(byteSize(profile.count)))")
        if made.warning != nil { made.conversion = sRGB() }
        return made
    }

    private static func fromCodePoints(_ points: CodePoints, layout: PixelLayout, alpha: Bool, target: ColourTarget,
                                       name: String, bits: Int, hdr: HDRMetadata, limit: Int) -> Made {
        let sRGB = { () -> ColourConversion? in fromSRGB(target: target, layout: layout, alpha: alpha, limit: limit) }
        guard let primaries = points.chromaticities else {
            return Made(conversion: sRGB(), warning: "its colour primaries \(points.primaries) (H.273) are not known; "
                        + "shown as sRGB")
        }
        if points.isHDR {
            let then = target.screenProfile == nil ? nil : sRGB()
            switch HDRToneMap.make(points, primaries: primaries, bits: bits, hdr: hdr, name: name) {
            case .success(let map) where map.bytes > limit:
                kc_tonemap_destroy(map.table)
                return Made(conversion: sRGB(), warning: "its HDR tone map (\(byteSize(map.bytes))) is over what the "
                            + "decoder's memory budget leaves; shown as sRGB")
            case .success(let map):
                return Made(conversion: ColourConversion(engine: .toneMap(map.table), then: then, what: map.what,
                                                         bytes: map.bytes),
                            warning: map.warning)
            case .failure(let problem):
                return Made(conversion: sRGB(), warning: problem)
            }
        }
        guard let curve = points.sdrGamma else {
            return Made(conversion: sRGB(), warning: "its transfer characteristics \(points.transfer) (H.273) are not "
                        + "handled; shown as sRGB")
        }
        if points.isSRGB { return Made(conversion: sRGB()) }
        return fromPrimaries(primaries, curve: curve,
                             what: "\(points.primariesName) (its colour code points \(points))",
                             layout: layout, alpha: alpha, target: target, name: name, limit: limit)
    }

    private static func fromPrimaries(_ c: Chromaticities, curve: CodePoints.SDRTransfer, what: String,
                                      layout: PixelLayout, alpha: Bool, target: ColourTarget, name: String,
                                      limit: Int) -> Made {
        let sRGB = { () -> ColourConversion? in fromSRGB(target: target, layout: layout, alpha: alpha, limit: limit) }
        guard layout == .bgra else { return Made(conversion: sRGB()) }
        guard let h = kc_colour_create(limit) else {
            return Made(conversion: sRGB(), warning: "cannot create a Little CMS context; shown as sRGB")
        }
        let white = [c.white.x, c.white.y]
        let primaries = [c.red.x, c.red.y, c.green.x, c.green.y, c.blue.x, c.blue.y]
        let (type, params) = Self.curve(curve)
        guard kc_colour_open_source_rgb(h, white, primaries, type, params) == 0 else {
            let reason = String(cString: kc_colour_error(h))
            kc_colour_destroy(h)
            return Made(conversion: sRGB(), warning: "\(what): \(reason); shown as sRGB")
        }
        var made = build(h, layout: layout, alpha: alpha, target: target, what: "\(what) to \(target.name)",
                         identityAllowed: true, subject: what)
        if made.warning != nil { made.conversion = sRGB() }
        return made
    }

    /// Opens the target on `h` (whose source is open), builds the transform, and wraps it; nil
    /// when it changes nothing (and `identityAllowed`). Destroys `h` on every path but success.
    /// `subject` names the source in the warning ("its ICC profile (624 bytes)").
    private static func build(_ h: OpaquePointer, layout: PixelLayout, alpha: Bool, target: ColourTarget, what: String,
                              identityAllowed: Bool = false, subject: String = "sRGB") -> Made {
        if let screen = target.screenProfile {
            let opened = screen.bytes.withUnsafeBytes { kc_colour_open_target_icc(h, $0.baseAddress, $0.count) }
            guard opened == 0 else {
                let reason = String(cString: kc_colour_error(h))
                kc_colour_destroy(h)
                return Made(warning: "the screen's profile cannot be used: \(reason); shown unconverted")
            }
        }
        let intent = target.intent == .perceptual ? Int32(KC_COLOUR_PERCEPTUAL) : Int32(KC_COLOUR_RELATIVE_COLORIMETRIC)
        guard kc_colour_build(h, layout.code, intent, alpha ? 1 : 0) == 0 else {
            let reason = String(cString: kc_colour_error(h))
            kc_colour_destroy(h)
            return Made(warning: "\(subject) cannot be used: \(reason); \(layout.fallback)")
        }
        if identityAllowed, kc_colour_is_identity(h) != 0 {
            kc_colour_destroy(h)
            return Made()
        }
        return Made(conversion: ColourConversion(engine: .lcms(h), what: what, bytes: Int(kc_colour_memory_in_use(h))))
    }

    /// The ICC bytes of a profile built from `c` (sRGB curve, or the inverse of `c.gamma`).
    static func makeProfile(_ c: Chromaticities) -> [UInt8]? {
        guard let h = kc_colour_create(libraryLimit) else { return nil }
        defer { kc_colour_destroy(h) }
        let (type, params) = curve(c.gamma.map { .gamma(1 / $0) } ?? .sRGB)
        let primaries = [c.red.x, c.red.y, c.green.x, c.green.y, c.blue.x, c.blue.y]
        guard kc_colour_open_source_rgb(h, [c.white.x, c.white.y], primaries, type, params) == 0 else { return nil }
        let size = kc_colour_save_source(h, nil, 0)
        guard size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let saved = bytes.withUnsafeMutableBytes { kc_colour_save_source(h, $0.baseAddress, $0.count) }
        guard saved == size else { return nil }
        return bytes
    }

    /// A Little CMS parametric curve (cmsBuildParametricToneCurve): type 1 Y = X^g; type 4 the
    /// sRGB form with IEC 61966-2-1's constants.
    static func curve(_ transfer: CodePoints.SDRTransfer) -> (type: Int32, params: [Double]) {
        switch transfer {
        case .sRGB: return (4, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])
        case .gamma(let g): return (1, [g, 0, 0, 0, 0])
        }
    }

    /// Whether Little CMS can convert sRGB to the screen profile `bytes`: the problem, or nil,
    /// and the profile's description.
    static func probe(screen bytes: [UInt8]) -> (problem: String?, description: String) {
        guard let h = kc_colour_create(libraryLimit) else { return ("cannot create a Little CMS context", "") }
        defer { kc_colour_destroy(h) }
        guard kc_colour_open_source_srgb(h) == 0,
              bytes.withUnsafeBytes({ kc_colour_open_target_icc(h, $0.baseAddress, $0.count) }) == 0 else {
            return (String(cString: kc_colour_error(h)), "")
        }
        var text = [CChar](repeating: 0, count: 128)
        kc_colour_target_description(h, &text, text.count)
        let description = String(cString: text)
        guard kc_colour_build(h, PixelLayout.bgra.code, Int32(KC_COLOUR_PERCEPTUAL), 0) == 0 else {
            return (String(cString: kc_colour_error(h)), description)
        }
        return (nil, description)
    }

    /// The warning (once per file) for an embedded profile of `count` bytes when that is over
    /// ``ColourDescription/maxProfileBytes`` (the decoder then does not copy it out), else nil.
    static func oversizedProfile(_ count: Int, name: String, options: DecodeOptions) -> String? {
        guard count > ColourDescription.maxProfileBytes, options.colour.enabled else { return nil }
        return warnOnce(name: name, "its ICC profile of \(byteSize(count)) is over the "
                        + "\(byteSize(ColourDescription.maxProfileBytes)) limit; shown as sRGB")
    }

    // MARK: - Warnings once

    /// The files and problems already reported.
    private static let reported = Locked<Set<String>>([])

    /// `text`, the first time `name` reports it; nil after that.
    static func warnOnce(name: String, _ text: String) -> String? {
        reported.withLock { $0.insert(name + "\u{0}" + text).inserted } ? text : nil
    }

    // MARK: - Cache

    private struct CacheKey: Hashable {
        var description: ColourDescription
        var layout: PixelLayout
        var alpha: Bool
        var target: ColourTarget
        var bits: Int
        var hdr: HDRMetadata
    }

    /// The last few conversions made (a show of one camera's photos makes the same one each
    /// time): at most ``cacheEntries``, none for a profile over 1 MiB, at most ``cacheBytes`` of
    /// tables and profiles in all. Most recently used last.
    private struct Cache {
        var entries: [(key: CacheKey, conversion: ColourConversion, bytes: Int)] = []

        mutating func take(_ key: CacheKey) -> ColourConversion? {
            guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = entries.remove(at: i)
            entries.append(entry)
            return entry.conversion
        }

        mutating func insert(_ key: CacheKey, _ conversion: ColourConversion, profileBytes: Int) {
            guard profileBytes <= 1 << 20 else { return }
            entries.removeAll { $0.key == key }
            entries.append((key, conversion, conversion.bytes + profileBytes))
            while entries.count > ColourConversion.cacheEntries
                    || entries.reduce(0, { $0 + $1.bytes }) > ColourConversion.cacheBytes {
                entries.removeFirst()
            }
        }
    }

    /// Conversions kept for the next decode: 4.
    static let cacheEntries = 4
    /// Bytes they may hold in all: 8 MiB.
    static let cacheBytes = 8 << 20
    private static let cache = Locked(Cache())

    /// Empties the cache (tests, benchmarks).
    static func forgetCached() { cache.withLock { $0.entries.removeAll() } }
}
