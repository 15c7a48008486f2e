// SPDX-License-Identifier: Apache-2.0
internal import CKioskText
import KioskSystem
#if canImport(Glibc)
import Glibc
#endif

/// The installed fonts that text is drawn with, found once through fontconfig: the fonts
/// matching a family (default `sans-serif`, DejaVu Sans with fonts-dejavu-core), best first,
/// each with the characters it covers (fontconfig's sorted list, `FcFontSort`). A character
/// is drawn with the first font that covers it, so a Chinese caption falls back to
/// WenQuanYi Micro Hei when fonts-wqy-microhei is installed, and an emoji to Symbola when
/// fonts-symbola is (docs/text.md). Only outline fonts are listed: glyphs are drawn as 8-bit
/// coverage at any size, which a bitmap-only font such as Noto Color Emoji (fixed-size colour
/// strikes, fontconfig's `outline` false) cannot give.
///
/// Immutable after `init`; shared between threads (each ``TextRenderer`` opens its own
/// FreeType faces from these files), hence `@unchecked Sendable`.
public final class FontLibrary: @unchecked Sendable {
    /// One font of the sorted list: the file, the face index inside it (TrueType
    /// collections), and its family name for log lines.
    public struct Font: Equatable, Sendable {
        public let path: String
        public let index: Int
        public let family: String
    }

    /// The fonts, best match first. Never empty.
    public let fonts: [Font]
    /// The family asked for.
    public let family: String
    private let fontSet: UnsafeMutablePointer<FcFontSet>
    private let api: UnsafePointer<kc_text_api>
    private let charsets: [OpaquePointer?]

    /// Points fontconfig's cache at `cacheDirectory`/fontconfig (through `XDG_CACHE_HOME`,
    /// fontconfig's user cache location, fonts-conf(5)) unless `XDG_CACHE_HOME` is already set:
    /// under the systemd unit the home is not writable and the system cache in
    /// /var/cache/fontconfig is read-only, so a cache fontconfig must write goes to the unit's
    /// CacheDirectory instead of a warning in the journal. Call before the first
    /// ``FontLibrary``.
    public static func useCacheDirectory(_ cacheDirectory: String) {
        if getenv("XDG_CACHE_HOME") == nil { setenv("XDG_CACHE_HOME", cacheDirectory, 0) }
    }

    /// Finds the fonts for `family` (a fontconfig pattern: a family name such as
    /// `sans-serif` or `DejaVu Sans`, or a pattern such as `DejaVu Sans:bold`).
    /// The first ``FontLibrary`` opens FreeType, HarfBuzz and fontconfig (dlopen).
    /// - Throws: ``TextError/libraryMissing(soname:reason:)`` when one of them cannot be
    ///   opened; ``TextError/noFont(family:)`` when fontconfig cannot start or finds no font.
    public init(family: String = "sans-serif") throws(TextError) {
        self.family = family
        let api = try TextLibraries.load()
        self.api = api
        let fc = api.pointee
        guard fc.FcInit() == FcTrue, let pattern = fc.FcNameParse(family) else {
            throw TextError.noFont(family: family)
        }
        defer { fc.FcPatternDestroy(pattern) }
        _ = fc.FcConfigSubstitute(nil, pattern, FcMatchPattern)
        fc.FcDefaultSubstitute(pattern)
        var result = FcResultNoMatch
        guard let set = fc.FcFontSort(nil, pattern, FcTrue, nil, &result), set.pointee.nfont > 0 else {
            throw TextError.noFont(family: family)
        }
        var fonts: [Font] = [], charsets: [OpaquePointer?] = []
        for i in 0..<Int(set.pointee.nfont) {
            guard let p = set.pointee.fonts[i] else { continue }
            var file: UnsafeMutablePointer<FcChar8>?
            guard fc.FcPatternGetString(p, "file", 0, &file) == FcResultMatch, let file else { continue }
            var index: Int32 = 0
            _ = fc.FcPatternGetInteger(p, "index", 0, &index)
            var name: UnsafeMutablePointer<FcChar8>?
            _ = fc.FcPatternGetString(p, "family", 0, &name)
            var charset: OpaquePointer?
            _ = fc.FcPatternGetCharSet(p, "charset", 0, &charset)
            let path = String(cString: file), familyName = name.map { String(cString: $0) } ?? path
            // Only scalable outlines FreeType can open: no Type 1 / PCF bitmap fonts, no
            // TrueType files of bitmap strikes only (fontconfig's FC_OUTLINE, "outline").
            guard path.hasSuffix(".ttf") || path.hasSuffix(".otf") || path.hasSuffix(".ttc") else { continue }
            var outline: FcBool = FcTrue
            if fc.FcPatternGetBool(p, "outline", 0, &outline) == FcResultMatch, outline == FcFalse { continue }
            fonts.append(Font(path: path, index: Int(index), family: familyName))
            charsets.append(charset)
        }
        guard !fonts.isEmpty else { fc.FcFontSetDestroy(set); throw TextError.noFont(family: family) }
        self.fontSet = set
        self.fonts = fonts
        self.charsets = charsets
    }

    deinit { api.pointee.FcFontSetDestroy(fontSet) }

    /// The index in ``fonts`` of the first font that covers `scalar`, or nil when none does.
    public func font(covering scalar: Unicode.Scalar) -> Int? {
        charsets.indices.first { covers(font: $0, scalar) }
    }

    /// True when font `index` of ``fonts`` has a glyph for `scalar` (its fontconfig charset).
    public func covers(font index: Int, _ scalar: Unicode.Scalar) -> Bool {
        guard charsets.indices.contains(index), let cs = charsets[index] else { return false }
        return api.pointee.FcCharSetHasChar(cs, scalar.value) == FcTrue
    }
}
