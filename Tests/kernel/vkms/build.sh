#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Builds vkms, the kernel's virtual KMS driver, out of tree for the kernel the kernel suite
# boots: its source from Debian's linux-source-6.1 (Debian does not build it: CONFIG_DRM_VKMS is
# not set), vkms-plane-alpha.patch applied (a per-plane "alpha" property on the overlay planes),
# compiled against linux-headers-$KVER. Test-only: GPL-2.0 like the kernel, see README.md here.
#
# Usage: Tests/kernel/vkms/build.sh KVER OUTDIR    -> OUTDIR/vkms.ko (reused while the kernel,
#        the source tarball and the patch are the same)
# Needs: linux-source-6.1 linux-headers-$KVER (and gcc, make, xz-utils, patch)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KVER=${1:?usage: build.sh KVER OUTDIR}
OUT=${2:?usage: build.sh KVER OUTDIR}
TARBALL=/usr/src/linux-source-6.1.tar.xz
HEADERS=/lib/modules/$KVER/build
[ -f "$TARBALL" ] || { echo "vkms: no $TARBALL (apt-get install -y linux-source-6.1)" >&2; exit 1; }
[ -d "$HEADERS" ] || { echo "vkms: no $HEADERS (apt-get install -y linux-headers-$KVER)" >&2; exit 1; }
command -v patch >/dev/null || { echo "vkms: no patch (apt-get install -y patch)" >&2; exit 1; }

stamp="$KVER $(stat -c '%s %Y' "$TARBALL") $(sha256sum "$HERE/vkms-plane-alpha.patch" | cut -c1-16)"
if [ -f "$OUT/vkms.ko" ] && [ "$(cat "$OUT/vkms.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "vkms: $OUT/vkms.ko is up to date"
    exit 0
fi
SRC="$OUT/vkms-src"
rm -rf "$SRC" && mkdir -p "$SRC"
t0=$(date +%s)
tar -xJf "$TARBALL" -C "$SRC" --strip-components=1 linux-source-6.1/drivers/gpu/drm/vkms
patch -d "$SRC" -p1 --quiet < "$HERE/vkms-plane-alpha.patch"
make -s -C "$HEADERS" M="$SRC/drivers/gpu/drm/vkms" CONFIG_DRM_VKMS=m modules >"$OUT/vkms-build.log" 2>&1 \
    || { tail -20 "$OUT/vkms-build.log" >&2; echo "vkms: build failed (log: $OUT/vkms-build.log)" >&2; exit 1; }
cp "$SRC/drivers/gpu/drm/vkms/vkms.ko" "$OUT/vkms.ko"
echo "$stamp" > "$OUT/vkms.stamp"
echo "vkms: built $OUT/vkms.ko for $KVER in $(( $(date +%s) - t0 ))s"
