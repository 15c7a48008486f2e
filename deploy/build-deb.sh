#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds kiosk-carousel_VERSION-REVISION_ARCH.deb with dpkg-deb (no debhelper needed):
#   /usr/bin/kiosk-carousel                       the release binary (static Swift stdlib), stripped
#   /lib/systemd/system/kiosk-carousel.service    the unit, enabled by postinst (/usr/lib/systemd/system
#                                                 from Debian 13 on, where /lib is only an alias)
#   /etc/kiosk-carousel/kiosk-carousel.conf       the options (a conffile: dpkg keeps your edits)
#   /usr/share/kiosk-carousel/samples/            the sample photos (copied into
#                                                 /var/lib/kiosk-carousel/images on first install)
#   /usr/share/doc/kiosk-carousel/                copyright, changelog.Debian.gz (made from
#                                                 CHANGELOG.md), changelog.gz (CHANGELOG.md
#                                                 itself), README.md.gz
#   /usr/share/man/man1/kiosk-carousel.1.gz       the manual page
# Depends is computed from the binary's shared libraries with dpkg-shlibdeps (each library
# must come from a Debian package: build with --static-swift-stdlib), plus adduser and
# ca-certificates. postinst creates the system user `kiosk` (groups video, input, render, tty)
# and enables the service (it starts at the next boot; an upgrade restarts a running one);
# prerm stops it on removal; purge removes /var/cache/kiosk-carousel and the state (the
# images folder /var/lib/kiosk-carousel/images is left: it may hold your photos).
#
#   deploy/build-deb.sh                          # swift build -c release here, then package
#   deploy/build-deb.sh --arch arm64             # the arm64 package (Raspberry Pi OS, Debian 13)
#   BINARY=path/to/kiosk-carousel deploy/build-deb.sh
# Environment: BINARY (default: build it), VERSION (default: the top-level VERSION file, the
# one place the version is written), REVISION (the Debian revision, 1), OUTDIR (the current
# directory), ARCH (the same as --arch; default dpkg --print-architecture), MAINTAINER, STRIP=0
# to keep symbols, SCRATCH_PATH (swift build's, default .build in the repository, and
# .build/cross-ARCH for a cross build), SOURCE_DATE_EPOCH (default: the time of the
# repository's last commit).
#
# --arch arm64 on an x86-64 machine cross-compiles: with Debian 13's Swift (swiftlang 6.0.3),
# the arm64 libraries from Debian 13 as its sysroot and swiftlang:arm64's aarch64 standard
# library, all in the root deploy/swiftlang-root.sh makes (once, cached; needs root). The
# build, dpkg-shlibdeps and the packing run inside that root, so the package's Depends are the
# arm64 libraries of Debian 13 and its changelog names trixie. On an arm64 machine (a Raspberry
# Pi with Raspberry Pi OS) the build is native, as for amd64.
#
# Reproducible (https://reproducible-builds.org/docs/): the same commit gives the same .deb,
# byte for byte, wherever the repository and the scratch path are. Every file time is
# SOURCE_DATE_EPOCH, owners are root/root (--root-owner-group), modes are set by umask and
# install, dpkg-deb sorts the archive members, gzip gets -n, and the compilers map the build
# paths to fixed names (-file-prefix-map for swiftc, -ffile-prefix-map for clang) so no path
# of the build machine is in the binary.
# A BINARY that is not an ELF file (a test's stand-in script) gets Depends from a fixed list
# of the libraries the real binary links (printed as a warning).
set -eu
die() { echo "build-deb.sh: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) [ $# -ge 2 ] || die "--arch needs an architecture (amd64, arm64)"; ARCH=$2; shift 2 ;;
        --arch=*) ARCH=${1#--arch=}; shift ;;
        *) die "unknown argument $1 (usage: deploy/build-deb.sh [--arch ARCH])" ;;
    esac
done
if [ -z "${VERSION:-}" ]; then
    VERSION=$(head -n 1 "$repo/VERSION")
fi
version=$VERSION
revision=${REVISION:-1}
debversion="$version-$revision"
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || true)
    [ -n "$SOURCE_DATE_EPOCH" ] || die "SOURCE_DATE_EPOCH unset and $repo is not a git checkout: set it (seconds since 1970)"
fi
export SOURCE_DATE_EPOCH
# The project has no public address yet: .invalid (RFC 2606) marks this one as a placeholder.
maintainer=${MAINTAINER:-kiosk-carousel developers <maintainers@kiosk-carousel.invalid>}
host_arch=$(dpkg --print-architecture)
arch=${ARCH:-$host_arch}
outdir=${OUTDIR:-$(pwd)}
case "$arch" in
    amd64) triple=x86_64-unknown-linux-gnu ;;
    arm64) triple=aarch64-unknown-linux-gnu ;;
    *) [ "$arch" = "$host_arch" ] || die "ARCH=$arch: only amd64 and arm64 can be built on $host_arch" ;;
esac
multiarch=$(dpkg-architecture -a "$arch" -q DEB_HOST_MULTIARCH 2>/dev/null) || die "dpkg-architecture missing: apt-get install -y dpkg-dev"
# The cross build runs in Debian 13's root (deploy/swiftlang-root.sh), this script again in it,
# with the repository and the output folder at the same paths.
if [ -z "${BINARY:-}" ] && [ "$arch" != "$host_arch" ] && [ ! -d "/opt/swiftlang-$arch" ]; then
    mkdir -p "$outdir"
    outdir=$(cd "$outdir" && pwd)
    as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    status=0
    as_root env ${KC_ROOT_CACHE:+KC_ROOT_CACHE="$KC_ROOT_CACHE"} "$here/swiftlang-root.sh" run --bind "$repo" --bind "$outdir" \
        ${SCRATCH_PATH:+--bind "$(mkdir -p "$SCRATCH_PATH" && cd "$SCRATCH_PATH" && pwd)"} -- \
        env SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" VERSION="$version" REVISION="$revision" OUTDIR="$outdir" \
        MAINTAINER="$maintainer" STRIP="${STRIP:-1}" ${SCRATCH_PATH:+SCRATCH_PATH="$SCRATCH_PATH"} \
        "$here/build-deb.sh" --arch "$arch" || status=$?
    [ "$(id -u)" = 0 ] || as_root chown -R "$(id -u):$(id -g)" "$outdir" "${SCRATCH_PATH:-$repo/.build}"
    exit $status
fi
# The Debian release the package is for: the one it is built on (its libraries' versions).
distribution=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null)
distribution=${distribution:-stable}
fallback_depends="libc6, libgcc-s1, libstdc++6, libjpeg62-turbo, libpng16-16, libwebp7, libwebpdemux2, libgif7, liblcms2-2, libdrm2, libevdev2, libjansson4, zlib1g"

case "$version" in
    [0-9]*) ;;
    *) die "VERSION=$version: a Debian version starts with a digit" ;;
esac
case "$version$revision" in
    *[!0-9A-Za-z.+~]*) die "VERSION=$version REVISION=$revision: only digits, letters and . + ~ are allowed" ;;
esac
command -v dpkg-deb >/dev/null || die "dpkg-deb missing: apt-get install -y dpkg"

if [ -z "${BINARY:-}" ]; then
    cross=""
    scratch=${SCRATCH_PATH:-$repo/.build}
    if [ "$arch" != "$host_arch" ]; then
        # Debian 13's swiftc with swiftlang:arm64's standard library (the same version; its
        # static resource folder, swift_static, as this build links it statically) and the
        # arm64 libraries in /usr/lib/$multiarch; pkg-config reads their .pc files only; lld
        # (swiftlang's) links.
        scratch=${SCRATCH_PATH:-$repo/.build/cross-$arch}
        stdlib=/opt/swiftlang-$arch/usr/libexec/swift/lib/swift_static
        [ -d "$stdlib/linux" ] || die "no $arch Swift standard library in $stdlib (deploy/swiftlang-root.sh puts it there)"
        export PKG_CONFIG_LIBDIR="/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig"
        export PKG_CONFIG_PATH="/usr/lib/$multiarch/pkgconfig"   # SwiftPM reads the .pc files itself: this folder first
        cross="--triple $triple -Xswiftc -resource-dir -Xswiftc $stdlib -Xswiftc -use-ld=lld -Xlinker -L/usr/lib/$multiarch"
    fi
    # The build paths are mapped to fixed names, so they leave no trace in the binary; no
    # debug information is made (the package strips it anyway, and the linker's build id,
    # a hash taken before stripping, would carry its path differences); swiftc's incremental
    # LLVM code generation is off: it stores a hash of each module's IR (section
    # .swift_modhash) that differs from one checkout path to another.
    # shellcheck disable=SC2086 # $cross is a list of words
    (cd "$repo" && swift build -c release --static-swift-stdlib --product kiosk-carousel --scratch-path "$scratch" $cross \
        -debug-info-format none -Xswiftc -Xfrontend -Xswiftc -disable-incremental-llvm-codegen \
        -Xswiftc -file-prefix-map -Xswiftc "$repo=/usr/src/kiosk-carousel" \
        -Xswiftc -file-prefix-map -Xswiftc "$scratch=/usr/src/kiosk-carousel/.build" \
        -Xcc "-ffile-prefix-map=$repo=/usr/src/kiosk-carousel" \
        -Xcc "-ffile-prefix-map=$scratch=/usr/src/kiosk-carousel/.build")
    BINARY="$scratch/release/kiosk-carousel"
    [ -z "$cross" ] || BINARY="$scratch/$triple/release/kiosk-carousel"
fi
[ -f "$BINARY" ] && [ -x "$BINARY" ] || die "BINARY=$BINARY is not an executable file"

work=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-carousel-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
umask 022
# Debian 13 finished merging /lib into /usr/lib: packages ship there (lintian: aliased-location).
unitdir=usr/lib/systemd/system
[ "$distribution" != bookworm ] || unitdir=lib/systemd/system
install -d "$root/DEBIAN" "$root/usr/bin" "$root/$unitdir" "$root/etc/kiosk-carousel" \
    "$root/usr/share/kiosk-carousel/samples" "$root/usr/share/doc/kiosk-carousel" "$root/usr/share/man/man1"

install -m 0755 "$BINARY" "$root/usr/bin/kiosk-carousel"
is_elf=no
if [ "$(head -c 4 "$BINARY" | od -An -c | tr -d ' ')" = "177ELF" ]; then is_elf=yes; fi
if [ "$is_elf" = yes ] && [ "${STRIP:-1}" != 0 ]; then
    strip=strip
    [ "$arch" = "$host_arch" ] || strip=$(dpkg-architecture -a "$arch" -q DEB_HOST_GNU_TYPE 2>/dev/null)-strip
    "$strip" --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/kiosk-carousel"
fi
install -m 0644 "$here/kiosk-carousel.service" "$root/$unitdir/kiosk-carousel.service"
udevdir=${unitdir%systemd/system}udev/rules.d
install -d "$root/$udevdir"
install -m 0644 "$here/70-kiosk-carousel-touch.rules" "$root/$udevdir/70-kiosk-carousel-touch.rules"
install -m 0644 "$here/kiosk-carousel.conf" "$root/etc/kiosk-carousel/kiosk-carousel.conf"
install -m 0644 "$here"/samples/*.jpg "$here/samples/README.md" "$root/usr/share/kiosk-carousel/samples/"
install -m 0644 "$here/copyright" "$root/usr/share/doc/kiosk-carousel/copyright"
gzip -9n < "$repo/README.md" > "$root/usr/share/doc/kiosk-carousel/README.md.gz"
gzip -9n < "$here/kiosk-carousel.1" > "$root/usr/share/man/man1/kiosk-carousel.1.gz"
chmod 0644 "$root/usr/share/doc/kiosk-carousel/README.md.gz" "$root/usr/share/man/man1/kiosk-carousel.1.gz"
# changelog.Debian.gz from CHANGELOG.md (an entry per version; the one marked Unreleased
# gets SOURCE_DATE_EPOCH's date); a VERSION that CHANGELOG.md does not have yet gets an
# entry of its own on top. changelog.gz is CHANGELOG.md itself (the upstream changelog).
date=$(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")
newest=$(sed -n 's/^## \[\{0,1\}\([^] ]*\).*/\1/p' "$repo/CHANGELOG.md" | head -n 1)
{
    if [ "$newest" != "$version" ]; then
        printf '%s (%s) %s; urgency=medium\n\n  * Built from the repository at version %s (not in CHANGELOG.md yet).\n\n -- %s  %s\n\n' \
            kiosk-carousel "$debversion" "$distribution" "$version" "$maintainer" "$date"
    fi
    # Each entry must be dated after the one below it (lintian), so an Unreleased entry under
    # that one is a second older.
    unreleased_date=$date
    [ "$newest" = "$version" ] || unreleased_date=$(LC_ALL=C date -u -R -d "@$((SOURCE_DATE_EPOCH - 1))")
    LC_ALL=C awk -v package=kiosk-carousel -v "distribution=$distribution" -v "maintainer=$maintainer" \
        -v "fallback_date=$unreleased_date" -v "revision=$revision" -f "$here/changelog-to-debian.awk" "$repo/CHANGELOG.md"
} > "$work/changelog.Debian"
gzip -9n < "$work/changelog.Debian" > "$root/usr/share/doc/kiosk-carousel/changelog.Debian.gz"
gzip -9n < "$repo/CHANGELOG.md" > "$root/usr/share/doc/kiosk-carousel/changelog.gz"
chmod 0644 "$root/usr/share/doc/kiosk-carousel/changelog.Debian.gz" "$root/usr/share/doc/kiosk-carousel/changelog.gz"

# Depends: the packages of the shared libraries the binary links.
if [ "$is_elf" = yes ]; then
    command -v dpkg-shlibdeps >/dev/null || die "dpkg-shlibdeps missing: apt-get install -y dpkg-dev"
    # Every shared library it loads (directly or not) must come from a Debian package: a
    # Swift build without --static-swift-stdlib loads libswiftCore.so and Foundation from the
    # toolchain, which a device does not have.
    unowned=""
    if [ "$arch" != "$host_arch" ]; then
        # ldd cannot run a foreign binary: the libraries it names itself (DT_NEEDED), found
        # where the loader of $arch looks.
        libraries=$(for soname in $(LC_ALL=C readelf -d "$BINARY" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            found=""
            for dir in "/lib/$multiarch" "/usr/lib/$multiarch"; do
                [ -e "$dir/$soname" ] && { found="$dir/$soname"; break; }
            done
            echo "${found:-$soname:not-found}"
        done)
    else
        libraries=$(ldd "$BINARY" | awk '$2 == "=>" && $3 == "not" { print $1 ":not-found"; next }
                                      $2 == "=>" { print $3; next }
                                      $1 ~ /^\// { print $1 }')
    fi
    for lib in $libraries; do
        case "$lib" in
            *:not-found) unowned="$unowned ${lib%:not-found}(not found)"; continue ;;
        esac
        real=$(readlink -f "$lib")
        owned=no
        for candidate in "$lib" "$real" "${real#/usr}"; do
            if dpkg -S "$candidate" >/dev/null 2>&1; then owned=yes; break; fi
        done
        [ "$owned" = yes ] || unowned="$unowned $lib"
    done
    if [ -n "$unowned" ]; then
        die "a library the binary needs comes from no Debian package (build with --static-swift-stdlib?):$unowned"
    fi
    mkdir -p "$work/src/debian"
    printf 'Source: kiosk-carousel\n\nPackage: kiosk-carousel\nArchitecture: any\n' > "$work/src/debian/control"
    # dpkg-architecture -a: the libraries and objdump of $arch (aarch64-linux-gnu-objdump).
    if ! shlibs=$(cd "$work/src" && dpkg-architecture -a "$arch" -c dpkg-shlibdeps -O "$root/usr/bin/kiosk-carousel" 2>"$work/shlibdeps.err"); then
        cat "$work/shlibdeps.err" >&2
        die "dpkg-shlibdeps failed on $BINARY"
    fi
    lib_depends=${shlibs#shlibs:Depends=}
else
    echo "build-deb.sh: warning: $BINARY is not an ELF file; Depends from the fixed list: $fallback_depends" >&2
    lib_depends=$fallback_depends
fi
# The package of a library the binary opens with dlopen (dpkg-shlibdeps cannot see those): the
# one dpkg says holds the soname here (libcurl4 on Debian 12, libcurl4t64 on Debian 13), else
# Debian 12's name.
dlopened() {
    owner=$(dpkg -S "/usr/lib/$multiarch/$1" 2>/dev/null | head -n 1 | cut -d: -f1)
    echo "${owner:-$2} ($3)"
}
# libheif and libcurl are opened on first use.
depends="adduser, ca-certificates, $(dlopened libcurl.so.4 libcurl4 '>= 7.88.1'), $(dlopened libheif.so.1 libheif1 '>= 1.15.1'), $lib_depends"
depends="$depends, fonts-dejavu-core"  # the default font fontconfig finds for the screens' text
# So are FreeType, HarfBuzz and fontconfig (at the first text drawn) and libcrypto (at the first SHA-256).
depends="$depends, $(dlopened libfreetype.so.6 libfreetype6 '>= 2.12.1'), $(dlopened libharfbuzz.so.0 libharfbuzz0b '>= 6.0.0')"
depends="$depends, $(dlopened libfontconfig.so.1 libfontconfig1 '>= 2.14.1'), $(dlopened libcrypto.so.3 libssl3 '>= 3.0.0')"
depends="$depends, $(dlopened libfribidi.so.0 libfribidi0 '>= 1.0.8')"
# And libmosquitto, when --mqtt is given (CKioskMQTT).
depends="$depends, $(dlopened libmosquitto.so.1 libmosquitto1 '>= 2.0.11')"
# And libavif, when an AVIF image sequence plays (CKioskAvif): ABI 16 from libavif 1.0 (Debian 13),
# 15 before (Debian 12's 0.11), the one whose header the program was built against.
# And libgpiod, when --presence gpio:... is given (CKioskGpio): its 2.x API (libgpiod.so.3, Debian
# 13's libgpiod3) where the build system has it, else its 1.6 API (libgpiod.so.2, Debian 12's libgpiod2).
if [ -e "/usr/lib/$multiarch/libgpiod.so.3" ]; then
    depends="$depends, $(dlopened libgpiod.so.3 libgpiod3 '>= 2.0')"
else
    depends="$depends, $(dlopened libgpiod.so.2 libgpiod2 '>= 1.6')"
fi
if [ -e "/usr/lib/$multiarch/libavif.so.16" ]; then
    depends="$depends, $(dlopened libavif.so.16 libavif16 '>= 1.0.0')"
else
    depends="$depends, $(dlopened libavif.so.15 libavif15 '>= 0.11.1')"
fi

installed_size=$(du -sk --apparent-size "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: kiosk-carousel
Version: $debversion
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends
Section: graphics
Priority: optional
Description: full-screen slideshow for kiosks, signs and photo frames
 kiosk-carousel shows JPEG, PNG, WebP, HEIF/HEIC, AVIF and GIF images
 full screen on a Linux device without a window system, drawing straight
 to DRM/KMS or the framebuffer, and cross-fades from one image to the
 next on a timer. Images come from folders (watched for changes), files,
 http(s) URLs, JSON playlists and a remote manifest that is polled and
 cached for offline starts. A touchscreen swipes between images; taps can
 run a command.
 .
 The package runs it at boot as the systemd service kiosk-carousel, as the
 system user kiosk, on tty1, sandboxed; options are read from
 /etc/kiosk-carousel/kiosk-carousel.conf.
EOF
echo /etc/kiosk-carousel/kiosk-carousel.conf > "$root/DEBIAN/conffiles"

cat > "$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
unit=kiosk-carousel.service
if [ "$1" = configure ]; then
    # The user the service runs as; render may be missing before the first render node;
    # kiosk-touch owns the touchscreens (/lib/udev/rules.d/70-kiosk-carousel-touch.rules).
    getent group render >/dev/null || addgroup --system --quiet render
    getent group kiosk-touch >/dev/null || addgroup --system --quiet kiosk-touch
    if ! getent passwd kiosk >/dev/null; then
        adduser --system --group --quiet --no-create-home --home /var/lib/kiosk-carousel \
            --shell /usr/sbin/nologin --gecos "kiosk-carousel slideshow" kiosk
    fi
    usermod -a -G video,render,kiosk-touch kiosk
    # gpio (Raspberry Pi OS: /dev/gpiochip*), for a motion sensor (--presence), where it exists.
    if getent group gpio >/dev/null; then usermod -a -G gpio kiosk; fi
    # Earlier versions put kiosk in input (every keyboard) and tty: no longer.
    for group in input tty; do
        if id -nG kiosk | tr ' ' '\n' | grep -qx "$group"; then gpasswd -d kiosk "$group" >/dev/null; fi
    done
    # The touchscreens get their group now, not at the next boot.
    if [ -d /run/udev ] && command -v udevadm >/dev/null 2>&1; then
        udevadm control --reload-rules >/dev/null 2>&1 || true
        udevadm trigger --action=change --subsystem-match=input >/dev/null 2>&1 || true
    fi
    # The first show: the sample photos, when the images folder is new or empty.
    images=/var/lib/kiosk-carousel/images
    if [ -z "$2" ] && { [ ! -d "$images" ] || [ -z "$(ls -A "$images")" ]; }; then
        mkdir -p "$images"
        cp /usr/share/kiosk-carousel/samples/*.jpg "$images/"
    fi
fi
if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
    # As dh_installsystemd does: enabled on first installation (it starts at the next boot,
    # as starting now would end a login on tty1); an upgrade restarts a running service.
    deb-systemd-helper unmask "$unit" >/dev/null || true
    if deb-systemd-helper --quiet was-enabled "$unit"; then
        deb-systemd-helper enable "$unit" >/dev/null || true
    else
        deb-systemd-helper update-state "$unit" >/dev/null || true
    fi
    if [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
        if [ -n "$2" ]; then
            deb-systemd-invoke try-restart "$unit" >/dev/null || true
        fi
    fi
fi
if [ "$1" = configure ] && [ -z "$2" ]; then
    echo "kiosk-carousel: enabled; it starts at the next boot, or now with: systemctl start kiosk-carousel"
    echo "kiosk-carousel: options in /etc/kiosk-carousel/kiosk-carousel.conf"
fi
exit 0
EOF

cat > "$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    deb-systemd-invoke stop kiosk-carousel.service >/dev/null || true
fi
exit 0
EOF

cat > "$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
unit=kiosk-carousel.service
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = remove ] && command -v deb-systemd-helper >/dev/null 2>&1; then
    deb-systemd-helper mask "$unit" >/dev/null || true
fi
if [ "$1" = purge ]; then
    if command -v deb-systemd-helper >/dev/null 2>&1; then
        deb-systemd-helper purge "$unit" >/dev/null || true
        deb-systemd-helper unmask "$unit" >/dev/null || true
    fi
    # Downloads and the last good manifest go; the images folder stays (your photos), and so
    # does the user kiosk (files elsewhere may still belong to it).
    rm -rf /var/cache/kiosk-carousel
    if [ -d /var/lib/kiosk-carousel ]; then
        find /var/lib/kiosk-carousel -mindepth 1 -maxdepth 1 ! -name images -exec rm -rf {} +
        rmdir --ignore-fail-on-non-empty /var/lib/kiosk-carousel/images /var/lib/kiosk-carousel 2>/dev/null || true
    fi
fi
exit 0
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
for script in postinst prerm postrm; do sh -n "$root/DEBIAN/$script"; done

(cd "$root" && find . -type f ! -path './DEBIAN/*' ! -path ./etc/kiosk-carousel/kiosk-carousel.conf -printf '%P\0' \
    | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control" "$root/DEBIAN/conffiles"

# Every file and folder gets SOURCE_DATE_EPOCH as its time (dpkg-deb also clamps to it).
find "$root" -depth -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$outdir"
deb="$outdir/kiosk-carousel_${debversion}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
