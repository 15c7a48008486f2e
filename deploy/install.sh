#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs kiosk-carousel on a Debian 12 device as a boot-time service, without a package
# (deploy/build-deb.sh makes the .deb, the other way):
#   - the apt packages it needs at run time (and to build it, when building here),
#   - the release binary as /usr/local/bin/kiosk-carousel (built here, with the static Swift
#     standard library, unless BINARY=path is given),
#   - a system user and group `kiosk`, in the groups video, render and kiosk-touch (and taken
#     out of input and tty, where earlier versions put it),
#   - the udev rule that gives touchscreens the group kiosk-touch, as
#     /etc/udev/rules.d/70-kiosk-carousel-touch.rules,
#   - the systemd unit as /etc/systemd/system/kiosk-carousel.service (ExecStart pointing at
#     /usr/local/bin), enabled for multi-user.target,
#   - /etc/kiosk-carousel/kiosk-carousel.conf, the show's options (an existing one is never
#     overwritten; the new default is put beside it as kiosk-carousel.conf.dist),
#   - the sample photos in /usr/local/share/kiosk-carousel/samples, and as the first show in
#     /var/lib/kiosk-carousel/images when that folder is empty,
#   - the README and copyright in /usr/local/share/doc/kiosk-carousel, the manual page in
#     /usr/local/share/man/man1.
# The service starts at the next boot, or now with `systemctl start kiosk-carousel` (it takes
# tty1 over: a login there ends). When it is already running (an upgrade), it is restarted.
#
#   sudo deploy/install.sh                            # build here and install
#   sudo BINARY=./kiosk-carousel deploy/install.sh    # install a binary built elsewhere
#   DESTDIR=/tmp/root BINARY=./kiosk-carousel deploy/install.sh
#
# With DESTDIR=/some/root it only lays the files out under that root (for a device image, or a
# test): no apt-get, no user, no chown, no systemctl; the unit is enabled with the symlink
# `systemctl enable` would make, and root is not needed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
destdir=${DESTDIR:-}
case "$destdir" in
    ""|/*) ;;
    *) destdir=$(pwd)/$destdir ;;
esac
destdir=${destdir%/}
# libgpiod2: libgpiod 1.6 (Debian 12), replaced by libgpiod3 (2.x) where apt has it (Debian 13).
runtime_packages="libjpeg62-turbo libpng16-16 libdrm2 libevdev2 libgpiod2 libssl3 libcurl4 libjansson4 zlib1g libfreetype6 libharfbuzz0b libfontconfig1 libfribidi0 fonts-dejavu-core ca-certificates adduser"
build_packages="libjpeg62-turbo-dev libpng-dev libdrm-dev libevdev-dev libgpiod-dev libssl-dev libcurl4-openssl-dev libjansson-dev libfreetype-dev libharfbuzz-dev libfontconfig-dev libfribidi-dev pkg-config"

say() { echo "install.sh: $*"; }
die() { echo "install.sh: $*" >&2; exit 1; }

if [ -z "$destdir" ]; then
    [ "$(id -u)" = 0 ] || die "run as root (sudo), or give DESTDIR=/some/root to lay the files out only"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # The program opens either libgpiod with dlopen (--presence gpio:...).
    if apt-cache show libgpiod3 >/dev/null 2>&1; then
        runtime_packages=$(echo "$runtime_packages" | sed 's/ libgpiod2 / libgpiod3 /')
    fi
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $runtime_packages
fi

if [ -z "${BINARY:-}" ]; then
    command -v swift >/dev/null || die "no Swift toolchain here; build elsewhere and pass BINARY=path"
    if [ -z "$destdir" ]; then
        # shellcheck disable=SC2086
        apt-get install -y -q --no-install-recommends $build_packages
    fi
    (cd "$repo" && swift build -c release --static-swift-stdlib --product kiosk-carousel)
    BINARY="$repo/.build/release/kiosk-carousel"
fi
[ -f "$BINARY" ] && [ -x "$BINARY" ] || die "BINARY=$BINARY is not an executable file"

install -d -m 0755 "$destdir/usr/local/bin" "$destdir/etc/systemd/system/multi-user.target.wants" \
    "$destdir/etc/kiosk-carousel" "$destdir/usr/local/share/kiosk-carousel/samples" "$destdir/etc/udev/rules.d" \
    "$destdir/usr/local/share/doc/kiosk-carousel" "$destdir/usr/local/share/man/man1" \
    "$destdir/var/lib/kiosk-carousel/images"
install -m 0755 "$BINARY" "$destdir/usr/local/bin/kiosk-carousel"

install -m 0644 "$here/70-kiosk-carousel-touch.rules" "$destdir/etc/udev/rules.d/70-kiosk-carousel-touch.rules"

# The unit, pointing at /usr/local. A unit in /etc/systemd/system takes precedence over the
# .deb's in /lib/systemd/system.
sed -e 's|/usr/bin/kiosk-carousel|/usr/local/bin/kiosk-carousel|' \
    -e 's|/usr/share/doc/kiosk-carousel|/usr/local/share/doc/kiosk-carousel|' \
    "$here/kiosk-carousel.service" > "$destdir/etc/systemd/system/kiosk-carousel.service.new"
chmod 0644 "$destdir/etc/systemd/system/kiosk-carousel.service.new"
mv "$destdir/etc/systemd/system/kiosk-carousel.service.new" "$destdir/etc/systemd/system/kiosk-carousel.service"

# The configuration: never overwritten.
conf="$destdir/etc/kiosk-carousel/kiosk-carousel.conf"
if [ -e "$conf" ]; then
    if ! cmp -s "$here/kiosk-carousel.conf" "$conf"; then
        install -m 0644 "$here/kiosk-carousel.conf" "$conf.dist"
        say "kept your /etc/kiosk-carousel/kiosk-carousel.conf; the new default is kiosk-carousel.conf.dist beside it"
    fi
else
    install -m 0644 "$here/kiosk-carousel.conf" "$conf"
fi
if [ -e "$destdir/etc/default/kiosk-carousel" ]; then
    say "note: /etc/default/kiosk-carousel is no longer read; move its options to /etc/kiosk-carousel/kiosk-carousel.conf"
fi

install -m 0644 "$here"/samples/*.jpg "$here/samples/README.md" "$here/samples/LICENSE-LGPL-3" \
    "$destdir/usr/local/share/kiosk-carousel/samples/"
if [ -z "$(ls -A "$destdir/var/lib/kiosk-carousel/images")" ]; then
    install -m 0644 "$here"/samples/*.jpg "$destdir/var/lib/kiosk-carousel/images/"
fi
install -m 0644 "$here/copyright" "$destdir/usr/local/share/doc/kiosk-carousel/"
gzip -9n < "$repo/README.md" > "$destdir/usr/local/share/doc/kiosk-carousel/README.md.gz"
gzip -9n < "$here/kiosk-carousel.1" > "$destdir/usr/local/share/man/man1/kiosk-carousel.1.gz"
chmod 0644 "$destdir/usr/local/share/doc/kiosk-carousel/README.md.gz" "$destdir/usr/local/share/man/man1/kiosk-carousel.1.gz"

if [ -n "$destdir" ]; then
    ln -sf /etc/systemd/system/kiosk-carousel.service \
        "$destdir/etc/systemd/system/multi-user.target.wants/kiosk-carousel.service"
    say "laid out under $destdir (no packages, user or systemctl: DESTDIR mode)"
    exit 0
fi

# The user and its groups, the service's only ones (render is missing on systems without a
# render node yet; kiosk-touch is the touchscreens', by the udev rule above).
getent group render >/dev/null || addgroup --system render
getent group kiosk-touch >/dev/null || addgroup --system kiosk-touch
if ! getent passwd kiosk >/dev/null; then
    adduser --system --group --no-create-home --home /var/lib/kiosk-carousel \
        --shell /usr/sbin/nologin --gecos "kiosk-carousel slideshow" kiosk
fi
usermod -a -G video,render,kiosk-touch kiosk
# gpio (Raspberry Pi OS: /dev/gpiochip*), for a motion sensor (--presence), where it exists.
if getent group gpio >/dev/null; then usermod -a -G gpio kiosk; fi
# Earlier versions put kiosk in input (every keyboard) and tty: no longer.
for group in input tty; do
    if id -nG kiosk | tr ' ' '\n' | grep -qx "$group"; then gpasswd -d kiosk "$group" >/dev/null; fi
done
if [ -d /run/udev ]; then
    udevadm control --reload-rules || true
    udevadm trigger --action=change --subsystem-match=input || true
fi

systemctl daemon-reload
systemctl enable kiosk-carousel.service
if systemctl is-active --quiet kiosk-carousel.service; then
    systemctl restart kiosk-carousel.service
    say "kiosk-carousel restarted; logs: journalctl -u kiosk-carousel -f"
else
    say "kiosk-carousel installed and enabled: it starts at the next boot, or now with"
    say "  systemctl start kiosk-carousel    (it takes tty1 over: a login there ends)"
    say "options: /etc/kiosk-carousel/kiosk-carousel.conf; logs: journalctl -u kiosk-carousel -f"
fi
