#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Tests/fuzz/run.sh [SECONDS] [TARGET...]: builds the fuzz targets (Tests/fuzz/Sources, one
# executable, libFuzzer + AddressSanitizer, on its own scratch path .build/fuzz so the
# ordinary build is untouched), replays every saved finding (Tests/Fixtures/fuzz/TARGET/*),
# then fuzzes each target (all by default) for SECONDS (default 20) in turn. Fails when a
# target crashes, breaks one of its invariants, leaks, runs an input past 10 s, or allocates
# past its limits (one allocation over 96 MiB: twice the decoder budget the image targets
# use; 1536 MiB resident, ASan's own shadow and quarantine included). A finding is left in
# .build/fuzz/findings/TARGET/ (crash-*, leak-*, timeout-*, oom-*); the corpus each run
# grows is kept in .build/fuzz/corpus/TARGET and seeded from Tests/fuzz/corpus/TARGET and
# the fixtures. Needs only the Swift toolchain (its libclang_rt.fuzzer), no apt package.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20}
shift || true
all=(manifest config control hosts redirects mqtt outbox exif shuffle jpeg png webp gif animation heif icc touch)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
scratch=.build/fuzz

build=(swift build -c release --scratch-path "$scratch" --product kiosk-fuzz
       --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address -Xswiftc -enable-testing)
echo "fuzz: building kiosk-fuzz (${build[*]})"
mkdir -p "$scratch/logs"
if ! KIOSK_FUZZ=1 nice "${build[@]}" > "$scratch/logs/build.log" 2>&1; then
    cat "$scratch/logs/build.log" >&2
    echo "fuzz: the build failed" >&2
    exit 1
fi
grep -v "Cannot export local symbol '__asan_extra_spill_area'" "$scratch/logs/build.log" | tail -3
bin=$(KIOSK_FUZZ=1 "${build[@]}" --show-bin-path)

# Seed directories per target: its own small seeds, plus fixtures already in the repository.
seeds() {
    local f=Tests/Fixtures
    [ ! -d "Tests/fuzz/corpus/$1" ] || echo "Tests/fuzz/corpus/$1"
    case "$1" in
        jpeg) echo "$f/exif-orientation $f/generated $f/libjpeg-turbo-testimages" ;;
        png) echo "$f/pngsuite" ;;
        exif) echo "$f/exif-orientation $f/exif-dates" ;;
        animation) echo "$f/animations Tests/fuzz/corpus/gif Tests/fuzz/corpus/webp" ;;
    esac
}
max_len() {
    case "$1" in
        jpeg|png|webp|gif|animation|heif|icc) echo 65536 ;;
        *) echo 8192 ;;
    esac
}

# Swift's own crash backtracer would run inside ASan's report: leave the report to ASan.
export SWIFT_BACKTRACE=enable=no
# Leaks inside Debian's libraries the project cannot free, each one named there.
export LSAN_OPTIONS="suppressions=$PWD/Tests/fuzz/lsan.supp:print_suppressions=0"
failed=()
summary=()
for t in "${targets[@]}"; do
    exe="$scratch/kiosk-fuzz-$t"
    ln -sf "$(realpath "$bin/kiosk-fuzz")" "$exe"
    common=(-timeout=10 -rss_limit_mb=1536 -malloc_limit_mb=96 -max_len="$(max_len "$t")")
    mkdir -p "$scratch/corpus/$t" "$scratch/findings/$t" "$scratch/logs"
    log="$scratch/logs/$t.log"
    # Every finding saved so far must pass.
    saved=(Tests/Fixtures/fuzz/"$t"/*)
    if [ -e "${saved[0]}" ]; then
        if ! nice "$exe" "${common[@]}" "${saved[@]}" > "$log.replay" 2>&1; then
            echo "fuzz: $t: a saved finding fails again (log: $log.replay)" >&2
            tail -20 "$log.replay" >&2
            failed+=("$t (replay)")
        fi
    fi
    # shellcheck disable=SC2046
    if nice "$exe" "${common[@]}" -max_total_time="$seconds" -print_final_stats=1 \
            -artifact_prefix="$scratch/findings/$t/" "$scratch/corpus/$t" $(seeds "$t") > "$log" 2>&1; then
        status=ok
    else
        status=FAILED
        failed+=("$t")
        grep -E "ERROR|invariant broken|SUMMARY|Test unit written" "$log" | head -20 >&2 || true
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<< "$last")
    line=$(printf '%-9s %-6s %5ss %11s execs %7s/s  cov %5s  ft %6s  corpus %5s' "$t" "$status" "$seconds" \
           "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}")
    echo "fuzz: $line"
    summary+=("$line")
done
echo "fuzz: summary (logs in $scratch/logs, findings in $scratch/findings)"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}" >&2
    exit 1
fi
