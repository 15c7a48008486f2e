#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the siblings of ztxt-100-chunks-4MiB-each.png (and a few JPEGs) into OUTDIR.

Every PNG written has the very IHDR and IDAT of ztxt-100-chunks-4MiB-each.png, so each one
shows the same 64x64 picture as plain.png; what differs is what a decoder might inflate or
keep besides. The JPEGs are made from ../generated/progressive.jpg. Python 3 standard library
only (zlib); a few seconds. Run by the tests into a scratch folder:

    /usr/bin/python3 make_cases.py OUTDIR
"""
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20


def chunks(data):
    """(type, body) of each chunk of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, out = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        out.append((data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]))
        pos += 12 + length
    return out


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png(before, after=(), idat=None):
    """IHDR, the chunks `before`, IDAT (the source's, or `idat`), the chunks `after`, IEND."""
    parts = [b"\x89PNG\r\n\x1a\n", chunk(b"IHDR", IHDR)]
    parts += [chunk(k, b) for k, b in before]
    parts += [chunk(b"IDAT", IDAT if idat is None else idat)]
    parts += [chunk(k, b) for k, b in after]
    parts += [chunk(b"IEND", b"")]
    return b"".join(parts)


def deflated_zeros(size):
    """size zero bytes, deflated at level 9 (about 1 KiB per MiB)."""
    z = zlib.compressobj(9)
    block = bytes(MIB)
    out = [z.compress(block) for _ in range(size // MIB)]
    out.append(z.compress(bytes(size % MIB)))
    out.append(z.flush())
    return b"".join(out)


def ztxt(keyword, inflated):
    return (b"zTXt", keyword + b"\0\0" + inflated)


def itxt(keyword, inflated):
    # keyword, compression flag 1, method 0, empty language tag and translated keyword
    return (b"iTXt", keyword + b"\0\x01\x00\0\0" + inflated)


def tiff_orientation(value):
    """A little-endian TIFF with one IFD entry: Orientation (0x0112, SHORT) = value."""
    return b"II*\0" + struct.pack("<IHHHIHHI", 8, 1, 0x0112, 3, 1, value, 0, 0)


def jpeg_segment(marker, payload):
    assert len(payload) <= 65533
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def main(out):
    global IHDR, IDAT
    source = dict(chunks(open(os.path.join(HERE, "ztxt-100-chunks-4MiB-each.png"), "rb").read()))
    IHDR, IDAT = source[b"IHDR"], source[b"IDAT"]
    four = deflated_zeros(4 * MIB)
    # The image's own filtered rows, then 256 MiB of zeros, in one zlib stream (about 250 KB):
    # the picture is complete after its rows; what follows is only inflated to be thrown away.
    trailing = zlib.compressobj(9)
    trailing_idat = trailing.compress(zlib.decompress(IDAT))
    trailing_idat += b"".join(trailing.compress(bytes(MIB)) for _ in range(256)) + trailing.flush()
    files = {
        "plain.png": png([]),
        # Image data that goes on for 256 MiB after the last row.
        "idat-256MiB-after-the-last-row.png": png([], idat=trailing_idat),
        # The same 100 text chunks as international text (iTXt, compressed).
        "itxt-100-chunks-4MiB-each.png": png([itxt(b"k%d" % i, four) for i in range(100)]),
        # One text chunk that inflates to 512 MiB.
        "ztxt-one-chunk-512MiB.png": png([ztxt(b"huge", deflated_zeros(512 * MIB))]),
        # The 100 chunks after the image data (read by png_read_end, if anyone calls it).
        "ztxt-100-chunks-after-image-data.png": png([], [ztxt(b"k%d" % i, four) for i in range(100)]),
        # An ICC profile that inflates to 256 MiB, its header claiming so.
        "iccp-256MiB.png": png([(b"iCCP", b"icc\0\0" + deflated_zeros(256 * MIB))]),
        # 2000 suggested palettes of 256 entries (sPLT: name, depth 8, R G B A freq).
        "splt-2000-chunks.png": png([(b"sPLT", b"p%d\0\x08" % i + bytes(6 * 256)) for i in range(2000)]),
        # 2000 private ancillary chunks of 8 KiB.
        "unknown-2000-chunks-8KiB.png": png([(b"prVt", bytes(8192)) for _ in range(2000)]),
        # An eXIf chunk of 48 MiB whose TIFF says orientation 6 (over the 64 KiB kept).
        "exif-48MiB.png": png([(b"eXIf", tiff_orientation(6) + bytes(48 * MIB))]),
        # A small eXIf with orientation 6 after all of the above kinds: still applied.
        "exif-orientation-6-after-chunks.png": png(
            [ztxt(b"k%d" % i, four) for i in range(20)] + [(b"prVt", bytes(8192))] * 20
            + [(b"eXIf", tiff_orientation(6))]),
    }
    base = open(os.path.join(HERE, "..", "generated", "progressive.jpg"), "rb").read()
    assert base[:2] == b"\xff\xd8"
    xmp = b"http://ns.adobe.com/xap/1.0/\0" + bytes(65533 - 29)
    comment = bytes(65533)
    exif6 = b"Exif\0\0" + tiff_orientation(6)
    exif3 = b"Exif\0\0" + tiff_orientation(3)
    files.update({
        # 800 APP1 (XMP) and 200 COM segments of 64 KiB, then an Exif APP1 with orientation 6,
        # then another with orientation 3 (only the first Exif counts).
        "app1-800-segments-64KiB.jpg": base[:2] + jpeg_segment(0xE1, xmp) * 800 + jpeg_segment(0xFE, comment) * 200
        + jpeg_segment(0xE1, exif6) + jpeg_segment(0xE1, exif3) + base[2:],
    })
    os.makedirs(out, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_cases.py OUTDIR")
    main(sys.argv[1])
