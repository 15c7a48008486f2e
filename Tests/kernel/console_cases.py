# SPDX-License-Identifier: Apache-2.0
"""The kernel suite's console cases: VT switching (VT_PROCESS) and display power (--display-off,
docs/deployment.md "Configure")."""
import os, re, time
from PIL import ImageStat

from qemu_vm import EVENT_TIMEOUT, CaseFailed, console_mode, sh, stop_with, switch_vt
from screen_compare import console_on_screen, psnr, reference, screen_given_back, screen_is
from kernel_case import SHOWN0, SHOWN1, case_dir, guest_photos, json_events, start_still_show

# -- VT switching and display power (--display-off, docs/deployment.md "Configure") --
VT_OTHER = 2              # the VT switched to while the show runs on tty1
VT_TEXT = "KIOSK-CAROUSEL KERNEL SUITE: TTY2, THE OTHER CONSOLE"


def display_event(state, reason):
    """The pattern of a `display` event line (docs/events-and-logs.md)."""
    return r'\{"event":"display","state":"%s","reason":"%s","t":\d+\}' % (state, reason)


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
        ok, pa, lit = console_on_screen(img, [ref_a])
        away = (pa, lit)
        if ok:
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
    vm.send(f"run --display {case.display} --interval 3 --fade 300 --display-off {rng} {guest_photos(args)}")
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
    vm.wait_for(SHOWN1, 15, mark)
    notes.append(f"`shown` index 1 {time.time() - t_set:.1f}s after the clock was set (interval 3 s)")
    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"exit status after SIGTERM is {rc}")
    return "; ".join(notes)
