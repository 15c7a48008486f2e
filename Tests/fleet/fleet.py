#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The fleet run (docs/testing.md): N kiosk-carousel processes (offscreen, real clock,
`--manifest-interval 10`, each with its own cache and state directories) against one nginx on
loopback, a manifest change, and figures from nginx's access log.

Each kiosk reaches nginx on its own loopback address (127.0.0.2, 127.0.0.3, ...; nginx listens
on each), so `$server_addr` in the access log tells the kiosks apart without changing what
they send. Timeline: all kiosks started at once (a fleet powered on together), WARM seconds to
settle, a steady window of STEADY seconds, the manifest changed (two new images), then until
every kiosk has shown a new image and AFTER seconds more.

Figures: manifest polls per second (peak second and mean from the end of the warm-up on, the
change included: the peak must be at most twice the mean; all requests per second reported
beside them), the share of 304 answers to manifest polls in the steady
window (at least 95 %), image bytes served per kiosk for the change (each new image once per
kiosk), and the time from the change until every kiosk has shown a new image (at most the poll
interval + 10 % + the fetch + one image interval).

Usage: fleet.py BINARY N [WARM STEADY AFTER] (defaults 40 60 20). Exits 1 when a figure misses
(the polls' peak is judged from 50 kiosks on: a few make too few polls a second for it).
"""
import io
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

INTERVAL = 10.0       # --manifest-interval
IMAGE_INTERVAL = 1.0  # the manifest's "interval"


def make_image(path, seed):
    from PIL import Image, ImageDraw
    import random
    r = random.Random(seed)
    im = Image.new("RGB", (480, 320), tuple(r.randrange(256) for _ in range(3)))
    d = ImageDraw.Draw(im)
    for _ in range(80):
        x, y = r.randrange(480), r.randrange(320)
        d.ellipse([x, y, x + r.randrange(8, 90), y + r.randrange(8, 90)], fill=tuple(r.randrange(256) for _ in range(3)))
    im.save(path, "JPEG", quality=90)
    return os.path.getsize(path)


def write_manifest(www, names):
    body = json.dumps({"interval": IMAGE_INTERVAL, "fade": 0, "items": [{"src": "img/" + n} for n in names]})
    tmp = os.path.join(www, ".manifest.tmp")
    with open(tmp, "w") as f:
        f.write(body)
    os.rename(tmp, os.path.join(www, "manifest.json"))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_and_cpu(pids):
    rss, ticks = 0, 0
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                rss += next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])
        except (OSError, StopIteration):
            pass
    return rss, ticks / os.sysconf("SC_CLK_TCK")


def main():
    binary, n = sys.argv[1], int(sys.argv[2])
    warm, steady, after = (float(x) for x in (sys.argv[3:6] if len(sys.argv) >= 6 else (40, 60, 20)))
    work = tempfile.mkdtemp(prefix="kiosk-fleet-")
    os.chmod(work, 0o755)  # nginx's worker runs as nobody when started by root
    www = os.path.join(work, "www")
    os.makedirs(os.path.join(www, "img"))
    sizes = {name: make_image(os.path.join(www, "img", name), name) for name in ("a1.jpg", "a2.jpg", "b1.jpg", "b2.jpg")}
    old_show, new_show = ["a1.jpg", "a2.jpg"], ["a1.jpg", "b1.jpg", "b2.jpg"]
    new_images = [x for x in new_show if x not in old_show]
    write_manifest(www, old_show)
    port = free_port()
    addresses = ["127.0.0.%d" % (2 + i) for i in range(n)]
    assert n <= 250
    listens = "\n".join("        listen %s:%d;" % (a, port) for a in addresses)
    conf = """daemon off;
worker_processes 1;
pid %(w)s/nginx.pid;
error_log %(w)s/error.log warn;
events { worker_connections 4096; }
http {
    log_format fleet '$msec $server_addr $status $body_bytes_sent $bytes_sent $request_length $request_method $uri "$http_if_none_match" "$http_user_agent"';
    access_log %(w)s/access.log fleet;
    client_body_temp_path %(w)s/tmp; proxy_temp_path %(w)s/tmp; fastcgi_temp_path %(w)s/tmp;
    uwsgi_temp_path %(w)s/tmp; scgi_temp_path %(w)s/tmp;
    keepalive_timeout 75s;
    server {
%(listens)s
        root %(www)s;
    }
}
""" % {"w": work, "listens": listens, "www": www}
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(conf)
    nginx = subprocess.Popen(["/usr/sbin/nginx", "-p", work, "-c", os.path.join(work, "nginx.conf"), "-e",
                              os.path.join(work, "error.log")])
    for _ in range(100):
        try:
            socket.create_connection((addresses[-1], port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    open(os.path.join(work, "access.log"), "w").close()  # only the kiosks' requests

    sel = selectors.DefaultSelector()
    shown = []  # (wall time, kiosk, src)
    kiosks = []
    stderr_log = open(os.path.join(work, "kiosks.log"), "wb")
    t_start = time.time()
    for i, a in enumerate(addresses):
        d = os.path.join(work, "k%d" % i)
        p = subprocess.Popen([binary, "--display", "offscreen:" + d + "/frames", "--size", "32x20", "--clock", "real",
                              "--fade", "0", "--manifest", "http://%s:%d/manifest.json" % (a, port),
                              "--manifest-interval", str(int(INTERVAL)), "--cache-dir", d + "/cache",
                              "--state-dir", d + "/state", "--input", "none", "--control", "none",
                              "--run-for", "1000000"],
                             stdout=subprocess.PIPE, stderr=stderr_log, stdin=subprocess.DEVNULL)
        os.set_blocking(p.stdout.fileno(), False)
        sel.register(p.stdout, selectors.EVENT_READ, (i, bytearray()))
        kiosks.append(p)
    t_started = time.time()

    def pump(until):
        while time.time() < until:
            for key, _ in sel.select(timeout=0.2):
                i, buf = key.data
                chunk = key.fileobj.read()
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                now = time.time()
                buf += chunk
                while b"\n" in buf:
                    line, _, rest = bytes(buf).partition(b"\n")
                    buf[:] = rest
                    if b'"event":"shown"' in line:
                        shown.append((now, i, json.loads(line)["src"].rsplit("/", 1)[1]))

    t_warm = t_started + warm
    pump(t_warm)
    t_change = t_warm + steady
    pump(t_change)
    rss, cpu_before = rss_and_cpu([p.pid for p in kiosks])
    write_manifest(www, new_show)
    t_change = time.time()
    limit = t_change + INTERVAL * 1.1 + 30
    while time.time() < limit:
        pump(time.time() + 1)
        seen = {i for t, i, src in shown if t >= t_change and src in new_images}
        if len(seen) == n:
            break
    pump(time.time() + after)
    t_end = time.time()
    _, cpu_after = rss_and_cpu([p.pid for p in kiosks])
    for p in kiosks:
        p.send_signal(signal.SIGTERM)
    for p in kiosks:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    nginx.send_signal(signal.SIGQUIT)
    nginx.wait(10)

    log = []
    with open(os.path.join(work, "access.log")) as f:
        for line in f:
            parts = line.split(" ", 8)
            log.append((float(parts[0]), parts[1], int(parts[2]), int(parts[3]), parts[7], parts[8].strip(),
                        int(parts[4]), int(parts[5])))
    user_agents = sorted({x[5].split('" "')[-1].rstrip('"') for x in log})
    failures = []

    # Requests per second from the end of the warm-up to the end: the manifest polls (the herd
    # the jitter must spread: peak second at most twice the mean) and all requests (the change
    # adds each kiosk's new images to its poll's second).
    first = int(t_warm)

    def series(rows, lo, hi):
        per_second = {}
        for x in rows:
            per_second[int(x[0])] = per_second.get(int(x[0]), 0) + 1
        return [per_second.get(s, 0) for s in range(lo, hi)]
    poll_counts = series([x for x in log if x[4] == "/manifest.json"], first, int(t_end))
    counts = series(log, first, int(t_end))
    start_counts = series(log, int(t_start), first)
    poll_mean = sum(poll_counts) / max(1, len(poll_counts))
    poll_peak = max(poll_counts, default=0)
    mean = sum(counts) / max(1, len(counts))
    peak = max(counts, default=0)
    if poll_peak > 2 * poll_mean and n >= 50:  # a handful of kiosks make no wave to measure
        failures.append("peak second %d polls > 2 x mean %.1f" % (poll_peak, poll_mean))

    # 304s among manifest polls in the steady window.
    polls = [x for x in log if t_warm <= x[0] < t_change and x[4] == "/manifest.json"]
    not_modified = sum(1 for x in polls if x[2] == 304)
    share = not_modified / max(1, len(polls))
    if share < 0.95:
        failures.append("304 share %.3f < 0.95 in the steady window" % share)
    polls_without_inm = sum(1 for x in polls if x[5].startswith('"-"'))
    poll_bytes = sum(x[6] + x[7] for x in polls) / max(1, len(polls))  # response + request

    # Image bytes per kiosk for the change.
    image_bytes, image_requests = {}, {}
    revalidations = 0
    for t, a, status, sent, uri, *_ in log:
        if t >= t_change and uri.startswith("/img/"):
            image_bytes[a] = image_bytes.get(a, 0) + sent
            if status == 304:  # a cached image revalidated (docs/security.md): no body sent
                revalidations += 1
                continue
            image_requests[(a, uri)] = image_requests.get((a, uri), 0) + 1
    expected = sum(sizes[x] for x in new_images)
    per_kiosk = [image_bytes.get(a, 0) for a in addresses]
    repeated = sum(1 for v in image_requests.values() if v > 1)
    old_fetched = sum(v for (a, uri), v in image_requests.items() if uri[5:] not in new_images)
    if any(b != expected for b in per_kiosk) or repeated or old_fetched:
        failures.append("image bytes per kiosk for the change: min %d max %d (expected %d), %d repeated, %d old"
                        % (min(per_kiosk), max(per_kiosk), expected, repeated, old_fetched))

    # Time from the change until each kiosk shows a new image; its poll and fetch from the log.
    delays, fetches = [], []
    for i, a in enumerate(addresses):
        times = [t for t, k, src in shown if k == i and t >= t_change and src in new_images]
        delays.append(min(times) - t_change if times else float("inf"))
        mine = [x for x in log if x[1] == a and x[0] >= t_change]
        poll = next((x[0] for x in mine if x[4] == "/manifest.json" and x[2] == 200), None)
        imgs = [x[0] for x in mine if x[4].startswith("/img/")]
        if poll is not None and imgs:
            fetches.append(max(imgs) - poll)
    fetch = max(fetches, default=0.0)
    bound = INTERVAL * 1.1 + fetch + IMAGE_INTERVAL
    worst = max(delays)
    if worst > bound:
        failures.append("every kiosk showed the new show after %.2f s > %.2f s" % (worst, bound))

    result = {
        "kiosks": n, "spawn_seconds": round(t_started - t_start, 2),
        "requests": len(log), "user_agents": user_agents,
        "polls_per_second_after_warmup": {"seconds": len(poll_counts), "mean": round(poll_mean, 2), "peak": poll_peak,
                                          "series": poll_counts},
        "requests_per_second_after_warmup": {"mean": round(mean, 2), "peak": peak, "series": counts},
        "rps_during_start": {"peak": max(start_counts, default=0), "series": start_counts},
        "steady_poll_bytes_each_way_total": round(poll_bytes), "steady_polls": len(polls), "steady_304_share": round(share, 4), "steady_polls_without_if_none_match": polls_without_inm,
        "image_bytes_per_kiosk_for_change": {"min": min(per_kiosk), "max": max(per_kiosk), "expected": expected,
                                             "new_images": new_images, "repeated_requests": repeated,
                                             "revalidations_304": revalidations},
        "seconds_to_new_show": {"median": round(sorted(delays)[n // 2], 2), "max": round(worst, 2),
                                "bound": round(bound, 2), "slowest_fetch": round(fetch, 3)},
        "kiosk_rss_total_mib": round(rss / 1024, 1), "kiosk_cpu_seconds_per_minute_steady":
            round((cpu_after - cpu_before) / max(1e-9, (t_end - t_change)) * 60, 2),
        "failures": failures,
    }
    print(json.dumps(result, indent=1))
    if failures:
        print("fleet: %s; files in %s" % ("; ".join(failures), work))
        sys.exit(1)
    shutil.rmtree(work)
    print("fleet: all figures held")


if __name__ == "__main__":
    main()
