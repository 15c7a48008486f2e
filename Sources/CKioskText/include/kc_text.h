// SPDX-License-Identifier: Apache-2.0
#ifndef KC_TEXT_H
#define KC_TEXT_H
// FreeType, HarfBuzz, fontconfig and FriBidi, opened with dlopen when the show first needs text
// (a status screen, a caption, the clock; on a thread of its own, never the frame loop's)
// instead of linked: they bring glib, graphite2, pcre2, brotli, expat and more, about 15
// libraries a show of photos without words never needs (docs/benchmarks.md). The .deb
// depends on libfreetype6, libharfbuzz0b, libfontconfig1 and libfribidi0 by name, since
// dpkg-shlibdeps cannot see them.
//
// kc_text_load() opens the four and returns a table with every function KioskText calls,
// each field typed as the library's own declaration (__typeof__), so a signature cannot drift
// from the headers the project builds against. Call them as `api.pointee.FT_New_Face(...)`;
// see each library's documentation (freetype.org/freetype2/docs/reference, harfbuzz.github.io,
// fontconfig-devel, fribidi.h).
#include <ft2build.h>
#include FT_FREETYPE_H
#include <hb.h>
#include <hb-ft.h>
#include <fontconfig/fontconfig.h>
#include <fribidi.h>

/// The sonames opened, in this order: the ABIs Debian 12's libfreetype6 (2.12),
/// libharfbuzz0b (6.0), libfontconfig1 (2.14) and libfribidi0 (1.0) provide.
#define KC_FREETYPE_SONAME "libfreetype.so.6"
#define KC_HARFBUZZ_SONAME "libharfbuzz.so.0"
#define KC_FONTCONFIG_SONAME "libfontconfig.so.1"
#define KC_FRIBIDI_SONAME "libfribidi.so.0"

/// FriBidi's "no base direction asked for" (`FRIBIDI_PAR_ON`, fribidi-bidi-types.h): the
/// paragraph's direction is that of its first strong character (UAX #9 rules P2 and P3).
static const FriBidiParType KC_FRIBIDI_PAR_AUTO = FRIBIDI_PAR_ON;
/// FriBidi's left-to-right and right-to-left paragraph directions (`FRIBIDI_PAR_LTR`,
/// `FRIBIDI_PAR_RTL`).
static const FriBidiParType KC_FRIBIDI_PAR_LTR = FRIBIDI_PAR_LTR;
static const FriBidiParType KC_FRIBIDI_PAR_RTL = FRIBIDI_PAR_RTL;

#define KC_TEXT_FUNCTIONS(X) \
    X(FT_Init_FreeType) X(FT_Done_FreeType) X(FT_New_Face) X(FT_Done_Face) X(FT_Set_Pixel_Sizes) \
    X(FT_Load_Glyph) X(FT_Render_Glyph) \
    X(hb_ft_font_create_referenced) X(hb_ft_font_set_load_flags) X(hb_font_destroy) \
    X(hb_buffer_create) X(hb_buffer_destroy) X(hb_buffer_clear_contents) X(hb_buffer_add_utf32) \
    X(hb_buffer_guess_segment_properties) X(hb_buffer_get_glyph_infos) X(hb_buffer_get_glyph_positions) \
    X(hb_shape) X(hb_unicode_funcs_get_default) X(hb_unicode_script) X(hb_script_get_horizontal_direction) \
    X(FcInit) X(FcNameParse) X(FcPatternDestroy) X(FcConfigSubstitute) X(FcDefaultSubstitute) \
    X(FcFontSort) X(FcFontSetDestroy) X(FcPatternGetString) X(FcPatternGetInteger) \
    X(FcPatternGetCharSet) X(FcCharSetHasChar) X(FcPatternGetBool) \
    X(hb_buffer_set_direction) \
    X(fribidi_get_bidi_types) X(fribidi_get_bracket_types) X(fribidi_get_par_embedding_levels_ex) \
    X(fribidi_reorder_line)

/// The functions of the four libraries KioskText calls, never NULL once loaded.
struct kc_text_api {
#define KC_TEXT_FIELD(name) __typeof__(&name) _Nonnull name;
    KC_TEXT_FUNCTIONS(KC_TEXT_FIELD)
#undef KC_TEXT_FIELD
};

/// Opens the four libraries and looks up every function, once per process (thread-safe):
/// the table (static, valid for the life of the process), or NULL when a library or a symbol
/// is missing (then kc_text_load_error() says which and why).
const struct kc_text_api *_Nullable kc_text_load(void);
/// Why the libraries could not be loaded: dlerror's text (which names the file) or "no symbol
/// NAME"; NULL when they were. The string is static.
const char *_Nullable kc_text_load_error(void);
/// The soname that failed to load (one of the KC_*_SONAME), NULL when all were loaded.
const char *_Nullable kc_text_load_failed_soname(void);

#endif
