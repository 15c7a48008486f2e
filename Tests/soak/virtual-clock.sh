#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The soak on the virtual clock (docs/soak.md): TRANSITIONS images shown (default
# 10000) at 640x400 by the real frame loop inside `kiosk-bench --soak` (Sources/kiosk-bench/
# Soak.swift says what it does to the show meanwhile), over a show of 200 images made from the
# fixtures (Tests/soak/make_images.py) served with a manifest by an HTTP server on loopback
# (Python's http.server), a new manifest every 100 transitions, a watched directory changing,
# signals, control requests and scripted touches. Resident memory, descriptors and threads are
# printed at the start and end of each thousand transitions; the exit status is 0 when the last
# thousand is within 5 % of the second.
#
# usage: Tests/soak/virtual-clock.sh [TRANSITIONS [OUTDIR]]   (builds kiosk-bench in release)
set -euo pipefail
transitions=${1:-10000}
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$(mktemp -d /tmp/kc-soak.XXXXXX)}
mkdir -p "$out/www"
out=$(cd "$out" && pwd)
cd "$repo"
[ -n "${KC_SOAK_NO_BUILD:-}" ] || swift build -c release --product kiosk-bench
bench=$(swift build -c release --show-bin-path)/kiosk-bench
[ -d "$out/www/images" ] || /usr/bin/python3 Tests/soak/make_images.py "$out/www/images" 200
rm -rf "$out/cache" "$out/state" "$out/watched" "$out/control" "$out/port"

/usr/bin/python3 - "$out/www" "$out/port" > "$out/http.log" 2>&1 <<'PY' &
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
open(sys.argv[2], "w").write(str(server.server_address[1]))
server.serve_forever()
PY
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$out/port" ] && break; sleep 0.1; done
port=$(cat "$out/port")
"$bench" --soak "$out" "http://127.0.0.1:$port/manifest.json" "$transitions" 2> "$out/stderr.log" | tee "$out/soak.tsv"
status=${PIPESTATUS[0]}
echo "log: $out/stderr.log ($(wc -l < "$out/stderr.log") lines), server requests: $(grep -c '"GET ' "$out/http.log" || true)"
exit "$status"
