// SPDX-License-Identifier: Apache-2.0
// libheif 1.15 (Debian: libheif-dev, in the default include path; runtime libheif1, which
// decodes HEVC with libde265 and AV1 with dav1d or libaom, all linked into it).
#include <libheif/heif.h>
