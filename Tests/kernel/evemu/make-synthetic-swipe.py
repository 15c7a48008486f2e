#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes EP0430M09.synthetic-1-finger-swipe-left.events: a SYNTHETIC evemu recording.

None of the real recordings in Tests/Fixtures/evemu-touchscreens/ (evemu-devices, touchscreens/)
has a sideways one-finger swipe: the drags there go up and down, diagonally (N-Trig NW-SE,
+95 % x and +94 % y at once) or, when several fingers are down, the first finger goes down.
This one is made up, on the description of a real device (EP0430M09.desc: 1280x768, multitouch
protocol B with 5 slots, INPUT_PROP_DIRECT, pointer emulation ABS_X/ABS_Y + BTN_TOUCH), in the
shape that device's own recordings have: a frame every ~7.4 ms (135 Hz, as in
EP0430M09.1-finger-drag-up-down.events), only changed values per frame, the MT values first,
then BTN_TOUCH and ABS_X/ABS_Y, then SYN_REPORT.

The finger lands at 80 % of the width at mid-height and moves left to 20 % in 300 ms,
speeding up (x = x0 + dx * u^1.5), drifting a few device units up and down, and lifts 12 ms
after the last move: a "next" swipe (more than a third of the width, and a flick).
Run it again to regenerate the file; it takes no input and is deterministic.
"""
import math, os

W, H = 1280, 768
X0, X1, Y0 = round(0.8 * (W - 1)), round(0.2 * (W - 1)), (H - 1) // 2
DURATION, PERIODS = 0.300, (0.00731, 0.00746, 0.00739, 0.00752)   # s; the period pattern repeats
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "EP0430M09.synthetic-1-finger-swipe-left.events")

NAMES = {(3, 0x39): "ABS_MT_TRACKING_ID", (3, 0x35): "ABS_MT_POSITION_X", (3, 0x36): "ABS_MT_POSITION_Y",
         (1, 0x14a): "BTN_TOUCH", (3, 0x00): "ABS_X", (3, 0x01): "ABS_Y", (0, 0): "SYN_REPORT"}
TYPES = {0: "EV_SYN", 1: "EV_KEY", 3: "EV_ABS"}

lines, t, k, last, prev_t = [], 0.000001, 0, {}, None


def frame(t, values):
    global prev_t
    for (ty, code), v in values:
        if ty == 3 and last.get(code) == v and code != 0x39:
            continue
        if ty == 3:
            last[code] = v
        lines.append(f"E: {t:.6f} {ty:04x} {code:04x} {v:04d}\t# {TYPES[ty]} / {NAMES[(ty, code)]:<20} {v}")
    ms = "+0ms" if prev_t is None else f"+{round((t - prev_t) * 1000)}ms"
    lines.append(f"E: {t:.6f} 0000 0000 0000\t# ------------ SYN_REPORT (0) ---------- {ms}")
    prev_t = t


def pos(u):
    x = round(X0 + (X1 - X0) * u ** 1.5)
    y = round(Y0 - 9 * math.sin(math.pi * u) + (1, 0, -1, 0, 1, 1, 0, -1)[int(u * 40) % 8])
    return x, y


x, y = pos(0.0)
frame(t, [((3, 0x39), 12), ((3, 0x35), x), ((3, 0x36), y), ((1, 0x14a), 1), ((3, 0x00), x), ((3, 0x01), y)])
start = t
while True:
    t += PERIODS[k % len(PERIODS)]
    k += 1
    u = min(1.0, (t - start) / DURATION)
    x, y = pos(u)
    frame(t, [((3, 0x35), x), ((3, 0x36), y), ((3, 0x00), x), ((3, 0x01), y)])
    if u >= 1.0:
        break
t += 0.012
frame(t, [((3, 0x39), -1), ((1, 0x14a), 0)])

header = ["# EVEMU 1.3",
          "# SYNTHETIC recording, not captured from hardware: written by make-synthetic-swipe.py",
          "# for the device described in Tests/Fixtures/evemu-touchscreens/EP0430M09.desc",
          f"# One finger: {pos(0.0)} -> {pos(1.0)} in {DURATION * 1000:.0f} ms, {k} moves, then lift-off",
          '# Input device name: "EP0430M09"']
with open(OUT, "w") as f:
    f.write("\n".join(header + lines) + "\n")
print(f"wrote {OUT}: {len(lines)} events, {k + 2} frames, {t:.3f} s")
