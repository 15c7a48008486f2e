# SPDX-License-Identifier: Apache-2.0
"""The kernel suite's touch cases (docs/touch.md): QMP on a virtio tablet, evemu recordings
replayed through uinput, and the input stack checked without the program."""
import json, os, re, sys, time

from qemu_vm import DISPLAY_ID, EVENT_TIMEOUT, CaseFailed, log
from screen_compare import DIFFERS_PSNR, psnr, reference, screen_is
from kernel_case import SHOWN0, SHOWN_ANY, TAP_ANY, case_dir, json_events

# -- touch (docs/touch.md): QMP on a virtio tablet, evemu recordings replayed through uinput --
# The bochs-800x480 boot also has `-device virtio-tablet-pci,display=video0`: bound to the display,
# so QMP `input-send-event` with device=video0 reaches the tablet, never the PS/2 mouse. Its
# axes are 0..32767 in QEMU and in the guest (ABS_X/ABS_Y), its finger is BTN_LEFT.
# The touch cases show three items, A B A, so a left drag (next: index 1, photo B) and a right
# drag (previous: index 2, photo A again) end on different indexes and screens.
TABLET_MAX = 32767
TABLET_ARGS = ["-device", f"virtio-tablet-pci,id=tablet0,display={DISPLAY_ID},head=0"]
TOUCH_INTERVAL_S, TOUCH_FADE_MS = 60, 300   # no auto-advance while a touch case runs
TOUCH_SETTLE = 1.5        # s after the first `shown` before touching (neighbour slots being prepared)
TOUCH_TIMEOUT = 15        # s for the app's answer to a gesture
EVEMU_SWIPE_LEFT = "ep0430m09.synthetic-1-finger-swipe-left.events"
HERE = os.path.dirname(os.path.abspath(__file__))


def evemu_host_path(guest_name):
    """The host file build-initramfs.sh copied to /app/evemu/<guest_name>."""
    fixtures = os.path.join(HERE, "..", "Fixtures", "evemu-touchscreens")
    if not os.path.exists(os.path.join(fixtures, "EP0430M09.desc")):
        fixtures = os.path.join(fixtures, "touchscreens")
    names = {"atmel-maxtouch.desc": "Atmel maXTouch Touchscreen.desc",
             "atmel-maxtouch.1-finger-fast-taps.events": "Atmel maXTouch Touchscreen.1-finger-fast-taps.events",
             "atmel-maxtouch.1-finger-drag-up-down.events": "Atmel maXTouch Touchscreen.1-finger-drag-up-down.events",
             "ep0430m09.desc": "EP0430M09.desc"}
    if guest_name == EVEMU_SWIPE_LEFT:
        return os.path.join(HERE, "evemu", "EP0430M09.synthetic-1-finger-swipe-left.events")
    return os.path.join(fixtures, names[guest_name])


def evemu_events(path):
    """(t, type, code, value) of the `E:` lines of an evemu recording."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("E: "):
                t, ty, code, value = line[3:].split("#")[0].split()[:4]
                out.append((float(t), int(ty, 16), int(code, 16), int(value)))
    return out


def evemu_ranges(path):
    """{abs code: (min, max)} from the `A:` lines of an evemu description."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("A: "):
                p = line.split()
                out[int(p[1], 16)] = (int(p[2]), int(p[3]))
    return out


def evemu_touches(events):
    """Touches of the first finger as the single-touch emulation reports them (ABS_X/ABS_Y,
    BTN_TOUCH): [(t_down, t_up, [(x, y), ...])]."""
    x = y = None
    touches, cur, pending = [], None, None
    for t, ty, code, v in events:
        if ty == 3 and code == 0:
            x = v
        elif ty == 3 and code == 1:
            y = v
        elif ty == 1 and code in (0x14a, 0x110):
            pending = v
        elif ty == 0 and code == 0:
            if pending == 1 and cur is None:
                cur = (t, [(x, y)])
            elif pending == 0 and cur is not None:
                touches.append((cur[0], t, cur[1]))
                cur = None
            elif cur is not None:
                cur[1].append((x, y))
            pending = None
    return touches


# evdump's names for event types and codes (what it prints on the console)
EV_TYPES = {0: "EV_SYN", 1: "EV_KEY", 2: "EV_REL", 3: "EV_ABS", 4: "EV_MSC"}
EV_CODES = {(0, 0): "SYN_REPORT", (0, 3): "SYN_DROPPED", (1, 0x110): "BTN_LEFT", (1, 0x111): "BTN_RIGHT",
            (1, 0x112): "BTN_MIDDLE", (1, 0x14a): "BTN_TOUCH", (1, 0x145): "BTN_TOOL_FINGER",
            (1, 0x14d): "BTN_TOOL_DOUBLETAP", (3, 0): "ABS_X", (3, 1): "ABS_Y", (3, 0x18): "ABS_PRESSURE",
            (3, 0x2f): "ABS_MT_SLOT", (3, 0x39): "ABS_MT_TRACKING_ID", (3, 0x35): "ABS_MT_POSITION_X",
            (3, 0x36): "ABS_MT_POSITION_Y", (3, 0x37): "ABS_MT_TOOL_TYPE", (3, 0x30): "ABS_MT_TOUCH_MAJOR",
            (2, 8): "REL_WHEEL", (2, 6): "REL_HWHEEL"}


def ev_name(ty, code):
    return (EV_TYPES.get(ty, f"0x{ty:02x}"), EV_CODES.get((ty, code), f"0x{code:03x}"))


def evdump_events(text, node):
    """[(t, type name, code name, value)] that evdump printed for `node` in `text`."""
    base = node.rsplit("/", 1)[-1]
    return [(float(m.group(1)), m.group(2), m.group(3), int(m.group(4)))
            for m in re.finditer(rf"KC_EV {re.escape(base)} t=(\S+) (\S+) (\S+) (-?\d+)", text)]


def kernel_filtered(frames):
    """What evdev passes on of `frames` (lists of ((type, code), value)): the input core drops an
    ABS or KEY value equal to the current one, and a SYN_REPORT of an empty frame."""
    state, out = {}, []
    for frame in frames:
        body = []
        for (ty, code), v in frame:
            if ty in (1, 3) and code != 0x39 and state.get((ty, code)) == v:
                continue
            state[(ty, code)] = v
            body.append(ev_name(ty, code) + (v,))
        if body:
            out += body + [("EV_SYN", "SYN_REPORT", 0)]
    return out


def tablet_send(vm, *events):
    """One QMP input-send-event to the virtio tablet: one evdev frame (QEMU syncs after it)."""
    vm.qmp_cmd("input-send-event", device=DISPLAY_ID, head=0, events=list(events))


def abs_ev(axis, fraction):
    return {"type": "abs", "data": {"axis": axis, "value": round(fraction * TABLET_MAX)}}


def btn_ev(down):
    return {"type": "btn", "data": {"down": down, "button": "left"}}


def tablet_drag(vm, x0, x1, y, duration=0.3, steps=15, press=True, release=True):
    """Finger down at (x0, y) (fractions of the screen), moved to (x1, y) in `steps` even steps
    over `duration` seconds, lifted there (without press/release: the finger is already down /
    stays down). Returns the frames sent, as ((type, code), value) lists."""
    frames = []
    if press:
        frames.append([((3, 0), round(x0 * TABLET_MAX)), ((3, 1), round(y * TABLET_MAX)), ((1, 0x110), 1)])
        tablet_send(vm, abs_ev("x", x0), abs_ev("y", y), btn_ev(True))
    t0 = time.time()
    for i in range(1, steps + 1):
        x = x0 + (x1 - x0) * i / steps
        time.sleep(max(0.0, t0 + duration * i / steps - time.time()))
        tablet_send(vm, abs_ev("x", x))
        frames.append([((3, 0), round(x * TABLET_MAX))])
    if release:
        tablet_send(vm, btn_ev(False))
        frames.append([((1, 0x110), 0)])
    return frames


def tablet_tap(vm, x, y, hold=0.08):
    frames = [[((3, 0), round(x * TABLET_MAX)), ((3, 1), round(y * TABLET_MAX)), ((1, 0x110), 1)], [((1, 0x110), 0)]]
    tablet_send(vm, abs_ev("x", x), abs_ev("y", y), btn_ev(True))
    time.sleep(hold)
    tablet_send(vm, btn_ev(False))
    return frames


def touch_items(args):
    """The touch cases' playlist: A B A (previous of index 0 is index 2, next is index 1)."""
    a, b = (f"/app/photos/{os.path.basename(p)}" for p in args.photos)
    return [a, b, a]


def touch_photo(args, i):
    """The photo the touch playlist shows at index `i`."""
    items = touch_items(args)
    return args.photos[0 if items[i] == items[0] else 1]


def touch_session(vm, args, key, desc=None):
    """Starts kiosk-carousel for touch cases, unless it already runs for `key` (cases of one
    device share one start: ~5 s under TCG). With `desc`, first creates that evemu device through
    uinput and passes its node with --input; without, the program finds the touchscreen itself
    (the virtio tablet). Returns the session: key, start (log offset), node."""
    if vm.touch and vm.touch["key"] == key:
        return vm.touch
    end_touch_session(vm)
    start = vm.mark()
    node = None
    if desc:
        vm.send(f"uinput {desc}")
        node = vm.wait_for(r"KC_UINPUT node=(\S+)", EVENT_TIMEOUT, start).group(1)
    opts = ["--display", "drm", "--interval", str(TOUCH_INTERVAL_S), "--fade", str(TOUCH_FADE_MS)]
    vm.touch = {"key": key, "start": start, "node": node, "uinput": bool(desc)}
    vm.send("run " + " ".join(opts + (["--input", node] if node else []) + touch_items(args)))
    m = vm.wait_for(SHOWN0 + r"|kiosk-carousel: unknown option[^\n]*", EVENT_TIMEOUT, start)
    if "unknown option" in m.group(0):
        vm.touch = None           # the program has exited; the uinput device goes too
        if desc:
            vm.send("unplug")
            vm.wait_for(r"KC_UINPUT_GONE", EVENT_TIMEOUT, start)
        raise CaseFailed(f"this kiosk-carousel has no touch support yet: {m.group(0).strip()}")
    time.sleep(TOUCH_SETTLE)
    # The program must hold the touchscreen grabbed (EVIOCGRAB): evdump's own grab then fails
    # with EBUSY. This also tells that it found the tablet by itself.
    mark = vm.mark()
    vm.send(f"evdump -t 0 -g {node or ''}")
    vm.wait_for(r"KC_EVDUMP_DONE", EVENT_TIMEOUT, mark)
    text = vm.log_text()[mark:]
    if not node:
        m = re.search(r'KC_EVDEV node=(\S+) name="QEMU Virtio Tablet"', text)
        if not m:
            raise CaseFailed("evdump does not see the virtio tablet")
        node = vm.touch["node"] = m.group(1)
    if not re.search(rf"KC_EVDEV node={re.escape(node)} grab failed: Device or resource busy", text):
        raise CaseFailed(f"kiosk-carousel has not grabbed {node} (EVIOCGRAB) {TOUCH_SETTLE}s after the first "
                         f"`shown`: it does not read it")
    return vm.touch


def end_touch_session(vm):
    if not vm.touch:
        return
    s, vm.touch = vm.touch, None
    start = vm.mark()
    try:
        vm.send("term")
        vm.wait_for(r"KC_EXITED rc=\d+", EVENT_TIMEOUT, start)
    finally:
        if s["uinput"]:
            unplug_uinput(vm)


def unplug_uinput(vm):
    """Destroys the uinput device (guest.sh `unplug`), in a `finally`: a device left behind
    would be taken for the touchscreen by later cases. While another error is on its way out,
    a failure here is only logged, so that error is the one reported."""
    leaving = sys.exc_info()[1]
    mark = vm.mark()
    try:
        vm.send("unplug")
        vm.wait_for(r"KC_UINPUT_GONE", EVENT_TIMEOUT, mark)
    except CaseFailed as e:
        if leaving is None:
            raise
        log(f"  (the uinput device could not be unplugged: {e})")


def current_index(vm, session):
    shown = json_events(vm.log_text()[session["start"]:], "shown")
    return shown[-1]["index"] if shown else 0


def run_touch_drag_case(vm, case, args, size):
    """QMP: a drag on the virtio tablet from 80 % to 20 % of the width at mid-height, lifted there:
    the next image (index 1, photo B) is shown, its `shown` event comes, and the screen is photo B
    (PSNR against the offscreen frame). On the way, with the finger held still at 50 %, the
    screen must show the current image moved left with the finger (by 30 % of the width) and
    the next one sliding in on the right."""
    out = case_dir(vm, case)
    s = touch_session(vm, args, "tablet")
    items = touch_items(args)
    idx = current_index(vm, s)
    cur = reference(args.binary, touch_photo(args, idx), size, 0, args.out)
    nxt = reference(args.binary, touch_photo(args, (idx + 1) % len(items)), size, 0, args.out)
    mid = []

    def gesture():
        tablet_drag(vm, 0.8, 0.5, 0.5, 0.15, 8, release=False)
        try:
            time.sleep(0.3)
            mid.append(drag_follows_finger(vm, out, cur, nxt, round(0.3 * size[0])))
        finally:
            tablet_drag(vm, 0.5, 0.2, 0.5, 0.15, 7, press=False)
    detail = check_next_move(vm, case, args, size, out, s, gesture,
                             "QMP drag 80 % -> 50 % (held) -> 20 %")
    return mid[0] + "; " + detail


def drag_follows_finger(vm, out, cur, nxt, shift):
    """Mid-drag capture: the best horizontal offset d of the current image (screen x = image x - d)
    must be the finger's displacement `shift` (within 3 % of the width: the slop may be taken
    off), and the next image must fill the d columns on the right (its left edge)."""
    w, h = cur.size
    for attempt in range(4):
        img = vm.screendump(os.path.join(out, f"mid-drag-{attempt}.png"))
        if img.size != cur.size:
            raise CaseFailed(f"screen is {img.size}, expected {cur.size}")

        def fit(d):
            return psnr(img.crop((0, 0, w - d, h)), cur.crop((d, 0, w, h)))
        coarse = max(range(0, w // 2 + 1, 8), key=fit)
        d = max(range(max(1, coarse - 8), min(w // 2, coarse + 8) + 1), key=fit)
        p_cur = fit(d)
        p_next = psnr(img.crop((w - d, 0, w, h)), nxt.crop((0, 0, d, h)))
        ok = abs(d - shift) <= 0.03 * w and p_cur >= DIFFERS_PSNR and p_next >= DIFFERS_PSNR
        if ok:
            break
        time.sleep(0.25)
    if not ok:
        raise CaseFailed(f"mid-drag (finger held {shift} px left of where it landed): the current image is "
                         f"best found shifted by {d} px at {p_cur:.1f} dB, the next image on the right "
                         f"{d} px at {p_next:.1f} dB (want {shift} px +- {0.03 * w:.0f}, both >= {DIFFERS_PSNR} dB)"
                         f" (captures in {out})")
    return f"mid-drag the image follows the finger: shifted {d} px (finger {shift}) at {p_cur:.1f} dB, " \
           f"next image on the right at {p_next:.1f} dB"


def check_next_move(vm, case, args, size, out, s, gesture, what):
    items = touch_items(args)
    idx = current_index(vm, s)
    want = (idx + 1) % len(items)
    mark = vm.mark()
    t0 = time.time()
    gesture()
    t_up = time.time()
    m = vm.wait_for(SHOWN_ANY, TOUCH_TIMEOUT, mark)
    t_shown = time.time()
    ev = json.loads(m.group(0))
    if ev.get("index") != want:
        raise CaseFailed(f"{what}: `shown` index {ev.get('index')}, expected {want} (from {idx}: a left drag "
                         f"is the next image; {(idx - 1) % len(items)} would be the previous): {m.group(0)}")
    if ev.get("src") != items[want]:
        raise CaseFailed(f"{what}: `shown` src {ev.get('src')!r}, expected {items[want]!r}")
    photo = touch_photo(args, want)
    ref = reference(args.binary, photo, size, 0, args.out)
    best = screen_is(vm, out, "after-move", ref)
    if best < case.psnr_min:
        raise CaseFailed(f"{what}: after `shown` index {want} the screen is not {os.path.basename(photo)}: "
                         f"PSNR {best:.1f} dB < {case.psnr_min} dB (captures in {out})")
    return (f"{what}: `shown` index {want} ({os.path.basename(items[want])}) {t_shown - t_up:.1f}s after "
            f"lift-off (gesture {t_up - t0:.2f}s); screen = offscreen frame of {os.path.basename(photo)} "
            f"at {best:.1f} dB")


def run_touch_tap_case(vm, case, args, size):
    """QMP: a tap (down, 80 ms, up) at the centre of the virtio tablet: a `tap` event with the index
    shown, its src, at the centre; no move."""
    case_dir(vm, case)
    s = touch_session(vm, args, "tablet")
    items = touch_items(args)
    idx = current_index(vm, s)
    mark = vm.mark()
    tablet_tap(vm, 0.5, 0.5)
    m = vm.wait_for(TAP_ANY, TOUCH_TIMEOUT, mark)
    ev = json.loads(m.group(0))
    if ev.get("index") != idx or ev.get("src") != items[idx]:
        raise CaseFailed(f"tap: {m.group(0)}; expected index {idx} and src {items[idx]}")
    w, h = size
    notes = [f"`tap` index {idx}"]
    if "x" in ev and "y" in ev:
        if abs(ev["x"] - w / 2) > 0.02 * w or abs(ev["y"] - h / 2) > 0.02 * h:
            raise CaseFailed(f"tap at the centre reported at ({ev['x']}, {ev['y']}), screen {w}x{h}")
        notes.append(f"at ({ev['x']}, {ev['y']}) on {w}x{h}")
    time.sleep(1.0)
    moved = json_events(vm.log_text()[mark:], "shown")
    if moved:
        raise CaseFailed(f"a tap moved the show: {moved}")
    notes.append("no `shown` within 1 s")
    return ", ".join(notes)


def replay(vm, rec, pattern, timeout, since):
    """Plays the evemu recording `rec` on the uinput device and waits for its KC_REPLAY_DONE.
    Under TCG a `replay` line has now and then gone unanswered (no event, no KC_REPLAY_DONE in a
    minute, seen on busy and idle hosts alike): when nothing is done a few seconds past the
    recording's own length, the line is sent once more. Returns the KC_REPLAY_DONE match."""
    events = evemu_events(evemu_host_path(rec))
    length = events[-1][0] - events[0][0] if events else 0.0
    vm.send(f"replay {rec}")
    first_wait = min(timeout, length + 6.0)
    try:
        return vm.wait_for(pattern, first_wait, since)
    except CaseFailed:
        log(f"  (no KC_REPLAY_DONE {first_wait:.0f} s after `replay {os.path.basename(rec)}`: sent again)")
        vm.send(f"replay {rec}")
        return vm.wait_for(pattern, timeout, since)


def run_touch_replay_taps_case(vm, case, args, size):
    """uinput: the Atmel maXTouch (protocol B, INPUT_PROP_DIRECT, 800x480) recording of 9 fast
    taps, replayed with its timing: one `tap` event per recorded touch, with the index shown and
    at the recorded place (device units mapped to the screen), and no move."""
    case_dir(vm, case)
    s = touch_session(vm, args, "atmel", desc="atmel-maxtouch.desc")
    items = touch_items(args)
    idx = current_index(vm, s)
    rec = "atmel-maxtouch.1-finger-fast-taps.events"
    touches = evemu_touches(evemu_events(evemu_host_path(rec)))
    rng = evemu_ranges(evemu_host_path("atmel-maxtouch.desc"))
    mark = vm.mark()
    done = replay(vm, rec, r"KC_REPLAY_DONE file=\S*fast-taps[^\n]*", TOUCH_TIMEOUT, mark)
    deadline = time.time() + 2.0
    while len(json_events(vm.log_text()[mark:], "tap")) < len(touches) and time.time() < deadline:
        time.sleep(0.1)
    text = vm.log_text()[mark:]
    taps, moved = json_events(text, "tap"), json_events(text, "shown")
    if moved:
        raise CaseFailed(f"taps moved the show: {moved}")
    if len(taps) != len(touches):
        raise CaseFailed(f"{len(taps)} `tap` events for the {len(touches)} recorded taps ({done.group(0).strip()}): {taps}")
    w, h = size
    (x0, x1), (y0, y1) = rng[0], rng[1]
    worst = 0.0
    for k, (ev, (_, _, pts)) in enumerate(zip(taps, touches)):
        if ev.get("index") != idx or ev.get("src") != items[idx]:
            raise CaseFailed(f"tap {k}: {ev}; expected index {idx}, src {items[idx]}")
        if "x" in ev and "y" in ev:
            ex, ey = (pts[0][0] - x0) / (x1 - x0) * w, (pts[0][1] - y0) / (y1 - y0) * h
            err = max(abs(ev["x"] - ex) / w, abs(ev["y"] - ey) / h)
            worst = max(worst, err)
            if err > 0.02:
                raise CaseFailed(f"tap {k} reported at ({ev['x']}, {ev['y']}), recorded at device {pts[0]} "
                                 f"= screen ({ex:.0f}, {ey:.0f})")
    return (f"{len(taps)} `tap` events for {len(touches)} recorded taps, index {idx}, positions within "
            f"{worst * 100:.1f} % of the recorded ones; {done.group(0).strip()}")


def run_touch_replay_vertical_case(vm, case, args, size):
    """uinput: the Atmel maXTouch recording of a one-finger drag up and down (2.2 s): a vertical
    drag does nothing: no `shown`, no `tap`, the screen still shows the current image."""
    out = case_dir(vm, case)
    s = touch_session(vm, args, "atmel", desc="atmel-maxtouch.desc")
    idx = current_index(vm, s)
    rec = "atmel-maxtouch.1-finger-drag-up-down.events"
    mark = vm.mark()
    done = replay(vm, rec, r"KC_REPLAY_DONE file=\S*drag-up-down[^\n]*", TOUCH_TIMEOUT, mark)
    time.sleep(1.0)
    text = vm.log_text()[mark:]
    if json_events(text, "shown") or json_events(text, "tap"):
        raise CaseFailed(f"a vertical drag gave {json_events(text, 'shown') + json_events(text, 'tap')}")
    photo = touch_photo(args, idx)
    best = screen_is(vm, out, "after-drag", reference(args.binary, photo, size, 0, args.out))
    if best < case.psnr_min:
        raise CaseFailed(f"after the vertical drag the screen is not {os.path.basename(photo)}: {best:.1f} dB")
    return f"no `shown`, no `tap`; screen still index {idx} at {best:.1f} dB; {done.group(0).strip()}"


def run_touch_replay_swipe_case(vm, case, args, size):
    """uinput: EP0430M09 (protocol B, 5 slots, 1280x768) with a SYNTHETIC one-finger swipe from
    80 % to 20 % of the width in 0.3 s (none of the real recordings swipes sideways; see
    evemu/make-synthetic-swipe.py): the next image is shown, like the tablet drag."""
    out = case_dir(vm, case)
    s = touch_session(vm, args, "ep0430m09", desc="ep0430m09.desc")
    mark = vm.mark()

    def gesture():
        replay(vm, EVEMU_SWIPE_LEFT, r"KC_REPLAY_DONE file=\S*swipe-left[^\n]*", TOUCH_TIMEOUT, mark)
    return check_next_move(vm, case, args, size, out, s, gesture, "uinput replay of the synthetic swipe")


def run_input_stack_case(vm, case, args, size):
    """The harness side alone, without kiosk-carousel: evdump (static, in the guest) shows that
    (1) the virtio tablet exists as an evdev device with ABS_X/ABS_Y 0..32767 and BTN_LEFT, and QMP
    input-send-event reaches it (a tap and a drag arrive frame by frame with the values sent);
    (2) evemu-replay recreates EP0430M09 through /dev/uinput (name, INPUT_PROP_DIRECT, MT axes)
    and plays the synthetic swipe: every recorded event arrives, in order, with its timing."""
    end_touch_session(vm)
    notes = []
    # (1) the tablet
    start = vm.mark()
    vm.send("evdump -t 1.5 -g")
    vm.wait_for(r"KC_EVDUMP_LISTENING", EVENT_TIMEOUT, start)
    text = vm.log_text()[start:]
    m = re.search(r'KC_EVDEV node=(\S+) name="QEMU Virtio Tablet"[^\n]*', text)
    if not m:
        raise CaseFailed("no evdev device named \"QEMU Virtio Tablet\": " +
                         "; ".join(re.findall(r"KC_EVDEV [^\n]*", text)))
    tablet = m.group(1)
    if "ABS_X[0..32767]" not in m.group(0) or "ABS_Y[0..32767]" not in m.group(0) or "BTN_LEFT" not in m.group(0):
        raise CaseFailed(f"the tablet lacks ABS_X/ABS_Y 0..32767 or BTN_LEFT: {m.group(0)}")
    frames = tablet_tap(vm, 0.5, 0.5) + tablet_drag(vm, 0.8, 0.2, 0.5, 0.3, 15)
    vm.wait_for(r"KC_EVDUMP_DONE events=\d+", EVENT_TIMEOUT, start)
    got = [e[1:] for e in evdump_events(vm.log_text()[start:], tablet)]
    want = kernel_filtered(frames)
    if got != want:
        raise CaseFailed(f"QMP events on {tablet}: got {got[:40]}, expected {want[:40]}")
    others = [l for l in re.findall(r"KC_EV (\S+) t=", vm.log_text()[start:]) if l != tablet.rsplit('/', 1)[-1]]
    if others:
        raise CaseFailed(f"QMP events also reached {sorted(set(others))}")
    notes.append(f"tablet {tablet}: tap + 15-step drag, {len(got)} events as sent, none elsewhere")
    # (2) uinput
    start = vm.mark()
    vm.send("uinput ep0430m09.desc")
    node = vm.wait_for(r"KC_UINPUT node=(\S+)", EVENT_TIMEOUT, start).group(1)
    # From here on the device goes whatever happens: one left behind would be taken for the
    # touchscreen by later cases.
    try:
        # Long enough for a `replay` sent again (see replay()); evdump ends after its time.
        vm.send(f"evdump -t 9 {node}")
        m = vm.wait_for(rf"KC_EVDEV node={re.escape(node)} [^\n]*", EVENT_TIMEOUT, start)
        desc = m.group(0)
        for want_text in ('name="EP0430M09"', "props=DIRECT", "ABS_MT_POSITION_X[0..1279]", "ABS_MT_SLOT[0..4]", "BTN_TOUCH"):
            if want_text not in desc:
                raise CaseFailed(f"the uinput device lacks {want_text}: {desc}")
        vm.wait_for(r"KC_EVDUMP_LISTENING", EVENT_TIMEOUT, start)
        replay(vm, EVEMU_SWIPE_LEFT, r"KC_REPLAY_DONE [^\n]*", EVENT_TIMEOUT, start)
        vm.wait_for(r"KC_EVDUMP_DONE", EVENT_TIMEOUT, start)
        got = evdump_events(vm.log_text()[start:], node)
        rec = evemu_events(evemu_host_path(EVEMU_SWIPE_LEFT))
        want = [ev_name(ty, code) + (v,) for _, ty, code, v in rec]
        if [e[1:] for e in got] != want:
            raise CaseFailed(f"replayed events differ: got {[e[1:] for e in got][:30]}, recorded {want[:30]}")
        span_got, span_rec = got[-1][0] - got[0][0], rec[-1][0] - rec[0][0]
        if abs(span_got - span_rec) > 0.05:
            raise CaseFailed(f"replay took {span_got:.3f}s by the kernel's timestamps, recorded {span_rec:.3f}s")
    finally:
        unplug_uinput(vm)
    notes.append(f"uinput {node} (EP0430M09, DIRECT, 5 slots): {len(got)} events as recorded, "
                 f"{span_got * 1000:.0f} ms by kernel timestamps vs {span_rec * 1000:.0f} ms recorded")
    return "; ".join(notes)
