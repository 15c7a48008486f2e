#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The soak on the real clock (docs/soak.md): the kiosk-carousel executable, offscreen
# at 640x400 with `--clock real --interval 1`, over a watched directory of 200 images made from
# the fixtures (Tests/soak/make_images.py), for MINUTES of wall time. Every minute it samples
# the process's resident memory (VmRSS and its peak VmHWM, /proc/PID/status), open file
# descriptors (entries of /proc/PID/fd) and threads (Threads, /proc/PID/status) into
# OUTDIR/samples.tsv, and meanwhile keeps the show busy: a SIGHUP, a `status` and a `next` on
# the control socket, and one image of the directory replaced by a new name (a file added, one
# removed). The offscreen backend writes every frame as a PNG; frames older than the newest 20
# are deleted every 10 s so that the disk stays bounded. At the end the program gets SIGTERM
# (`--run-for` is set past MINUTES: an offscreen run otherwise stops after one round of the
# playlist) and the script prints the first and last samples and the spread.
#
# usage: Tests/soak/real-clock.sh MINUTES OUTDIR [BINARY]   (BINARY: .build/release/kiosk-carousel)
set -euo pipefail
minutes=${1:?usage: real-clock.sh MINUTES OUTDIR [BINARY]}
out=${2:?usage: real-clock.sh MINUTES OUTDIR [BINARY]}
repo=$(cd "$(dirname "$0")/../.." && pwd)
binary=${3:-$repo/.build/release/kiosk-carousel}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -d "$out/images" ] || /usr/bin/python3 "$repo/Tests/soak/make_images.py" "$out/images" 200
rm -rf "$out/frames" "$out/cache" "$out/state" "$out/control"
"$binary" --version | head -1 > "$out/version.txt"

"$binary" --display "offscreen:$out/frames" --size 640x400 --clock real --interval 1 --run-for $(( minutes * 60 + 600 )) \
    --control "$out/control" --cache-dir "$out/cache" --state-dir "$out/state" \
    "$out/images" > "$out/stdout.log" 2> "$out/stderr.log" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT

control() {  # one request line on the control socket; prints the reply
    /usr/bin/python3 - "$out/control" "$1" <<'PY' || true
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
buf = b""
while b'"error"' not in buf:
    chunk = s.recv(65536)
    if not chunk:
        break
    buf += chunk
print([l for l in buf.decode().splitlines() if '"error"' in l][0])
PY
}

sample() {  # elapsed_s rss_kib hwm_kib fds threads shown
    local status rss hwm threads fds shown
    status=$(cat "/proc/$pid/status")
    rss=$(awk '/^VmRSS:/ {print $2}' <<<"$status")
    hwm=$(awk '/^VmHWM:/ {print $2}' <<<"$status")
    threads=$(awk '/^Threads:/ {print $2}' <<<"$status")
    fds=$(ls "/proc/$pid/fd" | wc -l)
    shown=$(grep -c '"event":"shown"' "$out/stdout.log" || true)
    printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%H:%M:%S)" $(( $(date +%s) - start )) \
        "$rss" "$hwm" "$fds" "$threads" "$shown" >> "$out/samples.tsv"
}

start=$(date +%s)
printf 'utc\telapsed_s\trss_kib\thwm_kib\tfds\tthreads\tshown\n' > "$out/samples.tsv"
sleep 5
sample
churn=0
while [ $(( $(date +%s) - start )) -lt $(( minutes * 60 )) ]; do
    for _ in 1 2 3 4 5 6; do
        sleep 10
        kill -0 $pid || { echo "kiosk-carousel exited early" >&2; exit 1; }
        # Keep the newest 20 frames.
        ls "$out/frames" | sort | head -n -20 | sed "s|^|$out/frames/|" | xargs -r rm -f
    done
    sample
    # Busy the show: SIGHUP, control requests, a file added and one removed in the watched folder.
    kill -HUP $pid
    control '{"command":["status"]}' > /dev/null
    control '{"command":["next"]}' > /dev/null
    churn=$(( churn + 1 ))
    src=$(ls "$out/images" | grep -v '^churn-' | sed -n "$(( churn % 150 + 1 ))p")
    cp "$out/images/$src" "$out/images/.churn.tmp" && mv "$out/images/.churn.tmp" "$out/images/churn-$churn-$src"
    rm -f "$out/images/churn-$(( churn - 1 ))-"*
done
sample
kill -TERM $pid
wait $pid || echo "kiosk-carousel exit status $?" >&2
trap - EXIT
rm -f "$out/images/churn-"*
/usr/bin/python3 - "$out/samples.tsv" <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()[1:]]
first, last = rows[0], rows[-1]
for col, name in ((2, "RSS KiB"), (4, "fds"), (5, "threads")):
    vals = [int(r[col]) for r in rows]
    print(f"{name}: first {first[col]}, last {last[col]}, min {min(vals)}, max {max(vals)}")
print(f"{last[1]} s, {last[6]} images shown, peak RSS {last[3]} KiB")
PY
