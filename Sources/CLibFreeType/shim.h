// SPDX-License-Identifier: Apache-2.0
// FreeType 2 (Debian: libfreetype-dev; runtime libfreetype6).
#include <ft2build.h>
#include FT_FREETYPE_H
