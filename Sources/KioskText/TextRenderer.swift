// SPDX-License-Identifier: Apache-2.0
internal import CKioskText
import KioskCore
import KioskSystem

/// Sets and draws text: HarfBuzz shapes it (ligatures, kerning, Arabic joining, right-to-left
/// runs), FreeType renders the glyphs antialiased (8-bit coverage, normal hinting) and a
/// bounded ``GlyphCache`` keeps them, and each character is drawn with the first font of the
/// ``FontLibrary`` that covers it. A character no installed font covers is drawn as the
/// default font's missing glyph and logged once, naming it.
///
/// Not thread-safe (FreeType's `FT_Library` is one thread's): one renderer per thread. Sizes
/// are in pixels (FreeType's `FT_Set_Pixel_Sizes`); positions inside FreeType and HarfBuzz are
/// 26.6 fixed point (1/64 pixel), rounded to whole pixels where glyphs are placed.
public final class TextRenderer {
    /// One glyph placed on a line: the face it comes from, its glyph index, its pen position in
    /// 1/64 pixel from the line's left end and from the baseline (up is positive).
    public struct PlacedGlyph: Equatable {
        let face: Int
        let glyph: UInt32
        let x: Int32, y: Int32
    }

    /// A line set by ``layout(_:pixelSize:maxWidth:maxLines:)``.
    public struct Line: Equatable {
        public let glyphs: [PlacedGlyph]
        /// Advance width in pixels (rounded up).
        public let width: Int
        /// The characters shown, after wrapping and ellipsis.
        public let text: String
    }

    /// Text set into lines at one size, ready for ``draw(_:into:x:y:width:color:opacity:)``.
    public struct Layout: Equatable {
        public let lines: [Line]
        /// Pixels from a line's top to its baseline (the default font's ascender).
        public let ascender: Int
        /// Pixels below the baseline (the default font's descender, positive).
        public let descender: Int
        /// Pixels from one baseline to the next.
        public let lineHeight: Int
        /// The widest line, pixels.
        public var width: Int { lines.map(\.width).max() ?? 0 }
        /// From the first line's top to the last line's descender, pixels.
        public var height: Int { lines.isEmpty ? 0 : (lines.count - 1) * lineHeight + ascender + descender }
        /// True when text was cut to fit and ends in "…".
        public let truncated: Bool
    }

    public let library: FontLibrary
    private var freetype: FT_Library?
    private var faces: [FaceKey: Face] = [:]
    private var nextFaceID = 0
    private var cache: GlyphCache
    /// The characters (Unicode scalar values) no installed font covers, each logged once when
    /// first met (at most 256 remembered).
    public private(set) var reportedMissing: Set<UInt32> = []
    private let buffer: OpaquePointer
    /// FreeType's and HarfBuzz's functions (`Sources/CKioskText`, opened by the library's
    /// ``FontLibrary``).
    private let api: UnsafePointer<kc_text_api>

    private struct FaceKey: Hashable { let font: Int, size: Int }
    private final class Face {
        let id: Int
        let face: FT_Face
        let hbFont: OpaquePointer
        let api: UnsafePointer<kc_text_api>
        init(id: Int, face: FT_Face, hbFont: OpaquePointer, api: UnsafePointer<kc_text_api>) {
            self.id = id; self.face = face; self.hbFont = hbFont; self.api = api
        }
        /// The HarfBuzz font holds a second reference to the face (`FT_Reference_Face`): both go.
        deinit { api.pointee.hb_font_destroy(hbFont); _ = api.pointee.FT_Done_Face(face) }
    }

    /// FreeType's `FT_LOAD_DEFAULT` (freetype.h): hinted outlines, normal antialiasing, the
    /// same glyphs and advances as Pillow's `ImageDraw.text`.
    private static let loadFlags: Int32 = 0

    /// True: glyph advances are the hinted ones (whole pixels, as FreeType's hinter and
    /// Pillow's basic layout give them); false: HarfBuzz's unhinted 1/64-pixel advances (as
    /// Pillow with libraqm gives them). Glyphs are hinted either way.
    public let hintedAdvances: Bool

    /// A renderer over `library`'s fonts whose glyph cache holds at most `glyphCacheBytes`.
    /// - Throws: ``TextError/freetype(operation:path:code:)`` when FreeType cannot start,
    ///   ``TextError/libraryMissing(soname:reason:)`` when the libraries cannot be opened.
    public init(library: FontLibrary, glyphCacheBytes: Int = 2 << 20, hintedAdvances: Bool = true) throws(TextError) {
        self.library = library
        self.hintedAdvances = hintedAdvances
        self.cache = GlyphCache(budget: glyphCacheBytes)
        let api = try TextLibraries.load()
        self.api = api
        var lib: FT_Library?
        let err = api.pointee.FT_Init_FreeType(&lib)
        guard err == 0, lib != nil else {
            throw TextError.freetype(operation: "FT_Init_FreeType", path: nil, code: err)
        }
        freetype = lib
        buffer = api.pointee.hb_buffer_create()!  // never NULL: HarfBuzz returns its empty buffer on failure
    }

    deinit {
        faces.removeAll()  // every face before the library that made it
        faceOf.removeAll()
        api.pointee.hb_buffer_destroy(buffer)
        _ = api.pointee.FT_Done_FreeType(freetype)
    }

    /// Bytes the glyph cache holds now (at most its budget).
    public var glyphCacheBytes: Int { cache.bytes }

    private func face(font: Int, size: Int) -> Face? {
        let key = FaceKey(font: font, size: size)
        if let f = faces[key] { return f }
        if faces.count >= 16 { faces.removeAll() }  // sizes change rarely: start again
        let info = library.fonts[font]
        var ftFace: FT_Face?
        let err = api.pointee.FT_New_Face(freetype, info.path, info.index, &ftFace)
        guard err == 0, let ftFace else {
            Log.warning("cannot open font", path: info.path,
                        reason: TextError.freetype(operation: "FT_New_Face", path: nil, code: err).description)
            return nil
        }
        _ = api.pointee.FT_Set_Pixel_Sizes(ftFace, 0, FT_UInt(size))
        guard let hb = api.pointee.hb_ft_font_create_referenced(ftFace) else {
            _ = api.pointee.FT_Done_Face(ftFace); return nil
        }
        // 2: FT_LOAD_NO_HINTING
        api.pointee.hb_ft_font_set_load_flags(hb, hintedAdvances ? Self.loadFlags : Self.loadFlags | 2)
        let f = Face(id: nextFaceID, face: ftFace, hbFont: hb, api: api)
        nextFaceID += 1
        faces[key] = f
        return f
    }

    // MARK: - Bidirectional text

    /// One paragraph's characters (or a line of it) with their bidirectional classes and
    /// embedding levels, resolved by FriBidi over the whole paragraph (the Unicode
    /// Bidirectional Algorithm, UAX #9, rules P2 to I2): even levels run left to right, odd
    /// ones right to left, so the digits of "غرفة 204" (level 2 inside level 1) keep their order.
    private struct BidiText {
        var scalars: [UInt32]
        var types: [FriBidiCharType]
        var levels: [FriBidiLevel]
        /// The paragraph's direction: that of its first strong character (rules P2, P3),
        /// `KC_FRIBIDI_PAR_LTR` when it has none.
        let base: FriBidiParType

        var baseLevel: FriBidiLevel { base == KC_FRIBIDI_PAR_RTL ? 1 : 0 }

        subscript(range: Range<Int>) -> BidiText {
            BidiText(scalars: Array(scalars[range]), types: Array(types[range]), levels: Array(levels[range]),
                     base: base)
        }
    }

    /// `scalars` as one paragraph with its embedding levels (FriBidi). When FriBidi cannot
    /// allocate its work space, the paragraph is set left to right.
    private func bidi(_ scalars: [UInt32]) -> BidiText {
        let n = scalars.count
        var text = BidiText(scalars: scalars, types: [FriBidiCharType](repeating: FriBidiCharType(0), count: n),
                            levels: [FriBidiLevel](repeating: 0, count: n), base: KC_FRIBIDI_PAR_LTR)
        guard n > 0 else { return text }
        var brackets = [FriBidiBracketType](repeating: 0, count: n)
        var base = KC_FRIBIDI_PAR_AUTO
        let resolved = scalars.withUnsafeBufferPointer { s in
            api.pointee.fribidi_get_bidi_types(s.baseAddress, Int32(n), &text.types)
            api.pointee.fribidi_get_bracket_types(s.baseAddress, Int32(n), text.types, &brackets)
            return api.pointee.fribidi_get_par_embedding_levels_ex(text.types, brackets, Int32(n), &base, &text.levels)
        }
        guard resolved > 0 else { return text }
        return BidiText(scalars: scalars, types: text.types, levels: text.levels, base: base)
    }

    /// `text` with `scalar` appended at the paragraph's own level (the "…" of a cut line).
    private func appending(_ scalar: UInt32, to text: BidiText) -> BidiText {
        var text = text
        var type = FriBidiCharType(0)
        withUnsafePointer(to: scalar) { api.pointee.fribidi_get_bidi_types($0, 1, &type) }
        text.scalars.append(scalar)
        text.types.append(type)
        text.levels.append(text.baseLevel)
        return text
    }

    // MARK: - Shaping

    private struct Shaped {
        var glyphs: [PlacedGlyph] = []
        /// Advance (1/64 px) of each scalar (its cluster's advance on the first scalar).
        var advances: [Int32]
        var width: Int32 = 0
    }

    private static func isNeutral(_ script: hb_script_t) -> Bool {
        script == HB_SCRIPT_COMMON || script == HB_SCRIPT_INHERITED || script == HB_SCRIPT_UNKNOWN
    }

    /// Shapes `text` as one line at `size`: split into runs of one embedding level, one font
    /// and one script; the runs put in visual order by FriBidi (UAX #9 rules L1 and L2), each
    /// shaped by HarfBuzz in its level's direction with the whole line as context.
    ///
    /// A character of the Common or Inherited script (digits, punctuation, symbols, emoji,
    /// combining marks) stays in the run before it only when that run's font covers it (or it
    /// is a default-ignorable one such as U+FE0F, U+200D or U+2069, which draw nothing); else it is
    /// drawn from the first font that covers it, as it is at the start of a line.
    private func shape(_ text: BidiText, size: Int) -> Shaped {
        let scalars = text.scalars, n = scalars.count
        var out = Shaped(advances: [Int32](repeating: 0, count: n))
        guard n > 0 else { return out }
        // L1 (trailing white space back to the paragraph's level) and L2 (reversals):
        // `visual[v]` is the character shown v-th from the left.
        var levels = text.levels
        var visual = [FriBidiStrIndex](0..<FriBidiStrIndex(n))
        if api.pointee.fribidi_reorder_line(0, text.types, Int32(n), 0, text.base, &levels, nil, &visual) == 0 {
            levels = text.levels
            visual = [FriBidiStrIndex](0..<FriBidiStrIndex(n))
        }
        let funcs = api.pointee.hb_unicode_funcs_get_default()
        var runs: [(font: Int, range: Range<Int>, level: FriBidiLevel)] = []
        var runFont = -1, runScript = HB_SCRIPT_COMMON, runStart = 0, runLevel: FriBidiLevel = 0
        for (i, cp) in scalars.enumerated() {
            let script = api.pointee.hb_unicode_script(funcs, cp)
            let scalar = Unicode.Scalar(cp) ?? " "
            let neutral = Self.isNeutral(script)
            let ignorable = scalar.properties.isDefaultIgnorableCodePoint
            if runFont >= 0, levels[i] == runLevel {
                let stays = neutral
                    ? ignorable || script == HB_SCRIPT_INHERITED || library.covers(font: runFont, scalar)
                    : (Self.isNeutral(runScript) || script == runScript) && library.font(covering: scalar) == runFont
                if stays {
                    if !neutral { runScript = script }
                    continue
                }
            }
            // A default-ignorable character (an isolate, a mark, a joiner) is never drawn: it
            // keeps the font it is next to instead of choosing one (Symbola covers U+2069).
            let font = ignorable ? max(runFont, 0) : library.font(covering: scalar) ?? missing(scalar)
            if runFont >= 0 { runs.append((runFont, runStart..<i, runLevel)) }
            runFont = font; runScript = script; runStart = i; runLevel = levels[i]
        }
        runs.append((runFont, runStart..<n, runLevel))
        // Each run has one level, so its characters stay together after the reversals: the
        // runs in the order their characters are shown.
        var runOf = [Int](repeating: 0, count: n)
        for (r, run) in runs.enumerated() { for i in run.range { runOf[i] = r } }
        var order: [Int] = []
        for v in visual where order.last != runOf[Int(v)] { order.append(runOf[Int(v)]) }
        var pen: Int32 = 0
        scalars.withUnsafeBufferPointer { chars in
            for run in order.map({ runs[$0] }) {
                guard let f = face(font: run.font, size: size) else { continue }
                api.pointee.hb_buffer_clear_contents(buffer)
                api.pointee.hb_buffer_add_utf32(buffer, chars.baseAddress, Int32(n), UInt32(run.range.lowerBound),
                                                Int32(run.range.count))
                api.pointee.hb_buffer_set_direction(buffer, run.level & 1 == 1 ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
                api.pointee.hb_buffer_guess_segment_properties(buffer)  // the script and language
                api.pointee.hb_shape(f.hbFont, buffer, nil, 0)
                var count: UInt32 = 0
                guard let infos = api.pointee.hb_buffer_get_glyph_infos(buffer, &count),
                      let pos = api.pointee.hb_buffer_get_glyph_positions(buffer, &count) else { continue }
                for g in 0..<Int(count) {
                    let p = pos[g]
                    out.glyphs.append(PlacedGlyph(face: f.id, glyph: infos[g].codepoint, x: pen + p.x_offset,
                                                  y: p.y_offset))
                    let cluster = Int(infos[g].cluster)
                    if cluster < out.advances.count { out.advances[cluster] += p.x_advance }
                    pen += p.x_advance
                }
            }
        }
        out.width = pen
        faceOf.removeAll(keepingCapacity: true)
        for f in faces.values { faceOf[f.id] = f }
        return out
    }

    private var faceOf: [Int: Face] = [:]

    private func missing(_ scalar: Unicode.Scalar) -> Int {
        if reportedMissing.count < 256, reportedMissing.insert(scalar.value).inserted {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let code = "U+\(String(repeating: "0", count: max(0, 4 - hex.count)) + hex)"
            let fonts = library.fonts.count == 1
                ? "is not in the one font" : "is in none of the \(library.fonts.count) fonts"
            Log.warning("no installed font covers a character of the text; it is drawn as a box",
                        reason: "\(code) \(fonts) fontconfig lists for \"\(library.family)\""
                            + " (for Chinese, Japanese or Korean install fonts-wqy-microhei;"
                            + " for other scripts a Noto font such as fonts-noto-core)")
        }
        return 0
    }

    // MARK: - Layout

    /// The most Unicode scalars of one text that ``layout(_:pixelSize:maxWidth:maxLines:)``
    /// sets (the rest is dropped before shaping).
    public static let maxCharacters = 4096

    /// Sets `text` in lines of at most `maxWidth` pixels at `pixelSize`, at most `maxLines` of
    /// them: paragraphs split at "\n", lines broken after spaces (and between Chinese,
    /// Japanese or Korean characters), a word longer than a line broken where it must, and
    /// what does not fit in the last line cut and ended with "…" (U+2026).
    public func layout(_ text: String, pixelSize: Int, maxWidth: Int, maxLines: Int) -> Layout {
        let size = max(1, pixelSize)
        let metricsFace = face(font: 0, size: size)
        var ascender = size, descender = size / 4, lineHeight = size * 5 / 4
        if let m = metricsFace?.face.pointee.size.pointee.metrics {
            ascender = Int((m.ascender + 63) >> 6)
            descender = Int((-m.descender + 63) >> 6)
            lineHeight = Int((m.height + 63) >> 6)
        }
        let limit = Int32(max(1, min(maxWidth, 1 << 24))) * 64  // 1 << 24 px: "no limit"
        var lines: [Line] = []
        var truncated = false
        // At most 4,096 characters are set: no line of any screen holds more, and the pen's
        // 26.6 fixed-point sums stay far inside 32 bits. Paragraphs end at any line break
        // ("\n", "\r\n", "\r", U+2028...).
        let kept = text.unicodeScalars.count > Self.maxCharacters
            ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(Self.maxCharacters))) : text
        let paragraphs = kept.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        paragraphLoop: for (p, paragraph) in paragraphs.enumerated() {
            let scalars = visibleScalars(paragraph)
            let text = bidi(scalars)
            let shaped = shape(text, size: size)
            var start = 0
            if scalars.isEmpty { lines.append(Line(glyphs: [], width: 0, text: "")) }
            while start < scalars.count {
                while start < scalars.count, scalars[start] == 32 { start += 1 }
                if start == scalars.count { break }
                let lastAllowed = lines.count == maxLines - 1
                var end = scalars.count
                let restWidth = shaped.advances[start..<end].reduce(0, +)
                if restWidth > limit {
                    if lastAllowed {
                        lines.append(ellipsised(text, from: start, shaped: shaped, limit: limit, size: size))
                        truncated = true
                        break paragraphLoop
                    }
                    end = breakPoint(scalars, from: start, advances: shaped.advances, limit: limit)
                } else if lastAllowed, p < paragraphs.count - 1 {
                    lines.append(ellipsised(text, from: start, shaped: shaped, limit: limit, size: size, force: true))
                    truncated = true
                    break paragraphLoop
                }
                lines.append(line(text[start..<end], size: size))
                start = end
            }
            if lines.count >= maxLines, p < paragraphs.count - 1 { truncated = true; break }
        }
        while let last = lines.last, last.glyphs.isEmpty, lines.count > 1 { lines.removeLast() }
        return Layout(lines: lines, ascender: ascender, descender: descender, lineHeight: lineHeight,
                      truncated: truncated)
    }

    private static func isCJK(_ cp: UInt32) -> Bool {
        (0x2E80...0x9FFF).contains(cp) || (0xAC00...0xD7AF).contains(cp) || (0xF900...0xFAFF).contains(cp)
            || (0xFF00...0xFFEF).contains(cp) || (0x20000...0x2FFFF).contains(cp)
    }

    /// The end of the longest line from `start` within `limit`: after the last space or
    /// between CJK characters, else as many characters as fit (at least one).
    private func breakPoint(_ s: [UInt32], from start: Int, advances: [Int32], limit: Int32) -> Int {
        var width: Int32 = 0, best = -1, i = start
        while i < s.count {
            let next = width + advances[i]
            if next > limit && s[i] != 32 { break }
            width = next
            i += 1
            if i < s.count, s[i - 1] == 32 || Self.isCJK(s[i]) || Self.isCJK(s[i - 1]) { best = i }
        }
        if best > start { return best }
        return max(start + 1, i)
    }

    private func ellipsised(_ text: BidiText, from start: Int, shaped: Shaped, limit: Int32, size: Int,
                            force: Bool = false) -> Line {
        let s = text.scalars
        let ellipsis = shape(bidi([0x2026]), size: size).width
        var width: Int32 = 0, end = start
        while end < s.count, width + shaped.advances[end] + ellipsis <= limit {
            width += shaped.advances[end]; end += 1
        }
        if force {
            end = s.count; while end > start, shaped.advances[start..<end].reduce(0, +) + ellipsis > limit { end -= 1 }
        }
        while end > start, s[end - 1] == 32 { end -= 1 }
        return line(appending(0x2026, to: text[start..<end]), size: size)
    }

    private func line(_ text: BidiText, size: Int) -> Line {
        var end = text.scalars.count
        while end > 0, text.scalars[end - 1] == 32 { end -= 1 }
        let trimmed = text[0..<end]
        let shaped = shape(trimmed, size: size)
        let shown = String(String.UnicodeScalarView(trimmed.scalars.compactMap(Unicode.Scalar.init)))
        return Line(glyphs: shaped.glyphs, width: Int((shaped.width + 63) >> 6), text: shown)
    }

    // MARK: - Control characters

    /// True for the control characters (Unicode general category Cc: C0, DEL and C1) that
    /// draw nothing: all but tab (set as a space) and the line breaks the paragraphs are
    /// split at (LF, VT, FF, CR and NEL, U+0085).
    public static func isHiddenControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return (v < 0x20 && v != 9 && !(0x0A...0x0D).contains(v)) || ((0x7F...0x9F).contains(v) && v != 0x85)
    }

    /// True for the explicit bidirectional formatting characters (Unicode UAX #9 section 2):
    /// the embeddings and overrides LRE, RLE, PDF, LRO, RLO (U+202A...U+202E) and the isolates
    /// LRI, RLI, FSI, PDI (U+2066...U+2069). In a caption from a file name, an image's
    /// description or a manifest they would reorder the words (`abc` RLO `def` PDF drawn as
    /// "abcfed"), so they are not applied: dropped, each logged once. The implicit marks (LRM,
    /// RLM, ALM: U+200E, U+200F, U+061C), which right-to-left text uses and which reorder nothing
    /// on their own, are kept; FriBidi's resolution of the paragraph's own letters is unchanged.
    public static func isExplicitBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// True for what draws nothing in a text: ``isHiddenControl(_:)``,
    /// ``isExplicitBidiControl(_:)``, and the default-ignorable characters (zero-width space
    /// U+200B, joiners U+200C and U+200D, word joiner U+2060, U+FEFF ...: set with no advance
    /// and no glyph by HarfBuzz, never a box). A text of these and white space only is blank.
    public static func drawsNothing(_ scalar: Unicode.Scalar) -> Bool {
        isHiddenControl(scalar) || isExplicitBidiControl(scalar) || scalar.properties.isDefaultIgnorableCodePoint
    }

    /// The control characters met in a text (BEL, ESC, DEL, C1 ...) and the explicit
    /// bidirectional controls (RLO ...), each logged once when first met and then never drawn.
    public private(set) var reportedControls: Set<UInt32> = []

    /// The scalars of one paragraph as set: tab as a space, control characters and explicit
    /// bidirectional controls dropped (each kind logged once, with the text it was in).
    private func visibleScalars(_ paragraph: Substring) -> [UInt32] {
        var out: [UInt32] = []
        out.reserveCapacity(paragraph.unicodeScalars.count)
        var fresh: [UInt32] = [], freshBidi: [UInt32] = []
        for scalar in paragraph.unicodeScalars {
            if Self.isHiddenControl(scalar) {
                if reportedControls.insert(scalar.value).inserted { fresh.append(scalar.value) }
                continue
            }
            if Self.isExplicitBidiControl(scalar) {
                if reportedControls.insert(scalar.value).inserted { freshBidi.append(scalar.value) }
                continue
            }
            out.append(scalar.value == 9 ? 32 : scalar.value)
        }
        for (codes, what) in [(fresh, "control characters in a text are not drawn"),
                              (freshBidi, "bidirectional controls in a text are not applied")] where !codes.isEmpty {
            // The text around them, each one written U+XXXX, at most 80 long.
            let shown = paragraph.unicodeScalars.prefix(80).map {
                Self.isHiddenControl($0) || Self.isExplicitBidiControl($0)
                    ? "<\(Self.codePoint($0.value))>" : String($0)
            }
            Log.write(.warning, what, detail: shown.joined(),
                      reason: codes.map(Self.codePoint).joined(separator: ", ")
                          + " (in a caption, an image description or a status text)")
        }
        return out
    }

    /// "U+001B": a code point as Unicode writes it, at least four hex digits.
    private static func codePoint(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    // MARK: - Drawing

    private func rendered(_ g: PlacedGlyph) -> GlyphCache.Glyph? {
        let key = GlyphCache.Key(face: g.face, glyph: g.glyph)
        if let hit = cache.glyph(key) { return hit }
        guard let f = faceOf[g.face] ?? faces.values.first(where: { $0.id == g.face }) else { return nil }
        guard api.pointee.FT_Load_Glyph(f.face, g.glyph, Self.loadFlags) == 0, let slot = f.face.pointee.glyph,
              api.pointee.FT_Render_Glyph(slot, FT_RENDER_MODE_NORMAL) == 0 else { return nil }
        let bm = slot.pointee.bitmap
        let w = Int(bm.width), h = Int(bm.rows), pitch = Int(bm.pitch)
        var coverage = [UInt8](repeating: 0, count: w * h)
        if let src = bm.buffer, bm.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) {
            for y in 0..<h { for x in 0..<w { coverage[y * w + x] = src[y * pitch + x] } }
        }
        let glyph = GlyphCache.Glyph(left: Int(slot.pointee.bitmap_left), top: Int(slot.pointee.bitmap_top),
                                     width: w, height: h, coverage: coverage)
        cache.insert(glyph, for: key)
        return glyph
    }

    /// Draws `layout` into `frame` (XRGB8888; the top byte is set to 0xFF where drawn): the
    /// first line's top at row `y`, each line starting at column `x`, or centred in
    /// `x ..< x + width` when `width` is given. Glyph coverage blends `color` over the frame,
    /// scaled by `opacity` (0 to 256); out-of-frame pixels are clipped.
    public func draw(_ layout: Layout, into frame: Bitmap, x: Int, y: Int, width: Int? = nil,
                     color: RGBColor, opacity: Int = 256) {
        let op = UInt32(max(0, min(256, opacity)))
        let cr = UInt32(color.red), cg = UInt32(color.green), cb = UInt32(color.blue)
        for (i, line) in layout.lines.enumerated() {
            let left = width.map { x + ($0 - line.width) / 2 } ?? x
            let baseline = y + layout.ascender + i * layout.lineHeight
            for g in line.glyphs {
                guard let glyph = rendered(g), glyph.width > 0 else { continue }
                let gx = left + Int((g.x + 32) >> 6) + glyph.left
                let gy = baseline - Int((g.y + 32) >> 6) - glyph.top
                let x0 = max(0, gx), x1 = min(frame.width, gx + glyph.width)
                let y0 = max(0, gy), y1 = min(frame.height, gy + glyph.height)
                guard x0 < x1, y0 < y1 else { continue }
                glyph.coverage.withUnsafeBufferPointer { cov in
                    for row in y0..<y1 {
                        let dst = frame.row(row), src = (row - gy) * glyph.width - gx
                        for col in x0..<x1 {
                            let c = UInt32(cov[src + col])
                            if c == 0 { continue }
                            let a = (c &* op) >> 8, na = 255 &- a
                            let v = dst[col]
                            let r = (cr &* a &+ ((v &>> 16) & 0xFF) &* na &+ 127) / 255
                            let gg = (cg &* a &+ ((v &>> 8) & 0xFF) &* na &+ 127) / 255
                            let b = (cb &* a &+ (v & 0xFF) &* na &+ 127) / 255
                            dst[col] = 0xFF00_0000 | r &<< 16 | gg &<< 8 | b
                        }
                    }
                }
            }
        }
    }
}
