# SPDX-License-Identifier: Apache-2.0
"""What the kernel suite's cases share: the case description, starting the show in the guest,
the program's JSON events in the serial log and each case's capture folder."""
import json, os, re, shutil, time

INTERVAL_S, FADE_MS = 6, 4000   # --interval includes the fade: A still for 2 s, then 4 s of fade


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


def guest_photos(args):
    """The two photos as the guest names them (build-initramfs.sh puts them in /app/photos)."""
    return " ".join(f"/app/photos/{os.path.basename(p)}" for p in args.photos)


def start_show(vm, case, args, extra=()):
    """Sends `run` for the two photos; returns (log offset, host time it was sent)."""
    start = vm.mark()
    photos = guest_photos(args)
    rot = ["--rotate", str(case.rotation)] if case.rotation else []
    t_run = time.time()
    vm.send("run " + " ".join(["--display", case.display, "--interval", str(case.interval_s), "--fade", str(FADE_MS)]
                              + rot + list(extra)) + " " + photos)
    return start, t_run


SHOWN0 = r'\{[^\n]*"event" *: *"shown"[^\n]*"index" *: *0[^\n]*\}'
SHOWN1 = r'\{[^\n]*"event" *: *"shown"[^\n]*"index" *: *1[^\n]*\}'


def start_still_show(vm, case, args, extra=()):
    """The show with a long interval, so photo A stays on screen while the case runs."""
    start = vm.mark()
    vm.send("run " + " ".join(["--display", case.display, "--interval", "120", "--fade", "300"] + list(extra))
            + " " + guest_photos(args))
    return start


SHOWN_ANY = r'\{[^\n]*"event" *: *"shown"[^\n]*\}'
TAP_ANY = r'\{[^\n]*"event" *: *"tap"[^\n]*\}'


def json_events(text, kind):
    out = []
    for m in re.finditer(SHOWN_ANY if kind == "shown" else TAP_ANY, text):
        try:
            out.append(json.loads(m.group(0)))
        except ValueError:
            pass
    return out


def case_dir(vm, case):
    out = os.path.join(vm.out, case.name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    return out
