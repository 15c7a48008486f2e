#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A Debian 13 ("trixie") root with Debian's own Swift (the swiftlang package, 6.0.3), for
# building kiosk-carousel with it and for cross-compiling it to arm64 on an x86-64 machine
# whose own Debian has no Swift (Debian 12). Made once with mmdebstrap and cached; the
# machine's own apt sources are not touched (mmdebstrap writes the root's own).
#
# What is in it (amd64, with arm64 as a foreign dpkg architecture):
#   - what `deploy/apt-deps.sh --tests` installs on a fresh trixie system, swiftlang among
#     them (apt-deps.sh adds it where Debian has it and no swift is on PATH): the amd64 build
#     and the unit tests with Debian's Swift;
#   - the arm64 -dev packages apt-deps.sh lists, libc6-dev, libgcc and libstdc++ for arm64 and
#     binutils-aarch64-linux-gnu (strip, objdump for dpkg-shlibdeps): the sysroot of the
#     cross build is the root itself (multiarch: /usr/lib/aarch64-linux-gnu), and dpkg knows
#     the arm64 libraries, so dpkg-shlibdeps computes the arm64 package's Depends;
#   - for the arm64 kernel suite, Debian 13's arm64 kernel with its modules and a static arm64
#     busybox, unpacked under /opt/arm64-boot (boot/vmlinuz-*, usr/lib/modules/*, usr/bin/busybox);
#   - swiftlang:arm64 and libswiftlang:arm64 unpacked under /opt/swiftlang-arm64 (only
#     usr/libexec/swift/lib: the aarch64 standard library, static and shared, and its
#     modules), which go with the amd64 compiler of the same version (a Swift module is
#     read only by the compiler version that wrote it).
#
#   deploy/swiftlang-root.sh path                       # makes the root if needed, prints its path
#   deploy/swiftlang-root.sh run [--bind DIR]... -- CMD...
#        runs CMD in the root as root, in a private mount namespace (nothing stays mounted):
#        /proc, /sys and /dev from the host, each DIR at the same path inside
# Env: KC_ROOT_CACHE  where roots are kept (default /var/tmp/kiosk-carousel-roots); a root is
#      named after the hash of its recipe here and apt-deps.sh, and older ones are removed.
#      KC_DEBIAN_MIRROR (default http://deb.debian.org/debian).
# Needs root (mmdebstrap's chroot hooks, unshare, chroot), mmdebstrap, and the network for the
# Debian mirror on a cache miss: about 1.2 GB of packages, 4.5 GB unpacked.
set -eu
die() { echo "swiftlang-root.sh: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
cache=${KC_ROOT_CACHE:-/var/tmp/kiosk-carousel-roots}
mirror=${KC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot): run it with sudo"
# The root's name: a hash of its recipe (the lines between the two marks below) and apt-deps.sh.
key=$( { sed -n '/^# recipe: from here/,/^# recipe: to here/p' "$0"; cat "$here/apt-deps.sh"; } | sha256sum | cut -c1-16)
root=$cache/trixie-$key

# recipe: from here
# The arm64 packages of the cross build: apt-deps.sh's libraries, the C runtime and libstdc++
# the Swift runtime links, and the fonts' configuration the text libraries read.
arm64_packages() {
    sed -n 's/^packages="\(.*\)"$/\1/p' "$here/apt-deps.sh" | tr ' ' '\n' | grep -- '^lib.*-dev$' | sed 's/$/:arm64/'
    echo libc6-dev:arm64 libgcc-14-dev:arm64 libstdc++-14-dev:arm64 binutils-aarch64-linux-gnu
}

# Inside mmdebstrap (its customize hook): everything after the base system, in the root $1.
customize() {
    r=$1
    in_root() { chroot "$r" env DEBIAN_FRONTEND=noninteractive "$@"; }
    ! in_root sh -c 'command -v swift' >/dev/null || die "a swift before apt-deps.sh"
    cp "$here/apt-deps.sh" "$r/tmp/apt-deps.sh"
    # INITRD=No: the amd64 kernel --tests brings (for the x86-64 kernel suite) needs no initramfs here.
    in_root env INITRD=No sh /tmp/apt-deps.sh --tests
    in_root swift --version
    # shellcheck disable=SC2046 # a list of packages
    in_root apt-get install -y -q --no-install-recommends $(arm64_packages)
    mkdir -p "$r/tmp/debs" "$r/tmp/boot"
    kernel=$(in_root apt-cache depends linux-image-arm64:arm64 | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)/\1/p' | head -n 1)
    in_root sh -c "cd /tmp/debs && apt-get download -q swiftlang:arm64 libswiftlang:arm64"
    in_root sh -c "cd /tmp/boot && apt-get download -q busybox-static:arm64 $kernel"
    for deb in "$r"/tmp/debs/*.deb; do
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$r/tmp/debs" --wildcards './usr/libexec/swift/lib/swift*'
    done
    mkdir -p "$r/opt/swiftlang-arm64/usr/libexec/swift"
    mv "$r/tmp/debs/usr/libexec/swift/lib" "$r/opt/swiftlang-arm64/usr/libexec/swift/"
    # lib/swift/clang points at ../clang/17, clang's own headers (stddef.h ...): the amd64
    # toolchain's, the same clang, serve every target.
    ln -s /usr/libexec/swift/lib/clang "$r/opt/swiftlang-arm64/usr/libexec/swift/lib/clang"
    mkdir -p "$r/opt/arm64-boot"
    for deb in "$r"/tmp/boot/*.deb; do dpkg-deb -x "$deb" "$r/opt/arm64-boot"; done
    in_root sh -c 'depmod -b /opt/arm64-boot/usr "$(ls /opt/arm64-boot/usr/lib/modules)"'
    rm -rf "$r/tmp/debs" "$r/tmp/boot" "$r/tmp/apt-deps.sh"
    in_root apt-get clean
}

make_root() {
    command -v mmdebstrap >/dev/null || die "mmdebstrap missing: apt-get install -y mmdebstrap"
    mkdir -p "$cache"
    find "$cache" -mindepth 1 -maxdepth 1 -name 'trixie-*' ! -name "trixie-$key" -exec rm -rf {} +
    work=$root.partial
    rm -rf "$work"
    t0=$(date +%s)
    # No manual pages or docs: one compressed differently for each architecture of a
    # Multi-Arch: same package (libpsl-dev's) stops dpkg, and the root needs none.
    mmdebstrap --variant=minbase --architectures=amd64,arm64 --quiet --include=ca-certificates \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/info/*' \
        --customize-hook="\"$here/swiftlang-root.sh\" customize \"\$1\"" \
        trixie "$work" "deb $mirror trixie main" >&2 || die "mmdebstrap failed"
    [ -d "$work/opt/swiftlang-arm64/usr/libexec/swift/lib/swift_static/linux" ] || die "no aarch64 static standard library in $work"
    mv "$work" "$root"
    echo "swiftlang-root.sh: made $root in $(( $(date +%s) - t0 )) s ($(du -sh "$root" | cut -f1))" >&2
}
# recipe: to here

case "${1:-}" in
    customize) customize "$2" ;;
    path)
        [ -f "$root/etc/os-release" ] || make_root
        echo "$root" ;;
    run)
        shift
        binds=""
        while [ $# -gt 0 ] && [ "$1" != "--" ]; do
            case "$1" in
                --bind) [ $# -ge 2 ] || die "--bind needs a folder"; binds="$binds $(cd "$2" && pwd)"; shift 2 ;;
                *) die "run: unknown option $1" ;;
            esac
        done
        [ "${1:-}" = "--" ] || die "usage: swiftlang-root.sh run [--bind DIR]... -- CMD..."
        shift
        [ -f "$root/etc/os-release" ] || make_root
        # shellcheck disable=SC2016 # expanded by the inner shell
        exec unshare --mount --propagation private sh -c '
            set -e
            root=$1 binds=$2; shift 2
            mount --rbind /dev "$root/dev"; mount -t proc proc "$root/proc"; mount --rbind /sys "$root/sys"
            for dir in $binds; do mkdir -p "$root$dir"; mount --bind "$dir" "$root$dir"; done
            exec chroot "$root" env -u LD_LIBRARY_PATH PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root "$@"
        ' sh "$root" "$binds" "$@" ;;
    *) echo "usage: deploy/swiftlang-root.sh path | run [--bind DIR]... -- CMD..." >&2; exit 64 ;;
esac
