#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the small JPEG fixtures in this folder with Pillow (Debian's python3-pil).

Run once from this folder with /usr/bin/python3 (the Debian Python that has Pillow); the
outputs are committed, the tests only read them. cmyk-plain.jpg and ycck-adobe.jpg come from
make_cmyk.c (Pillow cannot write those variants).
"""
from PIL import Image, ImageDraw

# The four CMYK quadrants shared with make_cmyk.c: (C, M, Y, K) ink amounts, 0 = none.
CMYK_QUADRANTS = [(0, 255, 255, 0), (255, 0, 255, 64), (0, 0, 0, 128), (200, 50, 0, 30)]


def quadrants(mode, colours, size=(64, 48)):
    im = Image.new(mode, size)
    d = ImageDraw.Draw(im)
    w, h = size
    boxes = [(0, 0, w // 2 - 1, h // 2 - 1), (w // 2, 0, w - 1, h // 2 - 1),
             (0, h // 2, w // 2 - 1, h - 1), (w // 2, h // 2, w - 1, h - 1)]
    for box, colour in zip(boxes, colours):
        d.rectangle(box, fill=colour)
    return im


def gradient_rgb(size=(96, 64)):
    w, h = size
    im = Image.new("RGB", size)
    im.putdata([(x * 255 // (w - 1), y * 255 // (h - 1), 128) for y in range(h) for x in range(w)])
    return im


def main():
    # Progressive RGB: a smooth gradient (JPEG-friendly), 96x64.
    gradient_rgb().save("progressive.jpg", quality=90, progressive=True)
    # Grayscale (one component), 80x60 gradient.
    gray = Image.new("L", (80, 60))
    gray.putdata([(x * 3 + y) % 256 for y in range(60) for x in range(80)])
    gray.save("gray.jpg", quality=90)
    # CMYK with the Adobe APP14 marker: Pillow stores the samples inverted (Adobe convention).
    quadrants("CMYK", CMYK_QUADRANTS).save("cmyk-adobe.jpg", quality=95)


if __name__ == "__main__":
    main()
