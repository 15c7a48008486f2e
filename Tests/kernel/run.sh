#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The kernel suite's one entry point: builds kiosk-carousel (release, static Swift standard
# library), packs it with two sample photos into a busybox initramfs, boots Debian's kernel in
# QEMU (TCG) for each display device and checks what reaches the virtual screen.
# Prints one PASS/FAIL line per case and, last, "N passed, M failed"; exits non-zero on any failure.
#
# Usage: Tests/kernel/run.sh [--arch arm64] [--only BOOT_OR_CASE...]
#   --arch arm64: the arm64 build of the package (deploy/build-deb.sh --arch arm64, or KC_DEB)
#   on Debian 13's arm64 kernel on qemu-system-aarch64 (`virt`, Cortex-A72), the initramfs
#   made in deploy/swiftlang-root.sh's root (its arm64 libraries, kernel and busybox); the
#   screens are compared with what this machine's own build renders offscreen.
# Env:   KC_SCRATCH  SwiftPM scratch path for the release build (default: <package>/.build)
#        KC_OUT      where captures, logs and the initramfs go (default: /tmp/kc-kernel, or
#                    /tmp/kc-kernel-arm64)
#        KC_DEB      (--arch arm64) the arm64 .deb to take the program from (default: build it)
# Needs (Debian 12): qemu-system-x86 linux-image-amd64 busybox-static cpio gcc libc6-dev python3-pil
#   webp libheif-examples linux-source-6.1 linux-headers-amd64 make patch (vkms, Tests/kernel/vkms/;
#   gpio-sim, Tests/kernel/gpio-sim/) v4l-utils (cec-ctl), for arm64 qemu-system-arm and what
#   deploy/swiftlang-root.sh needs
#   (and the app's own build dependencies: libdrm-dev libevdev-dev ...)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PKG=$(cd "$HERE/../.." && pwd)
SCRATCH=${KC_SCRATCH:-$PKG/.build}
ARCH=$(dpkg --print-architecture)
GUEST_ARCH=$ARCH
if [ "${1:-}" = "--arch" ]; then GUEST_ARCH=${2:?--arch needs amd64 or arm64}; shift 2; fi
SUFFIX=""; [ "$GUEST_ARCH" = "$ARCH" ] || SUFFIX=-$GUEST_ARCH
OUT=${KC_OUT:-/tmp/kc-kernel$SUFFIX}
fail() { echo "kernel suite: $*" >&2; echo "0 passed, 1 failed"; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
if [ "$GUEST_ARCH" = "$ARCH" ]; then
    command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
    ls /boot/vmlinuz-* >/dev/null 2>&1 || missing+=(linux-image-amd64)
    { [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || missing+=(busybox-static)  # ldd fails on a static ELF
    command -v cpio >/dev/null || missing+=(cpio)
    command -v gcc >/dev/null || missing+=(gcc)
else
    [ "$GUEST_ARCH" = arm64 ] || fail "--arch $GUEST_ARCH: only arm64 can be booted besides $ARCH"
    command -v qemu-system-aarch64 >/dev/null || missing+=(qemu-system-arm)
    command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
fi
/usr/bin/python3 -c 'import PIL' 2>/dev/null || missing+=(python3-pil)
[ ${#missing[@]} -eq 0 ] || fail "missing packages: apt-get install -y ${missing[*]}"
if [ "$GUEST_ARCH" = "$ARCH" ]; then
    # Modules must match the kernel that boots: the newest /boot/vmlinuz-* and its /lib/modules.
    KERNEL=$(ls /boot/vmlinuz-* | sort -V | tail -1)
    export KVER=${KERNEL#/boot/vmlinuz-}
    [ -d "/lib/modules/$KVER" ] || fail "no /lib/modules/$KVER for $KERNEL"
else
    ROOT=$(as_root "$PKG/deploy/swiftlang-root.sh" path) || fail "deploy/swiftlang-root.sh path failed"
    KERNEL=$(ls "$ROOT"/opt/arm64-boot/boot/vmlinuz-* | sort -V | tail -1)
    export KVER=${KERNEL##*/vmlinuz-}
fi

mkdir -p "$OUT"
t0=$(date +%s)
echo "building kiosk-carousel (release, --static-swift-stdlib) in $SCRATCH"
swift build --package-path "$PKG" --scratch-path "$SCRATCH" -c release --static-swift-stdlib \
    --product kiosk-carousel >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; fail "build failed (log: $OUT/build.log)"; }
BIN=$(swift build --package-path "$PKG" --scratch-path "$SCRATCH" -c release --show-bin-path)/kiosk-carousel
echo "built $BIN in $(( $(date +%s) - t0 ))s; shared libraries:"
ldd "$BIN" | sed 's/^/  /'

PHOTOS=("$PKG/deploy/samples/colorfulcups-1920x1200.jpg" "$PKG/deploy/samples/path-1920x1200.jpg")
for p in "${PHOTOS[@]}"; do [ -f "$p" ] || fail "missing sample photo $p"; done
# The formats case shows photo A as a WebP (cwebp -q 90) and photo B as a HEIC (heif-enc -q 90,
# x265 preset ultrafast: 0.6 s of CPU instead of 5),
# made here from the same samples, so the other decoders run on a real display driver too.
command -v cwebp >/dev/null && command -v heif-enc >/dev/null || fail "missing packages: apt-get install -y webp libheif-examples"
cwebp -quiet -q 90 "${PHOTOS[0]}" -o "$OUT/colorfulcups-1920x1200.webp" || fail "cwebp failed"
heif-enc -q 90 -p preset=ultrafast "${PHOTOS[1]}" -o "$OUT/path-1920x1200.heic" >/dev/null || fail "heif-enc failed"
FORMAT_PHOTOS=("$OUT/colorfulcups-1920x1200.webp" "$OUT/path-1920x1200.heic")
if [ "$GUEST_ARCH" = "$ARCH" ]; then
    # vkms with a per-plane alpha (GPL-2.0, test-only: Tests/kernel/vkms/README.md), for
    # drm-vkms-planes (a case of this machine's own kernel only).
    "$HERE/vkms/build.sh" "$KVER" "$OUT" \
        || fail "vkms build failed (apt-get install -y linux-source-6.1 linux-headers-$KVER make patch)"
    export KC_VKMS_KO="$OUT/vkms.ko"
    # gpio-sim and irq_sim (GPL-2.0, test-only: Tests/kernel/gpio-sim/README.md), for
    # presence-gpio; cec-ctl (v4l-utils) for cec-vivid.
    "$HERE/gpio-sim/build.sh" "$KVER" "$OUT" \
        || fail "gpio-sim build failed (apt-get install -y linux-source-6.1 linux-headers-$KVER make patch)"
    export KC_GPIO_SIM_DIR="$OUT"
    command -v cec-ctl >/dev/null || fail "missing packages: apt-get install -y v4l-utils"
    "$HERE/build-initramfs.sh" "$OUT/kiosk.cpio.gz" "$BIN" "${PHOTOS[@]}" "${FORMAT_PHOTOS[@]}" || fail "initramfs build failed"
else
    # The program from the package, as a device runs it; the initramfs from the root's arm64 files.
    DEB=${KC_DEB:-}
    if [ -z "$DEB" ]; then
        echo "building the arm64 .deb (deploy/build-deb.sh --arch arm64)"
        mkdir -p "$OUT/deb"; rm -f "$OUT"/deb/*.deb
        (cd "$PKG" && OUTDIR="$OUT/deb" deploy/build-deb.sh --arch arm64) >"$OUT/build-deb.log" 2>&1 \
            || { tail -30 "$OUT/build-deb.log"; fail "deploy/build-deb.sh --arch arm64 failed (log: $OUT/build-deb.log)"; }
        DEB=$(ls "$OUT"/deb/kiosk-carousel_*_arm64.deb)
    fi
    rm -rf "$OUT/pkgroot"
    dpkg-deb -x "$DEB" "$OUT/pkgroot" || fail "dpkg-deb -x $DEB failed"
    GUEST_BIN=$OUT/pkgroot/usr/bin/kiosk-carousel
    echo "the arm64 program: $(file -b "$GUEST_BIN" | cut -d, -f1-2) from $(basename "$DEB")"
    busybox=$(ls "$ROOT"/opt/arm64-boot/usr/bin/busybox "$ROOT"/opt/arm64-boot/bin/busybox 2>/dev/null | head -n 1)
    as_root "$PKG/deploy/swiftlang-root.sh" run --bind "$PKG" --bind "$OUT" -- \
        env ARCH=arm64 MODROOT=/opt/arm64-boot/usr BUSYBOX="${busybox#"$ROOT"}" KVER="$KVER" \
        PATH=/usr/libexec/swift/bin:/usr/bin:/bin:/usr/sbin:/sbin \
        "$HERE/build-initramfs.sh" "$OUT/kiosk.cpio.gz" "$GUEST_BIN" "${PHOTOS[@]}" "${FORMAT_PHOTOS[@]}" \
        || fail "initramfs build failed"
fi

/usr/bin/python3 "$HERE/run-kernel-tests.py" --arch "$GUEST_ARCH" --binary "$BIN" --initrd "$OUT/kiosk.cpio.gz" --kernel "$KERNEL" \
    --photos "${PHOTOS[@]}" --format-photos "${FORMAT_PHOTOS[@]}" --out "$OUT" "$@"
status=$?
echo "kernel suite took $(( $(date +%s) - t0 ))s; captures and logs in $OUT" >&2
exit $status
