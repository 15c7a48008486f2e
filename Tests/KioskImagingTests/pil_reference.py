#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reference pixels from Pillow (Debian's python3-pil), an independent decoder, for the
KioskImaging tests.

Usage: /usr/bin/python3 pil_reference.py FILE...
Writes, for each FILE, the line "OK <index> <width> <height> <gamma>\\n" (gamma 1 when a gamma
correction applies, 0 otherwise) followed by two blocks of
width*height*4 bytes, R,G,B,A each (8 bits, straight alpha): the lowest and the highest value
each sample may have. They are equal wherever Pillow's pixels determine the answer exactly.
For an unreadable FILE it writes "ERR <index> <message>\\n". Exit status 3 with a message on
stderr when Pillow is missing.

Where kiosk-carousel (libpng) and Pillow legitimately differ, the expected values are derived
from Pillow's own decoded samples and two IHDR fields (bit depth, to undo Pillow's scaling):
- gAMA: Pillow ignores it. libpng, set up for a 2.2 display, corrects when file gamma x 2.2
  differs from 1 by more than 5% (PNG_GAMMA_THRESHOLD): out = floor(255 * (v / max) **
  (1 / (gamma * 2.2)) + 0.5), v the sample at its stored precision.
- 16-bit samples: Pillow gives full values only for gray (mode "I"); for RGB, RGBA and LA it
  keeps the high byte. Without gamma that is exactly libpng's png_set_strip_16. With gamma the
  stored value is only known to lie in [high * 256, high * 256 + 255], so the expected output is
  the interval the curve maps that to.
- tRNS on gray and RGB: alpha is 0 where the raw sample equals the tRNS value (Pillow scales
  1/2/4-bit gray to 0-255 and keeps only the high byte of 16-bit RGB, so the raw value is
  recovered from those; for 16-bit RGB a pixel whose high bytes match may be either).
"""
import sys

try:
    from PIL import Image
except ImportError:
    sys.stderr.write("Pillow is missing: install Debian's python3-pil (apt-get install python3-pil)\n")
    sys.exit(3)

SCREEN_GAMMA = 2.2
GAMMA_THRESHOLD = 0.05  # libpng PNG_GAMMA_THRESHOLD_FIXED 5000 / 100000


def png_ihdr(path):
    """(bit_depth, color_type) from IHDR, or None for a file that is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(29)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return head[24], head[25]


def corrected(v, maximum, exponent):
    """libpng's gamma correction of sample v (0...maximum) to 8 bits (png_gamma_8bit_correct)."""
    if exponent is None:
        return v
    return int(255.0 * (v / maximum) ** exponent + 0.5)


def reference(path):
    im = Image.open(path)
    im.load()
    ihdr = png_ihdr(path)
    bit_depth = ihdr[0] if ihdr else 8
    w, h = im.size
    gamma = im.info.get("gamma") if ihdr else None
    exponent = None
    if gamma and abs(gamma * SCREEN_GAMMA - 1.0) > GAMMA_THRESHOLD:
        exponent = 1.0 / (gamma * SCREEN_GAMMA)
    trns = im.info.get("transparency")
    g8 = [corrected(v, 255, exponent) for v in range(256)]
    if exponent is not None and bit_depth == 16:
        g16 = [corrected(v, 65535, exponent) for v in range(65536)]
        high_lo = [g16[v * 256] for v in range(256)]
        high_hi = [g16[v * 256 + 255] for v in range(256)]
    else:
        high_lo = high_hi = g8

    lo = bytearray()
    hi = bytearray()
    if im.mode in ("I", "I;16", "I;16B"):
        # 16-bit gray with its full values.
        for v in im.getdata():
            g = corrected(v, 65535, exponent) if exponent is not None else v >> 8
            a = 0 if (trns is not None and v == trns) else 255
            lo += bytes((g, g, g, a))
            hi += bytes((g, g, g, a))
        return w, h, exponent is not None, bytes(lo), bytes(hi)

    if im.mode in ("1", "L") and isinstance(trns, int):
        levels = (1 << bit_depth) - 1
        pixels = []
        for v in im.convert("L").getdata():
            pixels.append(((v, v, v, 0 if round(v * levels / 255) == trns else 255), None))
    elif im.mode == "RGB" and isinstance(trns, tuple):
        key = tuple(t >> 8 for t in trns) if bit_depth == 16 else trns
        pixels = []
        for (r, g, b) in im.getdata():
            if (r, g, b) != key:
                pixels.append(((r, g, b, 255), None))
            elif bit_depth == 16:
                pixels.append(((r, g, b, 0), 255))  # alpha 0 or 255: low bytes unknown
            else:
                pixels.append(((r, g, b, 0), None))
    else:
        pixels = [(p, None) for p in im.convert("RGBA").getdata()]

    for (r, g, b, a), alpha_hi in pixels:
        lo += bytes((high_lo[r], high_lo[g], high_lo[b], a))
        hi += bytes((high_hi[r], high_hi[g], high_hi[b], a if alpha_hi is None else alpha_hi))
    return w, h, exponent is not None, bytes(lo), bytes(hi)


def main():
    stdout = sys.stdout.buffer
    for index, path in enumerate(sys.argv[1:]):
        try:
            w, h, gamma, lo, hi = reference(path)
        except Exception as e:  # noqa: BLE001 - reported to the test, which fails on it
            stdout.write(("ERR %d %s\n" % (index, str(e).replace("\n", " "))).encode())
            continue
        stdout.write(b"OK %d %d %d %d\n" % (index, w, h, 1 if gamma else 0))
        stdout.write(lo)
        stdout.write(hi)
    stdout.flush()


if __name__ == "__main__":
    main()
