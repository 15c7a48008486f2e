#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the initramfs for the kernel suite: busybox (static), the DRM and input kernel modules
# of the running Debian kernel package (bochs, virtio-gpu, virtio-pci, virtio_input, evdev,
# uinput and their dependencies, in the order modprobe resolves), kiosk-carousel with the shared
# libraries ldd reports (and the ELF loader), the helpers kdgetmode, evemu-replay, evdump, vtswitch and ctlsend
# (compiled here, static), guest.sh, the photos and the evemu touchscreen recordings the touch
# cases replay (under /app/evemu/, names without spaces). For the power cases: gpio-sim and
# irq_sim (built out of tree, KC_GPIO_SIM_DIR), configfs and vivid's modules, loaded by the cases
# from /etc/modules.gpio and /etc/modules.vivid, and cec-ctl (v4l-utils) with its libraries.
#
# Usage: build-initramfs.sh OUT.cpio.gz KIOSK_BINARY PHOTO...
#   The photos land in /app/photos/ under their own names.
# Env: KVER  kernel version whose modules to use (default: the newest in $MODROOT/lib/modules)
#      ARCH  the Debian architecture of the guest (default: this machine's). For another one
#            (arm64 on x86-64: run it in deploy/swiftlang-root.sh's root, which has the arm64
#            libraries, kernel and busybox) the helpers are compiled with swiftlang's clang for
#            it, and the libraries are found by their DT_NEEDED names (ldd cannot run them).
#      MODROOT  where lib/modules/$KVER is (default /; the root's arm64 kernel: /opt/arm64-boot/usr)
#      BUSYBOX  a static busybox for ARCH (default /bin/busybox)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(realpath -m "$1"); APP=$2; shift 2
HOST_ARCH=$(dpkg --print-architecture)
ARCH=${ARCH:-$HOST_ARCH}
MULTIARCH=$(dpkg-architecture -a "$ARCH" -q DEB_HOST_MULTIARCH 2>/dev/null)
MODROOT=${MODROOT:-/}
BUSYBOX=${BUSYBOX:-/bin/busybox}
KVER=${KVER:-$(ls "$MODROOT/lib/modules" | sort -V | tail -1)}
# virtio_input: -device virtio-tablet-pci; evdev: /dev/input/event*; uinput: /dev/uinput for
# evemu-replay (all three are modules in Debian's kernel, not in modules.builtin). vgem: a DRM
# device without KMS (a render-only GPU, as the Raspberry Pi 4's v3d is beside its vc4), loaded
# first only when the kernel command line says kc_vgem=1, so that it is card0.
# cirrus: a Cirrus VGA's, before virtio-gpu so that it is card0 where QEMU has one.
# drm_shmem_helper: vkms's (Tests/kernel/vkms/, built out of tree; KC_VKMS_KO names it).
MODULES="vgem bochs cirrus virtio-gpu virtio_pci virtio_input evdev uinput drm_shmem_helper"
ROOT=$(mktemp -d /tmp/kc-initramfs.XXXXXX); trap 'rm -rf "$ROOT"' EXIT
mkdir -p "$ROOT"/{bin,sbin,dev,proc,sys,tmp,etc,app/photos,app/evemu,lib/modules/$KVER}

if [ "$ARCH" = "$HOST_ARCH" ]; then
    CC=(gcc)
    # ldd fails on a static ELF (and under pipefail its status would spoil a grep of its output).
    { [ -x "$BUSYBOX" ] && ! ldd "$BUSYBOX" >/dev/null 2>&1; } || { echo "need a static busybox (apt-get install busybox-static)" >&2; exit 1; }
else
    CC=(clang "--target=$MULTIARCH" -fuse-ld=lld)
    [ -x "$BUSYBOX" ] || { echo "no busybox for $ARCH at $BUSYBOX" >&2; exit 1; }
fi
# The shared libraries FILE loads (as ldd lists them, the loader too).
libraries() {
    if [ "$ARCH" = "$HOST_ARCH" ]; then
        ldd "$1" | grep -o '/[^ ]*' | sort -u
        return
    fi
    local todo=("$1") seen=" " f soname dir
    readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p'
    while [ ${#todo[@]} -gt 0 ]; do
        f=${todo[0]}; todo=("${todo[@]:1}")
        for soname in $(LC_ALL=C readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            case "$seen" in *" $soname "*) continue ;; esac
            seen="$seen$soname "
            for dir in "/lib/$MULTIARCH" "/usr/lib/$MULTIARCH"; do
                if [ -e "$dir/$soname" ]; then echo "$dir/$soname"; todo+=("$dir/$soname"); break; fi
            done
        done
    done
}
cp "$BUSYBOX" "$ROOT/bin/busybox"
cp "$APP" "$ROOT/app/kiosk-carousel"
cp "$HERE/guest.sh" "$ROOT/app/guest.sh"
for helper in kdgetmode evemu-replay evdump vtswitch ctlsend; do
    "${CC[@]}" -O2 -Wall -static -o "$ROOT/app/$helper" "$HERE/$helper.c"
done
for p in "$@"; do cp "$p" "$ROOT/app/photos/"; done
# vkms, loaded by the drm-vkms-planes case (insmod /app/vkms.ko enable_overlay=1).
[ -z "${KC_VKMS_KO:-}" ] || cp "$KC_VKMS_KO" "$ROOT/app/vkms.ko"
# cec-ctl for the cec-vivid case (its libraries are copied with the others below).
# This machine's own: only for a guest of its architecture.
CEC_CTL=$([ "$ARCH" = "$HOST_ARCH" ] && command -v cec-ctl || true)
[ -z "$CEC_CTL" ] || cp "$CEC_CTL" "$ROOT/app/cec-ctl"
# Text: the default font and a fontconfig configuration naming only it (cache in /tmp), and a
# playlist of the photos with a caption (the caption case; show_cases.py has the same words).
CAPTION="Harbour lights at dusk, seen from the pier"
mkdir -p "$ROOT/usr/share/fonts/truetype/dejavu" "$ROOT/etc/fonts"
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$ROOT/usr/share/fonts/truetype/dejavu/"
printf '<?xml version="1.0"?>\n<fontconfig><dir>/usr/share/fonts</dir><cachedir>/tmp/fontconfig</cachedir></fontconfig>\n' \
    > "$ROOT/etc/fonts/fonts.conf"
{ printf '{"items": ['; sep=""
  for p in "$@"; do printf '%s{"src": "/app/photos/%s", "caption": "%s"}' "$sep" "$(basename "$p")" "$CAPTION"; sep=", "; done
  printf ']}\n'; } > "$ROOT/app/captions.json"

# Touchscreen recordings (evemu-devices, see Tests/Fixtures/evemu-touchscreens/SOURCE.md) and
# the synthetic sideways swipe (Tests/kernel/evemu/), under names without spaces.
FIXTURES="$HERE/../Fixtures/evemu-touchscreens"
[ -f "$FIXTURES/EP0430M09.desc" ] || FIXTURES="$FIXTURES/touchscreens"
while IFS='|' read -r src dst; do
    [ -f "$src" ] || { echo "missing evemu recording $src" >&2; exit 1; }
    cp "$src" "$ROOT/app/evemu/$dst"
done <<EVEMU
$FIXTURES/Atmel maXTouch Touchscreen.desc|atmel-maxtouch.desc
$FIXTURES/Atmel maXTouch Touchscreen.1-finger-fast-taps.events|atmel-maxtouch.1-finger-fast-taps.events
$FIXTURES/Atmel maXTouch Touchscreen.1-finger-drag-up-down.events|atmel-maxtouch.1-finger-drag-up-down.events
$FIXTURES/EP0430M09.desc|ep0430m09.desc
$HERE/evemu/EP0430M09.synthetic-1-finger-swipe-left.events|ep0430m09.synthetic-1-finger-swipe-left.events
EVEMU

# The binary's shared libraries (libdrm, libjpeg, libpng, libz, libstdc++, libc ...) and the loader.
# libheif is opened with dlopen on first use: it and its codecs are not in the binary's ldd.
# Debian 13's libheif loads its decoders as plug-ins from a folder of its own: they come too.
heif=$(ls "/usr/lib/$MULTIARCH/libheif.so.1" 2>/dev/null || true)
plugins=$(ls "/usr/lib/$MULTIARCH"/libheif/plugins/*.so 2>/dev/null || true)
# FreeType, HarfBuzz, fontconfig and FriBidi are opened with dlopen when text is first drawn: the same.
text=$(for soname in libfreetype.so.6 libharfbuzz.so.0 libfontconfig.so.1 libfribidi.so.0; do echo "/usr/lib/$MULTIARCH/$soname"; done)
# So is libgpiod, for the presence-gpio case: libgpiod.so.3 (its 2.x API) where there is one,
# else libgpiod.so.2 (1.6).
gpiod=$(ls "/usr/lib/$MULTIARCH/libgpiod.so.3" 2>/dev/null || ls "/usr/lib/$MULTIARCH/libgpiod.so.2" 2>/dev/null \
    || true)
for file in "$APP" $heif $plugins $text $gpiod $CEC_CTL; do
    [ "$file" = "$APP" ] || echo "$file"
    libraries "$file"
done | sort -u | while read -r lib; do
    mkdir -p "$ROOT$(dirname "$lib")"; cp -L "$lib" "$ROOT$lib"
done

# Kernel modules, dependencies first.
: > "$ROOT/etc/modules.order"
for m in $MODULES; do
    deps=$(modprobe -d "$MODROOT" -S "$KVER" --show-depends "$m") || { [ "$m" = vgem ] && continue; exit 1; }
    echo "$deps" | awk '$1 == "insmod" { print $2 }' | while read -r ko; do
        guest=${ko#"${MODROOT%/}"}
        grep -qxF "$guest" "$ROOT/etc/modules.order" && continue
        mkdir -p "$ROOT$(dirname "$guest")"; cp "$ko" "$ROOT$guest"; echo "$guest" >> "$ROOT/etc/modules.order"
    done
done

# Modules the power cases load themselves (power_cases.py), dependencies first: configfs and the
# out-of-tree irq_sim and gpio-sim for presence-gpio; vivid and its media stack for cec-vivid.
lazy_modules() {  # LISTFILE MODULE...
    : > "$ROOT/etc/$1"; local list=$1; shift
    for m in "$@"; do
        modprobe -d "$MODROOT" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }' \
            | while read -r ko; do
            guest=${ko#"${MODROOT%/}"}  # as the guest sees it (the arm64 modules sit under MODROOT here)
            grep -qxF "$guest" "$ROOT/etc/$list" && continue
            mkdir -p "$ROOT$(dirname "$guest")"; cp "$ko" "$ROOT$guest"; echo "$guest" >> "$ROOT/etc/$list"
        done
    done
}
lazy_modules modules.vivid vivid
lazy_modules modules.gpio configfs
if [ -n "${KC_GPIO_SIM_DIR:-}" ]; then
    for ko in irq_sim.ko gpio-sim.ko; do cp "$KC_GPIO_SIM_DIR/$ko" "$ROOT/app/$ko"; echo "/app/$ko" >> "$ROOT/etc/modules.gpio"; done
fi

cat > "$ROOT/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/app
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
# The cpio has no /dev/console, so init starts without stdio: connect it now.
exec </dev/console >/dev/console 2>&1
echo "KC_INIT uptime=$(cut -d' ' -f1 /proc/uptime)"
while read -r ko; do
    case "$ko" in */vgem.ko*) [ "${kc_vgem:-0}" = 1 ] || continue ;; esac
    insmod "$ko" || echo "KC_INSMOD_FAILED $ko"
done < /etc/modules.order
i=0; while [ ! -e /dev/dri/card0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
i=0; while [ ! -e /dev/fb0 ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
i=0; while [ ! -e /dev/uinput ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
echo "KC_MODULES uptime=$(cut -d' ' -f1 /proc/uptime)"
cd /app
/app/guest.sh
poweroff -f
INIT
chmod +x "$ROOT/init" "$ROOT/app/guest.sh"
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT"
echo "built $OUT ($(du -h "$OUT" | cut -f1); kernel modules for $KVER: $(wc -l < "$ROOT/etc/modules.order"))"
