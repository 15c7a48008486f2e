#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# The independent rendering the text tests compare with: Pillow's ImageDraw.text (FreeType
# underneath) draws TEXT in white on a black WIDTH x HEIGHT 8-bit image with the font file at
# SIZE pixels, its baseline starting at (X, BASELINE) (anchor "ls"), and writes the pixels,
# rows packed, to stdout. LAYOUT: "basic" (Pillow's own, no shaping) or "raqm" (HarfBuzz
# through libraqm, for Arabic).
#   pil_text.py FONT SIZE WIDTH HEIGHT X BASELINE LAYOUT TEXT
import sys
from PIL import Image, ImageDraw, ImageFont

font_path, size, width, height, x, baseline, layout, text = sys.argv[1:9]
engine = ImageFont.Layout.RAQM if layout == "raqm" else ImageFont.Layout.BASIC
font = ImageFont.truetype(font_path, int(size), layout_engine=engine)
image = Image.new("L", (int(width), int(height)), 0)
ImageDraw.Draw(image).text((int(x), int(baseline)), text, font=font, fill=255, anchor="ls")
sys.stdout.buffer.write(image.tobytes())
