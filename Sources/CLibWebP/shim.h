// libwebp's decoder API (Debian: libwebp-dev; runtime libwebp7).
#include <webp/decode.h>
