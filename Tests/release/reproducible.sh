#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks that deploy/build-deb.sh is reproducible: the committed HEAD is cloned twice, into
# two folders of different names and depths, each clone builds its own release binary from
# scratch and packs it (OUTDIR apart), and the two .deb files must be the same, byte for
# byte (cmp). On a difference it prints diffoscope's report when diffoscope is installed
# (apt-get install diffoscope), else the differing bytes' offset and the two file lists.
# Uncommitted changes are not in the clones: commit first.
#
# Takes two clean release builds: measured 4.7 to 8.5 minutes in all on 2 cores shared with
# other compilers (each build 130-300 s; a build alone on them is nearer 70 s). Needs git, swift and what deploy/apt-deps.sh installs (dpkg-dev for dpkg-shlibdeps).
# The last line says PASS or FAIL; the exit status is 0 on PASS.
#   Tests/release/reproducible.sh            # KEEP=1 keeps the scratch folder
#   Tests/release/reproducible.sh --arch arm64   # the cross-built arm64 package (build-deb.sh --arch)
# KEEP_DEB=DIR copies the first build's .deb into DIR (the arm64 suite tests that one) and, for
# --arch, its binary before stripping (kiosk-carousel.unstripped).
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
arch=""
if [ "${1:-}" = "--arch" ]; then arch=${2:?--arch needs an architecture}; fi
commit=$(git -C "$repo" rev-parse HEAD)
work=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-carousel-repro.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
    echo "reproducible.sh: keeping $work"
else
    trap 'rm -rf "$work"' EXIT
fi
fail() { echo "reproducible.sh: FAIL: $*"; exit 1; }

n=0
for checkout in "$work/a/kiosk-carousel" "$work/second-build/src/elsewhere/kc"; do
    n=$((n + 1))
    mkdir -p "$(dirname "$checkout")" "$work/out$n"
    git clone --quiet --shared --no-checkout "$repo" "$checkout"
    git -C "$checkout" -c advice.detachedHead=false checkout --quiet "$commit"
    echo "reproducible.sh: build $n of 2 in $checkout"
    start=$(date +%s)
    if ! OUTDIR="$work/out$n" "$checkout/deploy/build-deb.sh" ${arch:+--arch "$arch"} > "$work/build$n.log" 2>&1; then
        tail -n 30 "$work/build$n.log"
        fail "build $n failed (log above)"
    fi
    echo "reproducible.sh: build $n took $(( $(date +%s) - start )) s: $(tail -n 1 "$work/build$n.log")"
done

first=$(ls "$work/out1"/*.deb)
second=$(ls "$work/out2"/*.deb)
[ "$(basename "$first")" = "$(basename "$second")" ] || fail "different names: $(basename "$first") and $(basename "$second")"
if [ -n "${KEEP_DEB:-}" ]; then
    cp "$first" "$KEEP_DEB/"
    # and the cross build's binary before stripping (its symbols: Tests/arm64/neon.py reads them)
    [ -z "$arch" ] || cp "$work/a/kiosk-carousel/.build/cross-$arch"/*/release/kiosk-carousel "$KEEP_DEB/kiosk-carousel.unstripped" || true
fi
if cmp "$first" "$second"; then
    echo "reproducible.sh: PASS: $(basename "$first") built twice from $commit is byte-identical ($(wc -c < "$first") bytes, sha256 $(sha256sum "$first" | cut -c1-16)...)"
    exit 0
fi
# Which packaged files differ, and for an ELF file which sections.
for n in 1 2; do dpkg-deb -x "$work/out$n"/*.deb "$work/x$n"; dpkg-deb -e "$work/out$n"/*.deb "$work/x$n/DEBIAN"; done
(cd "$work/x1" && find . -type f | LC_ALL=C sort) | while read -r file; do
    cmp -s "$work/x1/$file" "$work/x2/$file" && continue
    echo "reproducible.sh: differs: $file"
    if [ "$(head -c 4 "$work/x1/$file" | od -An -c | tr -d ' ')" = "177ELF" ]; then
        cmp -l "$work/x1/$file" "$work/x2/$file" 2>/dev/null | awk '{ print $1 - 1 }' > "$work/offsets"
        readelf -S -W "$work/x1/$file" | awk -v list="$work/offsets" '
            function hex(h,  v, i) { v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
            /^ *\[ *[0-9]+\]/ { sub(/^ *\[ *[0-9]+\]/, ""); if (NF >= 6) { n++; name[n] = $1; off[n] = hex($4); size[n] = hex($5) } }
            END { while ((getline o < list) > 0) { for (i = 1; i <= n; i++) if (o >= off[i] && o < off[i] + size[i]) { hits[name[i]]++; break } }
                  for (s in hits) printf "reproducible.sh:   section %s: %d bytes differ\n", s, hits[s] }'
    fi
done
if command -v diffoscope >/dev/null 2>&1; then
    # diffoscope on a 60 MB binary can take many minutes: its report is cut after 10 minutes.
    timeout 600 diffoscope --text - "$first" "$second" | head -n 400 || true
else
    echo "reproducible.sh: (diffoscope not installed: apt-get install diffoscope-minimal for a full report)"
fi
fail "$(basename "$first") differs between the two builds"
