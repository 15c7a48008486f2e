// SPDX-License-Identifier: Apache-2.0
// HarfBuzz text shaping with its FreeType font functions (Debian: libharfbuzz-dev; runtime
// libharfbuzz0b).
#include <hb.h>
#include <hb-ft.h>
