// SPDX-License-Identifier: Apache-2.0
// giflib 5 (Debian: libgif-dev; runtime libgif7).
#include <gif_lib.h>
