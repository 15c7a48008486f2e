#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The test suite under a sanitizer (docs/sanitizers.md): builds everything with
# `swift build --build-tests --sanitize=KIND` in its own scratch directory
# (.build/sanitize-KIND, so the ordinary debug build is left alone) and runs
# `swift test --disable-xctest` there, optionally only the suites matching FILTER (as
# `swift test --filter`, several allowed). The executables the tests start (kiosk-carousel,
# kiosk-cache-writer) come from the same scratch directory, so they are sanitized too.
#
# Every report, from the test process or any child, goes to a file of its own
# (log_path=.build/sanitize-KIND/reports/KIND.PID); the run fails when any holds an error or a
# race, and prints them. Exit codes of sanitized children are left as they would be (exitcode=0), so a
# report shows here rather than as some other test's failure.
#
# usage: Tests/sanitizers/run.sh thread|address|undefined [FILTER...]   (undefined: the C targets)
#        Tests/sanitizers/run.sh ci   (what CI runs: ThreadSanitizer over the threaded suites)
set -euo pipefail
kind=${1:-}
case "$kind" in
    thread|address|undefined) shift ;;
    ci)
        # The carousel, the frame loop (offscreen show, touch loop, event writer), touch, content,
        # the Mailbox/WorkerThread glue and the control socket (docs/sanitizers.md). Real-clock
        # suites are named on their own as well: they run one at a time after the rest.
        kind=thread
        set -- KioskCoreTests.Carousel KioskSystemTests KioskInputTests KioskContentTests FaultShowTests \
            ShowContentTests OffscreenShowTests TouchLoopTests EventWriterTests ControlSocketTests ;;
    *) echo "usage: Tests/sanitizers/run.sh thread|address|undefined [FILTER...] | ci" >&2; exit 64 ;;
esac
cd "$(dirname "$0")/../.."
scratch=.build/sanitize-$kind
reports=$PWD/$scratch/reports
rm -rf "$reports"
mkdir -p "$reports"
filters=()
for f in "$@"; do filters+=(--filter "$f"); done
# Tests that cannot hold under a sanitizer (its shadow memory and slow-down), each with why:
# and tests on the real clock that hold alone but not among the others all slowed down at once
# (kind `serial`): those run after the rest, one at a time, still sanitized.
skips=()
serial=()
wanted=("$@")
while IFS= read -r line; do
    line=${line%%#*}
    set -- $line
    [ $# -ge 2 ] || continue
    case ",$1," in
        *",$kind,"*|*",all,"*) skips+=(--skip "$2") ;;
        *",serial,"*)
            skips+=(--skip "$2")
            # With FILTERs given, only the serial tests they cover.
            take=${wanted[0]+no}
            for f in ${wanted[@]+"${wanted[@]}"}; do case "$f" in *"$2"*) take=yes ;; esac; case "$2" in *"$f"*) take=yes ;; esac; done
            [ "${take:-yes}" = yes ] && serial+=(--filter "$2") ;;
    esac
done < Tests/sanitizers/skipped.txt
# allocator_may_return_null: the decoders ask malloc for impossible sizes on purpose and check for NULL.
common="log_path=$reports/$kind:exitcode=0:allocator_may_return_null=1"
export TSAN_OPTIONS="$common:halt_on_error=0:second_deadlock_stack=1:history_size=4"
export ASAN_OPTIONS="$common:detect_leaks=1:detect_stack_use_after_return=0:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$PWD/Tests/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="$common:print_stacktrace=1"
# Swift 6.3 on Linux refuses `-sanitize=undefined` for Swift code (it traps on overflow and
# out-of-bounds by itself): UBSan is clang's, given to the C targets (-Xcc) and to the link.
sanitize=(--sanitize="$kind")
if [ "$kind" = undefined ]; then
    sanitize=(-Xcc -fsanitize=undefined -Xcc -fno-omit-frame-pointer
        -Xswiftc -Xclang-linker -Xswiftc -fsanitize=undefined)
fi
swift build --build-tests "${sanitize[@]}" --scratch-path "$scratch"
status=0
swift test --skip-build --disable-xctest "${sanitize[@]}" --scratch-path "$scratch" \
    ${filters[@]+"${filters[@]}"} ${skips[@]+"${skips[@]}"} || status=$?
if [ ${#serial[@]} -gt 0 ]; then
    swift test --skip-build --disable-xctest --no-parallel "${sanitize[@]}" --scratch-path "$scratch" \
        "${serial[@]}" || status=$?
fi
# A report is an error or a race; a warning alone (a refused huge malloc, as asked) is not.
found=$(grep -l -E "ERROR: |WARNING: ThreadSanitizer|runtime error" -r "$reports" | sort || true)
if [ -n "$found" ]; then
    for f in $found; do echo "=== $f"; cat "$f"; done
    echo "sanitizer $kind: $(echo "$found" | wc -l) report file(s)" >&2
    exit 1
fi
echo "sanitizer $kind: no reports (tests exit status $status)"
exit "$status"
