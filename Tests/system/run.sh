#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The system suite's one entry point: the appliance as a device gets it. Builds the .deb with
# deploy/build-deb.sh, makes a Debian 12 disk image with it installed by apt (mkimage.sh,
# cached under /var/tmp keyed on the .deb's and this suite's hashes), boots the image's own
# kernel and initrd under QEMU (TCG) with systemd as PID 1, once on bochs-display and once on
# virtio-gpu, and drives it over the serial console and QMP (run-system-tests.py).
# Prints one PASS/FAIL line per case and, last, "N passed, M failed"; exits non-zero on any failure.
#
# Usage: Tests/system/run.sh [--arch arm64] [--only DEVICE_OR_CASE...]
#   --arch arm64: the arm64 .deb (deploy/build-deb.sh --arch arm64, or KC_DEB) in a Debian 13
#   arm64 image (mmdebstrap through qemu-user, Tests/qemu/binfmt.sh) on qemu-system-aarch64
#   (`virt`, Cortex-A72) with virtio-gpu, booted at 1024 MiB and again at 512 MiB, the cases of
#   ARM64_CASES in run-system-tests.py; references from this machine's own release build.
# Env:   KC_SYSTEM_CACHE  where images are cached (default /var/tmp/kiosk-carousel-system)
#        KC_OUT           captures and logs (default /tmp/kc-system, or /tmp/kc-system-arm64)
#        KC_DEB           (--arch arm64) the arm64 .deb to install (default: build it)
#        KC_SCRATCH       (--arch arm64) SwiftPM scratch path of the host build (default: <package>/.build)
# Root (or sudo) is needed only to make the image (mmdebstrap runs apt in a chroot); the rest
# runs as the calling user.
# Needs (Debian 12): mmdebstrap e2fsprogs qemu-system-x86 dbus-daemon systemd (busctl)
#   python3-pil, the network for the Debian mirror on a cache miss, and what
#   deploy/build-deb.sh needs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PKG=$(cd "$HERE/../.." && pwd)
CACHE=${KC_SYSTEM_CACHE:-/var/tmp/kiosk-carousel-system}
ARCH=$(dpkg --print-architecture)
GUEST_ARCH=$ARCH
if [ "${1:-}" = "--arch" ]; then GUEST_ARCH=${2:?--arch needs amd64 or arm64}; shift 2; fi
SUFFIX=""; [ "$GUEST_ARCH" = "$ARCH" ] || SUFFIX=-$GUEST_ARCH
OUT=${KC_OUT:-/tmp/kc-system$SUFFIX}
fail() { echo "system suite: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v mkfs.ext4 >/dev/null || missing+=(e2fsprogs)
if [ "$GUEST_ARCH" = "$ARCH" ]; then
    command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
else
    [ "$GUEST_ARCH" = arm64 ] || fail "--arch $GUEST_ARCH: only arm64 can be booted besides $ARCH"
    command -v qemu-system-aarch64 >/dev/null || missing+=(qemu-system-arm)
    [ -f /usr/lib/binfmt.d/qemu-aarch64.conf ] || missing+=(qemu-user-static)
fi
command -v dbus-daemon >/dev/null || missing+=(dbus-daemon)   # QEMU's D-Bus display (virtio-gpu reconnect)
command -v busctl >/dev/null || missing+=(systemd)
command -v dpkg-deb >/dev/null || missing+=(dpkg)
/usr/bin/python3 -c 'import PIL' 2>/dev/null || missing+=(python3-pil)
[ ${#missing[@]} -eq 0 ] || fail "missing packages: apt-get install -y ${missing[*]}"

t0=$(date +%s)
rm -rf "$OUT"
mkdir -p "$OUT/deb"
if [ -n "${KC_DEB:-}" ]; then
    cp "$KC_DEB" "$OUT/deb/"
else
    echo "building the .deb with deploy/build-deb.sh --arch $GUEST_ARCH"
    (cd "$PKG" && OUTDIR="$OUT/deb" deploy/build-deb.sh --arch "$GUEST_ARCH") >"$OUT/build-deb.log" 2>&1 \
        || { tail -30 "$OUT/build-deb.log"; fail "deploy/build-deb.sh failed (log: $OUT/build-deb.log)"; }
fi
debs=("$OUT"/deb/kiosk-carousel_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "expected one kiosk-carousel_*.deb in $OUT/deb, found: ${debs[*]}"
DEB=${debs[0]}
VERSION=$(dpkg-deb -f "$DEB" Version)
echo "built $(basename "$DEB") (version $VERSION) in $(( $(date +%s) - t0 ))s"

# The binary in the package renders the offscreen references on the host.
dpkg-deb -x "$DEB" "$OUT/pkgroot" || fail "dpkg-deb -x $DEB failed"
BIN=$OUT/pkgroot/usr/bin/kiosk-carousel
MACHINES=(bochs:1536 virtio:1536)
if [ "$GUEST_ARCH" != "$ARCH" ]; then
    # This machine's own release build renders them (the arm64 one cannot run here).
    echo "building kiosk-carousel for $ARCH (release) for the offscreen references"
    SCRATCH=${KC_SCRATCH:-$PKG/.build}
    swift build --package-path "$PKG" --scratch-path "$SCRATCH" -c release --static-swift-stdlib --product kiosk-carousel \
        >"$OUT/build-host.log" 2>&1 \
        || { tail -30 "$OUT/build-host.log"; fail "the $ARCH release build failed (log: $OUT/build-host.log)"; }
    BIN=$(swift build --package-path "$PKG" --scratch-path "$SCRATCH" -c release --show-bin-path)/kiosk-carousel
    MACHINES=(virtio:1024 virtio:512)
    as_root "$HERE/../qemu/binfmt.sh" || fail "cannot run arm64 programs through qemu-user (binfmt_misc)"
fi

# A newer package for the upgrade case: the same files, the version bumped (repacked).
NEWER_VERSION="$VERSION+systemtest1"
rm -rf "$OUT/newer"
dpkg-deb -R "$DEB" "$OUT/newer" || fail "dpkg-deb -R failed"
sed -i "s/^Version: .*/Version: $NEWER_VERSION/" "$OUT/newer/DEBIAN/control"
NEWER=$OUT/deb/newer/kiosk-carousel_${NEWER_VERSION}_$(dpkg-deb -f "$DEB" Architecture).deb
mkdir -p "$(dirname "$NEWER")"
dpkg-deb --root-owner-group -Zxz -z1 --build "$OUT/newer" "$NEWER" >/dev/null || fail "repacking $NEWER failed"
rm -rf "$OUT/newer"

PHOTO_A=$PKG/deploy/samples/fallenleaf-1920x1200.jpg
PHOTO_B=$PKG/deploy/samples/path-1920x1200.jpg
# The image depends on the .deb and on this suite's image recipe, nothing else of ours
# (the Debian mirror moves too, but a week-old image still tests the package).
KEY=$( { sha256sum "$DEB" | cut -d' ' -f1; cat "$HERE/mkimage.sh" "$HERE/kc-vt" "$PHOTO_A" "$PHOTO_B"; } | sha256sum | cut -c1-16)
IMAGE_DIR=$CACHE/${SUFFIX#-}${SUFFIX:+-}image-$KEY
if [ -f "$IMAGE_DIR/done" ]; then
    echo "disk image cached: $IMAGE_DIR"
else
    as_root mkdir -p "$CACHE"
    as_root find "$CACHE" -mindepth 1 -maxdepth 1 -name "${SUFFIX#-}${SUFFIX:+-}image-*" ! -name "${SUFFIX#-}${SUFFIX:+-}image-$KEY" -exec rm -rf {} +
    t1=$(date +%s)
    echo "making the disk image (mmdebstrap, apt install of the .deb) into $IMAGE_DIR"
    as_root env ARCH="$GUEST_ARCH" "$HERE/mkimage.sh" "$DEB" "$NEWER" "$IMAGE_DIR" "$PHOTO_A" "$PHOTO_B" >"$OUT/mkimage.log" 2>&1 \
        || { tail -30 "$OUT/mkimage.log"; fail "mkimage.sh failed (log: $OUT/mkimage.log)"; }
    as_root touch "$IMAGE_DIR/done"
    echo "disk image made in $(( $(date +%s) - t1 ))s"
fi

/usr/bin/python3 "$HERE/run-system-tests.py" --arch "$GUEST_ARCH" --machines "${MACHINES[@]}" \
    --image-dir "$IMAGE_DIR" --binary "$BIN" --out "$OUT" \
    --version "$VERSION" --newer-version "$NEWER_VERSION" \
    --photos "$PKG"/deploy/samples/*.jpg --manifest-photos "$PHOTO_A" "$PHOTO_B" "$@"
status=$?
echo "system suite took $(( $(date +%s) - t0 ))s; captures and logs in $OUT" >&2
exit $status
