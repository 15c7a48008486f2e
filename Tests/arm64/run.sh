#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kiosk-carousel on arm64, proven on this x86-64 machine (the README's "Raspberry Pi" page,
# docs/raspberry-pi.md, says what each part shows and what still needs a real Pi):
#   1. deb        deploy/build-deb.sh --arch arm64 twice, from two clones of HEAD at different
#                 paths (Tests/release/reproducible.sh --arch arm64): byte-identical; lintian
#                 (Debian 13's) finds no error or warning; Depends are arm64 libraries of trixie
#   2. unit       the unit tests cross-compiled for arm64 and run under qemu-user (binfmt_misc,
#                 Tests/qemu/binfmt.sh) in Debian 13's root, its arm64 libraries loaded
#   3. kernel     the kernel suite on Debian 13's arm64 kernel (Tests/kernel/run.sh --arch arm64)
#   4. system     the .deb installed by apt on a booted Debian 13 arm64 system, at 1 GiB and
#                 512 MiB (Tests/system/run.sh --arch arm64)
#   5. neon       the per-frame kernels (fade, slide, scanout conversion) are NEON loops in the
#                 arm64 binary: instructions per pixel read off their disassembly (neon.py)
# Prints each suite's lines and, last, "N passed, M failed" over all of them; exits non-zero on
# any failure.
#
# Usage: Tests/arm64/run.sh [deb] [unit] [kernel] [system] [neon]     (default: all, in order)
# Env:   KC_OUT  logs and captures (default /tmp/kc-arm64); KC_DEB  the arm64 .deb for kernel and
#        system when the deb part does not run (default: they build one); KC_ROOT_CACHE, KC_SYSTEM_CACHE as
#        for deploy/swiftlang-root.sh and Tests/system/run.sh
# Needs root (or sudo), qemu-system-arm, qemu-user-static and what the suites above need.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PKG=$(cd "$HERE/../.." && pwd)
OUT=${KC_OUT:-/tmp/kc-arm64}
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
parts=("$@"); [ $# -gt 0 ] || parts=(deb unit kernel system neon)
passed=0 failed=0
mkdir -p "$OUT"
t0=$(date +%s)
# A suite's closing "N passed, M failed" line is added to the totals; its status counts a
# failure when it gave no such line.
count() {
    local log=$1 status=$2 line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -n "$line" ]; then
        passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
        failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
    fi
    if [ "$status" != 0 ] && { [ -z "$line" ] || [ "$(echo "$line" | cut -d' ' -f3)" = 0 ]; }; then
        failed=$((failed + 1))
    fi
}
as_root "$PKG/Tests/qemu/binfmt.sh" || { echo "arm64 suite: binfmt_misc cannot run arm64 programs"; echo "0 passed, 1 failed"; exit 1; }
t=$(date +%s)
ROOT=$(as_root "$PKG/deploy/swiftlang-root.sh" path 2>"$OUT/root.log") \
    || { tail -30 "$OUT/root.log"; echo "arm64 suite: deploy/swiftlang-root.sh failed"; echo "0 passed, 1 failed"; exit 1; }
echo "Debian 13 root: $ROOT ($(( $(date +%s) - t ))s)"
DEB=${KC_DEB:-}   # the .deb the kernel and system parts install; the deb part sets it
for part in "${parts[@]}"; do
    t=$(date +%s)
    log=$OUT/$part.log
    case "$part" in
        deb)
            mkdir -p "$OUT/deb"; rm -f "$OUT"/deb/*.deb
            KEEP_DEB="$OUT/deb" "$PKG/Tests/release/reproducible.sh" --arch arm64 2>&1 | tee "$log"
            status=${PIPESTATUS[0]}
            DEB=$(ls "$OUT"/deb/kiosk-carousel_*_arm64.deb 2>/dev/null | head -n 1)
            if [ "$status" = 0 ] && [ -n "$DEB" ]; then
                passed=$((passed + 1))
                lint=$(as_root "$PKG/deploy/swiftlang-root.sh" run --bind "$OUT/deb" -- lintian --tag-display-limit 0 "$DEB" 2>&1)
                if echo "$lint" | grep -qE '^[EW]: '; then
                    failed=$((failed + 1)); echo "FAIL lintian-arm64: $lint"
                else
                    passed=$((passed + 1)); echo "PASS lintian-arm64: no error or warning (Debian 13's lintian)${lint:+; $lint}"
                fi
                echo "arm64 Depends: $(dpkg-deb -f "$DEB" Depends)"
            else
                failed=$((failed + 1)); echo "FAIL arm64 .deb: not built twice the same (log: $log)"
            fi ;;
        unit)
            "$HERE/unit.sh" 2>&1 | tee "$log"; count "$log" "${PIPESTATUS[0]}" ;;
        kernel)
            KC_DEB=$DEB KC_OUT="$OUT/kernel" "$PKG/Tests/kernel/run.sh" --arch arm64 2>&1 | tee "$log"; count "$log" "${PIPESTATUS[0]}" ;;
        system)
            KC_DEB=$DEB KC_OUT="$OUT/system" "$PKG/Tests/system/run.sh" --arch arm64 2>&1 | tee "$log"; count "$log" "${PIPESTATUS[0]}" ;;
        neon)
            binary=()
            [ ! -f "$OUT/deb/kiosk-carousel.unstripped" ] || binary=(--binary "$OUT/deb/kiosk-carousel.unstripped")
            /usr/bin/python3 "$HERE/neon.py" --root "$ROOT" "${binary[@]}" 2>&1 | tee "$log"; count "$log" "${PIPESTATUS[0]}" ;;
        *) echo "arm64 suite: unknown part $part (deb unit kernel system neon)"; failed=$((failed + 1)); continue ;;
    esac
    echo "arm64 suite: $part took $(( $(date +%s) - t ))s"
done
echo "arm64 suite took $(( $(date +%s) - t0 ))s" >&2
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
