#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The unit tests on arm64: cross-compiled in Debian 13's root (deploy/swiftlang-root.sh, with
# the flags deploy/build-deb.sh --arch arm64 uses, debug) and run there under qemu-user through
# binfmt_misc (Tests/qemu/binfmt.sh): the test program and the libraries it loads (libjpeg,
# libheif and its plug-ins, libcurl, FreeType ...) are Debian 13's arm64 ones; the tools the
# tests start (nginx, Pillow, cwebp ...) are the root's amd64 ones. Prints Swift Testing's
# summary and, last, "N passed, M failed"; exits non-zero on a failure.
#   Tests/arm64/unit.sh [Swift Testing arguments, e.g. --filter X]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PKG=$(cd "$HERE/../.." && pwd)
OUT=${KC_OUT:-/tmp/kc-arm64}
SCRATCH=$PKG/.build/cross-arm64-tests
STDLIB=/opt/swiftlang-arm64/usr/libexec/swift/lib/swift
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
in_root() { as_root "$PKG/deploy/swiftlang-root.sh" run --bind "$PKG" -- "$@"; }
mkdir -p "$OUT"
t0=$(date +%s)
if ! in_root env PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig PKG_CONFIG_PATH=/usr/lib/aarch64-linux-gnu/pkgconfig \
        sh -c 'cd "$1" && swift build --build-tests --scratch-path "$2" --triple aarch64-unknown-linux-gnu \
            -Xswiftc -resource-dir -Xswiftc "$3" -Xswiftc -use-ld=lld -Xlinker -L/usr/lib/aarch64-linux-gnu' \
        sh "$PKG" "$SCRATCH" "$STDLIB" >"$OUT/unit-build.log" 2>&1; then
    grep -E "error:" "$OUT/unit-build.log" | head -20; tail -5 "$OUT/unit-build.log"
    echo "FAIL the arm64 test build (log: $OUT/unit-build.log)"; echo "0 passed, 1 failed"; exit 1
fi
t1=$(date +%s)
BUNDLE=$SCRATCH/aarch64-unknown-linux-gnu/debug/kiosk-carouselPackageTests.xctest
echo "built the arm64 tests in $(( t1 - t0 ))s: $(file -b "$BUNDLE" | cut -d, -f1-2)"
in_root env LD_LIBRARY_PATH="$STDLIB/linux" sh -c 'cd "$1" && shift && exec "$@"' sh "$PKG" "$BUNDLE" \
    --testing-library swift-testing "$@" >"$OUT/unit-run.log" 2>&1
status=$?
grep -E '✘|Test run with' "$OUT/unit-run.log" | tail -n 60
echo "ran the arm64 tests under qemu-user in $(( $(date +%s) - t1 ))s"
summary=$(grep -E "Test run with [0-9]+ tests?" "$OUT/unit-run.log" | tail -n 1)
total=$(echo "$summary" | sed -n 's/.*Test run with \([0-9]*\) test.*/\1/p')
bad=$(echo "$summary" | sed -n 's/.*with \([0-9]*\) issues\{0,1\}.*/\1/p')
nfail=$(grep -cE "^✘ Test .* failed" "$OUT/unit-run.log")
[ -n "$total" ] || { echo "no Swift Testing summary (status $status; log: $OUT/unit-run.log)"; echo "0 passed, 1 failed"; exit 1; }
echo "$((total - nfail)) passed, $nfail failed"
[ "$status" = 0 ] && [ "$nfail" = 0 ]
