// SPDX-License-Identifier: Apache-2.0
// libdrm (Debian: libdrm-dev): KMS connectors, CRTCs, modes, dumb buffers, page flips.
#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>
