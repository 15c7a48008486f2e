#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The exit of an https show, again and again under a sanitizer (docs/security.md, "Threads at
# exit"): kiosk-carousel built with `--sanitize=KIND` (its own scratch path,
# .build/sanitize-KIND, as Tests/sanitizers/run.sh), nginx on loopback with TLS from a test CA
# and HTTP basic authentication, and RUNS offscreen shows of its manifest
# (https://kiosk:PASSWORD@127.0.0.1:PORT/show.json, --ca-file, two photos): each renders one
# round on the virtual clock and exits ("show done"), half of them with an empty disk cache and
# no stored manifest, half from the last run's. A run fails when it exits with anything but 0,
# when it did not show both photos from the https server,
# when glibc reports heap corruption ("double free", "corrupted", "free():"), or when the
# sanitizer writes a report (log_path=DIR/reports/KIND.PID). Prints one line per failed run and,
# last, "KIND: N runs, M failed"; exits 1 when any failed.
#
# usage: Tests/sanitizers/https-exit.sh address|thread [RUNS]     (default 50 runs)
#        KC_BIN=PATH ... runs that kiosk-carousel instead of building one (an older build).
# Needs nginx-light and openssl (deploy/apt-deps.sh --tests).
set -euo pipefail
kind=${1:-}
runs=${2:-50}
case "$kind" in address|thread) ;; *) echo "usage: $0 address|thread [RUNS]" >&2; exit 64 ;; esac
cd "$(dirname "$0")/../.."
scratch=.build/sanitize-$kind
if [ -n "${KC_BIN:-}" ]; then
    bin=$KC_BIN
else
    swift build --product kiosk-carousel --sanitize="$kind" --scratch-path "$scratch" >/dev/null
    bin=$(swift build --product kiosk-carousel --sanitize="$kind" --scratch-path "$scratch" --show-bin-path)/kiosk-carousel
fi

work=$(mktemp -d /tmp/kiosk-https-exit-XXXXXX)
nginx_pid=
cleanup() { [ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# A test CA and a certificate for 127.0.0.1 signed by it.
curve=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${curve[@]}" -keyout "$work/ca.key" -out "$work/ca.pem" -days 2 -subj "/CN=kiosk-carousel test CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
openssl req "${curve[@]}" -keyout "$work/server.key" -out "$work/server.csr" -subj /CN=127.0.0.1 2>/dev/null
echo "subjectAltName=IP:127.0.0.1" > "$work/ext.cnf"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
    -out "$work/server.pem" -days 2 -extfile "$work/ext.cnf" 2>/dev/null
password=s3cret-$RANDOM
echo "kiosk:$(openssl passwd -apr1 "$password")" > "$work/htpasswd"

mkdir -p "$work/www/img" "$work/tmp"
cp deploy/samples/fallenleaf-1920x1200.jpg "$work/www/img/a.jpg"
cp deploy/samples/path-1920x1200.jpg "$work/www/img/b.jpg"
echo '{"items":[{"src":"img/a.jpg"},{"src":"img/b.jpg"}]}' > "$work/www/show.json"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    types { image/jpeg jpg; application/json json; }
    server {
        listen 127.0.0.1:$port ssl;
        ssl_certificate $work/server.pem;
        ssl_certificate_key $work/server.key;
        auth_basic kiosk;
        auth_basic_user_file $work/htpasswd;
        root $work/www;
    }
}
EOF
/usr/sbin/nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
nginx_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null --cacert "$work/ca.pem" "https://127.0.0.1:$port/" && break; sleep 0.05; done

reports=$work/reports
mkdir -p "$reports"
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="log_path=$reports/$kind:detect_leaks=0:allocator_may_return_null=1"
export TSAN_OPTIONS="log_path=$reports/$kind:halt_on_error=0:allocator_may_return_null=1"
failed=0
for run in $(seq "$runs"); do
    if [ $((run % 2)) = 1 ]; then rm -rf "$work/cache" "$work/state" "$work/frames"; fi
    status=0
    "$bin" --display "offscreen:$work/frames" --size 320x200 --interval 1 --fade 100 \
        --cache-dir "$work/cache" --state-dir "$work/state" --ca-file "$work/ca.pem" \
        --manifest "https://kiosk:$password@127.0.0.1:$port/show.json" >"$work/out" 2>"$work/err" || status=$?
    problem=
    [ "$status" = 0 ] || problem="exit status $status"
    grep -q "show done" "$work/err" || problem="${problem:+$problem, }no 'show done'"
    # Both photos came over https (a TLS or authentication failure would end the show too).
    [ "$(grep -c '"event":"shown".*"src":"https://kiosk:\*\*\*@' "$work/out")" -ge 2 ] \
        || problem="${problem:+$problem, }not both photos shown from https"
    if grep -qE "double free|corrupted|free\(\):|malloc\(\):" "$work/err"; then problem="${problem:+$problem, }heap corruption"; fi
    if grep -qlE "ERROR: |WARNING: ThreadSanitizer" -r "$reports" 2>/dev/null; then problem="${problem:+$problem, }sanitizer report"; fi
    if [ -n "$problem" ]; then
        failed=$((failed + 1))
        echo "run $run: $problem"
        tail -5 "$work/err" | sed 's/^/    /'
        for f in "$reports"/*; do [ -e "$f" ] && { echo "=== $f"; head -60 "$f"; mv "$f" "$f.run$run.seen"; }; done
        mkdir -p "$scratch/https-exit"
        cp "$work/err" "$scratch/https-exit/run$run.err"
        cp "$reports"/*.seen "$scratch/https-exit/" 2>/dev/null || true
    fi
done
echo "$kind: $runs runs, $failed failed"
[ "$failed" = 0 ]
