#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Kernel suite: kiosk-carousel on Debian's own kernel in QEMU (TCG), checked on the virtual screen.

Each boot runs one QEMU machine (a display device at a resolution) with the initramfs made by
build-initramfs.sh. The guest (guest.sh) takes commands on its second serial port; the host
starts kiosk-carousel in it, reads its `shown` events from the serial log, captures the screen
with QMP `screendump` and compares the captures with what the offscreen backend renders for
the same photos at the same size on the host:

  * first frame: PSNR against the offscreen frame of photo A >= the case's bound;
  * fade (--fade 4000): every capture that differs from both photos must lie between them per
    pixel (within TOLERANCE) and be one blend of the two for the whole screen (a torn or
    half-drawn frame is not), and at least one such capture must be seen;
  * console: KDGETMODE on /dev/tty0 is KD_GRAPHICS (1) while it runs and KD_TEXT (0) after SIGTERM,
    and the program exits with status 0;
  * an unavailable mode is refused with the list of available modes;
  * touch (bochs-800x480 boot, with a virtio tablet and uinput): QMP input-send-event drags and
    taps on the tablet, and evemu recordings replayed through uinput (evemu-replay.c), must give
    the `shown`/`tap` events and screens README "Touch" describes; evdump.c shows the events
    reach the guest as sent without the program.

Stdlib + Pillow only (Debian: python3-pil). Usage (see README.md):
  run-kernel-tests.py --binary KIOSK --initrd X.cpio.gz --photos A.jpg B.jpg --format-photos A.webp B.heic
                      --out DIR [--only NAME...]
Prints one PASS/FAIL line per case and, last, "N passed, M failed"; exit status 1 on any failure.
"""
import argparse, json, math, os, re, shutil, socket, subprocess, sys, time
from PIL import Image, ImageChops, ImageStat

BOOT_TIMEOUT = 60         # s from QEMU start to KC_INIT (the first line of /init)
READY_TIMEOUT = 60        # s from KC_INIT to KC_READY (modules loaded)
EVENT_TIMEOUT = 60        # s for the app's first `shown` event and other guest answers
TOLERANCE = 4             # per channel: how far outside [min(A,B), max(A,B)] a fade pixel may be
OUTSIDE_MAX = 0.002       # fraction of pixels allowed outside that band
BLEND_PSNR = 35.0         # dB: capture vs the best single blend of A and B (no tearing)
DIFFERS_PSNR = 30.0       # dB: a capture below this against both A and B is "mid-fade"
INTERVAL_S, FADE_MS = 6, 4000   # --interval includes the fade: A still for 2 s, then 4 s of fade
DISPLAY_ID = "video0"     # QOM id of the display device: QMP input-send-event and the tablet name it


def log(msg):
    print(msg, flush=True)


class BootFailed(Exception):
    pass


class CaseFailed(Exception):
    pass


class VM:
    """One QEMU run: the serial log, QMP and the command channel to guest.sh."""

    DEVICES = {"bochs": "bochs-display", "virtio": "virtio-gpu-pci"}

    def __init__(self, kernel, initrd, device, res, out, extra=()):
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.serial = os.path.join(out, "serial.log")
        self.qmp_path = os.path.join(out, "qmp.sock")
        self.ctl_path = os.path.join(out, "ctl.sock")
        for f in (self.serial, self.qmp_path, self.ctl_path):
            if os.path.exists(f):
                os.remove(f)
        w, h = res
        self.cmd = ["qemu-system-x86_64", "-m", "512M", "-smp", "2", "-accel", "tcg", "-display", "none",
                    "-no-reboot", "-kernel", kernel, "-initrd", initrd,
                    "-append", "console=ttyS0 quiet panic=-1",
                    "-serial", f"file:{self.serial}",
                    "-serial", f"unix:{self.ctl_path},server=on,wait=off",
                    "-monitor", "none", "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
                    "-vga", "none", "-device", f"{self.DEVICES[device]},id={DISPLAY_ID},xres={w},yres={h}"] + list(extra)
        self.proc = None
        self.touch = None         # the running touch session (see touch_session)
        self.qmp = self.ctl = None
        self.t0 = time.time()

    # -- lifecycle --
    def start(self):
        self.t0 = time.time()
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.qmp = self._connect(self.qmp_path)
        self.qmp_file = self.qmp.makefile("rw")
        json.loads(self.qmp_file.readline())                  # greeting
        self.qmp_cmd("qmp_capabilities")
        self.ctl = self._connect(self.ctl_path)
        try:
            self.wait_for(r"KC_INIT", BOOT_TIMEOUT, since=0)
        except CaseFailed as e:
            raise BootFailed(str(e))
        self.t_init = time.time() - self.t0
        self.wait_for(r"KC_READY", READY_TIMEOUT, since=0)
        self.t_ready = time.time() - self.t0

    def _connect(self, path, timeout=10):
        deadline = time.time() + timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(path)
                return s
            except OSError:
                if time.time() > deadline or (self.proc and self.proc.poll() is not None):
                    raise BootFailed(f"cannot connect to {path}: qemu output: {self._qemu_output()}")
                time.sleep(0.05)

    def _qemu_output(self):
        if self.proc and self.proc.poll() is not None and self.proc.stdout:
            return self.proc.stdout.read().decode(errors="replace")
        return "(qemu still running)"

    def stop(self):
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                self.send("off")
                self.proc.wait(3)
        except Exception:
            pass
        if self.proc.poll() is None:
            try:
                self.qmp_cmd("quit")
                self.proc.wait(5)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        for s in (self.qmp, self.ctl):
            if s:
                s.close()

    # -- channels --
    def qmp_cmd(self, name, **args):
        self.qmp_file.write(json.dumps({"execute": name, "arguments": args}) + "\n")
        self.qmp_file.flush()
        while True:
            r = json.loads(self.qmp_file.readline())
            if "event" in r:
                continue
            if "error" in r:
                raise CaseFailed(f"QMP {name}: {r['error']}")
            return r["return"]

    def send(self, line):
        self.ctl.sendall((line + "\n").encode())

    def log_text(self):
        try:
            with open(self.serial, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def mark(self):
        """The current end of the serial log, to look for output after this point."""
        return len(self.log_text())

    def wait_for(self, pattern, timeout, since):
        """Waits until `pattern` (a regex) appears in the serial log after offset `since`."""
        deadline = time.time() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.log_text(), since)
            if m:
                return m
            if self.proc.poll() is not None:
                raise CaseFailed(f"QEMU exited while waiting for /{pattern}/")
            if time.time() > deadline:
                raise CaseFailed(f"timed out after {timeout}s waiting for /{pattern}/")
            time.sleep(0.05)

    def screendump(self, path):
        ppm = path + ".ppm"
        self.qmp_cmd("screendump", filename=ppm)
        img = Image.open(ppm).convert("RGB")
        img.load()
        os.remove(ppm)
        img.save(path)
        return img


# -- image comparisons (Pillow only) --
def mse(a, b):
    stat = ImageStat.Stat(ImageChops.difference(a, b))
    return sum(v * v for v in stat.rms) / len(stat.rms)


def psnr(a, b):
    m = mse(a, b)
    return 99.0 if m == 0 else 10 * math.log10(255 * 255 / m)


def outside_fraction(c, a, b, tol):
    """Fraction of pixels with a channel more than `tol` outside [min(a,b), max(a,b)]."""
    lo, hi = ImageChops.darker(a, b), ImageChops.lighter(a, b)
    excess = ImageChops.lighter(ImageChops.subtract(lo, c), ImageChops.subtract(c, hi))
    worst = ImageChops.lighter(ImageChops.lighter(*excess.split()[:2]), excess.split()[2])
    hist = worst.histogram()
    return sum(hist[tol + 1:]) / (c.width * c.height)


def best_blend(c, a, b):
    """The t in [0, 1] for which blend(a, b, t) is closest to c (MSE is convex in t), and that PSNR."""
    lo, hi = 0.0, 1.0
    for _ in range(18):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if mse(c, Image.blend(a, b, m1)) <= mse(c, Image.blend(a, b, m2)):
            hi = m2
        else:
            lo = m1
    t = (lo + hi) / 2
    return t, psnr(c, Image.blend(a, b, t))


# -- references from the offscreen backend on the host --
def reference(binary, photo, size, rotation, out, caption=None):
    """What the offscreen backend renders for `photo` at `size` (panel size), rotated like the panel;
    with `caption`, from a playlist giving the photo that caption."""
    w, h = size
    lw, lh = (h, w) if rotation in (90, 270) else (w, h)
    d = os.path.join(out, f"ref-{'caption-' if caption else ''}{os.path.basename(photo)}-{lw}x{lh}")
    png = os.path.join(d, "frame-00000000.png")
    source = photo
    if caption:
        source = d + ".json"
        with open(source, "w") as f:
            json.dump({"items": [{"src": os.path.abspath(photo), "caption": caption}]}, f)
    if not os.path.exists(png):
        shutil.rmtree(d, ignore_errors=True)
        r = subprocess.run([binary, "--display", f"offscreen:{d}", "--size", f"{lw}x{lh}", "--run-for", "1", source],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or not os.path.exists(png):
            raise CaseFailed(f"offscreen reference failed (rc {r.returncode}): {r.stderr.strip()}")
    img = Image.open(png).convert("RGB")
    # Rotation.clockwise90: the panel shows the picture turned 90 degrees clockwise.
    return {0: img, 90: img.transpose(Image.Transpose.ROTATE_270), 180: img.transpose(Image.Transpose.ROTATE_180),
            270: img.transpose(Image.Transpose.ROTATE_90)}[rotation]


def start_show(vm, case, args, extra=()):
    """Sends `run` for the two photos; returns (log offset, host time it was sent)."""
    start = vm.mark()
    photos = " ".join(f"/app/photos/{os.path.basename(p)}" for p in args.photos)
    rot = ["--rotate", str(case.rotation)] if case.rotation else []
    t_run = time.time()
    vm.send("run " + " ".join(["--display", case.display, "--interval", str(case.interval_s), "--fade", str(FADE_MS)]
                              + rot + list(extra)) + " " + photos)
    return start, t_run


SHOWN0 = r'\{[^\n]*"event" *: *"shown"[^\n]*"index" *: *0[^\n]*\}'


def console_mode(vm, tag, start):
    vm.send(f"mode {tag}")
    return vm.wait_for(rf"KC_KDMODE {re.escape(tag)} (\S+)", EVENT_TIMEOUT, start).group(1)


def stop_with(vm, signal, start):
    """Sends `signal` (TERM, KILL, SEGV ...) to the program; returns its exit status."""
    vm.send("term" if signal == "TERM" else f"signal {signal}")
    return int(vm.wait_for(r"KC_EXITED rc=(\d+)", EVENT_TIMEOUT, start).group(1))


def screen_given_back(vm, out, refs):
    """After the program ends the text console must be on the screen again: no photo, and the
    line guest.sh printed on tty1 visible (a switched-off CRTC or a stale frame would not show it).
    Returns the highest PSNR against the photos of the last capture."""
    for attempt in range(10):
        img = vm.screendump(os.path.join(out, f"after-exit-{attempt}.png"))
        worst = max(psnr(img, r) if img.size == r.size else 0.0 for r in refs)
        lit = sum(img.convert("L").histogram()[128:])
        if worst < DIFFERS_PSNR and 200 < lit < img.width * img.height // 20:
            return worst
        time.sleep(0.25)
    raise CaseFailed(f"after the program ended the text console is not on the screen "
                     f"({worst:.1f} dB against the photos, {lit} bright pixels: no console text)")


# -- cases --
class Case:
    """`whole_frames`: every capture must be one blend of A and B for the whole screen (no tearing).
    True for DRM (page flips). fbdev emulation on a DRM driver flushes its shadow buffer to the
    screen from a kernel worker (deferred I/O), which may catch half a frame: there only the
    per-pixel band is enforced."""
    def __init__(self, name, display, psnr_min=40.0, rotation=0, whole_frames=True, log_expect=None,
                 interval_s=None):
        self.name, self.display, self.psnr_min, self.rotation = name, display, psnr_min, rotation
        self.interval_s = interval_s or INTERVAL_S  # --interval of the show cases (the fade is FADE_MS)
        self.whole_frames = whole_frames
        self.log_expect = log_expect      # regex the program's log must match (which backend it opened)


def run_show_case(vm, case, args, size):
    """Starts the show, checks the first frame, a fade and the console; raises CaseFailed."""
    out = os.path.join(vm.out, case.name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    ref_a = reference(args.binary, args.photos[0], size, case.rotation, args.out)
    ref_b = reference(args.binary, args.photos[1], size, case.rotation, args.out)
    start, t_run = start_show(vm, case, args)
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    t_shown = time.time()
    notes = [f"first `shown` {t_shown - t_run:.1f}s after start"]
    if case.log_expect:
        m = re.search(case.log_expect, vm.log_text()[start:])
        if not m:
            raise CaseFailed(f"the log does not match /{case.log_expect}/")
        notes.append(m.group(0).strip())

    # First frame: the event may come just before the frame reaches the screen: retry a little.
    best = -1.0
    for attempt in range(8):
        img = vm.screendump(os.path.join(out, f"first-{attempt}.png"))
        if img.size != ref_a.size:
            raise CaseFailed(f"screen is {img.size[0]}x{img.size[1]}, expected {ref_a.size[0]}x{ref_a.size[1]}")
        best = max(best, psnr(img, ref_a))
        if best >= case.psnr_min:
            break
        time.sleep(0.25)
    if best < case.psnr_min:
        raise CaseFailed(f"first frame PSNR {best:.1f} dB < {case.psnr_min} dB against the offscreen frame "
                         f"(captures in {out})")
    notes.append(f"first frame PSNR {best:.1f} dB")

    mode = console_mode(vm, f"{case.name}-running", start)
    if mode != "1":
        raise CaseFailed(f"console mode while running is {mode}, expected 1 (KD_GRAPHICS)")

    # Fade A -> B: the interval includes the fade, so it runs from INTERVAL - FADE to INTERVAL
    # after the first `shown`, and `shown` index 1 comes when it ends. Capture until then.
    captures = []
    fade_start = t_shown + case.interval_s - FADE_MS / 1000
    shown1 = re.compile(r'\{[^\n]*"event" *: *"shown"[^\n]*"index" *: *1[^\n]*\}')
    deadline = t_shown + case.interval_s + EVENT_TIMEOUT
    while not shown1.search(vm.log_text(), start):
        if time.time() > deadline:
            raise CaseFailed(f"no `shown` event for index 1 within {case.interval_s + EVENT_TIMEOUT}s")
        if time.time() >= fade_start - 0.5:
            captures.append(vm.screendump(os.path.join(out, f"fade-{len(captures):02}.png")))
        time.sleep(0.25)
    # After the fade: photo B, until the next fade starts INTERVAL - FADE later.
    best_b = -1.0
    for attempt in range(8):
        img = vm.screendump(os.path.join(out, f"after-fade-{attempt}.png"))
        best_b = max(best_b, psnr(img, ref_b))
        if best_b >= case.psnr_min:
            break
        time.sleep(0.2)
    if best_b < case.psnr_min:
        raise CaseFailed(f"after the fade the screen is not photo B: PSNR {best_b:.1f} dB < {case.psnr_min} dB")
    mids = []
    for k, c in enumerate(captures):
        pa, pb = psnr(c, ref_a), psnr(c, ref_b)
        if pa >= DIFFERS_PSNR or pb >= DIFFERS_PSNR:
            continue
        outside = outside_fraction(c, ref_a, ref_b, TOLERANCE)
        t, fit = best_blend(c, ref_a, ref_b)
        mids.append((k, t, fit, outside, pa, pb))
        if outside > OUTSIDE_MAX or (case.whole_frames and fit < BLEND_PSNR):
            raise CaseFailed(f"fade capture fade-{k:02}.png is not a blend of its neighbours: "
                             f"{outside * 100:.2f}% of pixels outside [A, B] by more than {TOLERANCE}, "
                             f"best blend t={t:.2f} at {fit:.1f} dB (PSNR vs A {pa:.1f}, vs B {pb:.1f})")
    if not mids:
        raise CaseFailed(f"no capture during the fade among {len(captures)} (PSNR vs A/B: "
                         + ", ".join(f"{psnr(c, ref_a):.0f}/{psnr(c, ref_b):.0f}" for c in captures) + ")")
    notes.append(f"photo B after the fade at {best_b:.1f} dB")
    notes.append(f"{len(mids)} of {len(captures)} captures mid-fade, t=" + ",".join(f"{t:.2f}" for _, t, _, _, _, _ in mids)
                 + f", worst blend fit {min(f for _, _, f, _, _, _ in mids):.1f} dB")

    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"exit status after SIGTERM is {rc}, expected 0")
    mode = console_mode(vm, f"{case.name}-after", start)
    if mode != "0":
        raise CaseFailed(f"console mode after SIGTERM is {mode}, expected 0 (KD_TEXT)")
    notes.append("console KD_GRAPHICS while running, KD_TEXT after SIGTERM")
    worst = screen_given_back(vm, out, [ref_a, ref_b])
    notes.append(f"screen back to the console after exit ({worst:.0f} dB vs the photos)")
    return "; ".join(notes)


def run_crash_case(vm, case, args, size):
    """Console on the ways out the program cannot clean up normally:
    SIGSEGV -> the fatal-signal handler's kc_console_restore_now() puts KD_TEXT back before
    the default action (exit status 128 + 11); SIGKILL -> nothing can run, the VT stays in
    KD_GRAPHICS, and the next start must still leave it in KD_TEXT when it ends."""
    out = os.path.join(vm.out, case.name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    refs = [reference(args.binary, p, size, 0, args.out) for p in args.photos]
    notes = []
    start, _ = start_show(vm, case, args)
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    rc = stop_with(vm, "SEGV", start)
    mode = console_mode(vm, f"{case.name}-segv", start)
    if rc != 128 + 11 or mode != "0":
        raise CaseFailed(f"after SIGSEGV: exit status {rc} (expected 139), console mode {mode} (expected 0, KD_TEXT)")
    screen_given_back(vm, out, refs)
    notes.append("SIGSEGV: status 139, KD_TEXT, screen back")
    start, _ = start_show(vm, case, args)
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    rc = stop_with(vm, "KILL", start)
    mode = console_mode(vm, f"{case.name}-kill", start)
    if rc != 128 + 9 or mode != "1":
        raise CaseFailed(f"after SIGKILL: exit status {rc} (expected 137), console mode {mode} (expected 1: nothing can restore)")
    start, _ = start_show(vm, case, args)
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    rc = stop_with(vm, "TERM", start)
    mode = console_mode(vm, f"{case.name}-next", start)
    if rc != 0 or mode != "0":
        raise CaseFailed(f"the start after SIGKILL found KD_GRAPHICS and left mode {mode} (status {rc}); expected KD_TEXT")
    notes.append("SIGKILL leaves KD_GRAPHICS; the next run ends in KD_TEXT")
    return "; ".join(notes)


CAPTION = "Harbour lights at dusk, seen from the pier"   # build-initramfs.sh puts it in /app/captions.json


def run_caption_case(vm, case, args, size):
    """A caption from a playlist, drawn in the guest (FreeType, HarfBuzz, fontconfig from the
    initramfs) and turned with the picture by --rotate: the screen matches the offscreen frame of
    the same playlist turned like the panel, and differs from the photo without its caption."""
    out = os.path.join(vm.out, case.name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    ref = reference(args.binary, args.photos[0], size, case.rotation, args.out, caption=CAPTION)
    plain = reference(args.binary, args.photos[0], size, case.rotation, args.out)
    start = vm.mark()
    vm.send("run " + " ".join(["--display", case.display, "--rotate", str(case.rotation), "--interval", str(INTERVAL_S),
                                "--fade", str(FADE_MS), "/app/captions.json"]))
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    best, img = -1.0, None
    for attempt in range(8):
        img = vm.screendump(os.path.join(out, f"first-{attempt}.png"))
        if img.size != ref.size:
            raise CaseFailed(f"screen is {img.size[0]}x{img.size[1]}, expected {ref.size[0]}x{ref.size[1]}")
        best = max(best, psnr(img, ref))
        if best >= case.psnr_min:
            break
        time.sleep(0.25)
    if best < case.psnr_min:
        raise CaseFailed(f"captioned frame PSNR {best:.1f} dB < {case.psnr_min} dB against the offscreen frame (captures in {out})")
    without = psnr(img, plain)
    if without >= DIFFERS_PSNR:
        raise CaseFailed(f"the screen is the photo without its caption ({without:.1f} dB)")
    if "no text on screen" in vm.log_text()[start:]:
        raise CaseFailed("the program found no font in the guest")
    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"exit status after SIGTERM is {rc}, expected 0")
    return f"captioned frame at {best:.1f} dB against the offscreen frame, {without:.1f} dB against the photo alone"


def run_missing_mode_case(vm, case, args, size):
    """--display drm,mode=1234x567: refused, naming the available modes; the console is left in text mode."""
    start = vm.mark()
    vm.send(f"run --display {case.display} /app/photos/{os.path.basename(args.photos[0])}")
    vm.send("wait")
    rc = vm.wait_for(r"KC_EXITED rc=(\d+)", EVENT_TIMEOUT, start).group(1)
    text = vm.log_text()[start:]
    if rc == "0":
        raise CaseFailed("kiosk-carousel accepted a mode the connector does not have")
    if "1234x567 is not available; available:" not in text or f"{size[0]}x{size[1]}@" not in text:
        raise CaseFailed("the error does not list the available modes")
    vm.send(f"mode {case.name}-after")
    m = vm.wait_for(rf"KC_KDMODE {re.escape(case.name)}-after (\S+)", EVENT_TIMEOUT, start)
    if m.group(1) != "0":
        raise CaseFailed(f"console mode after the failed start is {m.group(1)}, expected 0")
    line = next((l for l in text.splitlines() if "not available" in l), "").strip()
    return f"exit status {rc}, console in text mode: {line}"


# -- VT switching and display power (--display-off, README "Configure") --
VT_OTHER = 2              # the VT switched to while the show runs on tty1
VT_TEXT = "KIOSK-CAROUSEL KERNEL SUITE: TTY2, THE OTHER CONSOLE"


def display_event(state, reason):
    """The pattern of a `display` event line (README "What it does", events)."""
    return r'\{"event":"display","state":"%s","reason":"%s","t":\d+\}' % (state, reason)


def sh(vm, command, start, timeout=EVENT_TIMEOUT):
    """Runs `command` in the guest shell; returns (its output, exit status)."""
    mark = vm.mark()
    vm.send("sh " + command)
    m = vm.wait_for(r"KC_SH_DONE rc=(\d+)", timeout, mark)
    return vm.log_text()[mark:m.start()], int(m.group(1))


def switch_vt(vm, n):
    """vtswitch N in the guest (VT_ACTIVATE + VT_WAITACTIVE); returns its KC_VT line."""
    mark = vm.mark()
    vm.send(f"vt {n}")
    m = vm.wait_for(r"KC_VT(_TIMEOUT)? [^\n]*", EVENT_TIMEOUT, mark)
    if m.group(1):
        raise CaseFailed(f"VT switch to {n} did not happen: {m.group(0).strip()}")
    return m.group(0).strip()


def start_still_show(vm, case, args, extra=()):
    """The show with a long interval, so photo A stays on screen while the case runs."""
    start = vm.mark()
    photos = " ".join(f"/app/photos/{os.path.basename(p)}" for p in args.photos)
    vm.send("run " + " ".join(["--display", case.display, "--interval", "120", "--fade", "300"] + list(extra)) + " " + photos)
    return start


def run_vt_switch_case(vm, case, args, size):
    """VT_PROCESS switching: with the show on tty1, `vtswitch 2` (VT_ACTIVATE + VT_WAITACTIVE)
    must complete (the program releases the display and acknowledges), tty2's text console must
    be on screen (not the photo) while the program keeps running with tty1 still in KD_GRAPHICS;
    `vtswitch 1` brings the photo back (>= 40 dB against the offscreen frame, redrawn by the
    program); after SIGTERM: status 0, KD_TEXT, and VT switching works without it (VT_AUTO)."""
    out = case_dir(vm, case)
    ref_a = reference(args.binary, args.photos[0], size, 0, args.out)
    ref_b = reference(args.binary, args.photos[1], size, 0, args.out)
    sh(vm, f"printf '\\n\\n  {VT_TEXT}\\n' > /dev/tty{VT_OTHER}", 0)
    start = start_still_show(vm, case, args)
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    notes = []
    m = re.search(r"VT switching handled[^\n]*", vm.log_text()[start:])
    if not m:
        raise CaseFailed("the program did not set VT_PROCESS switching (no 'VT switching handled' in its log)")
    best = screen_is(vm, out, "before", ref_a)
    if best < case.psnr_min:
        raise CaseFailed(f"before the switch the screen is not photo A: {best:.1f} dB")
    notes.append(f"photo A {best:.1f} dB")

    # Away.
    mark = vm.mark()
    line = switch_vt(vm, VT_OTHER)
    vm.wait_for(r"display released[^\n]*", EVENT_TIMEOUT, mark)
    vm.wait_for(display_event("off", "vt"), EVENT_TIMEOUT, mark)
    away_mark = vm.mark()
    notes.append(line + "; display off vt")
    away = None
    for k in range(12):
        img = vm.screendump(os.path.join(out, f"away-{k}.png"))
        pa = psnr(img, ref_a) if img.size == ref_a.size else 0.0
        lit = sum(img.convert("L").histogram()[128:])
        away = (pa, lit)
        if pa < DIFFERS_PSNR and 200 < lit < img.width * img.height // 20:
            break
        time.sleep(0.25)
    else:
        raise CaseFailed(f"while switched away the screen is not tty{VT_OTHER}'s console: "
                         f"{away[0]:.1f} dB against photo A, {away[1]} bright pixels (captures in {out})")
    notes.append(f"away: tty{VT_OTHER} console on screen ({away[0]:.1f} dB vs A, {away[1]} text pixels)")
    time.sleep(1.0)
    text, rc = sh(vm, 'kill -0 "$PID" && echo KC_ALIVE; /app/kdgetmode /dev/tty1', start)
    if "KC_ALIVE" not in text:
        raise CaseFailed("the program is gone while switched away: " + text.strip())
    if not re.search(r"^1\s*$", text, re.M):
        raise CaseFailed(f"tty1 is not in KD_GRAPHICS while switched away: {text.strip()}")
    if "KC_EXITED" in vm.log_text()[start:]:
        raise CaseFailed("the program exited while switched away")
    notes.append("program alive, tty1 still KD_GRAPHICS")

    # Back.
    if json_events(vm.log_text()[away_mark:], "shown"):
        raise CaseFailed("a `shown` while the VT was switched away (nothing was on screen)")
    mark = vm.mark()
    line = switch_vt(vm, 1)
    vm.wait_for(r"display acquired[^\n]*", EVENT_TIMEOUT, mark)
    vm.wait_for(display_event("on", "vt"), EVENT_TIMEOUT, mark)
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, mark)
    notes.append("display on vt, then `shown` index 0 for photo A lit again")
    best = screen_is(vm, out, "back", ref_a)
    if best < case.psnr_min:
        raise CaseFailed(f"after switching back the screen is not photo A: {best:.1f} dB < {case.psnr_min} dB "
                         f"(captures in {out})")
    notes.append(f"{line}; back: photo A at {best:.1f} dB")

    rc = stop_with(vm, "TERM", start)
    mode = console_mode(vm, f"{case.name}-after", start)
    if rc != 0 or mode != "0":
        raise CaseFailed(f"after SIGTERM: status {rc}, console mode {mode}; expected 0 and 0 (KD_TEXT)")
    screen_given_back(vm, out, [ref_a, ref_b])
    # VT_AUTO is back: switching works at once without the program.
    l2, l1 = switch_vt(vm, VT_OTHER), switch_vt(vm, 1)
    notes.append(f"after SIGTERM: status 0, KD_TEXT, console back, VT_AUTO ({l2}; {l1})")
    return "; ".join(notes)


def run_display_off_case(vm, case, args, size):
    """--display-off covering the guest's current time (the guest clock is set to the host's,
    UTC both sides): the screen is switched off at the start (DRM: the connector's DPMS property
    reads back Off in sysfs; the capture is reported), and the show pauses (no `shown` index 1
    although the interval, 3 s, passes twice). Then the guest clock is set past the range's end
    (`date -s`): the timerfd (TFD_TIMER_CANCEL_ON_SET) wakes the loop, the screen comes back on
    (DPMS On) with photo A redrawn (>= 40 dB), and the show resumes with a full interval."""
    out = case_dir(vm, case)
    ref_a = reference(args.binary, args.photos[0], size, 0, args.out)
    now = int(time.time())
    sh(vm, f"date -u -s @{now} >/dev/null", 0)
    lo, hi = time.gmtime(now - 120), time.gmtime(now + 600)
    rng = f"{lo.tm_hour:02}:{lo.tm_min:02}-{hi.tm_hour:02}:{hi.tm_min:02}"
    start = vm.mark()
    photos = " ".join(f"/app/photos/{os.path.basename(p)}" for p in args.photos)
    vm.send(f"run --display {case.display} --interval 3 --fade 300 --display-off {rng} {photos}")
    off = vm.wait_for(r"display off[^\n]*", EVENT_TIMEOUT, start).group(0).strip()
    vm.wait_for(display_event("off", "schedule"), EVENT_TIMEOUT, start)
    time.sleep(2.0)   # photo A decoded meanwhile (its `shown` waits for a lit screen)
    notes = [f"--display-off {rng}: {off}; display off schedule"]
    text, _ = sh(vm, "cat /sys/class/drm/card0-*/dpms", start)
    if case.display.startswith("drm") and "Off" not in text:
        raise CaseFailed(f"the connector's DPMS does not read Off in sysfs: {text.strip()!r}")
    notes.append("sysfs dpms " + " ".join(text.split()))
    img = vm.screendump(os.path.join(out, "off.png"))
    mean = sum(ImageStat.Stat(img).mean) / 3
    if mean > 10:
        raise CaseFailed(f"the screen is not dark while off: mean level {mean:.1f} (capture {out}/off.png)")
    notes.append(f"capture while off: black (mean level {mean:.1f}; {psnr(img, ref_a):.1f} dB vs A)")
    mark = vm.mark()
    time.sleep(7.0)
    moved = json_events(vm.log_text()[start:], "shown")
    if moved:
        raise CaseFailed(f"`shown` while the screen was off: {moved}")
    notes.append("no `shown` at all while off, 9 s (interval 3 s): paused")

    # Past the range: set the clock, the loop must notice at once.
    mark = vm.mark()
    sh(vm, f"date -u -s @{now + 660} >/dev/null", start)
    t_set = time.time()
    on = vm.wait_for(r"display on[^\n]*", 10, mark).group(0).strip()
    notes.append(f"clock set past the end: {on} ({time.time() - t_set:.1f}s)")
    vm.wait_for(display_event("on", "schedule"), 10, mark)
    vm.wait_for(SHOWN0, 10, mark)
    notes.append("display on schedule, then `shown` index 0 for photo A lit")
    text, _ = sh(vm, "cat /sys/class/drm/card0-*/dpms", start)
    if case.display.startswith("drm") and "On" not in text:
        raise CaseFailed(f"the connector's DPMS does not read On after the range: {text.strip()!r}")
    best = screen_is(vm, out, "on", ref_a)
    if best < case.psnr_min:
        raise CaseFailed(f"after the screen came back on it is not photo A: {best:.1f} dB")
    notes.append(f"photo A back at {best:.1f} dB")
    m = vm.wait_for(r'\{[^\n]*"event" *: *"shown"[^\n]*"index" *: *1[^\n]*\}', 15, mark)
    notes.append(f"`shown` index 1 {time.time() - t_set:.1f}s after the clock was set (interval 3 s)")
    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"exit status after SIGTERM is {rc}")
    return "; ".join(notes)


# -- touch (README "Touch"): QMP on a virtio tablet, evemu recordings replayed through uinput --
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
SHOWN_ANY = r'\{[^\n]*"event" *: *"shown"[^\n]*\}'
TAP_ANY = r'\{[^\n]*"event" *: *"tap"[^\n]*\}'
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


def json_events(text, kind):
    out = []
    for m in re.finditer(SHOWN_ANY if kind == "shown" else TAP_ANY, text):
        try:
            out.append(json.loads(m.group(0)))
        except ValueError:
            pass
    return out


def touch_items(args):
    """The touch cases' playlist: A B A (previous of index 0 is index 2, next is index 1)."""
    a, b = (f"/app/photos/{os.path.basename(p)}" for p in args.photos)
    return [a, b, a]


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
    vm.send("term")
    vm.wait_for(r"KC_EXITED rc=\d+", EVENT_TIMEOUT, start)
    if s["uinput"]:
        vm.send("unplug")
        vm.wait_for(r"KC_UINPUT_GONE", EVENT_TIMEOUT, start)


def current_index(vm, session):
    shown = json_events(vm.log_text()[session["start"]:], "shown")
    return shown[-1]["index"] if shown else 0


def screen_is(vm, out, name, ref, psnr_min=40.0, timeout=8.0):
    """Captures until the screen matches `ref` (the neighbour may still be decoding and fade in)."""
    best, deadline, k = -1.0, time.time() + timeout, 0
    while True:
        img = vm.screendump(os.path.join(out, f"{name}-{k}.png"))
        best = max(best, psnr(img, ref) if img.size == ref.size else 0.0)
        if best >= psnr_min or time.time() > deadline:
            return best
        k += 1
        time.sleep(0.25)


def case_dir(vm, case):
    out = os.path.join(vm.out, case.name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    return out


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
    photo = lambda i: args.photos[0 if items[i] == items[0] else 1]
    cur = reference(args.binary, photo(idx), size, 0, args.out)
    nxt = reference(args.binary, photo((idx + 1) % len(items)), size, 0, args.out)
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
    photo = args.photos[0 if items[want] == items[0] else 1]
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
    out = case_dir(vm, case)
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
    out = case_dir(vm, case)
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
    items = touch_items(args)
    idx = current_index(vm, s)
    rec = "atmel-maxtouch.1-finger-drag-up-down.events"
    mark = vm.mark()
    done = replay(vm, rec, r"KC_REPLAY_DONE file=\S*drag-up-down[^\n]*", TOUCH_TIMEOUT, mark)
    time.sleep(1.0)
    text = vm.log_text()[mark:]
    if json_events(text, "shown") or json_events(text, "tap"):
        raise CaseFailed(f"a vertical drag gave {json_events(text, 'shown') + json_events(text, 'tap')}")
    photo = args.photos[0 if items[idx] == items[0] else 1]
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
    # Long enough for a `replay` sent again (see replay()); evdump ends after its time.
    vm.send(f"evdump -t 9 {node}")
    m = vm.wait_for(rf"KC_EVDEV node={re.escape(node)} [^\n]*", EVENT_TIMEOUT, start)
    desc = m.group(0)
    for want_text in ('name="EP0430M09"', "props=DIRECT", "ABS_MT_POSITION_X[0..1279]", "ABS_MT_SLOT[0..4]", "BTN_TOUCH"):
        if want_text not in desc:
            raise CaseFailed(f"the uinput device lacks {want_text}: {desc}")
    vm.wait_for(r"KC_EVDUMP_LISTENING", EVENT_TIMEOUT, start)
    try:
        done = replay(vm, EVEMU_SWIPE_LEFT, r"KC_REPLAY_DONE [^\n]*", EVENT_TIMEOUT, start).group(0).strip()
        vm.wait_for(r"KC_EVDUMP_DONE", EVENT_TIMEOUT, start)
    except CaseFailed:
        vm.send("unplug")  # a device left behind would be taken for the touchscreen by later cases
        raise
    got = evdump_events(vm.log_text()[start:], node)
    rec = evemu_events(evemu_host_path(EVEMU_SWIPE_LEFT))
    want = [ev_name(ty, code) + (v,) for _, ty, code, v in rec]
    if [e[1:] for e in got] != want:
        raise CaseFailed(f"replayed events differ: got {[e[1:] for e in got][:30]}, recorded {want[:30]}")
    span_got, span_rec = got[-1][0] - got[0][0], rec[-1][0] - rec[0][0]
    if abs(span_got - span_rec) > 0.05:
        raise CaseFailed(f"replay took {span_got:.3f}s by the kernel's timestamps, recorded {span_rec:.3f}s")
    vm.send("unplug")
    vm.wait_for(r"KC_UINPUT_GONE", EVENT_TIMEOUT, start)
    notes.append(f"uinput {node} (EP0430M09, DIRECT, 5 slots): {len(got)} events as recorded, "
                 f"{span_got * 1000:.0f} ms by kernel timestamps vs {span_rec * 1000:.0f} ms recorded")
    return "; ".join(notes)


def run_formats_case(vm, case, args, size):
    """The show case with photo A as a WebP and photo B as a HEIC (libwebp; libheif and its
    codecs, which the program opens with dlopen, are in the initramfs)."""
    return run_show_case(vm, case, argparse.Namespace(**{**vars(args), "photos": args.format_photos}), size)


# Boots: (name, QEMU display device, resolution, cases[, extra QEMU arguments])
def run_screenshot_case(vm, case, args, size):
    """The control socket's `screenshot` against QMP `screendump` (screenshot_case.py)."""
    import screenshot_case
    return screenshot_case.run(vm, case, args, size, sys.modules[__name__])


BOOTS = [
    ("bochs-1280x800", "bochs", (1280, 800), [
        (Case("drm-bochs", "drm", log_expect=r"display opened.*DRM /dev/dri/card0 \(bochs-drm\)[^\n]*"),
         run_show_case),
        # A still for 8 s: decoding the HEIC under TCG on a busy host took over 2 s.
        (Case("formats-drm-bochs", "drm", interval_s=12), run_formats_case),
        (Case("fbdev-bochs", "fbdev", psnr_min=40.0, whole_frames=False,
              log_expect=r"display opened.*fbdev /dev/fb0[^\n]*"), run_show_case),
        (Case("drm-mode-missing", "drm,mode=1234x567"), run_missing_mode_case),
        (Case("console-crash", "drm"), run_crash_case),
        (Case("vt-switch-drm", "drm"), run_vt_switch_case),
        (Case("vt-switch-fbdev", "fbdev"), run_vt_switch_case),
        (Case("display-off-drm", "drm"), run_display_off_case),
        (Case("display-off-fbdev", "fbdev"), run_display_off_case),
    ]),
    ("virtio-1280x800", "virtio", (1280, 800), [
        # --display auto must pick DRM where it exists
        (Case("auto-virtio", "auto", log_expect=r"display opened.*DRM /dev/dri/card0 \(virtio_gpu\)[^\n]*"),
         run_show_case),
    ]),
    # + a virtio tablet bound to the display, and uinput: the touch cases (the show cases above
    # run with the tablet present and untouched)
    ("bochs-800x480", "bochs", (800, 480), [
        (Case("drm-bochs-800x480", "drm,mode=800x480"), run_show_case),
        (Case("drm-bochs-800x480-rotate90", "drm", rotation=90), run_show_case),
        (Case("caption-drm-bochs-800x480-rotate90", "drm", rotation=90), run_caption_case),
        (Case("screenshot-drm-rotate90", "drm", rotation=90), run_screenshot_case),
        (Case("screenshot-fbdev", "fbdev"), run_screenshot_case),
        (Case("touch-input-stack", "drm"), run_input_stack_case),
        (Case("touch-drag-virtio-tablet", "drm"), run_touch_drag_case),
        (Case("touch-tap-virtio-tablet", "drm"), run_touch_tap_case),
        (Case("touch-replay-atmel-maxtouch-taps", "drm"), run_touch_replay_taps_case),
        (Case("touch-replay-atmel-maxtouch-vertical", "drm"), run_touch_replay_vertical_case),
        (Case("touch-replay-ep0430m09-swipe", "drm"), run_touch_replay_swipe_case),
    ], TABLET_ARGS),
]


def print_log(vm, lines=80):
    log(f"---- guest serial log ({vm.serial}), last {lines} lines ----")
    for line in vm.log_text().splitlines()[-lines:]:
        log("  | " + line)
    log("---- end of guest log ----")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True, help="kiosk-carousel built for the host (also used for references)")
    p.add_argument("--initrd", required=True)
    p.add_argument("--kernel", default=None, help="default: the newest /boot/vmlinuz-*")
    p.add_argument("--photos", nargs=2, required=True)
    p.add_argument("--format-photos", nargs=2, required=True, help="photo A as a WebP, photo B as a HEIC")
    p.add_argument("--out", default="/tmp/kc-kernel")
    p.add_argument("--only", nargs="*", default=None,
                   help="run only these boots or cases (NAME* matches names starting with NAME)")
    a = p.parse_args()
    a.binary = os.path.abspath(a.binary)
    a.photos = [os.path.abspath(x) for x in a.photos]
    a.format_photos = [os.path.abspath(x) for x in a.format_photos]
    if a.kernel is None:
        kernels = sorted((f for f in os.listdir("/boot") if f.startswith("vmlinuz-")),
                         key=lambda s: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)])
        if not kernels:
            log("no /boot/vmlinuz-* (apt-get install linux-image-amd64)")
            return 2
        a.kernel = "/boot/" + kernels[-1]
    os.makedirs(a.out, exist_ok=True)
    passed = failed = 0
    def only(name):
        return a.only is None or any(name == o or (o.endswith("*") and name.startswith(o[:-1])) for o in a.only)

    for boot_name, device, res, cases, *extra in BOOTS:
        extra = extra[0] if extra else ()
        wanted = [(c, f) for c, f in cases if only(boot_name) or only(c.name)]
        if not wanted:
            continue
        vm = None
        for attempt in (1, 2):
            vm = VM(a.kernel, a.initrd, device, res, os.path.join(a.out, boot_name), extra)
            try:
                vm.start()
                break
            except BootFailed as e:
                log(f"boot {boot_name} attempt {attempt}: {e}")
                print_log(vm, 30)
                vm.stop()
                vm = None
            except CaseFailed as e:
                log(f"boot {boot_name}: {e}")
                print_log(vm)
                vm.stop()
                vm = None
                break
        if vm is None:
            for c, _ in wanted:
                log(f"FAIL {c.name}: the guest did not boot")
                failed += 1
            continue
        log(f"boot {boot_name}: /init after {vm.t_init:.1f}s, ready after {vm.t_ready:.1f}s")
        try:
            for c, fn in wanted:
                t = time.time()
                try:
                    detail = fn(vm, c, a, res)
                    log(f"PASS {c.name} ({time.time() - t:.1f}s): {detail}")
                    passed += 1
                except CaseFailed as e:
                    log(f"FAIL {c.name} ({time.time() - t:.1f}s): {e}")
                    print_log(vm)
                    failed += 1
                    # a stuck program would spoil the next case: end it
                    if vm.touch:
                        try:
                            end_touch_session(vm)
                        except CaseFailed:
                            vm.touch = None
                    else:
                        vm.send("term")
                        time.sleep(1)
            if vm.touch:
                end_touch_session(vm)
        finally:
            vm.stop()
            log(f"boot {boot_name}: {time.time() - vm.t0:.1f}s in all")
    log(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
