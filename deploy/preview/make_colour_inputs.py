#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the two pictures of the colour previews in docs/colour.md into OUTDIR, made from one
sample photo as a phone would store it:

  cups-p3.jpg    the photo's colours as Display P3 numbers (Little CMS, relative colorimetric),
                 the Display P3 profile embedded by exiftool (APP2 ICC_PROFILE)
  cups-pq.avif   the same photo as HDR: BT.2020 primaries, PQ at 10 bits (avifenc -l --depth 10
                 --cicp 9/16/0), its white at the reference white of 203 cd/m2 (BT.2408)

Usage: /usr/bin/python3 make_colour_inputs.py PHOTO.jpg OUTDIR
Needs what Tests/KioskImagingTests/make_colour.py needs (python3-pil, liblcms2-2, exiftool,
avifenc); its profiles and formulas are used.
"""
import io
import os
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "KioskImagingTests"))
import make_colour as mc  # noqa: E402
from PIL import Image, ImageCms  # noqa: E402

SIZE = (480, 300)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(64)
    photo, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    lcms = mc.lcms_library()
    profiles = mc.make_profiles(lcms, out)
    image = Image.open(photo).convert("RGB").resize(SIZE, Image.LANCZOS)

    p3 = ImageCms.ImageCmsProfile(io.BytesIO(profiles["display-p3.icc"]))
    to_p3 = ImageCms.buildTransform(ImageCms.createProfile("sRGB"), p3, "RGB", "RGB", renderingIntent=1)
    jpeg = os.path.join(out, "cups-p3.jpg")
    ImageCms.applyTransform(image, to_p3).save(jpeg, quality=92)
    subprocess.run(["exiftool", "-q", "-overwrite_original", "-icc_profile<=" + os.path.join(out, "display-p3.icc"),
                    jpeg], check=True)

    # sRGB to linear BT.709, to BT.2020, light at 203 cd/m2 for white, the PQ signal at 16 bits.
    width, height = SIZE
    table = [mc.srgb_decode(v / 255) for v in range(256)]
    raw = bytearray()
    pixels = image.tobytes()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            i = 3 * (y * width + x)
            lin = [table[pixels[i + c]] for c in range(3)]
            lin2020 = [sum(mc.BT709_TO_2020[r][c] * lin[c] for c in range(3)) for r in range(3)]
            raw += struct.pack(">HHH", *[int(round(mc.pq_inverse(v * mc.REFERENCE_WHITE) * 65535)) for v in lin2020])
    png16 = os.path.join(out, "cups-pq16.png")
    with open(png16, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + mc.chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0))
                + mc.chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + mc.chunk(b"IEND", b""))
    subprocess.run(["avifenc", "-l", "--depth", "10", "--cicp", "9/16/0", png16, os.path.join(out, "cups-pq.avif")],
                   check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
