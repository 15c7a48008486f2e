#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The chaos run (docs/testing.md): kiosk-carousel against the fault server's chaos mode,
SIGKILLed at random moments (often the instant a temporary file of a cache or manifest write
appears) and started again, for DURATION seconds. After every kill and start it checks:

- every cache entry (`KEY.LENGTH`, DiskCache's layout) has LENGTH bytes, is a whole body the
  server sent for the URL whose SHA-256 is KEY, and decodes (Pillow); every `KEY.validators`
  beside one is a whole JSON object;
- the stored manifest (`manifest.json`: url, etag, lastModified, body in base64) is one whole
  manifest the server sent;
- once the new process shows its first image, no temporary file (`.tmp-*`) of an earlier
  process is left in the cache or the state directory;
- when the stored manifest's first image is in the cache, the first `shown` line names it and
  comes within 1 s of the exec.

Usage: chaos.py BINARY DURATION [SEED]. Prints the figures; exits 1 on any failed check.
"""
import base64
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "Fixtures", "content", "fault_server.py")
FIRST_SHOWN_LIMIT = 1.0


def cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


def thread_states(pid):
    states = []
    try:
        for tid in sorted(os.listdir("/proc/%d/task" % pid)):
            base = "/proc/%d/task/%s/" % (pid, tid)
            with open(base + "stat") as f:
                text = f.read()
            with open(base + "wchan") as f:
                wchan = f.read().strip() or "-"
            comm = text[text.index("(") + 1:text.rindex(")")].replace(" ", "_")
            states.append("%s:%s:%s" % (comm, text.rsplit(")", 1)[1].split()[0], wchan))
    except OSError:
        pass
    return states


def main():
    binary, duration = sys.argv[1], float(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="kiosk-chaos-")
    exe = os.path.join(work, "kiosk-carousel")
    shutil.copy(binary, exe)  # a rebuild during a long run does not change what runs
    cache, state, frames = (os.path.join(work, d) for d in ("cache", "state", "frames"))
    server = subprocess.Popen(["/usr/bin/python3", SERVER, "--chaos", str(seed)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              stderr=open(os.path.join(work, "server.log"), "wb"))
    port = int(server.stdout.readline().split()[1])
    base = "http://127.0.0.1:%d" % port
    args = [exe, "--display", "offscreen:" + frames, "--size", "64x40", "--clock", "real",
            "--interval", "1", "--fade", "0", "--manifest", base + "/chaos/manifest.json",
            "--manifest-interval", "1", "--cache-dir", cache, "--state-dir", state,
            "--cache-size", "2", "--input", "none", "--control", "none", "--run-for", "1000000"]
    stderr_log = open(os.path.join(work, "stderr.log"), "ab")
    failures = []
    stats = {"starts": 0, "kills": 0, "kills_during_write": 0, "kills_temp_mode": 0, "kills_on_temp_seen": 0,
             "entries_checked": 0, "validators_checked": 0, "manifests_checked": 0, "cached_restarts": 0, "overtaken_by_newer_manifest": 0,
             "first_shown_cached": [], "first_shown_other": [], "no_shown": 0}

    def fail(text):
        failures.append(text)
        print("FAIL:", text, flush=True)

    def served():
        with urllib.request.urlopen(base + "/chaos/served", timeout=10) as r:
            by_path = json.load(r)
        return {hashlib.sha256((base + p).encode()).hexdigest(): set(v) for p, v in by_path.items()}, \
            set(by_path.get("/chaos/manifest.json", []))

    def temp_files(pid_other_than=None):
        found = []
        for d in (cache, state):
            if not os.path.isdir(d):
                continue
            for name in os.listdir(d):
                if name.startswith(".tmp-") and (pid_other_than is None or "-%d-" % pid_other_than not in name):
                    found.append(os.path.join(d, name))
        return found

    def stored_manifest():
        """(body bytes, first item's URL) of manifest.json, checked; None when there is none."""
        path = os.path.join(state, "manifest.json")
        if not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            raw = f.read()
        try:
            stored = json.loads(raw)
            body = base64.b64decode(stored["body"])
            items = json.loads(body)["items"]
        except (ValueError, KeyError, TypeError) as e:
            fail("stored manifest not one whole manifest (%s): %r" % (e, raw[:200]))
            return None
        return body, [urllib.parse.urljoin(stored["url"], i["src"]) for i in items]

    def check_state():
        by_key, manifests = served()
        m = stored_manifest()
        if m is not None:
            stats["manifests_checked"] += 1
            if hashlib.sha256(m[0]).hexdigest() not in manifests:
                fail("stored manifest is not one the server sent: %r" % m[0][:200])
        valid = set()
        for name in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
            if name.startswith(".tmp-"):
                continue
            path = os.path.join(cache, name)
            key, _, length = name.partition(".")
            with open(path, "rb") as f:
                data = f.read()
            if length == "validators":
                # KEY.validators: the entry's ETag / Last-Modified (DiskCache), written whole or
                # not at all (AtomicFile), so always a JSON object naming the body's length.
                stats["validators_checked"] += 1
                try:
                    v = json.loads(data)
                    ok = isinstance(v, dict) and isinstance(v.get("length"), int)
                except ValueError:
                    ok = False
                if not ok:
                    fail("validators file %s is not whole: %r" % (name, data[:200]))
                continue
            stats["entries_checked"] += 1
            if not length.isdigit() or len(data) != int(length):
                fail("cache entry %s holds %d bytes" % (name, len(data)))
                continue
            if hashlib.sha256(data).hexdigest() not in by_key.get(key, set()):
                fail("cache entry %s is not a whole body the server sent for its URL" % name)
                continue
            try:
                from PIL import Image
                import io
                with Image.open(io.BytesIO(data)) as im:
                    im.load()
            except Exception as e:  # noqa: BLE001 - any decode error is the finding
                fail("cache entry %s does not decode: %s" % (name, e))
                continue
            valid.add(key)
        return m, valid

    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        m, valid = check_state()
        stored_body = base64.b64encode(m[0]).decode() if m is not None else None
        first_cached = None
        if m is not None and m[1]:
            first = m[1][0]
            if hashlib.sha256(first.encode()).hexdigest() in valid:
                first_cached = first
        shown = []
        t0 = time.monotonic()
        kiosk = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr_log, stdin=subprocess.DEVNULL)
        stats["starts"] += 1
        got_first = threading.Event()

        def read(out=kiosk.stdout, shown=shown, got_first=got_first, t0=t0, pid=kiosk.pid):
            for line in out:
                if b'"event":"shown"' in line and not shown:
                    at = time.monotonic() - t0
                    # A newer manifest fetched and stored before the first image was up may
                    # rightly show first: note whether the stored one is still the same.
                    try:
                        with open(os.path.join(state, "manifest.json"), "rb") as f:
                            now_stored = json.loads(f.read())["body"]
                    except (OSError, ValueError, KeyError):
                        now_stored = None
                    shown.append((at, json.loads(line)["src"], now_stored, cpu_seconds(pid)))
                    got_first.set()
            got_first.set()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        snapshot = []

        def look(pid=kiosk.pid, got_first=got_first, snapshot=snapshot):
            # Still nothing shown near the limit: each thread's state and kernel wait channel
            # (D and a file system's function: waiting for the disk; R: waiting for a CPU).
            if not got_first.wait(FIRST_SHOWN_LIMIT * 0.9):
                snapshot.extend(thread_states(pid))
        threading.Thread(target=look, daemon=True).start()
        mode = "temp" if rng.random() < 0.6 else "random"
        wait = rng.uniform(0.05, 5.0)
        if mode == "temp":
            stats["kills_temp_mode"] += 1
            marker = "-%d-" % kiosk.pid
            end = time.monotonic() + 10
            hit = False
            while time.monotonic() < end and not hit:
                for d in (cache, state):
                    try:
                        if any(n.startswith(".tmp-") and marker in n for n in os.listdir(d)):
                            hit = True
                            break
                    except FileNotFoundError:
                        pass
                else:
                    time.sleep(0.002)
            stats["kills_on_temp_seen"] += hit
            if hit and rng.random() < 0.5:
                time.sleep(rng.uniform(0, 0.03))
        else:
            got_first.wait(min(wait, max(0.0, deadline - time.monotonic()) + 0.1))
            time.sleep(max(0.0, wait - (time.monotonic() - t0)))
        # Before the kill: nothing of an earlier process may be left once this one shows.
        if shown:
            left = temp_files(pid_other_than=kiosk.pid)
            if left:
                fail("temporary files of an earlier process after a start: %s" % left)
        kiosk.send_signal(signal.SIGKILL)
        kiosk.wait()
        stats["kills"] += 1
        if temp_files():
            stats["kills_during_write"] += 1
        reader.join(2)
        if shown:
            latency, src, now_stored, cpu = shown[0]
            if first_cached is not None and now_stored != stored_body:
                stats["overtaken_by_newer_manifest"] += 1
                stats["first_shown_other"].append(latency)
            elif first_cached is not None:
                stats["cached_restarts"] += 1
                stats["first_shown_cached"].append(latency)
                if latency > FIRST_SHOWN_LIMIT:
                    # The process's own CPU time and the load tell a starved process from one
                    # that waited for something.
                    with open("/proc/loadavg") as f:
                        load = f.read().split()[0]
                    fail("start %d: first shown after %.3f s with the first image cached (%.3f s of CPU; load %s; "
                         "threads at %.1f s: %s)" % (stats["starts"], latency, cpu, load, FIRST_SHOWN_LIMIT * 0.9,
                                                     " ".join(snapshot)))
                if src != first_cached:
                    fail("start %d: first shown %s, not the stored show's first image %s" % (stats["starts"], src, first_cached))
            else:
                stats["first_shown_other"].append(latency)
        elif first_cached is not None and time.monotonic() - t0 > FIRST_SHOWN_LIMIT:
            stats["cached_restarts"] += 1
            fail("start %d: nothing shown in %.3f s with the first image cached" % (stats["starts"], time.monotonic() - t0))
        else:
            stats["no_shown"] += 1
        if stats["kills"] % 100 == 0:
            print("%d kills, %d failed checks" % (stats["kills"], len(failures)), flush=True)
    # A last start: the temporary files of the last kill are gone once it shows.
    check_state()
    kiosk = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr_log, stdin=subprocess.DEVNULL)
    for line in kiosk.stdout:
        if b'"event":"shown"' in line:
            break
    left = temp_files(pid_other_than=kiosk.pid)
    if left:
        fail("temporary files left after the last start: %s" % left)
    kiosk.send_signal(signal.SIGTERM)
    kiosk.wait()
    with urllib.request.urlopen(base + "/chaos/faults", timeout=10) as r:
        faults = json.load(r)
    server.stdin.close()
    server.terminate()
    server.wait()

    def pct(values, p):
        if not values:
            return float("nan")
        values = sorted(values)
        return values[min(len(values) - 1, int(p * len(values)))]
    cached = stats.pop("first_shown_cached")
    other = stats.pop("first_shown_other")
    stats["first_shown_cached_s"] = {"n": len(cached), "median": pct(cached, 0.5), "p99": pct(cached, 0.99),
                                     "max": max(cached, default=float("nan"))}
    stats["first_shown_uncached_s"] = {"n": len(other), "median": pct(other, 0.5), "max": max(other, default=float("nan"))}
    stats["faults"] = faults
    stats["failures"] = len(failures)
    print(json.dumps(stats, indent=1, sort_keys=True))
    if failures:
        print("chaos: %d failed checks; kiosk stderr in %s" % (len(failures), work))
        sys.exit(1)
    shutil.rmtree(work)
    print("chaos: all checks held")


if __name__ == "__main__":
    import urllib.parse  # noqa: E402
    main()
