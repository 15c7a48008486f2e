// libheif (Debian: libheif-dev; runtime libheif1, which decodes HEVC with libde265 and AV1
// with dav1d or libaom, all linked in, no plug-in packages).
#include <libheif/heif.h>
