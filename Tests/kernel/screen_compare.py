# SPDX-License-Identifier: Apache-2.0
"""The kernel suite's image comparisons (Pillow only): PSNR, fade blends, the offscreen backend's
reference frames and the screen checks built on QMP `screendump` captures."""
import json, os, time
from PIL import Image, ImageChops

from qemu_vm import CaseFailed
from qemu_common import mse, offscreen_frame, psnr  # qemu_vm put Tests/qemu on the path

DIFFERS_PSNR = 30.0       # dB: a capture below this against both A and B is "mid-fade"


# -- image comparisons (Pillow only; mse and psnr from qemu_common) --
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
    source = photo
    if caption:
        source = d + ".json"
        with open(source, "w") as f:
            json.dump({"items": [{"src": os.path.abspath(photo), "caption": caption}]}, f)
    img = offscreen_frame(binary, source, (lw, lh), d, CaseFailed)
    # Rotation.clockwise90: the panel shows the picture turned 90 degrees clockwise.
    return {0: img, 90: img.transpose(Image.Transpose.ROTATE_270), 180: img.transpose(Image.Transpose.ROTATE_180),
            270: img.transpose(Image.Transpose.ROTATE_90)}[rotation]


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


def first_frame(vm, out, ref, psnr_min):
    """The first frame after a `shown`: the event may come just before the frame reaches the
    screen, so captures are retried a little. A screen of another size than `ref` fails at once.
    Returns (the best PSNR against `ref`, the last capture)."""
    best, img = -1.0, None
    for attempt in range(8):
        img = vm.screendump(os.path.join(out, f"first-{attempt}.png"))
        if img.size != ref.size:
            raise CaseFailed(f"screen is {img.size[0]}x{img.size[1]}, expected {ref.size[0]}x{ref.size[1]}")
        best = max(best, psnr(img, ref))
        if best >= psnr_min:
            break
        time.sleep(0.25)
    return best, img


def console_on_screen(img, refs):
    """Whether `img` shows a text console rather than a photo: below DIFFERS_PSNR against every
    one of `refs`, with some bright text pixels but not a bright screen. Returns (ok, the highest
    PSNR against `refs`, the number of bright pixels)."""
    worst = max(psnr(img, r) if img.size == r.size else 0.0 for r in refs)
    lit = sum(img.convert("L").histogram()[128:])
    return worst < DIFFERS_PSNR and 200 < lit < img.width * img.height // 20, worst, lit


def screen_given_back(vm, out, refs):
    """After the program ends the text console must be on the screen again: no photo, and the
    line guest.sh printed on tty1 visible (a switched-off CRTC or a stale frame would not show it).
    Returns the highest PSNR against the photos of the last capture."""
    for attempt in range(10):
        img = vm.screendump(os.path.join(out, f"after-exit-{attempt}.png"))
        ok, worst, lit = console_on_screen(img, refs)
        if ok:
            return worst
        time.sleep(0.25)
    raise CaseFailed(f"after the program ended the text console is not on the screen "
                     f"({worst:.1f} dB against the photos, {lit} bright pixels: no console text)")
