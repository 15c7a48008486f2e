#!/usr/bin/python3
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
  * an unavailable mode is refused with the list of available modes.

Stdlib + Pillow only (Debian: python3-pil). Usage (see README.md):
  run-kernel-tests.py --binary KIOSK --initrd X.cpio.gz --photos A.jpg B.jpg --out DIR [--only NAME...]
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


def log(msg):
    print(msg, flush=True)


class BootFailed(Exception):
    pass


class CaseFailed(Exception):
    pass


class VM:
    """One QEMU run: the serial log, QMP and the command channel to guest.sh."""

    DEVICES = {"bochs": "bochs-display", "virtio": "virtio-gpu-pci"}

    def __init__(self, kernel, initrd, device, res, out):
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
                    "-vga", "none", "-device", f"{self.DEVICES[device]},xres={w},yres={h}"]
        self.proc = None
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
def reference(binary, photo, size, rotation, out):
    """What the offscreen backend renders for `photo` at `size` (panel size), rotated like the panel."""
    w, h = size
    lw, lh = (h, w) if rotation in (90, 270) else (w, h)
    d = os.path.join(out, f"ref-{os.path.basename(photo)}-{lw}x{lh}")
    png = os.path.join(d, "frame-00000000.png")
    if not os.path.exists(png):
        shutil.rmtree(d, ignore_errors=True)
        r = subprocess.run([binary, "--display", f"offscreen:{d}", "--size", f"{lw}x{lh}", "--run-for", "1", photo],
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
    vm.send("run " + " ".join(["--display", case.display, "--interval", str(INTERVAL_S), "--fade", str(FADE_MS)]
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
    def __init__(self, name, display, psnr_min=40.0, rotation=0, whole_frames=True, log_expect=None):
        self.name, self.display, self.psnr_min, self.rotation = name, display, psnr_min, rotation
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
    fade_start = t_shown + INTERVAL_S - FADE_MS / 1000
    shown1 = re.compile(r'\{[^\n]*"event" *: *"shown"[^\n]*"index" *: *1[^\n]*\}')
    deadline = t_shown + INTERVAL_S + EVENT_TIMEOUT
    while not shown1.search(vm.log_text(), start):
        if time.time() > deadline:
            raise CaseFailed(f"no `shown` event for index 1 within {INTERVAL_S + EVENT_TIMEOUT}s")
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


# Boots: (name, QEMU display device, resolution, cases)
BOOTS = [
    ("bochs-1280x800", "bochs", (1280, 800), [
        (Case("drm-bochs", "drm", log_expect=r"display opened.*DRM /dev/dri/card0 \(bochs-drm\)[^\n]*"),
         run_show_case),
        (Case("fbdev-bochs", "fbdev", psnr_min=40.0, whole_frames=False,
              log_expect=r"display opened.*fbdev /dev/fb0[^\n]*"), run_show_case),
        (Case("drm-mode-missing", "drm,mode=1234x567"), run_missing_mode_case),
        (Case("console-crash", "drm"), run_crash_case),
    ]),
    ("virtio-1280x800", "virtio", (1280, 800), [
        # --display auto must pick DRM where it exists
        (Case("auto-virtio", "auto", log_expect=r"display opened.*DRM /dev/dri/card0 \(virtio_gpu\)[^\n]*"),
         run_show_case),
    ]),
    ("bochs-800x480", "bochs", (800, 480), [
        (Case("drm-bochs-800x480", "drm,mode=800x480"), run_show_case),
        (Case("drm-bochs-800x480-rotate90", "drm", rotation=90), run_show_case),
    ]),
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
    p.add_argument("--out", default="/tmp/kc-kernel")
    p.add_argument("--only", nargs="*", default=None, help="run only these boots or cases")
    a = p.parse_args()
    a.binary = os.path.abspath(a.binary)
    a.photos = [os.path.abspath(x) for x in a.photos]
    if a.kernel is None:
        kernels = sorted((f for f in os.listdir("/boot") if f.startswith("vmlinuz-")),
                         key=lambda s: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)])
        if not kernels:
            log("no /boot/vmlinuz-* (apt-get install linux-image-amd64)")
            return 2
        a.kernel = "/boot/" + kernels[-1]
    os.makedirs(a.out, exist_ok=True)
    passed = failed = 0
    for boot_name, device, res, cases in BOOTS:
        wanted = [(c, f) for c, f in cases if a.only is None or boot_name in a.only or c.name in a.only]
        if not wanted:
            continue
        vm = None
        for attempt in (1, 2):
            vm = VM(a.kernel, a.initrd, device, res, os.path.join(a.out, boot_name))
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
                    vm.send("term")
                    time.sleep(1)
        finally:
            vm.stop()
            log(f"boot {boot_name}: {time.time() - vm.t0:.1f}s in all")
    log(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
