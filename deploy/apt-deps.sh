#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages kiosk-carousel needs to build and run from a clone (Debian 12,
# Debian 13 and Raspberry Pi OS based on either; uses sudo when not root). Where no `swift` is
# on PATH and Debian has Swift (the swiftlang package: Debian 13 "trixie" and later, Raspberry
# Pi OS on trixie), it installs swiftlang too; on Debian 12 Swift comes from swift.org. With --tests, also what the test suite needs: Pillow for
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
# linux-source-6.1: the kernel suite builds vkms, gpio-sim and irq_sim out of tree,
# Tests/kernel/vkms/ and gpio-sim/, for Debian 12's kernel, so only where Debian has
# linux-source-6.1; v4l-utils: its cec-ctl plays the TV in the kernel suite's cec-vivid case;
# mosquitto and mosquitto-clients: the MQTT
# tests' broker and its mosquitto_sub, mosquitto_pub and mosquitto_passwd; qemu-system-arm and
# qemu-user-static: the arm64 suites (Tests/arm64) boot Debian's arm64 kernel and run arm64
# programs through binfmt_misc.)
# With --bench, also the reference tools of the benchmark (vipsthumbnail, djpeg, dwebp,
# heif-convert, and cwebp/heif-enc/avifenc that make its WebP, HEIC and AVIF).
set -eu
run() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
packages="libjpeg62-turbo-dev libpng-dev libwebp-dev libheif-dev libde265-dev libavif-dev libgif-dev liblcms2-dev libdrm-dev libevdev-dev libgpiod-dev libssl-dev libcurl4-openssl-dev libjansson-dev libfreetype-dev libharfbuzz-dev libfontconfig-dev libfribidi-dev libmosquitto-dev fonts-dejavu-core pkg-config dpkg-dev binutils"
for arg in "$@"; do
    case "$arg" in
        --tests) packages="$packages nginx-light tinyproxy openssl python3-pil libjpeg-turbo-progs webp libheif-examples gifsicle libavif-bin libimage-exiftool-perl fonts-wqy-microhei fonts-symbola qemu-system-x86 linux-image-amd64 busybox-static cpio kmod file gcc libc6-dev systemd dpkg-dev lintian mmdebstrap e2fsprogs dbus-daemon make patch xz-utils groff-base v4l-utils mosquitto mosquitto-clients qemu-system-arm qemu-user-static" ;;
        --bench) packages="$packages libvips-tools libjpeg-turbo-progs webp libheif-examples libavif-bin gcc libc6-dev" ;;
        *) echo "usage: deploy/apt-deps.sh [--tests] [--bench]" >&2; exit 64 ;;
    esac
done
# tzdata: the schedule tests walk through Europe/Berlin's daylight-saving changes with libc.
case " $* " in *" --tests "*) packages="$packages tzdata" ;; esac
# Debian 13's libheif encodes through plug-ins that heif-enc needs (Debian 12's has them built in).
heif_encoders="libheif-plugin-x265 libheif-plugin-aomenc"
export DEBIAN_FRONTEND=noninteractive
run apt-get update -q
case " $* " in
    *" --tests "*|*" --bench "*)
        if apt-cache show libheif-plugin-x265 >/dev/null 2>&1; then packages="$packages $heif_encoders"; fi ;;
esac
# The vkms source is 6.1's (Debian 12's kernel); Debian 13 has neither it nor that kernel. (apt
# reads a name with a dot as a pattern too, so only the exact name counts: 6.1 matches 6.12.)
case " $* " in
    *" --tests "*)
        if apt-cache show linux-source-6.1 2>/dev/null | grep -qx 'Package: linux-source-6.1'; then
            packages="$packages linux-headers-amd64 linux-source-6.1"
        fi ;;
esac
if ! command -v swift >/dev/null 2>&1; then
    if apt-cache show swiftlang >/dev/null 2>&1; then
        # Its compiler links the release build's static Swift runtime with libstdc++
        # (--static-swift-stdlib, deploy/build-deb.sh), whose -dev package swiftlang does not bring.
        packages="$packages swiftlang"
        # The newest libstdc++-N-dev the release has (Debian 13: 14, its default compiler's).
        stdcxx=$(apt-cache search --names-only '^libstdc\+\+-[0-9]+-dev$' | cut -d' ' -f1 | sort -V | tail -n 1)
        [ -z "$stdcxx" ] || packages="$packages $stdcxx"
    else
        echo "apt-deps.sh: no swift on PATH and no swiftlang package here: install a Swift 6 toolchain from swift.org" >&2
    fi
fi
# shellcheck disable=SC2086
run apt-get install -y -q --no-install-recommends $packages
