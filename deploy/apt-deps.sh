#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages kiosk-carousel needs to build and run from a clone
# (uses sudo when not root). With --tests, also what the test suite needs: Pillow for
# reference decodes, and QEMU, Debian's kernel and busybox for the real-kernel display tests.
# (--tests also brings systemd, dpkg-dev and lintian: systemd-analyze, dpkg-shlibdeps and
# lintian check the unit and the .deb; jpegtran from libjpeg-turbo-progs makes many-scan JPEGs;
# cwebp/dwebp (webp), heif-enc/heif-convert (libheif-examples) and gifsicle make and decode the
# WebP, HEIF, AVIF and GIF test files; avifenc (libavif-bin) the lossless HDR and P3 AVIFs and
# exiftool (libimage-exiftool-perl) the embedded ICC profiles of the colour tests; mmdebstrap
# and e2fsprogs: the system suite makes a Debian 12 disk image with the .deb installed and
# boots it; dbus-daemon: a private bus for QEMU's D-Bus display, which disables and enables the
# virtio-gpu output.)
# (fonts-wqy-microhei and fonts-symbola: the caption tests' fallback fonts for Chinese and for
# emoji and symbols; groff-base: groff checks the manual page; linux-headers-amd64 and
# linux-source-6.1: the kernel suite builds vkms out of tree, Tests/kernel/vkms/; mosquitto and
# mosquitto-clients: the MQTT tests' broker and its mosquitto_sub, mosquitto_pub and
# mosquitto_passwd.)
# With --bench, also the reference tools of the benchmark (vipsthumbnail, djpeg, dwebp,
# heif-convert, and cwebp/heif-enc/avifenc that make its WebP, HEIC and AVIF).
set -eu
run() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
packages="libjpeg62-turbo-dev libpng-dev libwebp-dev libheif-dev libgif-dev liblcms2-dev libdrm-dev libevdev-dev libssl-dev libcurl4-openssl-dev libjansson-dev libfreetype-dev libharfbuzz-dev libfontconfig-dev libfribidi-dev libmosquitto-dev fonts-dejavu-core pkg-config dpkg-dev binutils"
for arg in "$@"; do
    case "$arg" in
        --tests) packages="$packages nginx-light tinyproxy openssl python3-pil libjpeg-turbo-progs webp libheif-examples gifsicle libavif-bin libimage-exiftool-perl fonts-wqy-microhei fonts-symbola qemu-system-x86 linux-image-amd64 busybox-static cpio kmod file gcc libc6-dev systemd dpkg-dev lintian mmdebstrap e2fsprogs dbus-daemon linux-headers-amd64 linux-source-6.1 make patch xz-utils groff-base mosquitto mosquitto-clients" ;;
        --bench) packages="$packages libvips-tools libjpeg-turbo-progs webp libheif-examples libavif-bin gcc libc6-dev" ;;
        *) echo "usage: deploy/apt-deps.sh [--tests] [--bench]" >&2; exit 64 ;;
    esac
done
# tzdata: the schedule tests walk through Europe/Berlin's daylight-saving changes with libc.
case " $* " in *" --tests "*) packages="$packages tzdata" ;; esac
export DEBIAN_FRONTEND=noninteractive
run apt-get update -q
# shellcheck disable=SC2086
run apt-get install -y -q --no-install-recommends $packages
