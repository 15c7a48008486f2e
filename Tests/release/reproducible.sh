#!/bin/sh
# Checks that deploy/build-deb.sh is reproducible: the committed HEAD is cloned twice, into
# two folders of different names and depths, each clone builds its own release binary from
# scratch and packs it (OUTDIR apart), and the two .deb files must be the same, byte for
# byte (cmp). On a difference it prints diffoscope's report when diffoscope is installed
# (apt-get install diffoscope), else the differing bytes' offset and the two file lists.
# Uncommitted changes are not in the clones: commit first.
#
# Takes two clean release builds: about 3 minutes alone on 2 cores (more when the machine is
# busy). Needs git, swift and what deploy/apt-deps.sh installs (dpkg-dev for dpkg-shlibdeps).
# The last line says PASS or FAIL; the exit status is 0 on PASS.
#   Tests/release/reproducible.sh            # KEEP=1 keeps the scratch folder
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
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
    if ! OUTDIR="$work/out$n" "$checkout/deploy/build-deb.sh" > "$work/build$n.log" 2>&1; then
        tail -n 30 "$work/build$n.log"
        fail "build $n failed (log above)"
    fi
    echo "reproducible.sh: build $n took $(( $(date +%s) - start )) s: $(tail -n 1 "$work/build$n.log")"
done

first=$(ls "$work/out1"/*.deb)
second=$(ls "$work/out2"/*.deb)
[ "$(basename "$first")" = "$(basename "$second")" ] || fail "different names: $(basename "$first") and $(basename "$second")"
if cmp "$first" "$second"; then
    echo "reproducible.sh: PASS: $(basename "$first") built twice from $commit is byte-identical ($(wc -c < "$first") bytes, sha256 $(sha256sum "$first" | cut -c1-16)...)"
    exit 0
fi
if command -v diffoscope >/dev/null 2>&1; then
    diffoscope --text - "$first" "$second" | head -n 400 || true
else
    echo "reproducible.sh: (diffoscope not installed: apt-get install diffoscope for a full report)"
    for deb in "$first" "$second"; do dpkg-deb -c "$deb" | sed "s|^|$(basename "$(dirname "$deb")"): |"; done
fi
fail "$(basename "$first") differs between the two builds"
