#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The MQTT fleet run (docs/mqtt.md "Tests"): N kiosk-carousel processes (offscreen, real
clock, an image a second, each with its own state directory and --mqtt-id) on one mosquitto
on loopback for SECONDS, with every event accounted for.

Timeline: all kiosks started at once; at 1/6 of the run a "Next image" command to each
(latency from the publish to the `shown` line on the kiosk's stdout); at 1/3 the broker is
stopped for 5 s and started again (its database keeps the consumer's session); at 2/3 a fifth
of the kiosks are SIGKILLed and started again on the same state directories; at the end every
kiosk gets a "Pause" command, the consumer waits until it has every event, and the kiosks are
stopped.

Accounted for, per kiosk: every seq from 1 to the highest received (none missing), every
event line its processes wrote to stdout received (except, for a killed process, lines it
wrote in its last instant before its outbox record was on disk: counted and reported, never
a seq gap), duplicates (at least once: counted, allowed), a success reply to each command.
Figures: events, duplicates, command latency, the broker's outage and the reconnects after
it (from the kiosks' logs), CPU and memory.

Usage: fleet_mqtt.py BINARY N SECONDS. Needs mosquitto, mosquitto-clients and python3-pil
(deploy/apt-deps.sh --tests). Exits 1 when an event is unaccounted for.
"""
import json
import os
import random
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# The fleet run's helpers: a free loopback port, the summed RSS and CPU time of processes.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from fleet import free_port, rss_and_cpu  # noqa: E402

INTERVAL = 1.0


def wait_port(port, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def make_images(folder, n):
    from PIL import Image, ImageDraw
    r = random.Random(7)
    for i in range(n):
        im = Image.new("RGB", (240, 160), tuple(r.randrange(256) for _ in range(3)))
        d = ImageDraw.Draw(im)
        for _ in range(20):
            x, y = r.randrange(240), r.randrange(160)
            d.ellipse([x, y, x + 30, y + 30], fill=tuple(r.randrange(256) for _ in range(3)))
        im.save(os.path.join(folder, "img%02d.jpg" % i), "JPEG", quality=85)


class Broker:
    def __init__(self, work):
        self.dir = os.path.join(work, "broker")
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o777)  # mosquitto drops to its own user when started by root
        self.port = free_port()
        with open(os.path.join(self.dir, "mosquitto.conf"), "w") as f:
            f.write("listener %d 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\n"
                    "autosave_interval 0\nmax_queued_messages 100000\nlog_dest file %s/broker.log\n"
                    % (self.port, self.dir, self.dir))
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(["/usr/sbin/mosquitto", "-c", os.path.join(self.dir, "mosquitto.conf")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_port(self.port):
            sys.exit("mosquitto did not start")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(20)


class Consumer:
    """mosquitto_sub on every kiosk's events and replies, in a persistent session (QoS 1)."""

    def __init__(self, broker, sel):
        self.broker, self.sel = broker, sel
        self.messages = []  # (time, topic, payload)
        self.buffer = bytearray()
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            ["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.broker.port), "-c", "-i", "fleet-consumer",
             "-q", "1", "-F", "%t %p", "-t", "kiosk-carousel/+/events", "-t", "kiosk-carousel/+/reply"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        os.set_blocking(self.process.stdout.fileno(), False)
        self.sel.register(self.process.stdout, selectors.EVENT_READ, self)

    def feed(self, chunk, now):
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, _, rest = bytes(self.buffer).partition(b"\n")
            self.buffer[:] = rest
            topic, _, payload = line.decode().partition(" ")
            self.messages.append((now, topic, payload))


class Kiosk:
    def __init__(self, binary, index, work, port, images, sel):
        self.id = "fleet%03d" % index
        self.dir = os.path.join(work, self.id)
        os.makedirs(self.dir, exist_ok=True)
        self.args = [binary, "--display", "offscreen:" + self.dir + "/frames", "--size", "32x20", "--clock", "real",
                     "--fade", "0", "--interval", str(INTERVAL), "--input", "none", "--control", "none",
                     "--state-dir", self.dir + "/state", "--mqtt", "mqtt://127.0.0.1:%d" % port, "--mqtt-id", self.id,
                     "--run-for", "100000", images]
        self.sel = sel
        self.lines = []      # (time, line) of every process of this kiosk
        self.killed_lines = []  # the lines of killed processes
        self.buffer = bytearray()
        self.log = open(os.path.join(self.dir, "stderr.log"), "ab")
        self.start()

    def start(self):
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL)
        os.set_blocking(self.process.stdout.fileno(), False)
        self.sel.register(self.process.stdout, selectors.EVENT_READ, self)
        self.current = []

    def feed(self, chunk, now):
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, _, rest = bytes(self.buffer).partition(b"\n")
            self.buffer[:] = rest
            self.lines.append((now, line.decode()))
            self.current.append(line.decode())

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.killed_lines += self.current
        self.buffer = bytearray()


def main():
    binary, n, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    t_begin = time.time()
    work = tempfile.mkdtemp(prefix="kiosk-mqtt-fleet-")
    images = os.path.join(work, "images")
    os.makedirs(images)
    make_images(images, 6)
    sel = selectors.DefaultSelector()
    broker = Broker(work)
    consumer = Consumer(broker, sel)
    time.sleep(0.5)

    def pump(until):
        while time.time() < until:
            for key, _ in sel.select(timeout=0.1):
                try:
                    chunk = key.fileobj.read()
                except (ValueError, OSError):
                    chunk = b""
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                key.data.feed(chunk, time.time())

    def publish(topic, payload):
        subprocess.run(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "1", "-t", topic,
                        "-m", payload], check=True)

    t0 = time.time()
    kiosks = [Kiosk(binary, i, work, broker.port, images, sel) for i in range(n)]
    t_started = time.time()
    pids = lambda: [k.process.pid for k in kiosks if k.process.poll() is None]

    # 1/6: a Next command to each kiosk; latency to its next `shown` line.
    pump(t0 + seconds / 6)
    latencies = []
    for k in kiosks:
        before = len(k.lines)
        sent = time.time()
        publish("kiosk-carousel/%s/command/next" % k.id, "PRESS")
        deadline = sent + 5
        while time.time() < deadline:
            pump(time.time() + 0.02)
            shown = [(t, l) for t, l in k.lines[before:] if '"event":"shown"' in l and t >= sent]
            if shown:
                latencies.append(shown[0][0] - sent)
                break
        else:
            latencies.append(float("inf"))

    # 1/3: the broker down for 5 s (stopped cleanly: its database keeps the consumer's session).
    pump(t0 + seconds / 3)
    broker.stop()
    down = time.time()
    pump(down + 5)
    broker.start()
    up = time.time()
    # The consumer comes back in its session (what it printed before was read meanwhile).
    try:
        sel.unregister(consumer.process.stdout)
    except (KeyError, ValueError):
        pass
    consumer.process.kill()
    consumer.process.wait()
    consumer.start()
    outage_events = sum(1 for k in kiosks for t, l in k.lines if down <= t < up)

    # 2/3: a fifth of the kiosks SIGKILLed and started again.
    pump(t0 + 2 * seconds / 3)
    victims = kiosks[::5]
    for k in victims:
        k.kill()
    for k in victims:
        k.start()

    # The end: every kiosk paused (no more events), then every event awaited.
    pump(t0 + seconds)
    rss, cpu_before = rss_and_cpu(pids())
    cpu_window_start = time.time()
    for k in kiosks:
        publish("kiosk-carousel/%s/command/pause" % k.id, "PRESS")
    pump(time.time() + 2 * INTERVAL + 1)
    _, cpu_after = rss_and_cpu(pids())
    cpu_window = time.time() - cpu_window_start

    def account():
        by_kiosk = {k.id: [] for k in kiosks}
        replies = {k.id: [] for k in kiosks}
        for t, topic, payload in consumer.messages:
            parts = topic.split("/")
            if len(parts) == 3 and parts[1] in by_kiosk:
                (by_kiosk if parts[2] == "events" else replies)[parts[1]].append(payload)
        result = {}
        for k in kiosks:
            seqs, bodies = [], set()
            for p in by_kiosk[k.id]:
                obj = json.loads(p)
                seqs.append(obj["seq"])
                bodies.add(p[:p.rindex(',"seq":')] + "}")
            unique = set(seqs)
            top = max(unique) if unique else 0
            missing = [s for s in range(1, top + 1) if s not in unique]
            unreceived = [l for _, l in k.lines if l not in bodies]
            killed_unreceived = [l for l in unreceived if l in k.killed_lines]
            result[k.id] = {"seqs": len(unique), "top": top, "missing": missing, "duplicates": len(seqs) - len(unique),
                            "unreceived": [l for l in unreceived if l not in killed_unreceived],
                            "killed_unreceived": killed_unreceived, "lines": len(k.lines),
                            "replies": [json.loads(p) for p in replies[k.id]]}
        return result

    t_wait = time.time()
    while time.time() < t_wait + 60:
        pump(time.time() + 0.5)
        result = account()
        if all(not r["unreceived"] and not r["missing"] for r in result.values()):
            break
    caught_up = time.time() - t_wait
    for k in kiosks:
        k.process.send_signal(signal.SIGTERM)
    for k in kiosks:
        try:
            k.process.wait(15)
        except subprocess.TimeoutExpired:
            k.process.kill()
    pump(time.time() + 1)
    consumer.process.terminate()
    broker.stop()
    result = account()

    failures = []
    lines = sum(r["lines"] for r in result.values())
    missing = {i: r["missing"] for i, r in result.items() if r["missing"]}
    unreceived = {i: r["unreceived"] for i, r in result.items() if r["unreceived"]}
    if missing:
        failures.append("seqs missing: %s" % missing)
    if unreceived:
        failures.append("events never received: %s" % {i: len(v) for i, v in unreceived.items()})
    bad_replies = [i for i, r in result.items()
                   if sorted(x.get("command") for x in r["replies"] if x.get("error") == "success") != ["next", "pause"]]
    if bad_replies:
        failures.append("commands not answered with success: %s" % bad_replies)
    slow = [l for l in latencies if l > 1]
    if slow:
        failures.append("%d Next commands took over 1 s" % len(slow))
    latencies.sort()
    # Connections beyond the first of each process: the reconnects after the broker's restart.
    starts = n + len(victims)
    connections = 0
    for k in kiosks:
        k.log.close()
        with open(os.path.join(k.dir, "stderr.log"), "rb") as f:
            connections += sum(1 for line in f if b" mqtt connected " in line)
    figures = {
        "kiosks": n, "seconds": seconds, "spawn_seconds": round(t_started - t0, 2),
        "event_lines_on_stdout": lines,
        "events_received": sum(r["seqs"] for r in result.values()),
        "duplicates": sum(r["duplicates"] for r in result.values()),
        "seqs_missing": sum(len(r["missing"]) for r in result.values()),
        "unreceived": sum(len(r["unreceived"]) for r in result.values()),
        "killed_before_on_disk": sum(len(r["killed_unreceived"]) for r in result.values()),
        "killed_and_restarted": len(victims),
        "next_latency_ms": {"median": round(latencies[len(latencies) // 2] * 1000), "max": round(latencies[-1] * 1000)},
        "broker_outage_seconds": round(up - down, 1), "events_made_during_outage": outage_events,
        "mqtt_connections": connections, "reconnects": connections - starts,
        "seconds_to_account_for_all_after_pause": round(caught_up, 1),
        "kiosk_rss_total_mib": round(rss / 1024, 1),
        "kiosk_cpu_seconds_per_second_paused": round((cpu_after - cpu_before) / max(1e-9, cpu_window), 3),
        "wall_seconds": round(time.time() - t_begin, 1),
        "failures": failures,
    }
    print(json.dumps(figures, indent=1))
    if failures:
        print("mqtt fleet: FAILED: %s; files in %s" % ("; ".join(failures), work))
        sys.exit(1)
    shutil.rmtree(work, ignore_errors=True)
    print("mqtt fleet: every event accounted for")


if __name__ == "__main__":
    main()
