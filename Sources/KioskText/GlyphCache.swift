// SPDX-License-Identifier: Apache-2.0
/// Rendered glyphs kept for reuse, bounded by bytes: a caption or a clock redraw renders each
/// glyph once, later ones copy its coverage. When an insert passes ``budget`` the least
/// recently used glyphs go until the total is at most three quarters of it.
///
/// Not thread-safe: one per ``TextRenderer``.
struct GlyphCache {
    /// A glyph's 8-bit antialiased coverage (FreeType's `FT_PIXEL_MODE_GRAY`: 0 is
    /// transparent, 255 fully covered), `width` x `height` pixels, rows packed.
    struct Glyph {
        /// Pixels from the pen position to the bitmap's left column (`bitmap_left`).
        let left: Int
        /// Pixels from the baseline up to the bitmap's top row (`bitmap_top`).
        let top: Int
        let width: Int, height: Int
        let coverage: [UInt8]
        var bytes: Int { coverage.count + 64 }
    }

    struct Key: Hashable {
        let face: Int
        let glyph: UInt32
    }

    /// Most bytes of coverage (plus 64 per entry for bookkeeping) held at once.
    let budget: Int
    private(set) var bytes = 0
    private var entries: [Key: (glyph: Glyph, lastUse: UInt64)] = [:]
    private var tick: UInt64 = 0

    init(budget: Int) { self.budget = budget }

    var count: Int { entries.count }

    mutating func glyph(_ key: Key) -> Glyph? {
        guard let e = entries[key] else { return nil }
        tick &+= 1
        entries[key] = (e.glyph, tick)
        return e.glyph
    }

    mutating func insert(_ glyph: Glyph, for key: Key) {
        tick &+= 1
        if let old = entries[key] { bytes -= old.glyph.bytes }
        entries[key] = (glyph, tick)
        bytes += glyph.bytes
        if bytes > budget { evict(to: budget * 3 / 4) }
    }

    private mutating func evict(to target: Int) {
        for (key, e) in entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            if bytes <= target { break }
            entries[key] = nil
            bytes -= e.glyph.bytes
        }
    }
}
