#!/bin/sh
# Installs kiosk-carousel on a Debian 12 device as a boot-time service:
#   - the apt packages it needs at run time (and to build it, when building here),
#   - the release binary in /usr/local/bin (built here unless BINARY=path is given),
#   - a system user `kiosk` in the video, input, render and tty groups,
#   - the systemd unit, /etc/default/kiosk-carousel, and the sample photos as the first show
#     (only when /var/lib/kiosk-carousel/images is empty),
# then enables and starts the service. Run as root from a clone of the repository:
#   sudo deploy/install.sh            # build and install
#   sudo BINARY=./kiosk-carousel deploy/install.sh   # install a binary built elsewhere
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
[ "$(id -u)" = 0 ] || { echo "install.sh: run as root (sudo)" >&2; exit 1; }

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends libjpeg62-turbo libpng16-16 libdrm2 libevdev2 libssl3 libcurl4 ca-certificates

if [ -z "${BINARY:-}" ]; then
    command -v swift >/dev/null || { echo "install.sh: no Swift toolchain; build elsewhere and pass BINARY=path" >&2; exit 1; }
    apt-get install -y -q --no-install-recommends libjpeg62-turbo-dev libpng-dev libdrm-dev libevdev-dev libssl-dev libcurl4-openssl-dev pkg-config
    (cd "$repo" && swift build -c release --static-swift-stdlib --product kiosk-carousel)
    BINARY="$repo/.build/release/kiosk-carousel"
fi
install -m 0755 "$BINARY" /usr/local/bin/kiosk-carousel

getent group render >/dev/null || groupadd --system render
if ! id kiosk >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /var/lib/kiosk-carousel --shell /usr/sbin/nologin kiosk
fi
usermod -a -G video,input,render,tty kiosk

install -d -m 0755 /var/lib/kiosk-carousel/images
if [ -z "$(ls -A /var/lib/kiosk-carousel/images)" ]; then
    install -m 0644 "$here"/samples/*.jpg /var/lib/kiosk-carousel/images/
fi
install -d -m 0755 /usr/local/share/doc/kiosk-carousel
install -m 0644 "$repo/README.md" "$here/samples/README.md" "$here/samples/LICENSE-LGPL-3" /usr/local/share/doc/kiosk-carousel/
[ -e /etc/default/kiosk-carousel ] || install -m 0644 "$here/kiosk-carousel.default" /etc/default/kiosk-carousel
install -m 0644 "$here/kiosk-carousel.service" /etc/systemd/system/kiosk-carousel.service

systemctl daemon-reload
systemctl enable kiosk-carousel.service
systemctl restart kiosk-carousel.service
echo "kiosk-carousel installed; logs: journalctl -u kiosk-carousel -f"
