# SPDX-License-Identifier: Apache-2.0
"""The fault server's chaos mode (`fault_server.py --chaos SEED`, used by Tests/chaos/run.sh).

Serves a manifest that changes every few seconds and its images, and misbehaves at random:
  /chaos/manifest.json   a manifest of 4 images out of 12 (a new version every PERIOD s, new
                         image URLs every third version; some items carry `sha256`, some are on
                         a host that does not resolve, some URLs get a new body with no new name)
  /chaos/img/NAME?r=REV  a real JPEG or PNG made with Pillow (40-200 KB)
  /chaos/hop/...         a redirect on the way to the same image
  /chaos/loop/a|b        302 to each other
  /chaos/served          JSON {path: [sha256 of every whole body started at that path]} for the
                         checker (a redirect's target counts for the path asked first)
  /chaos/faults          JSON {fault: times made}
Faults (each request, with probability FAULT_RATE): a reset in mid-body (RST after half), 500
and 503 with and without Retry-After, 429 with Retry-After, a Content-Length too long (the
connection closes early), a Content-Length too short (only where the manifest gives the
image's sha256, the one way a client can tell), a slow body (2-6 s), headers after 3 s, a
redirect loop, a redirect to a name that does not resolve, a new ETag on the same manifest, the
old ETag on a new manifest. The seed fixes each request's dice (by its path and its number
for that path) and the manifests' contents; thread timing still varies between runs.
"""
import hashlib
import io
import json
import random
import socket
import struct
import threading
import time

FAULT_RATE = 0.35
PERIOD = 4.0          # seconds between manifest versions
POOL = 12             # image names
PER_SHOW = 4          # items per manifest
UNRESOLVABLE = "http://kiosk-chaos.invalid"


class Chaos:
    def __init__(self, seed):
        self.seed = seed
        self.start = time.monotonic()
        self.lock = threading.Lock()
        self.served = {}      # logical path -> set of sha256
        self.faults = {}
        self.requests = {}    # path -> count
        self.images = {}      # (name, rev, variant) -> bytes

    # ---- content ----
    def version(self):
        return int((time.monotonic() - self.start) / PERIOD)

    def image(self, name, rev, variant):
        key = (name, rev, variant)
        with self.lock:
            if key in self.images:
                return self.images[key]
        from PIL import Image, ImageDraw
        r = random.Random("%s/%s/%s/%s" % (self.seed, name, rev, variant))
        w, h = r.choice([(480, 320), (640, 400), (800, 600)])
        im = Image.new("RGB", (w, h), tuple(r.randrange(256) for _ in range(3)))
        d = ImageDraw.Draw(im)
        for _ in range(60):
            x, y = r.randrange(w), r.randrange(h)
            d.rectangle([x, y, x + r.randrange(8, 120), y + r.randrange(8, 120)],
                        fill=tuple(r.randrange(256) for _ in range(3)))
        for y in range(0, h, 3):  # noise rows so the files are not tiny
            d.line([(0, y), (w, y)], fill=tuple(r.randrange(256) for _ in range(3)), width=1)
        out = io.BytesIO()
        if int(name[1:]) % 3 == 0:
            im.save(out, "PNG")
        else:
            im.save(out, "JPEG", quality=92)
        body = out.getvalue()
        with self.lock:
            self.images[key] = body
        return body

    def item_plan(self, name):
        """(carries sha256, body changes under the same URL) for an image name."""
        n = int(name[1:])
        return n % 4 == 1, n % 4 == 2

    def variant(self, name, version):
        _, changing = self.item_plan(name)
        return (version // 2) % 2 if changing else 0

    def manifest(self, version):
        r = random.Random("%s/manifest/%d" % (self.seed, version))
        names = r.sample(["i%d" % i for i in range(POOL)], PER_SHOW)
        rev = version // 3
        items = []
        for name in names:
            with_hash, _ = self.item_plan(name)
            item = {"src": "/chaos/img/%s.%s?r=%d" % (name, "png" if int(name[1:]) % 3 == 0 else "jpg", rev)}
            if with_hash:
                item["sha256"] = hashlib.sha256(self.image(name, rev, self.variant(name, version))).hexdigest()
            items.append(item)
        if r.random() < 0.25:  # one item on a name that does not resolve
            items.insert(r.randrange(1, len(items) + 1), {"src": UNRESOLVABLE + "/img/gone.jpg"})
        body = json.dumps({"interval": 1, "fade": 0, "items": items}, indent=1).encode()
        return body, '"m-%d"' % version

    # ---- bookkeeping ----
    def note_body(self, logical, body):
        with self.lock:
            self.served.setdefault(logical, set()).add(hashlib.sha256(body).hexdigest())

    def note_fault(self, name):
        with self.lock:
            self.faults[name] = self.faults.get(name, 0) + 1

    def dice(self, path):
        with self.lock:
            n = self.requests.get(path, 0)
            self.requests[path] = n + 1
        return random.Random("%s/%s/%d" % (self.seed, path, n))

    # ---- serving ----
    def handle(self, h):
        full = h.path
        path, _, query = full.partition("?")
        if path == "/chaos/served":
            with self.lock:
                body = json.dumps({k: sorted(v) for k, v in self.served.items()}).encode()
            return h.send_body(200, body, "application/json")
        if path == "/chaos/faults":
            with self.lock:
                body = json.dumps(self.faults).encode()
            return h.send_body(200, body, "application/json")
        if path == "/chaos/loop/a":
            return h.redirect("/chaos/loop/b")
        if path == "/chaos/loop/b":
            return h.redirect("/chaos/loop/a")
        logical = full
        if path.startswith("/chaos/hop/"):
            logical = "/chaos/img/" + full[len("/chaos/hop/"):]
            path = "/chaos/img/" + path[len("/chaos/hop/"):]
        r = self.dice(full)
        version = self.version()
        if path == "/chaos/manifest.json":
            body, etag = self.manifest(version)
            sha_known = True
        elif path.startswith("/chaos/img/"):
            name = path[len("/chaos/img/"):].split(".")[0]
            try:
                rev = int(query.split("r=")[1].split("&")[0])
            except (IndexError, ValueError):
                return h.send_body(404, b"not found", "text/plain")
            body = self.image(name, rev, self.variant(name, version))
            etag = '"%s-%d-%s"' % (name, rev, hashlib.sha256(body).hexdigest()[:12])
            sha_known = self.item_plan(name)[0]
        else:
            return h.send_body(404, b"not found", "text/plain")
        ctype = "application/json" if path.endswith(".json") else \
            ("image/png" if path.endswith(".png") else "image/jpeg")
        fault = None
        if r.random() < FAULT_RATE:
            choices = ["reset", "500", "500-retry", "503", "503-retry", "429", "long", "slow", "late",
                       "loop", "unresolvable"]
            if sha_known:
                choices.append("short")
            if path == "/chaos/manifest.json":
                choices += ["new-etag", "old-etag"]
            elif not full.startswith("/chaos/hop/"):
                choices.append("hop")
            fault = r.choice(choices)
            self.note_fault(fault)
        inm = h.headers.get("If-None-Match")
        if fault in ("500", "503"):
            return h.send_body(int(fault), b"server error", "text/plain")
        if fault in ("500-retry", "503-retry", "429"):
            return h.send_body(int(fault[:3]), b"busy", "text/plain", {"Retry-After": str(r.randint(1, 3))})
        if fault == "loop":
            return h.redirect("/chaos/loop/a")
        if fault == "unresolvable":
            return h.redirect(UNRESOLVABLE + full)
        if fault == "hop":
            return h.redirect("/chaos/hop/" + full[len("/chaos/img/"):])
        if fault == "new-etag":
            etag = '"m-%d-%d"' % (version, r.randrange(1 << 30))
        if fault == "old-etag":
            _, etag = self.manifest(max(0, version - 1))
        if inm is not None and inm == etag and fault not in ("new-etag", "old-etag"):
            h.send_response(304)
            h.send_header("ETag", etag)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if fault == "late":
            time.sleep(3)
        self.note_body(logical, body)
        length = len(body)
        if fault == "long":
            length = len(body) + r.randint(1, 5000)
        if fault == "short":
            length = r.randint(1, len(body) - 1)
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(length))
        h.send_header("ETag", etag)
        if fault in ("long", "short", "reset"):
            h.send_header("Connection", "close")
        h.end_headers()
        if fault == "reset":
            h.wfile.write(body[:r.randint(1, len(body) - 1)])
            h.wfile.flush()
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.close_connection = True
            return
        if fault == "slow":
            seconds = r.uniform(2, 6)
            chunks = 40
            step = (len(body) + chunks - 1) // chunks
            for i in range(0, len(body), step):
                h.wfile.write(body[i:i + step])
                h.wfile.flush()
                time.sleep(seconds / chunks)
            return
        h.wfile.write(body)  # after a short Content-Length, the rest is junk on the connection
        h.wfile.flush()
        if fault in ("long", "short"):
            h.close_connection = True
