#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the WebP, HEIF, AVIF and GIF files of the KioskImaging format tests, made from the
project's photo with the reference encoders, and their reference decodes by the reference
decoders, into OUTDIR.

Usage: /usr/bin/python3 make_formats.py PHOTO.jpg EXIF_ORIENTATION_DIR OUTDIR
Needs: Pillow (python3-pil), cwebp and dwebp (webp), heif-enc and heif-convert
(libheif-examples), gifsicle. Exit status 3 with a message when one is missing.

Files (references: *.ref.png, straight alpha where the image has alpha):
  photo.png           1600x900 RGB from PHOTO; photo16.png the same at 16 bits per sample
  photo.webp          cwebp -q 90                         photo.webp.ref.png  dwebp
  alpha.png           800x450 RGBA, alpha a left-to-right ramp
  alpha.webp          cwebp -q 90 (lossy, alpha plane)    alpha.webp.ref.png  dwebp
  alpha-lossless.webp cwebp -lossless                     ...ref.png          dwebp
  photo.webp.nofilter-640x360.png   dwebp -nofilter -nofancy -scale 640 360 of photo.webp
  photo.webp.1280x720.png           dwebp -scale 1280 720; photo.webp.nofilter-1280x720.png
                                    the same with -nofilter
  orient-N.webp       cwebp -lossless -metadata exif of EXIF_ORIENTATION_DIR/test_N.jpg, N = 1...8
  photo.heic          heif-enc -q 90                      photo.heic.ref.png  heif-convert
  photo10.heic        heif-enc -b 10 from photo16.png     photo10.heic.ref.png heif-convert (16-bit)
  photo.avif          heif-enc -A -q 90                   photo.avif.ref.png  heif-convert
  alpha.avif          heif-enc -A -q 90 of alpha.png      alpha.avif.ref.png  heif-convert
  irot-exif6.heic     stored 400x300 (the picture turned a quarter anticlockwise), an Exif
                      item with orientation 6 (set here: heif-enc is given orientation 1, so
                      that no version of it adds an irot of its own) and an irot box added
                      here turning it a quarter clockwise: upright.png is the picture
  no-irot.heic        the same file before the irot box is added (no transform)
  grid.heic           a 1200x700 grid of 3x2 tiles of 512x512 (as phones write HEIC: each tile
                      heif-enc -q 90 of its part of the picture, the boxes assembled here)
                                                      grid.heic.ref.png heif-convert
  jpeg.heif           a HEIF whose primary image is a JPEG-coded item ('jpeg'), which
                      Debian 12's libheif cannot decode (it has no JPEG decoder)
  still.gif           320x180, 255 colours + transparent index (Pillow), a transparent band
  anim.gif            gifsicle of still.gif and a second frame (inverted)
  still.gif.ref.png   Pillow's RGBA decode of still.gif (first frame)
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

try:
    from PIL import Image, ImageOps
except ImportError:
    sys.stderr.write("Pillow is missing: install Debian's python3-pil\n")
    sys.exit(3)

TOOLS = {"cwebp": "webp", "dwebp": "webp", "heif-enc": "libheif-examples",
         "heif-convert": "libheif-examples", "gifsicle": "gifsicle"}


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def png16(image, path):
    """An RGB PNG at 16 bits per sample (each 8-bit sample v as v * 257)."""
    w, h = image.size
    raw = bytearray()
    px = image.tobytes()
    for y in range(h):
        raw.append(0)
        row = px[y * w * 3:(y + 1) * w * 3]
        for v in row:
            raw += bytes((v, v))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(bytes(raw), 6)) + chunk(b"IEND", b""))


def boxes(d, start, end):
    """(type, box start, header size, box end) of the ISO BMFF boxes in d[start:end]."""
    out, at = [], start
    while at + 8 <= end:
        size = struct.unpack(">I", d[at:at + 4])[0]
        kind = bytes(d[at + 4:at + 8])
        out.append((kind, at, 8, at + size))
        at += size
    return out


def add_irot(path, angle):
    """Adds an irot property (angle x 90 degrees anticlockwise) to the primary item of a HEIF
    written by heif-enc: appended to ipco, associated in ipma, the sizes of the boxes around
    them and the iloc offsets of the data after meta moved by the bytes added."""
    d = bytearray(open(path, "rb").read())
    meta = next(b for b in boxes(d, 0, len(d)) if b[0] == b"meta")
    inner = boxes(d, meta[1] + 12, meta[3])
    pitm = next(b for b in inner if b[0] == b"pitm")
    primary = struct.unpack(">H", d[pitm[1] + 12:pitm[1] + 14])[0]
    iprp = next(b for b in inner if b[0] == b"iprp")
    iloc = next(b for b in inner if b[0] == b"iloc")
    ipco = next(b for b in boxes(d, iprp[1] + 8, iprp[3]) if b[0] == b"ipco")
    ipma = next(b for b in boxes(d, iprp[1] + 8, iprp[3]) if b[0] == b"ipma")
    count = len(boxes(d, ipco[1] + 8, ipco[3]))
    irot = struct.pack(">I", 9) + b"irot" + bytes([angle])
    version, flags = d[ipma[1] + 8], d[ipma[1] + 11]
    assert version == 0 and flags & 1 == 0, "ipma layout"
    # ipma: find the primary entry, bump its count, append the (essential) index.
    at = ipma[1] + 16
    entries = struct.unpack(">I", d[ipma[1] + 12:ipma[1] + 16])[0]
    insert_at = None
    for _ in range(entries):
        item = struct.unpack(">H", d[at:at + 2])[0]
        n = d[at + 2]
        if item == primary:
            d[at + 2] = n + 1
            insert_at = at + 3 + n
        at += 3 + n
    assert insert_at is not None and insert_at > ipco[3]
    added = len(irot) + 1
    # Data offsets in iloc (version 0/1, construction method 0) move by what meta grows.
    ver = d[iloc[1] + 8]
    sizes = d[iloc[1] + 12], d[iloc[1] + 13]
    offset_size, length_size, base_size = sizes[0] >> 4, sizes[0] & 15, sizes[1] >> 4
    index_size = sizes[1] & 15 if ver in (1, 2) else 0
    at = iloc[1] + 14
    n_items = struct.unpack(">H", d[at:at + 2])[0]
    at += 2
    def patch(pos, size):
        if size == 0:
            return
        fmt = ">I" if size == 4 else ">Q"
        v = struct.unpack(fmt, d[pos:pos + size])[0]
        if v >= meta[3]:
            d[pos:pos + size] = struct.pack(fmt, v + added)
    for _ in range(n_items):
        at += 2  # item ID (version < 2)
        if ver in (1, 2):
            at += 2
        at += 2  # data reference index
        base_pos = at
        at += base_size
        extents = struct.unpack(">H", d[at:at + 2])[0]
        at += 2
        patch(base_pos, base_size)
        for _ in range(extents):
            at += index_size
            patch(at, offset_size)
            at += offset_size + length_size
    # Insert (later positions first), then grow the enclosing boxes.
    d[insert_at:insert_at] = bytes([0x80 | (count + 1)])
    d[ipco[3]:ipco[3]] = irot
    ipma_start = ipma[1] + (len(irot) if ipma[1] >= ipco[3] else 0)
    for start, grow in ((ipma_start, 1), (ipco[1], len(irot)), (iprp[1], added), (meta[1], added)):
        size = struct.unpack(">I", d[start:start + 4])[0]
        d[start:start + 4] = struct.pack(">I", size + grow)
    open(path, "wb").write(bytes(d))


def set_exif_orientation(path, value):
    """Sets the Exif orientation entry (tag 0x0112, SHORT, count 1, big-endian as Pillow writes
    it) of a HEIF's Exif item to value, in place; the file must have one such entry and no irot
    box (heif-enc wrote no transform)."""
    d = bytearray(open(path, "rb").read())
    assert b"irot" not in d, path + ": heif-enc wrote an irot box"
    entry = bytes([0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01])
    at = d.find(entry)
    assert at >= 0 and d.find(entry, at + 1) < 0, path + ": not one Exif orientation entry"
    d[at + 8:at + 10] = struct.pack(">H", value)
    open(path, "wb").write(bytes(d))


def box(kind, payload):
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def full_box(kind, version, flags, payload):
    return box(kind, bytes([version]) + flags.to_bytes(3, "big") + payload)


def primary_item(path):
    """(property boxes other than ispe, data) of the primary item of a one-image HEIF that
    heif-enc wrote (ISO/IEC 23008-12: pitm, iloc with construction method 0, ipco/ipma)."""
    d = open(path, "rb").read()
    meta = next(b for b in boxes(d, 0, len(d)) if b[0] == b"meta")
    inner = boxes(d, meta[1] + 12, meta[3])
    find = lambda kind, within: next(b for b in within if b[0] == kind)
    pitm = find(b"pitm", inner)
    primary = struct.unpack(">H", d[pitm[1] + 12:pitm[1] + 14])[0]
    iprp = find(b"iprp", inner)
    ipco = find(b"ipco", boxes(d, iprp[1] + 8, iprp[3]))
    ipma = find(b"ipma", boxes(d, iprp[1] + 8, iprp[3]))
    properties = [bytes(d[b[1]:b[3]]) for b in boxes(d, ipco[1] + 8, ipco[3])]
    assert d[ipma[1] + 8] == 0 and d[ipma[1] + 11] & 1 == 0, "ipma layout"
    at, chosen = ipma[1] + 16, []
    for _ in range(struct.unpack(">I", d[ipma[1] + 12:ipma[1] + 16])[0]):
        item, n = struct.unpack(">H", d[at:at + 2])[0], d[at + 2]
        if item == primary:
            chosen = [properties[(v & 0x7F) - 1] for v in d[at + 3:at + 3 + n]]
        at += 3 + n
    iloc = find(b"iloc", inner)
    version = d[iloc[1] + 8]
    offset_size, length_size = d[iloc[1] + 12] >> 4, d[iloc[1] + 12] & 15
    base_size, index_size = d[iloc[1] + 13] >> 4, (d[iloc[1] + 13] & 15) if version else 0
    be = lambda at, n: int.from_bytes(d[at:at + n], "big")
    at, data = iloc[1] + 16, b""
    for _ in range(be(iloc[1] + 14, 2)):
        item = be(at, 2)
        at += 2 + (2 if version else 0) + 2
        base = be(at, base_size)
        at += base_size
        extents = be(at, 2)
        at += 2
        for _ in range(extents):
            at += index_size
            offset, length = be(at, offset_size), be(at + offset_size, length_size)
            at += offset_size + length_size
            if item == primary:
                data += d[base + offset:base + offset + length]
    return [p for p in chosen if p[4:8] != b"ispe"], data


def write_heif(path, brands, primary, items, dimg=None):
    """A HEIF of `items` (dicts: id, type, width, height, properties, data, hidden, idat),
    the data of each in mdat (or in idat), `dimg` references (from, [to...])."""
    ispe = lambda w, h: full_box(b"ispe", 0, 0, struct.pack(">II", w, h))
    unique = []
    for item in items:
        for p in item["properties"] + [ispe(item["width"], item["height"])]:
            if p not in unique:
                unique.append(p)
    ipma = b""
    for item in items:
        props = item["properties"] + [ispe(item["width"], item["height"])]
        ipma += struct.pack(">HB", item["id"], len(props))
        ipma += bytes((0x80 if p[4:8] in (b"hvcC", b"av1C") else 0) | (unique.index(p) + 1) for p in props)
    iprp = box(b"iprp", box(b"ipco", b"".join(unique)) + full_box(b"ipma", 0, 0, struct.pack(">I", len(items)) + ipma))
    iinf = full_box(b"iinf", 0, 0, struct.pack(">H", len(items)) + b"".join(
        full_box(b"infe", 2, 1 if item.get("hidden") else 0, struct.pack(">HH", item["id"], 0) + item["type"] + b"\0")
        for item in items))
    iref = full_box(b"iref", 0, 0, box(b"dimg", struct.pack(">HH", dimg[0], len(dimg[1]))
                                       + b"".join(struct.pack(">H", t) for t in dimg[1]))) if dimg else b""
    idat_bytes = b"".join(item["data"] for item in items if item.get("idat"))
    ftyp = box(b"ftyp", brands[0] + b"\0\0\0\0" + b"".join(brands))

    def meta(mdat_start):
        at, in_idat, entries = mdat_start, 0, b""
        for item in items:
            method = 1 if item.get("idat") else 0
            offset = in_idat if method else at
            entries += struct.pack(">HHHHII", item["id"], method, 0, 1, offset, len(item["data"]))
            if method:
                in_idat += len(item["data"])
            else:
                at += len(item["data"])
        iloc = full_box(b"iloc", 1, 0, bytes([0x44, 0x00]) + struct.pack(">H", len(items)) + entries)
        hdlr = full_box(b"hdlr", 0, 0, b"\0\0\0\0pict" + bytes(12) + b"\0")
        pitm = full_box(b"pitm", 0, 0, struct.pack(">H", primary))
        idat = box(b"idat", idat_bytes) if idat_bytes else b""
        return full_box(b"meta", 0, 0, hdlr + pitm + iinf + iref + iprp + iloc + idat)

    start = len(ftyp) + len(meta(0)) + 8
    mdat = box(b"mdat", b"".join(item["data"] for item in items if not item.get("idat")))
    open(path, "wb").write(ftyp + meta(start) + mdat)


def make_grid(base, out, width, height, tile=512):
    """A grid HEIC: base cut into tiles of tile x tile (covering width x height), each coded by
    heif-enc, assembled under a grid item (ISO/IEC 23008-12 section 6.6.2.3)."""
    columns, rows = -(-width // tile), -(-height // tile)
    picture = base.resize((columns * tile, rows * tile), Image.LANCZOS)
    items = []
    for r in range(rows):
        for c in range(columns):
            png, heic = os.path.join(out, "tile.png"), os.path.join(out, "tile.heic")
            picture.crop((c * tile, r * tile, (c + 1) * tile, (r + 1) * tile)).save(png)
            run("heif-enc", "-q", "90", png, "-o", heic)
            properties, data = primary_item(heic)
            items.append({"id": 2 + len(items), "type": b"hvc1", "width": tile, "height": tile,
                          "properties": properties, "data": data, "hidden": True})
            os.remove(png)
            os.remove(heic)
    descriptor = struct.pack(">BBBBHH", 0, 0, rows - 1, columns - 1, width, height)
    grid = {"id": 1, "type": b"grid", "width": width, "height": height, "properties": [], "data": descriptor, "idat": True}
    write_heif(os.path.join(out, "grid.heic"), [b"heic", b"mif1"], 1, [grid] + items, dimg=(1, [i["id"] for i in items]))


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(64)
    photo, orient_dir, out = sys.argv[1:]
    missing = [f"{t} (apt-get install {p})" for t, p in TOOLS.items() if shutil.which(t) is None]
    if missing:
        sys.stderr.write("missing: " + ", ".join(missing) + "\n")
        sys.exit(3)
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)
    base = Image.open(photo).convert("RGB").resize((1600, 900), Image.LANCZOS)
    base.save(p("photo.png"))
    png16(base, p("photo16.png"))
    alpha = base.resize((800, 450), Image.LANCZOS).convert("RGBA")
    alpha.putalpha(Image.linear_gradient("L").rotate(90).resize((800, 450)))
    alpha.save(p("alpha.png"))

    run("cwebp", "-quiet", "-q", "90", p("photo.png"), "-o", p("photo.webp"))
    run("cwebp", "-quiet", "-q", "90", "-exact", p("alpha.png"), "-o", p("alpha.webp"))
    run("cwebp", "-quiet", "-lossless", "-exact", p("alpha.png"), "-o", p("alpha-lossless.webp"))
    for name in ("photo.webp", "alpha.webp", "alpha-lossless.webp"):
        run("dwebp", "-quiet", p(name), "-o", p(name + ".ref.png"))
    for options, size in ((["-nofilter", "-nofancy"], (640, 360)), ([], (1280, 720)), (["-nofilter"], (1280, 720))):
        name = "photo.webp.%s%dx%d.png" % ("nofilter-" if options else "", *size)
        run("dwebp", "-quiet", *options, "-scale", str(size[0]), str(size[1]), p("photo.webp"), "-o", p(name))
    for n in range(1, 9):
        run("cwebp", "-quiet", "-lossless", "-metadata", "exif", os.path.join(orient_dir, f"test_{n}.jpg"),
            "-o", p(f"orient-{n}.webp"))

    run("heif-enc", "-q", "90", p("photo.png"), "-o", p("photo.heic"))
    run("heif-enc", "-b", "10", "-q", "90", p("photo16.png"), "-o", p("photo10.heic"))
    run("heif-enc", "-A", "-q", "90", p("photo.png"), "-o", p("photo.avif"))
    run("heif-enc", "-A", "-q", "90", p("alpha.png"), "-o", p("alpha.avif"))
    for name in ("photo.heic", "photo10.heic", "photo.avif", "alpha.avif"):
        run("heif-convert", p(name), p(name + ".ref.png"))

    make_grid(base, out, 1200, 700)
    run("heif-convert", p("grid.heic"), p("grid.heic.ref.png"))
    small_jpeg = p("small.jpg")
    base.resize((320, 180), Image.LANCZOS).save(small_jpeg, quality=90)
    write_heif(p("jpeg.heif"), [b"mif1", b"jpeg"], 1, [{"id": 1, "type": b"jpeg", "width": 320, "height": 180,
                                                      "properties": [], "data": open(small_jpeg, "rb").read()}])

    upright = base.resize((300, 400), Image.LANCZOS)
    upright.save(p("upright.png"))
    stored = upright.transpose(Image.ROTATE_90)  # a quarter anticlockwise: 400x300
    # Newer heif-enc (Debian 13's 1.23, not Debian 12's 1.15) writes an irot box of its own for
    # the JPEG's Exif orientation, which add_irot's would turn a second time: the JPEG says 1
    # (no irot from any heif-enc), and the HEIC's Exif item is made to say 6 afterwards.
    exif = Image.Exif()
    exif[0x0112] = 1
    stored.save(p("stored-exif1.jpg"), quality=95, exif=exif.tobytes())
    run("heif-enc", "-q", "90", p("stored-exif1.jpg"), "-o", p("no-irot.heic"))
    set_exif_orientation(p("no-irot.heic"), 6)
    shutil.copyfile(p("no-irot.heic"), p("irot-exif6.heic"))
    add_irot(p("irot-exif6.heic"), 3)  # 270 degrees anticlockwise: a quarter clockwise

    small = base.resize((320, 180), Image.LANCZOS).quantize(255)
    pixels = small.load()
    for y in range(60, 90):
        for x in range(320):
            pixels[x, y] = 255
    palette = small.getpalette()[:255 * 3] + [255, 0, 255]
    small.putpalette(palette)
    small.save(p("still.gif"), transparency=255)
    Image.open(p("still.gif")).convert("RGBA").save(p("still.gif.ref.png"))
    second = ImageOps.invert(base.resize((320, 180))).quantize(256)
    second.save(p("second.gif"))
    with open(p("anim.gif"), "wb") as f:
        subprocess.run(["gifsicle", "--loopcount=forever", "--delay", "50", p("still.gif"), p("second.gif")],
                       check=True, stdout=f, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
