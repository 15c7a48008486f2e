#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Builds gpio-sim, the kernel's configfs-driven GPIO simulator, and irq_sim, the interrupt
# simulator it needs, out of tree for the kernel the kernel suite boots: their source from
# Debian's linux-source-6.1 (Debian builds neither: CONFIG_GPIO_SIM and CONFIG_IRQ_SIM are not
# set), irq-sim-module.patch applied (irq_sim.c is built-in code: the patch makes it a module),
# compiled against linux-headers-$KVER. Test-only: GPL-2.0 like the kernel, see README.md here.
#
# Usage: Tests/kernel/gpio-sim/build.sh KVER OUTDIR    -> OUTDIR/irq_sim.ko, OUTDIR/gpio-sim.ko
#        (reused while the kernel, the source tarball and the patch are the same)
# Needs: linux-source-6.1 linux-headers-$KVER (and gcc, make, xz-utils, patch)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KVER=${1:?usage: build.sh KVER OUTDIR}
OUT=${2:?usage: build.sh KVER OUTDIR}
TARBALL=/usr/src/linux-source-6.1.tar.xz
HEADERS=/lib/modules/$KVER/build
[ -f "$TARBALL" ] || { echo "gpio-sim: no $TARBALL (apt-get install -y linux-source-6.1)" >&2; exit 1; }
[ -d "$HEADERS" ] || { echo "gpio-sim: no $HEADERS (apt-get install -y linux-headers-$KVER)" >&2; exit 1; }
command -v patch >/dev/null || { echo "gpio-sim: no patch (apt-get install -y patch)" >&2; exit 1; }

stamp="$KVER $(stat -c '%s %Y' "$TARBALL") $(cat "$HERE/irq-sim-module.patch" "$HERE/build.sh" | sha256sum | cut -c1-16)"
if [ -f "$OUT/gpio-sim.ko" ] && [ -f "$OUT/irq_sim.ko" ] && [ "$(cat "$OUT/gpio-sim.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "gpio-sim: $OUT/gpio-sim.ko and irq_sim.ko are up to date"
    exit 0
fi
SRC="$OUT/gpio-sim-src"
rm -rf "$SRC" && mkdir -p "$SRC"
t0=$(date +%s)
tar -xJf "$TARBALL" -C "$SRC" --strip-components=1 linux-source-6.1/kernel/irq/irq_sim.c \
    linux-source-6.1/drivers/gpio/gpio-sim.c linux-source-6.1/drivers/gpio/gpiolib.h
patch -d "$SRC" -p1 --quiet < "$HERE/irq-sim-module.patch"
BUILD="$SRC/build"
mkdir -p "$BUILD"
cp "$SRC/kernel/irq/irq_sim.c" "$SRC/drivers/gpio/gpio-sim.c" "$SRC/drivers/gpio/gpiolib.h" "$BUILD/"
printf 'obj-m := irq_sim.o gpio-sim.o\n' > "$BUILD/Kbuild"
make -s -C "$HEADERS" M="$BUILD" modules >"$OUT/gpio-sim-build.log" 2>&1 \
    || { tail -20 "$OUT/gpio-sim-build.log" >&2; echo "gpio-sim: build failed (log: $OUT/gpio-sim-build.log)" >&2; exit 1; }
cp "$BUILD/irq_sim.ko" "$BUILD/gpio-sim.ko" "$OUT/"
echo "$stamp" > "$OUT/gpio-sim.stamp"
echo "gpio-sim: built $OUT/gpio-sim.ko and irq_sim.ko for $KVER in $(( $(date +%s) - t0 ))s"
