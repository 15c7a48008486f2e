// SPDX-License-Identifier: Apache-2.0
// GNU FriBidi: the Unicode Bidirectional Algorithm (UAX #9), embedding levels and line
// reordering for Arabic and Hebrew text (Debian: libfribidi-dev; runtime libfribidi0).
#include <fribidi.h>
