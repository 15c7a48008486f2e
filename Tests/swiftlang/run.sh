#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The project with Debian's own Swift: in Debian 13's root (deploy/swiftlang-root.sh: a fresh
# trixie system where `deploy/apt-deps.sh --tests` installed swiftlang 6.0.3 itself), a debug
# build and every unit test (`swift test --disable-xctest`), then the release build of the
# program, as the README's first command does it. Prints swift test's own summary and, last,
# "N passed, M failed" (one case each: unit tests, release build); exits non-zero on a failure.
#
# Usage: Tests/swiftlang/run.sh [swift test arguments, e.g. --filter X]
# Env:   KC_OUT         logs (default /tmp/kc-swiftlang)
#        KC_ROOT_CACHE  deploy/swiftlang-root.sh's cache of roots
# Needs root (or sudo) for the root, and what deploy/swiftlang-root.sh needs on a cache miss.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PKG=$(cd "$HERE/../.." && pwd)
OUT=${KC_OUT:-/tmp/kc-swiftlang}
# Its own scratch folder: modules built by 6.3.1 cannot be read by 6.0.3.
SCRATCH=$PKG/.build/swiftlang
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
mkdir -p "$OUT"
t0=$(date +%s)
as_root "$PKG/deploy/swiftlang-root.sh" path >"$OUT/root.log" 2>&1 \
    || { tail -30 "$OUT/root.log"; echo "swiftlang suite: deploy/swiftlang-root.sh failed"; echo "0 passed, 1 failed"; exit 1; }
echo "Debian 13 root ready in $(( $(date +%s) - t0 ))s: $(tail -n 1 "$OUT/root.log")"
in_root() { as_root "$PKG/deploy/swiftlang-root.sh" run --bind "$PKG" -- "$@"; }
in_root swift --version 2>&1 | head -n 1
passed=0 failed=0
t1=$(date +%s)
args=(--disable-xctest); [ $# -eq 0 ] || args=("$@")
if in_root sh -c 'cd "$1" && shift && swift test --scratch-path "$@"' sh "$PKG" "$SCRATCH" "${args[@]}" 2>&1 | tee "$OUT/test.log" | tail -n 5; then
    passed=$((passed + 1)); echo "PASS unit tests with swiftlang ($(( $(date +%s) - t1 ))s, build included)"
else
    failed=$((failed + 1)); grep -E "error:|✘|failed" "$OUT/test.log" | head -40; echo "FAIL unit tests with swiftlang (log: $OUT/test.log)"
fi
t2=$(date +%s)
if in_root sh -c 'cd "$1" && swift build -c release --static-swift-stdlib --product kiosk-carousel --scratch-path "$2"' sh "$PKG" "$SCRATCH" \
        >"$OUT/release.log" 2>&1; then
    passed=$((passed + 1)); echo "PASS release build with swiftlang ($(( $(date +%s) - t2 ))s)"
else
    failed=$((failed + 1)); tail -30 "$OUT/release.log"; echo "FAIL release build with swiftlang (log: $OUT/release.log)"
fi
[ "$(id -u)" = 0 ] || as_root chown -R "$(id -u):$(id -g)" "$SCRATCH"
echo "swiftlang suite took $(( $(date +%s) - t0 ))s" >&2
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
