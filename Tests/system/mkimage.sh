#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Makes the system suite's Debian disk image (Debian 12 for amd64; with ARCH=arm64 Debian 13, the
# base of today's Raspberry Pi OS, its maintainer scripts run by qemu-user through binfmt_misc):
# mmdebstrap (minbase, systemd as PID 1, udev,
# Debian's kernel and initramfs-tools), the project's .deb installed with `apt-get install
# ./kiosk-carousel_*.deb` as a user would, then an ext4 image of it (mkfs.ext4 -d: no loop
# mounts). Needs root (the chroot hooks) and the network for the Debian mirror apt uses here.
#
#   Tests/system/mkimage.sh DEB NEWER_DEB OUTDIR PHOTO_A PHOTO_B
#
# OUTDIR gets image.raw (ext4, 2 GiB sparse), vmlinuz and initrd.img (the image's own).
# In the image, for the suite (nothing of this changes the package or its unit):
#   - root logs in by itself on the serial console, ttyS0 (ttyAMA0 on arm64; tty1 is left as
#     the package has it);
#   - nginx-light serves a manifest on 127.0.0.1:8080 (/srv/kiosk-show: show.json naming
#     PHOTO_A and PHOTO_B as a.jpg and b.jpg), and the shipped configuration gets a
#     `manifest http://127.0.0.1:8080/show.json` line (an edit dpkg must keep on upgrade);
#   - the user `tester`, a member of the group kiosk, for the control socket;
#   - /root/upgrade/NEWER_DEB for the upgrade case, /usr/local/bin/kc-vt (KDGETMODE and
#     VT_GETMODE of a tty), a persistent journal, no network but loopback (iproute2 routes
#     the sandbox case's link-local probes to it).
set -eu
[ $# -eq 5 ] || { echo "usage: mkimage.sh DEB NEWER_DEB OUTDIR PHOTO_A PHOTO_B" >&2; exit 64; }
deb=$1 newer=$2 out=$3 photo_a=$4 photo_b=$5
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/kc-system-rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
here=$(cd "$(dirname "$0")" && pwd)
arch=${ARCH:-amd64}
case "$arch" in
    amd64) suite=bookworm console=ttyS0 ;;
    arm64) suite=trixie console=ttyAMA0 ;;
    *) echo "mkimage.sh: ARCH=$arch: amd64 or arm64" >&2; exit 64 ;;
esac

mmdebstrap --variant=minbase --quiet --architectures="$arch" \
    --include=systemd,systemd-sysv,udev,dbus,kmod,linux-image-$arch,initramfs-tools,procps,python3,socat,nginx-light,iproute2 \
    --customize-hook="copy-in $deb /tmp" \
    --customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q /tmp/'"$(basename "$deb")" \
    --customize-hook='rm -f "$1"/tmp/*.deb; chroot "$1" apt-get clean' \
    "$suite" "$root"

echo kiosk > "$root/etc/hostname"
echo "127.0.1.1 kiosk" >> "$root/etc/hosts"
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$root/etc/fstab"
mkdir -p "$root/var/log/journal"
chroot "$root" passwd -d root >/dev/null
mkdir -p "$root/etc/systemd/system/serial-getty@$console.service.d"
cat > "$root/etc/systemd/system/serial-getty@$console.service.d/autologin.conf" <<'UNIT'
[Service]
ExecStart=
ExecStart=-/sbin/agetty -o '-p -f -- \\u' --keep-baud --autologin root 115200 - $TERM
UNIT
# No timers or daily jobs doing work in the background of a measured boot.
rm -rf "$root/etc/systemd/system/timers.target.wants"

# The manifest on loopback nginx.
mkdir -p "$root/srv/kiosk-show"
cp "$photo_a" "$root/srv/kiosk-show/a.jpg"
cp "$photo_b" "$root/srv/kiosk-show/b.jpg"
printf '{"items":[{"src":"a.jpg"},{"src":"b.jpg"}]}\n' > "$root/srv/kiosk-show/show.json"
rm -f "$root/etc/nginx/sites-enabled/default"
cat > "$root/etc/nginx/sites-enabled/kiosk-show" <<'NGINX'
server {
    listen 127.0.0.1:8080;
    root /srv/kiosk-show;
}
NGINX
echo "manifest http://127.0.0.1:8080/show.json" >> "$root/etc/kiosk-carousel/kiosk-carousel.conf"

chroot "$root" useradd --create-home --groups kiosk --shell /bin/sh tester
mkdir -p "$root/root/upgrade"
cp "$newer" "$root/root/upgrade/"
install -m 0755 "$here/kc-vt" "$root/usr/local/bin/kc-vt"

# What the package did, for the log.
chroot "$root" id kiosk
chroot "$root" systemctl is-enabled kiosk-carousel.service

rm -f "$out/image.raw"
mkfs.ext4 -q -F -L kioskroot -d "$root" "$out/image.raw" 2G
cp "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -1)" "$out/vmlinuz"
cp "$(ls "$root"/boot/initrd.img-* | sort -V | tail -1)" "$out/initrd.img"
