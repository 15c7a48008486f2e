// SPDX-License-Identifier: Apache-2.0
// libavif (Debian: libavif-dev, in the default include path; runtime libavif15 on Debian 12,
// libavif16 on Debian 13, which decode AV1 with dav1d or libaom, linked into them).
#include <avif/avif.h>
