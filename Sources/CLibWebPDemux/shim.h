// SPDX-License-Identifier: Apache-2.0
// libwebp's demux and animation decoder API, WebPAnimDecoder (Debian: libwebp-dev; runtime
// libwebpdemux2).
#include <webp/demux.h>
