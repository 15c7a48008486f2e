#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Remakes the animation fixtures of this folder (README.md) with Debian 12's encoders:
# python3-pil writes the frames (single-frame GIFs and PNGs), gifsicle (1.93) assembles the
# GIF with its disposal methods, delays and offsets, img2webp and webpmux (webp 1.2.4) the
# animated WebPs, avifenc and avifdec (libavif-bin 0.11.1) the AVIF image sequences. Run from anywhere; writes next to this script.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp" <<'PY'
import sys
from PIL import Image
out = sys.argv[1]
def solid(name, size, colour):
    Image.new("RGB", size, colour).save(f"{out}/{name}.png")
    # A palette GIF of exactly that colour (and one spare entry).
    img = Image.new("P", size, 0)
    img.putpalette(list(colour) + [0, 0, 0] * 255)
    img.save(f"{out}/{name}.gif")
solid("red8", (8, 8), (255, 0, 0))
solid("green4", (4, 4), (0, 255, 0))
solid("blue4", (4, 4), (0, 0, 255))
solid("yellow2", (2, 2), (255, 255, 0))
solid("red16", (16, 16), (255, 0, 0))
solid("green16", (16, 16), (0, 255, 0))
solid("blue16", (16, 16), (0, 0, 255))
solid("white1", (1, 1), (255, 255, 255))
solid("red64", (64, 64), (255, 0, 0))
solid("green64", (64, 64), (0, 255, 0))
solid("blue64", (64, 64), (0, 0, 255))
PY
# disposal.gif: an 8x8 screen; frame 0 red, whole (10 cs, disposal none); frame 1 green 4x4 at
# 0,0 (20 cs, disposal background: cleared to transparent after it); frame 2 blue 4x4 at 4,4
# (delay 0: 100 ms, disposal previous: its rectangle restored after it); frame 3 yellow 2x2 at
# 6,0 (30 cs). Loops forever.
gifsicle --logical-screen 8x8 --loopcount=forever --no-warnings \
    --delay 10 --disposal none "$tmp/red8.gif" \
    --delay 20 --disposal background --position 0,0 "$tmp/green4.gif" \
    --delay 0 --disposal previous --position 4,4 "$tmp/blue4.gif" \
    --delay 30 --disposal none --position 6,0 "$tmp/yellow2.gif" \
    > disposal.gif
# offscreen.gif: a 4x4 screen, frame 0 red 8x8 (larger than the screen), frame 1 white 1x1 at
# 60000,60000 (wholly off it); delays 5 and 1 cs (both 100 ms); played once (no loop extension).
# gifsicle grows the screen to hold every frame, so its logical screen descriptor (bytes 6-9,
# GIF89a section 18) is set back to 4x4 afterwards.
gifsicle --no-warnings --delay 5 "$tmp/red8.gif" --delay 1 --position 60000,60000 "$tmp/white1.gif" \
    > "$tmp/offscreen.gif"
/usr/bin/python3 - "$tmp/offscreen.gif" offscreen.gif <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[6:10] = bytes([4, 0, 4, 0])
open(sys.argv[2], "wb").write(b)
PY
# rgb.webp: a lossless 16x16 animation, red 100 ms, green 250 ms, blue 50 ms, looping forever.
img2webp -loop 0 -lossless -d 100 "$tmp/red16.png" -d 250 "$tmp/green16.png" -d 50 "$tmp/blue16.png" \
    -o rgb.webp > /dev/null 2>&1
# sequence.avif: an AVIF image sequence (the avis brand) of three 64x64 frames, red, green and
# blue, 100 ms each (libavif-bin 0.11's avifenc; it writes the first frame as the primary item too).
avifenc -s 10 --timescale 10 "$tmp/red64.png" "$tmp/green64.png" "$tmp/blue64.png" sequence.avif > /dev/null
# p3-sequence.avif: two 192x96 frames of ../cases/display-p3-patches.png (Display P3 patches with
# its iCCP profile, which avifenc keeps as the sequence's ICC profile), the second mirrored left to
# right, 200 ms each, lossless (-l: the identity matrix, so the stored values come back exactly).
/usr/bin/python3 - ../cases/display-p3-patches.png "$tmp" <<'PY'
import sys
from PIL import Image, ImageOps
img = Image.open(sys.argv[1])
img.save(f"{sys.argv[2]}/p3-a.png", icc_profile=img.info["icc_profile"])
ImageOps.mirror(img).save(f"{sys.argv[2]}/p3-b.png", icc_profile=img.info["icc_profile"])
PY
avifenc -l -s 10 --timescale 5 "$tmp/p3-a.png" "$tmp/p3-b.png" p3-sequence.avif > /dev/null
# pq-sequence.avif: two frames of ../cases/hdr-pq-bt2020-10bit.avif (BT.2020, PQ, 10 bits), its
# 16-bit samples as avifdec gives them, coded again with CICP 9/16/9 at 10 bits, 500 ms each.
avifdec -d 16 ../cases/hdr-pq-bt2020-10bit.avif "$tmp/pq.png" > /dev/null
avifenc -s 10 -d 10 --cicp 9/16/9 --timescale 2 "$tmp/pq.png" "$tmp/pq.png" pq-sequence.avif > /dev/null
# one-frame.webp: an "animated" WebP (VP8X animation flag, ANIM, one ANMF) of one red frame,
# as ffmpeg's libwebp_anim encoder writes stills. img2webp and webpmux write a still for one
# frame, so cwebp's VP8L chunk is wrapped in the animation chunks here (RFC 9649 section 2.7).
cwebp -quiet -lossless "$tmp/red16.png" -o "$tmp/red16.webp"
/usr/bin/python3 - "$tmp/red16.webp" one-frame.webp <<'PY'
import struct, sys
still = open(sys.argv[1], "rb").read()
frame = still[12:]  # the VP8L chunk
def chunk(tag, payload):
    return tag + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")
u24 = lambda v: struct.pack("<I", v)[:3]
vp8x = chunk(b"VP8X", bytes([0x02, 0, 0, 0]) + u24(15) + u24(15))
anim = chunk(b"ANIM", struct.pack("<IH", 0xFFFFFFFF, 0))
anmf = chunk(b"ANMF", u24(0) + u24(0) + u24(15) + u24(15) + u24(500) + bytes([0x02]) + frame)
body = b"WEBP" + vp8x + anim + anmf
open(sys.argv[2], "wb").write(b"RIFF" + struct.pack("<I", len(body)) + body)
PY
