// SPDX-License-Identifier: Apache-2.0
// libpng 1.6 (Debian: libpng-dev).
#include <png.h>
