#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages kiosk-carousel needs to build and run from a clone
# (uses sudo when not root). With --tests, also what the test suite needs: Pillow for
# reference decodes, and QEMU, Debian's kernel and busybox for the real-kernel display tests.
# (--tests also brings systemd, dpkg-dev and lintian: systemd-analyze, dpkg-shlibdeps and
# lintian check the unit and the .deb; jpegtran from libjpeg-turbo-progs makes many-scan JPEGs;
# cwebp/dwebp (webp), heif-enc/heif-convert (libheif-examples) and gifsicle make and decode the
# WebP, HEIF, AVIF and GIF test files; mmdebstrap and e2fsprogs: the system suite makes a
# Debian 12 disk image with the .deb installed and boots it; dbus-daemon: a private bus for
# QEMU's D-Bus display, which disables and enables the virtio-gpu output.)
# (fonts-wqy-microhei: the Chinese caption tests' fallback font; groff-base: groff checks the
# manual page; linux-headers-amd64 and linux-source-6.1: the kernel suite builds vkms, gpio-sim
# and irq_sim out of tree, Tests/kernel/vkms/ and gpio-sim/; v4l-utils: its cec-ctl plays the TV
# in the kernel suite's cec-vivid case; mosquitto and mosquitto-clients: the MQTT tests' broker and
# its mosquitto_sub, mosquitto_pub and mosquitto_passwd.)
# With --bench, also the reference tools of the benchmark (vipsthumbnail, djpeg, dwebp,
# heif-convert, and cwebp/heif-enc that make its WebP and HEIC).
set -eu
run() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
packages="libjpeg62-turbo-dev libpng-dev libwebp-dev libheif-dev libgif-dev libdrm-dev libevdev-dev libgpiod-dev libssl-dev libcurl4-openssl-dev libjansson-dev libfreetype-dev libharfbuzz-dev libfontconfig-dev libmosquitto-dev fonts-dejavu-core pkg-config dpkg-dev binutils"
for arg in "$@"; do
    case "$arg" in
        --tests) packages="$packages nginx-light tinyproxy openssl python3-pil libjpeg-turbo-progs webp libheif-examples gifsicle fonts-wqy-microhei qemu-system-x86 linux-image-amd64 busybox-static cpio kmod file gcc libc6-dev systemd dpkg-dev lintian mmdebstrap e2fsprogs dbus-daemon linux-headers-amd64 linux-source-6.1 make patch xz-utils groff-base v4l-utils mosquitto mosquitto-clients" ;;
        --bench) packages="$packages libvips-tools libjpeg-turbo-progs webp libheif-examples gcc libc6-dev" ;;
        *) echo "usage: deploy/apt-deps.sh [--tests] [--bench]" >&2; exit 64 ;;
    esac
done
# tzdata: the schedule tests walk through Europe/Berlin's daylight-saving changes with libc.
case " $* " in *" --tests "*) packages="$packages tzdata" ;; esac
export DEBIAN_FRONTEND=noninteractive
run apt-get update -q
# shellcheck disable=SC2086
run apt-get install -y -q --no-install-recommends $packages
