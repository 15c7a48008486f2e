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
# Env: KVER  kernel version whose modules to use (default: the newest in /lib/modules)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(realpath -m "$1"); APP=$2; shift 2
KVER=${KVER:-$(ls /lib/modules | sort -V | tail -1)}
# virtio_input: -device virtio-tablet-pci; evdev: /dev/input/event*; uinput: /dev/uinput for
# evemu-replay (all three are modules in Debian's kernel, not in modules.builtin).
# drm_shmem_helper: vkms's (Tests/kernel/vkms/, built out of tree; KC_VKMS_KO names it).
MODULES="bochs virtio-gpu virtio_pci virtio_input evdev uinput drm_shmem_helper"
ROOT=$(mktemp -d /tmp/kc-initramfs.XXXXXX); trap 'rm -rf "$ROOT"' EXIT
mkdir -p "$ROOT"/{bin,sbin,dev,proc,sys,tmp,etc,app/photos,app/evemu,lib/modules/$KVER}

# ldd fails on a static ELF (and under pipefail its status would spoil a grep of its output).
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || { echo "need a static busybox (apt-get install busybox-static)" >&2; exit 1; }
cp /bin/busybox "$ROOT/bin/busybox"
cp "$APP" "$ROOT/app/kiosk-carousel"
cp "$HERE/guest.sh" "$ROOT/app/guest.sh"
gcc -O2 -Wall -static -o "$ROOT/app/kdgetmode" "$HERE/kdgetmode.c"
gcc -O2 -Wall -static -o "$ROOT/app/evemu-replay" "$HERE/evemu-replay.c"
gcc -O2 -Wall -static -o "$ROOT/app/evdump" "$HERE/evdump.c"
gcc -O2 -Wall -static -o "$ROOT/app/vtswitch" "$HERE/vtswitch.c"
gcc -O2 -Wall -static -o "$ROOT/app/ctlsend" "$HERE/ctlsend.c"
for p in "$@"; do cp "$p" "$ROOT/app/photos/"; done
# vkms, loaded by the drm-vkms-planes case (insmod /app/vkms.ko enable_overlay=1).
[ -z "${KC_VKMS_KO:-}" ] || cp "$KC_VKMS_KO" "$ROOT/app/vkms.ko"
# cec-ctl for the cec-vivid case (its libraries are copied with the others below).
CEC_CTL=$(command -v cec-ctl || true)
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
heif=$(ls /usr/lib/x86_64-linux-gnu/libheif.so.1 2>/dev/null || true)
{ ldd "$APP"; [ -z "$heif" ] || { echo "$heif"; ldd "$heif"; }; [ -z "$CEC_CTL" ] || ldd "$CEC_CTL"; } | grep -o '/[^ ]*' | sort -u | while read -r lib; do
    mkdir -p "$ROOT$(dirname "$lib")"; cp -L "$lib" "$ROOT$lib"
done
# FreeType, HarfBuzz and fontconfig are opened with dlopen when text is first drawn: the same.
for soname in libfreetype.so.6 libharfbuzz.so.0 libfontconfig.so.1; do
    text=/usr/lib/x86_64-linux-gnu/$soname
    { echo "$text"; ldd "$text"; } | grep -o '/[^ ]*' | sort -u | while read -r lib; do
        mkdir -p "$ROOT$(dirname "$lib")"; cp -L "$lib" "$ROOT$lib"
    done
done

# Kernel modules, dependencies first.
: > "$ROOT/etc/modules.order"
for m in $MODULES; do
    modprobe -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }' | while read -r ko; do
        grep -qxF "$ko" "$ROOT/etc/modules.order" && continue
        mkdir -p "$ROOT$(dirname "$ko")"; cp "$ko" "$ROOT$ko"; echo "$ko" >> "$ROOT/etc/modules.order"
    done
done

# Modules the power cases load themselves (power_cases.py), dependencies first: configfs and the
# out-of-tree irq_sim and gpio-sim for presence-gpio; vivid and its media stack for cec-vivid.
lazy_modules() {  # LISTFILE MODULE...
    : > "$ROOT/etc/$1"; local list=$1; shift
    for m in "$@"; do
        modprobe -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }' | while read -r ko; do
            grep -qxF "$ko" "$ROOT/etc/$list" && continue
            mkdir -p "$ROOT$(dirname "$ko")"; cp "$ko" "$ROOT$ko"; echo "$ko" >> "$ROOT/etc/$list"
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
while read -r ko; do insmod "$ko" || echo "KC_INSMOD_FAILED $ko"; done < /etc/modules.order
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
