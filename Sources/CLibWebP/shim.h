// SPDX-License-Identifier: Apache-2.0
// libwebp's decoder API (Debian: libwebp-dev; runtime libwebp7).
#include <webp/decode.h>
