#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Scripted HTTP server for KioskContentTests: only the faults nginx cannot make.

Binds 127.0.0.1 on a free port and prints `PORT n` on stdout. Paths:
  /slow           200, Content-Length 100000, FF D8 FF then one byte every 200 ms (a drip)
  /stall          reads the request, never answers (no headers: connect-phase timeout)
  /cut            200, Content-Length 20000, sends 10000 bytes of JPEG-looking data, closes
  /loop/a, /loop/b  302 to each other (a redirect loop)
  /chain/N        302 to /chain/N-1; /chain/0 answers a 5000-byte JPEG-looking body
  /big            200 without Content-Length, streams JPEG-looking bytes until the client goes
                  (at most 200 MB)
  /big-declared   200 with Content-Length 60000000, streams until the client goes
  /huge          200 without Content-Length, streams JPEG-looking bytes until the client goes
                  (at most 1 GB)
  /lying         200 with Content-Length 40000000, then streams up to 1 GB (more than it said)
  /go?URL        302 to URL (percent-decoded): file:///etc/passwd, ftp://..., anything
  /hold/NAME      200, a 3000-byte JPEG-looking body after 400 ms; counts concurrent requests
  /status/N       answers status N with a short text body (`?retry-after=V`: with Retry-After V)
  /bigheader      200 with one 200 KB header field (X-Padding), then a short JPEG-looking body
  /headers        JSON {"user-agent": ..., "accept-encoding": ...}: the request's headers
  /stats          JSON {"peak": most concurrent /hold requests, "count": {path: requests}}
  /chaos/...      with `--chaos SEED`: a changing manifest and its images with faults at random
                  (chaos_faults.py; Tests/chaos/run.sh)
Stops on SIGTERM or when stdin closes.
"""
import http.server
import urllib.parse
import json
import socketserver
import sys
import threading
import time

lock = threading.Lock()
chaos = None
active = 0
peak = 0
counts = {}


def jpeg_bytes(n, seed=0):
    body = bytearray((i * 31 + seed) & 0xFF for i in range(n))
    body[0:3] = b"\xff\xd8\xff"
    return bytes(body)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_body(self, status, body, ctype="image/jpeg", extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        global active, peak
        path = self.path.split("?")[0]
        with lock:
            counts[self.path] = counts.get(self.path, 0) + 1
        try:
            if chaos is not None and path.startswith("/chaos/"):
                chaos.handle(self)
                return
            if path == "/headers":
                echo = {"user-agent": self.headers.get("User-Agent"),
                        "accept-encoding": self.headers.get("Accept-Encoding")}
                self.send_body(200, json.dumps(echo).encode(), "application/json")
                return
            if path == "/bigheader":
                self.send_body(200, jpeg_bytes(3000), extra={"X-Padding": "a" * 200000})
                return
            if path == "/slow":
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                self.wfile.write(b"\xff\xd8\xff")
                self.wfile.flush()
                for _ in range(200):
                    time.sleep(0.2)
                    self.wfile.write(b"x")
                    self.wfile.flush()
                self.close_connection = True
            elif path == "/stall":
                time.sleep(30)
                self.close_connection = True
            elif path == "/cut":
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                self.send_header("Content-Length", "20000")
                self.end_headers()
                self.wfile.write(jpeg_bytes(10000))
                self.wfile.flush()
                self.close_connection = True
            elif path == "/loop/a":
                self.redirect("/loop/b")
            elif path == "/loop/b":
                self.redirect("/loop/a")
            elif path.startswith("/chain/"):
                n = int(path.split("/")[2])
                if n == 0:
                    self.send_body(200, jpeg_bytes(5000))
                else:
                    self.redirect("/chain/%d" % (n - 1))
            elif path in ("/big", "/big-declared"):
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                if path == "/big-declared":
                    self.send_header("Content-Length", "60000000")
                self.send_header("Connection", "close")
                self.end_headers()
                chunk = jpeg_bytes(65536)
                for _ in range(200 * 16):
                    self.wfile.write(chunk)
                self.close_connection = True
            elif path in ("/huge", "/lying"):
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                if path == "/lying":
                    self.send_header("Content-Length", "40000000")
                self.send_header("Connection", "close")
                self.end_headers()
                chunk = jpeg_bytes(1 << 20)
                for _ in range(1024):
                    self.wfile.write(chunk)
                self.close_connection = True
            elif path == "/go":
                self.redirect(urllib.parse.unquote(self.path.split("?", 1)[1]))
            elif path.startswith("/hold/"):
                with lock:
                    active += 1
                    peak = max(peak, active)
                time.sleep(0.4)
                with lock:
                    active -= 1
                self.send_body(200, jpeg_bytes(3000, seed=len(path)))
            elif path.startswith("/status/"):
                query = urllib.parse.parse_qs(self.path.partition("?")[2])
                extra = {"Retry-After": query["retry-after"][0]} if "retry-after" in query else None
                self.send_body(int(path.split("/")[2]), b"status page", "text/plain", extra)
            elif path == "/stats":
                with lock:
                    body = json.dumps({"peak": peak, "count": counts}).encode()
                self.send_body(200, body, "application/json")
            else:
                self.send_body(404, b"not found", "text/plain")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global chaos
    if len(sys.argv) == 3 and sys.argv[1] == "--chaos":
        import chaos_faults
        chaos = chaos_faults.Chaos(int(sys.argv[2]))
    server = Server(("127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # the test closes our stdin (or kills us) to stop


if __name__ == "__main__":
    main()
