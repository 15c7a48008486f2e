#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the colour-management and HDR test files of KioskImaging into OUTDIR, made by
Debian's encoders and tools, and the pixels each must show, computed here independently of
the program: Little CMS transforms through Pillow's ImageCms for the ICC and colour-description
files, the HDR tone-map formula (BT.2100 EOTFs, BT.2390 EETF, BT.2408 203 cd/m2) written out
below for the PQ and HLG files.

Usage: /usr/bin/python3 make_colour.py OUTDIR
Needs: Pillow with ImageCms (python3-pil), Little CMS (liblcms2-2, through ctypes, to make the
profiles), exiftool (libimage-exiftool-perl), cwebp (webp), heif-enc (libheif-examples),
avifenc (libavif-bin). Exit status 3 with a message when one is missing.

Profiles (made with Little CMS, v4, with a description tag):
  display-p3.icc   Display P3: DCI-P3 primaries, D65, the sRGB curve
  adobe-rgb.icc    Adobe RGB (1998): its primaries, D65, gamma 563/256
  gray-18.icc      a gray profile, D50, gamma 1.8
  cmyk.icc         an output (printer) CMYK profile: AToB0 and BToA0 tables of 9 points a
                   channel from a model of inks that is not the naive formula
  srgb.icc         Little CMS's sRGB
Pictures (48x16: three 16x16 patches, (200,40,40), (60,200,200), (128,128,128), unless said):
  p3.jpg           Pillow JPEG quality 100 4:4:4, display-p3.icc embedded by exiftool (APP2)
  p3.png           PNG, display-p3.icc embedded by exiftool (iCCP)
  adobe.png        PNG, adobe-rgb.icc (iCCP)
  p3.webp          cwebp -lossless -metadata icc of p3.png (ICCP chunk)
  p3.heic          heif-enc lossless of p3.png (colr prof)
  p3-nclx.avif     avifenc -l --cicp 12/13/0 (colr nclx: Display P3)
  p3-cicp.png      PNG with a cICP chunk 12/13/0/1 written here
  chrm.png         PNG with cHRM (Display P3's primaries) and gAMA 45455 written here
  srgb.jpg         p3.jpg's pixels with srgb.icc embedded: must show as untagged
  plain.jpg        the same JPEG with no profile
  gray.jpg         a gray JPEG (a ramp 0...255 over 64x4) with gray-18.icc
  cmyk.jpg         a CMYK JPEG (Pillow: Adobe, inverted) of four 16x16 patches, cmyk.icc embedded
  cmyk-plain.jpg   the same without a profile (the naive formula)
  bad-icc.jpg      plain.jpg with an APP2 ICC_PROFILE segment of garbage
  ultrahdr.jpg     an Ultra HDR gain-map JPEG: plain.jpg as the primary (SDR base) with an XMP
                   hdrgm description and an MPF APP2 segment, a gain-map JPEG appended
HDR (BT.2020 primaries; codes chosen here, coded losslessly so the decoder gets them exactly):
  pq10.avif, pq12.avif  avifenc -l --depth 10/12 --cicp 9/16/0 of pq16.png
  hlg10.avif            avifenc -l --depth 10 --cicp 9/18/0 of hlg16.png
  pq10-4000.avif        pq10.avif rewritten with a clli box of MaxCLL 4000 cd/m2
  pq10-absurd.avif      pq10.avif with clli MaxCLL 65535 and an mdcv of 429496 cd/m2
  pq-scene.avif         the same scene as scene.png (a ramp of sRGB values) coded as PQ at
                        203 cd/m2 for SDR white
expected.json: for each file, [x, y, r, g, b] at the centre of each patch (HDR: each patch is
8x8), the sRGB values Pillow's Little CMS (or the formula) gives; "scene", the ramp's values;
"patches.png@adobe-rgb.icc", patches.png converted for a screen with adobe-rgb.icc.
"""
import ctypes
import io
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import zlib

try:
    from PIL import Image, ImageCms
except ImportError:
    sys.stderr.write("Pillow with ImageCms is missing: install Debian's python3-pil\n")
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_formats as mf  # noqa: E402  (ISO BMFF helpers)

TOOLS = {"exiftool": "libimage-exiftool-perl", "cwebp": "webp", "heif-enc": "libheif-examples",
         "avifenc": "libavif-bin"}

PATCHES = [(200, 40, 40), (60, 200, 200), (128, 128, 128)]


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


# MARK: - Profiles through Little CMS

def lcms_library():
    try:
        lcms = ctypes.CDLL("liblcms2.so.2")
    except OSError:
        sys.stderr.write("Little CMS is missing: install Debian's liblcms2-2\n")
        sys.exit(3)
    vp, d, u32 = ctypes.c_void_p, ctypes.c_double, ctypes.c_uint32
    for name, res, args in [
        ("cmsBuildGamma", vp, [vp, d]), ("cmsBuildParametricToneCurve", vp, [vp, ctypes.c_int, ctypes.POINTER(d)]),
        ("cmsCreateRGBProfile", vp, [vp, vp, vp]), ("cmsCreateGrayProfile", vp, [vp, vp]),
        ("cmsCreate_sRGBProfile", vp, []), ("cmsCreateLab4Profile", vp, [vp]),
        ("cmsCreateProfilePlaceholder", vp, [vp]), ("cmsSetProfileVersion", None, [vp, d]),
        ("cmsSetDeviceClass", None, [vp, u32]), ("cmsSetColorSpace", None, [vp, u32]), ("cmsSetPCS", None, [vp, u32]),
        ("cmsPipelineAlloc", vp, [vp, u32, u32]), ("cmsStageAllocCLut16bit", vp, [vp, u32, u32, u32, vp]),
        ("cmsStageSampleCLut16bit", ctypes.c_int, [vp, vp, vp, u32]), ("cmsPipelineInsertStage", ctypes.c_int, [vp, ctypes.c_int, vp]),
        ("cmsWriteTag", ctypes.c_int, [vp, u32, vp]), ("cmsMLUalloc", vp, [vp, u32]),
        ("cmsMLUsetASCII", ctypes.c_int, [vp, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]),
        ("cmsSaveProfileToMem", ctypes.c_int, [vp, vp, ctypes.POINTER(u32)]),
        ("cmsCreateTransform", vp, [vp, u32, vp, u32, u32, u32]), ("cmsDoTransform", None, [vp, vp, vp, u32]),
        ("cmsD50_xyY", vp, []),
    ]:
        f = getattr(lcms, name)
        f.restype, f.argtypes = res, args
    return lcms


class XYY(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("Y", ctypes.c_double)]


def sig(text):
    return struct.unpack(">I", text.encode())[0]


def describe(lcms, h, text):
    mlu = lcms.cmsMLUalloc(None, 1)
    lcms.cmsMLUsetASCII(mlu, b"en", b"US", text.encode())
    lcms.cmsWriteTag(h, sig("desc"), mlu)


def save(lcms, h):
    n = ctypes.c_uint32(0)
    lcms.cmsSaveProfileToMem(h, None, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    lcms.cmsSaveProfileToMem(h, buf, ctypes.byref(n))
    return buf.raw[:n.value]


def rgb_profile(lcms, name, white, primaries, curve):
    wp = XYY(white[0], white[1], 1.0)
    prim = (XYY * 3)(*[XYY(x, y, 1.0) for x, y in primaries])
    curves = (ctypes.c_void_p * 3)(curve, curve, curve)
    h = lcms.cmsCreateRGBProfile(ctypes.byref(wp), prim, curves)
    describe(lcms, h, name)
    return save(lcms, h)


def srgb_curve(lcms):
    p = (ctypes.c_double * 5)(2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045)
    return lcms.cmsBuildParametricToneCurve(None, 4, p)


def srgb_decode(v):
    return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4


def srgb_encode(v):
    return 12.92 * v if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055


def ink_model(c, m, y, k):
    """Reflectances of a CMYK tint (0...1 each) as sRGB values: the inks' own impurities
    (cyan absorbs some green, magenta some blue and red), and a black that is not quite black,
    so that the profile's colours are far from the naive (1 - C)(1 - K)."""
    r = (1 - 0.95 * c) * (1 - 0.10 * m) * (1 - 0.85 * k)
    g = (1 - 0.90 * m) * (1 - 0.25 * c) * (1 - 0.05 * y) * (1 - 0.85 * k)
    b = (1 - 0.92 * y) * (1 - 0.10 * c) * (1 - 0.30 * m) * (1 - 0.85 * k)
    return r, g, b


def cmyk_profile(lcms):
    """An output-class CMYK profile with Lab PCS: AToB0 samples ink_model through Little CMS's
    sRGB to Lab transform; BToA0 the inverse of the naive formula (only for completeness)."""
    TYPE_RGB_DBL = (4 << 16) | (3 << 3) | (0 << 0) | (1 << 22)  # COLORSPACE_SH(PT_RGB)|CHANNELS_SH(3)|BYTES_SH(0)|FLOAT_SH(1)
    TYPE_Lab_DBL = (10 << 16) | (3 << 3) | (0 << 0) | (1 << 22)
    srgb, lab = lcms.cmsCreate_sRGBProfile(), lcms.cmsCreateLab4Profile(None)
    to_lab = lcms.cmsCreateTransform(srgb, TYPE_RGB_DBL, lab, TYPE_Lab_DBL, 1, 0)
    to_rgb = lcms.cmsCreateTransform(lab, TYPE_Lab_DBL, srgb, TYPE_RGB_DBL, 1, 0)
    sampler_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint16), ctypes.POINTER(ctypes.c_uint16), ctypes.c_void_p)
    d3 = ctypes.c_double * 3

    def lab_encode(L, a, b):  # ICC v4 Lab: L 0...100, a and b -128...127 over 0...65535
        clamp = lambda v: max(0, min(65535, int(round(v))))
        return clamp(L * 655.35), clamp((a + 128) * 257), clamp((b + 128) * 257)

    def a2b(inp, out, cargo):
        c, m, y, k = (inp[i] / 65535 for i in range(4))
        rgb, res = d3(*ink_model(c, m, y, k)), d3()
        lcms.cmsDoTransform(to_lab, rgb, res, 1)
        out[0], out[1], out[2] = lab_encode(*res)
        return 1

    def b2a(inp, out, cargo):
        L, a, b = inp[0] / 655.35, inp[1] / 257 - 128, inp[2] / 257 - 128
        res = d3()
        lcms.cmsDoTransform(to_rgb, d3(L, a, b), res, 1)
        r, g, bb = (min(1, max(0, v)) for v in res)
        k = 1 - max(r, g, bb)
        cmy = [0, 0, 0] if k >= 1 else [(1 - v - k) / (1 - k) for v in (r, g, bb)]
        for i, v in enumerate(cmy + [k]):
            out[i] = int(round(min(1, max(0, v)) * 65535))
        return 1

    h = lcms.cmsCreateProfilePlaceholder(None)
    lcms.cmsSetProfileVersion(h, 4.3)
    lcms.cmsSetDeviceClass(h, sig("prtr"))
    lcms.cmsSetColorSpace(h, sig("CMYK"))
    lcms.cmsSetPCS(h, sig("Lab "))
    keep = []
    for tag, fn, ins, outs in (("A2B0", a2b, 4, 3), ("B2A0", b2a, 3, 4)):
        pipe = lcms.cmsPipelineAlloc(None, ins, outs)
        stage = lcms.cmsStageAllocCLut16bit(None, 9, ins, outs, None)
        cb = sampler_type(fn)
        keep.append(cb)
        lcms.cmsStageSampleCLut16bit(stage, ctypes.cast(cb, ctypes.c_void_p), None, 0)
        # lutAtoBType / lutBtoAType (ICC.1:2010 10.10, 10.11): A curves, CLUT, B curves.
        lcms.cmsPipelineInsertStage(pipe, 1, lcms.cmsStageAllocToneCurves(None, ins, None))  # cmsAT_END
        lcms.cmsPipelineInsertStage(pipe, 1, stage)
        lcms.cmsPipelineInsertStage(pipe, 1, lcms.cmsStageAllocToneCurves(None, outs, None))
        lcms.cmsWriteTag(h, sig(tag), pipe)
    lcms.cmsWriteTag(h, sig("wtpt"), ctypes.byref(XYZ_D50))
    describe(lcms, h, "kiosk-carousel test CMYK inks")
    return save(lcms, h)


class XYZ(ctypes.Structure):
    _fields_ = [("X", ctypes.c_double), ("Y", ctypes.c_double), ("Z", ctypes.c_double)]


XYZ_D50 = XYZ(0.9642, 1.0, 0.8249)


def make_profiles(lcms, out):
    d65 = (0.3127, 0.3290)
    profiles = {
        "display-p3.icc": rgb_profile(lcms, "Display P3 (kiosk-carousel test)", d65,
                                      [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)], srgb_curve(lcms)),
        "adobe-rgb.icc": rgb_profile(lcms, "Adobe RGB (1998) (kiosk-carousel test)", d65,
                                     [(0.64, 0.33), (0.21, 0.71), (0.15, 0.06)], lcms.cmsBuildGamma(None, 563 / 256)),
        "cmyk.icc": cmyk_profile(lcms),
    }
    gray = lcms.cmsCreateGrayProfile(lcms.cmsD50_xyY(), lcms.cmsBuildGamma(None, 1.8))
    describe(lcms, gray, "Gray gamma 1.8 (kiosk-carousel test)")
    profiles["gray-18.icc"] = save(lcms, gray)
    srgb = lcms.cmsCreate_sRGBProfile()
    describe(lcms, srgb, "sRGB (Little CMS)")
    profiles["srgb.icc"] = save(lcms, srgb)
    for name, data in profiles.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    return profiles


# MARK: - Pictures

def patches_image():
    im = Image.new("RGB", (48, 16))
    for i, colour in enumerate(PATCHES):
        im.paste(colour, (i * 16, 0, i * 16 + 16, 16))
    return im


def embed(path, profile_path):
    run("exiftool", "-q", "-overwrite_original", "-icc_profile<=" + profile_path, path)


def expected_through(profile, decoded, mode="RGB", intent=0, points=None):
    """The sRGB pixels Pillow's Little CMS makes of `decoded` (a PIL image) with `profile` at
    each point (default: the patches' centres)."""
    src = ImageCms.ImageCmsProfile(io.BytesIO(profile))
    t = ImageCms.buildTransform(src, ImageCms.createProfile("sRGB"), mode, "RGB", renderingIntent=intent)
    converted = ImageCms.applyTransform(decoded, t)
    points = points or [(8 + 16 * i, 8) for i in range(len(PATCHES))]
    return [[x, y, *converted.getpixel((x, y))[:3]] for x, y in points]


def as_is(decoded, points=None):
    points = points or [(8 + 16 * i, 8) for i in range(len(PATCHES))]
    return [[x, y, *decoded.convert("RGB").getpixel((x, y))[:3]] for x, y in points]


def png_with(image, extra_chunks):
    """An 8-bit RGB PNG of `image` with `extra_chunks` (type, data) before IDAT."""
    w, h = image.size
    raw = b"".join(b"\0" + image.tobytes()[y * w * 3:(y + 1) * w * 3] for y in range(h))
    body = chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    body += b"".join(chunk(kind, data) for kind, data in extra_chunks)
    return b"\x89PNG\r\n\x1a\n" + body + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def jpeg_segments(data, segments):
    """`data` (a JPEG) with `segments` (marker byte, payload) inserted after SOI."""
    extra = b"".join(b"\xff" + bytes([m]) + struct.pack(">H", len(p) + 2) + p for m, p in segments)
    return data[:2] + extra + data[2:]


def make_pictures(out, profiles, expected):
    p = lambda name: os.path.join(out, name)
    base = patches_image()
    base.save(p("patches.png"))
    base.save(p("plain.jpg"), quality=100, subsampling=0)
    plain = Image.open(p("plain.jpg"))
    expected["plain.jpg"] = as_is(plain)

    shutil.copy(p("plain.jpg"), p("p3.jpg"))
    embed(p("p3.jpg"), p("display-p3.icc"))
    expected["p3.jpg"] = expected_through(profiles["display-p3.icc"], Image.open(p("p3.jpg")))
    shutil.copy(p("plain.jpg"), p("srgb.jpg"))
    embed(p("srgb.jpg"), p("srgb.icc"))
    expected["srgb.jpg"] = as_is(plain)

    for name, profile in (("p3.png", "display-p3.icc"), ("adobe.png", "adobe-rgb.icc")):
        shutil.copy(p("patches.png"), p(name))
        embed(p(name), p(profile))
        expected[name] = expected_through(profiles[profile], base)

    # patches.png (untagged: sRGB) on a screen whose profile is Adobe RGB.
    t = ImageCms.buildTransform(ImageCms.createProfile("sRGB"), ImageCms.ImageCmsProfile(io.BytesIO(profiles["adobe-rgb.icc"])),
                                "RGB", "RGB", renderingIntent=0)
    on_adobe = ImageCms.applyTransform(base, t)
    expected["patches.png@adobe-rgb.icc"] = [[8 + 16 * i, 8, *on_adobe.getpixel((8 + 16 * i, 8))] for i in range(3)]

    run("cwebp", "-quiet", "-lossless", "-metadata", "icc", p("p3.png"), "-o", p("p3.webp"))
    expected["p3.webp"] = expected["p3.png"]
    run("heif-enc", "-L", "-p", "chroma=444", "--matrix_coefficients", "0", p("p3.png"), "-o", p("p3.heic"))
    expected["p3.heic"] = expected["p3.png"]
    run("avifenc", "-l", "--cicp", "12/13/0", p("patches.png"), p("p3-nclx.avif"))
    expected["p3-nclx.avif"] = expected["p3.png"]

    with open(p("p3-cicp.png"), "wb") as f:
        f.write(png_with(base, [(b"cICP", bytes([12, 13, 0, 1]))]))
    expected["p3-cicp.png"] = expected["p3.png"]

    # cHRM: white and primaries x 100000 (PNG section 11.3.3.2); gAMA 45455 (1/2.2). The
    # reference is Little CMS's profile of the same primaries with gamma 1/0.45455.
    chrm = struct.pack(">8I", 31270, 32900, 68000, 32000, 26500, 69000, 15000, 6000)
    with open(p("chrm.png"), "wb") as f:
        f.write(png_with(base, [(b"gAMA", struct.pack(">I", 45455)), (b"cHRM", chrm)]))
    lcms = lcms_library()
    chrm_profile = rgb_profile(lcms, "cHRM", (0.3127, 0.3290), [(0.68, 0.32), (0.265, 0.69), (0.15, 0.06)],
                               lcms.cmsBuildGamma(None, 1 / 0.45455))
    expected["chrm.png"] = expected_through(chrm_profile, base)

    ramp = Image.new("L", (64, 4))
    for x in range(64):
        ramp.paste(x * 4 + 2, (x, 0, x + 1, 4))
    ramp.save(p("gray.jpg"), quality=100)
    embed(p("gray.jpg"), p("gray-18.icc"))
    gray_points = [(x, 2) for x in (2, 10, 20, 32, 45, 60)]
    expected["gray.jpg"] = expected_through(profiles["gray-18.icc"], Image.open(p("gray.jpg")), mode="L",
                                            points=gray_points)

    cmyk = Image.new("CMYK", (64, 16))
    for i, ink in enumerate([(255, 0, 0, 0), (0, 200, 0, 0), (30, 30, 200, 0), (60, 40, 40, 90)]):
        cmyk.paste(ink, (i * 16, 0, i * 16 + 16, 16))
    cmyk.save(p("cmyk-plain.jpg"), quality=100, subsampling=0)
    shutil.copy(p("cmyk-plain.jpg"), p("cmyk.jpg"))
    embed(p("cmyk.jpg"), p("cmyk.icc"))
    cmyk_points = [(8 + 16 * i, 8) for i in range(4)]
    expected["cmyk.jpg"] = expected_through(profiles["cmyk.icc"], Image.open(p("cmyk.jpg")), mode="CMYK",
                                            points=cmyk_points)

    data = open(p("plain.jpg"), "rb").read()
    with open(p("bad-icc.jpg"), "wb") as f:
        f.write(jpeg_segments(data, [(0xE2, b"ICC_PROFILE\0\x01\x01" + b"not a profile at all" * 8)]))
    expected["bad-icc.jpg"] = expected["plain.jpg"]

    # Ultra HDR (Google's gain-map JPEG, the ISO 21496-1 precursor): an XMP hdrgm block and an
    # MPF segment naming a second image, the gain map, appended after the primary's EOI.
    gain = Image.new("L", (24, 8), 180)
    buf = io.BytesIO()
    gain.save(buf, "JPEG", quality=90)
    gainmap = jpeg_segments(buf.getvalue(), [(0xE1, b"http://ns.adobe.com/xap/1.0/\0"
                                              b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf='
                                              b'"http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
                                              b'xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" '
                                              b'hdrgm:GainMapMax="2.0" hdrgm:HDRCapacityMax="2.0"/></rdf:RDF></x:xmpmeta>')])
    xmp = (b"http://ns.adobe.com/xap/1.0/\0" b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf='
           b'"http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:hdrgm='
           b'"http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0"/></rdf:RDF></x:xmpmeta>')

    def mpf(primary_length, gain_offset):
        """CIPA DC-007 MP Extensions: an index IFD (version, count, entries) and two MP entries
        (the primary, the gain map at `gain_offset` from the TIFF header), little endian."""
        entries = struct.pack("<IIIHH", 0x030000, primary_length, 0, 0, 0)
        entries += struct.pack("<IIIHH", 0, len(gainmap), gain_offset, 0, 0)
        ifd = struct.pack("<H", 3) + struct.pack("<HHI4s", 0xB000, 7, 4, b"0100")
        ifd += struct.pack("<HHII", 0xB001, 4, 1, 2) + struct.pack("<HHII", 0xB002, 7, 32, 8 + 2 + 36 + 4)
        return b"MPF\0" + b"II*\0" + struct.pack("<I", 8) + ifd + struct.pack("<I", 0) + entries

    # The TIFF header sits after SOI, the XMP segment and the MPF segment's marker, length and
    # "MPF\0"; the primary's length does not change with the numbers written.
    tiff_at = 2 + (4 + len(xmp)) + 4 + 4
    length = len(jpeg_segments(data, [(0xE1, xmp), (0xE2, mpf(0, 0))]))
    first = jpeg_segments(data, [(0xE1, xmp), (0xE2, mpf(length, length - tiff_at))])
    with open(p("ultrahdr.jpg"), "wb") as f:
        f.write(first + gainmap)  # the gain map right after the primary's EOI
    expected["ultrahdr.jpg"] = expected["plain.jpg"]


# MARK: - HDR

PQ_M1, PQ_M2 = 2610 / 16384, 2523 / 4096 * 128
PQ_C1, PQ_C2, PQ_C3 = 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
HLG_A, HLG_B, HLG_C = 0.17883277, 0.28466892, 0.55991073
REFERENCE_WHITE = 203.0
# BT.2020 to BT.709 linear RGB (BT.2407 equation 2, also derivable from the primaries).
BT2020_TO_709 = [[1.6605, -0.5876, -0.0728], [-0.1246, 1.1329, -0.0083], [-0.0182, -0.1006, 1.1187]]
BT709_TO_2020 = [[0.6274, 0.3293, 0.0433], [0.0691, 0.9195, 0.0114], [0.0164, 0.0880, 0.8956]]


def pq_eotf(e):
    p = max(e, 0) ** (1 / PQ_M2)
    return 10000 * (max(p - PQ_C1, 0) / (PQ_C2 - PQ_C3 * p)) ** (1 / PQ_M1)


def pq_inverse(nits):
    y = (max(nits, 0) / 10000) ** PQ_M1
    return ((PQ_C1 + PQ_C2 * y) / (1 + PQ_C3 * y)) ** PQ_M2


def hlg_inverse_oetf(e):
    return e * e / 3 if e <= 0.5 else (math.exp((e - HLG_C) / HLG_A) + HLG_B) / 12


def hlg_oetf(e):
    return math.sqrt(3 * e) if e <= 1 / 12 else HLG_A * math.log(12 * e - HLG_B) + HLG_C


def eetf(nits, peak):
    """ITU-R BT.2390-10 section 5.4.1, black level 0, target peak REFERENCE_WHITE."""
    lw = pq_inverse(peak)
    max_lum = pq_inverse(REFERENCE_WHITE) / lw
    e1 = min(pq_inverse(nits) / lw, 1.0)
    ks = 1.5 * max_lum - 0.5
    e2 = e1
    if max_lum < 1 and e1 >= ks:
        t = (e1 - ks) / (1 - ks)
        e2 = (2 * t ** 3 - 3 * t ** 2 + 1) * ks + (t ** 3 - 2 * t ** 2 + t) * (1 - ks) + (-2 * t ** 3 + 3 * t ** 2) * max_lum
    return pq_eotf(e2 * lw)


def tone_map(light, peak):
    """Display light R, G, B (cd/m2, BT.2020) to sRGB 8-bit: the EETF on max(R, G, B), the
    channels scaled alike, BT.2020 to BT.709, clipped, the sRGB curve."""
    m = max(light)
    ratio = eetf(m, peak) / m if m > 0 else 1.0
    lin = [v * ratio / REFERENCE_WHITE for v in light]
    out = [sum(BT2020_TO_709[i][j] * lin[j] for j in range(3)) for i in range(3)]
    return [int(round(srgb_encode(min(1, max(0, v))) * 255)) for v in out]


def hlg_light(codes, bits):
    """BT.2100 HLG: inverse OETF, then the OOTF at a nominal peak of 1000 cd/m2 (gamma 1.2)."""
    top = (1 << bits) - 1
    e = [hlg_inverse_oetf(c / top) for c in codes]
    ys = 0.2627 * e[0] + 0.6780 * e[1] + 0.0593 * e[2]
    return [1000 * ys ** 0.2 * v for v in e]


def png16(codes16, width, height, path):
    """An RGB PNG at 16 bits; codes16[y][x] = (r, g, b)."""
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            raw += struct.pack(">HHH", *codes16[y][x])
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))


def patch_file(patches10, path):
    """8x8 patches in a row of 16-bit samples from 10-bit-exact values (v16 = round(v * 65535 /
    1023) comes back to v at 10 and at 12 bits as avifenc scales it)."""
    width = 8 * len(patches10)
    rows = [[tuple(patches10[x // 8]) for x in range(width)] for _ in range(8)]
    png16(rows, width, 8, path)


def with_properties(path, out, extra, width, height):
    """A copy of the one-image AVIF at `path` (width x height) with `extra` property boxes on
    its primary item."""
    properties, data = mf.primary_item(path)
    item = {"id": 1, "type": b"av01", "width": width, "height": height, "properties": properties + extra, "data": data}
    mf.write_heif(out, [b"avif", b"mif1", b"miaf"], 1, [item])


def make_hdr(out, expected):
    p = lambda name: os.path.join(out, name)
    # PQ patches: grays at 0, 36.5 (18 % of 203), 100, 203, 400, 1000 and 4000 cd/m2, then
    # BT.2020 red, green and a skin tone at 203 cd/m2 of their largest channel.
    levels = [0, 36.54, 100, 203, 400, 1000, 4000]
    code = lambda nits: int(round(pq_inverse(nits) * 1023))
    pq = [[code(n)] * 3 for n in levels] + [[code(203), code(0.5), code(0.5)], [code(5), code(203), code(5)],
                                            [code(203), code(120), code(80)]]
    patch_file([[int(round(v * 65535 / 1023)) for v in px] for px in pq], p("pq16.png"))
    for bits in (10, 12):
        name = "pq%d.avif" % bits
        run("avifenc", "-l", "--depth", str(bits), "--cicp", "9/16/0", p("pq16.png"), p(name))
        top = (1 << bits) - 1
        codes = [[int(round(int(round(v * 65535 / 1023)) * top / 65535)) for v in px] for px in pq]
        expected[name] = [[8 * i + 4, 4, *tone_map([pq_eotf(c / top) for c in px], 1000)] for i, px in enumerate(codes)]
    codes10 = [[int(round(int(round(v * 65535 / 1023)) * 1023 / 65535)) for v in px] for px in pq]
    clli = lambda cll: mf.box(b"clli", struct.pack(">HH", cll, min(cll, 400)))
    size = (8 * len(pq), 8)
    with_properties(p("pq10.avif"), p("pq10-4000.avif"), [clli(4000)], *size)
    expected["pq10-4000.avif"] = [[8 * i + 4, 4, *tone_map([pq_eotf(c / 1023) for c in px], 4000)]
                                  for i, px in enumerate(codes10)]
    # mdcv (SMPTE ST 2086 in ISO/IEC 23001-8): primaries and white in 0.00002 units, then max
    # and min luminance in 0.0001 cd/m2: 0xFFFFFFFF is 429496 cd/m2, past PQ's 10000.
    mdcv = mf.box(b"mdcv", struct.pack(">8HII", 35400, 14600, 8500, 39850, 6550, 2300, 15635, 16450, 0xFFFFFFFF, 1))
    with_properties(p("pq10.avif"), p("pq10-absurd.avif"), [clli(65535), mdcv], *size)
    expected["pq10-absurd.avif"] = expected["pq10.avif"]

    # HLG: signals 0.25, 0.5, 0.75 (reference white, BT.2408), 0.9, 1.0; then colours.
    signals = [0.25, 0.5, 0.75, 0.9, 1.0]
    hlg = [[int(round(s * 1023))] * 3 for s in signals] + [[int(round(0.75 * 1023)), 200, 200], [300, 700, 300]]
    patch_file([[int(round(v * 65535 / 1023)) for v in px] for px in hlg], p("hlg16.png"))
    run("avifenc", "-l", "--depth", "10", "--cicp", "9/18/0", p("hlg16.png"), p("hlg10.avif"))
    expected["hlg10.avif"] = [[8 * i + 4, 4, *tone_map(hlg_light(px, 10), 1000)] for i, px in enumerate(hlg)]

    # One scene in SDR and in PQ: sRGB values 0, 8, ... 248, 255 (a gray ramp, then a coloured
    # one) as 8x8 patches; the PQ file carries the same light with SDR white at 203 cd/m2.
    values = list(range(0, 256, 8)) + [255]
    sdr = [[v, v, v] for v in values] + [[v, v // 2, v // 4] for v in values]
    width = 8 * len(sdr)
    Image.frombytes("RGB", (width, 8), bytes(sum(([*sdr[x // 8]] for _ in range(8) for x in range(width)), []))).save(p("scene.png"))
    pq_scene = []
    for px in sdr:
        lin709 = [srgb_decode(v / 255) for v in px]
        lin2020 = [sum(BT709_TO_2020[i][j] * lin709[j] for j in range(3)) for i in range(3)]
        pq_scene.append([int(round(pq_inverse(v * REFERENCE_WHITE) * 65535)) for v in lin2020])
    png16([[tuple(pq_scene[x // 8]) for x in range(width)] for _ in range(8)], width, 8, p("scene16.png"))
    run("avifenc", "-l", "--depth", "12", "--cicp", "9/16/0", p("scene16.png"), p("pq-scene.avif"))
    expected["scene"] = [[8 * i + 4, 4, *px] for i, px in enumerate(sdr)]


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(64)
    out = sys.argv[1]
    for tool, package in TOOLS.items():
        if shutil.which(tool) is None:
            sys.stderr.write("%s is missing: install Debian's %s\n" % (tool, package))
            sys.exit(3)
    os.makedirs(out, exist_ok=True)
    lcms = lcms_library()
    profiles = make_profiles(lcms, out)
    expected = {}
    make_pictures(out, profiles, expected)
    make_hdr(out, expected)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
