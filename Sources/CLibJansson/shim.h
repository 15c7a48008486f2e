// SPDX-License-Identifier: Apache-2.0
// jansson (Debian: libjansson-dev, runtime libjansson4): the JSON parser and writer behind
// KioskSystem's JSONValue. It reads strictly by RFC 8259 (no trailing commas, no comments, no
// NaN), reports the line, column and byte position of an error, and bounds nesting at 2048.
#include <jansson.h>
