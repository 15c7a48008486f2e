#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the soak's show: COUNT images (default 200) in DIR from the repository's fixtures.

Every valid PngSuite image, the eight EXIF orientation JPEGs, libjpeg-turbo's 8-bit test
images and the generated JPEGs (grayscale, progressive, CMYK, YCCK, many scans) are copied
as they are; the rest are crops of the 14.7 MP photo at sizes from 320x200 to 2560x1600,
saved as baseline or progressive JPEG or as PNG (Pillow), with a fixed seed, so that two runs
get the same show. Names are NNN-origin.ext, so the show's order is the order made here.

usage: make_images.py DIR [COUNT]
"""
import os
import random
import shutil
import sys

from PIL import Image

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures")


def fixture_files():
    """The fixture images that decode (PngSuite's x*.png are corrupt on purpose; monkey12
    is a 12-bit JPEG, which the program refuses)."""
    files = []
    png = os.path.join(FIXTURES, "pngsuite")
    files += [os.path.join(png, n) for n in sorted(os.listdir(png))
              if n.endswith(".png") and not n.startswith("x")]
    for sub, names in (("exif-orientation", [f"test_{i}.jpg" for i in range(1, 9)]),
                       ("libjpeg-turbo-testimages", ["testorig.jpg", "testimgari.jpg"]),
                       ("generated", ["gray.jpg", "progressive.jpg", "cmyk-adobe.jpg",
                                      "cmyk-plain.jpg", "ycck-adobe.jpg", "multiscan.jpg"])):
        files += [os.path.join(FIXTURES, sub, n) for n in names]
    return files


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 200
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261201)
    copies = fixture_files()
    crops = max(count // 4, count - len(copies))
    copies = copies[: count - crops]
    # Interleave: a crop of the photo every few small images, so decodes of every size mix.
    order = ["crop"] * crops + copies
    rng.shuffle(order)
    photo = Image.open(os.path.join(FIXTURES, "photos", "volna-5120x2880.jpg")).convert("RGB")
    sizes = [(320, 200), (640, 400), (800, 480), (1024, 768), (1280, 800), (1920, 1080), (2560, 1600), (400, 640)]
    for index, origin in enumerate(order):
        if origin != "crop":
            name = os.path.basename(origin)
            shutil.copyfile(origin, os.path.join(out, f"{index:03d}-{name}"))
            continue
        width, height = rng.choice(sizes)
        scale = rng.uniform(1.0, min(photo.width / width, photo.height / height))
        cw, ch = int(width * scale), int(height * scale)
        x, y = rng.randrange(photo.width - cw + 1), rng.randrange(photo.height - ch + 1)
        image = photo.crop((x, y, x + cw, y + ch)).resize((width, height), Image.BILINEAR)
        kind = rng.choice(["jpg", "jpg-progressive", "png"])
        path = os.path.join(out, f"{index:03d}-photo-{width}x{height}.{kind.split('-')[0]}")
        if kind == "png":
            image.save(path, optimize=False, compress_level=3)
        else:
            image.save(path, quality=85, progressive=kind == "jpg-progressive")
    print(f"{len(order)} images in {out}: {crops} crops of the photo, {len(order) - crops} fixtures")


if __name__ == "__main__":
    main()
