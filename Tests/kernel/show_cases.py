# SPDX-License-Identifier: Apache-2.0
"""The kernel suite's show cases: first frame, fade and console on each display backend, other
photo formats, captions, a missing mode, and the console after a crash."""
import argparse, os, re, time

from qemu_vm import EVENT_TIMEOUT, CaseFailed, console_mode, stop_with
from screen_compare import DIFFERS_PSNR, best_blend, first_frame, outside_fraction, psnr, reference, screen_given_back
from kernel_case import FADE_MS, INTERVAL_S, SHOWN0, SHOWN1, case_dir, start_show

TOLERANCE = 4             # per channel: how far outside [min(A,B), max(A,B)] a fade pixel may be
OUTSIDE_MAX = 0.002       # fraction of pixels allowed outside that band
BLEND_PSNR = 35.0         # dB: capture vs the best single blend of A and B (no tearing)


def run_show_case(vm, case, args, size):
    """Starts the show, checks the first frame, a fade and the console; raises CaseFailed."""
    out = case_dir(vm, case)
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

    best, _ = first_frame(vm, out, ref_a, case.psnr_min)
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
    shown1 = re.compile(SHOWN1)
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
    out = case_dir(vm, case)
    refs = [reference(args.binary, p, size, 0, args.out) for p in args.photos]
    notes = []

    def show_then_stop(signal, tag):
        """Starts the show, waits for its first image, stops it with `signal`: exit status and
        the console mode after it."""
        start, _ = start_show(vm, case, args)
        vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
        rc = stop_with(vm, signal, start)
        return rc, console_mode(vm, f"{case.name}-{tag}", start)

    rc, mode = show_then_stop("SEGV", "segv")
    if rc != 128 + 11 or mode != "0":
        raise CaseFailed(f"after SIGSEGV: exit status {rc} (expected 139), console mode {mode} (expected 0, KD_TEXT)")
    screen_given_back(vm, out, refs)
    notes.append("SIGSEGV: status 139, KD_TEXT, screen back")
    rc, mode = show_then_stop("KILL", "kill")
    if rc != 128 + 9 or mode != "1":
        raise CaseFailed(f"after SIGKILL: exit status {rc} (expected 137), console mode {mode} (expected 1: nothing can restore)")
    rc, mode = show_then_stop("TERM", "next")
    if rc != 0 or mode != "0":
        raise CaseFailed(f"the start after SIGKILL found KD_GRAPHICS and left mode {mode} (status {rc}); expected KD_TEXT")
    notes.append("SIGKILL leaves KD_GRAPHICS; the next run ends in KD_TEXT")
    return "; ".join(notes)


CAPTION = "Harbour lights at dusk, seen from the pier"   # build-initramfs.sh puts it in /app/captions.json


def run_caption_case(vm, case, args, size):
    """A caption from a playlist, drawn in the guest (FreeType, HarfBuzz, fontconfig from the
    initramfs) and turned with the picture by --rotate: the screen matches the offscreen frame of
    the same playlist turned like the panel, and differs from the photo without its caption."""
    out = case_dir(vm, case)
    ref = reference(args.binary, args.photos[0], size, case.rotation, args.out, caption=CAPTION)
    plain = reference(args.binary, args.photos[0], size, case.rotation, args.out)
    start = vm.mark()
    vm.send("run " + " ".join(["--display", case.display, "--rotate", str(case.rotation), "--interval", str(INTERVAL_S),
                                "--fade", str(FADE_MS), "/app/captions.json"]))
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    best, img = first_frame(vm, out, ref, case.psnr_min)
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
    mode = console_mode(vm, f"{case.name}-after", start)
    if mode != "0":
        raise CaseFailed(f"console mode after the failed start is {mode}, expected 0")
    line = next((l for l in text.splitlines() if "not available" in l), "").strip()
    return f"exit status {rc}, console in text mode: {line}"


def run_formats_case(vm, case, args, size):
    """The show case with photo A as a WebP and photo B as a HEIC (libwebp; libheif and its
    codecs, which the program opens with dlopen, are in the initramfs)."""
    return run_show_case(vm, case, argparse.Namespace(**{**vars(args), "photos": args.format_photos}), size)
