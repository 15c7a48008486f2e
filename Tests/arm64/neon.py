#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The per-frame kernels of the arm64 release binary, read off its disassembly: the fade
(Compositor.blend, its byte loops inlined), the slide (Compositor.slide: rows copied with
memmove, glibc's aarch64 routine) and the scanout conversion (ScanoutWriter, XRGB8888 to the
framebuffer's format; its XRGB8888 case is a row copy). For each, the innermost loops (a
backward branch inside the function) and, per loop, its instructions, how many of them are
NEON (Advanced SIMD: operands on v/q registers), the bytes its vector loads and stores move,
and so instructions per pixel (4 bytes of XRGB8888 per pixel read).

The fade's case is failed when its hot loop is not a NEON loop (its body has no vector
instruction): that is what the compiler must keep doing on arm64, as it does with SSE2 on
x86-64. Prints one PASS/FAIL line a kernel and, last, "N passed, M failed".

  neon.py --root ROOT [--binary UNSTRIPPED_ARM64_BINARY]
ROOT: deploy/swiftlang-root.sh's (aarch64-linux-gnu-objdump, swift-demangle, the arm64 libc).
The binary must keep its symbols: the one deploy/build-deb.sh --arch arm64 builds before it
strips the packaged copy (.build/cross-arm64/aarch64-unknown-linux-gnu/release/kiosk-carousel).
"""
import argparse, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.abspath(os.path.join(HERE, "..", ".."))
KERNELS = [  # (name, demangled-name pattern, must be NEON)
    ("fade", r"Compositor\.blend\(", True),
    ("slide", r"Compositor\.slide\(", False),
    ("scanout", r"ScanoutWriter\.copy\(", False),
]
BINDS = {PKG}   # folders the root sees (the binary's is added)
VREG = re.compile(r"\b(v\d+\.\d*[bhsd]|q\d+)\b")
LOAD = re.compile(r"^(ld1|ld2|ld3|ld4|ldr|ldp|ldur|ldnp)$")
STORE = re.compile(r"^(st1|st2|st3|st4|str|stp|stur|stnp)$")


def tool(root, name):
    """The command line running `name` in the root (its own libraries: deploy/swiftlang-root.sh run)."""
    for d in ("/usr/bin", "/usr/libexec/swift/bin"):
        if os.path.exists(os.path.join(root, d.lstrip("/"), name)):
            binds = [x for d2 in sorted(BINDS) for x in ("--bind", d2)]
            return (os.path.join(PKG, "deploy", "swiftlang-root.sh"), "run", *binds, "--", os.path.join(d, name))
    sys.exit(f"neon.py: no {name} in {root}")


def symbols(root, binary):
    """[(address, size, demangled name)] of the binary's functions."""
    nm = subprocess.run([*tool(root, "aarch64-linux-gnu-nm"), "-S", "--defined-only", binary],
                        capture_output=True, text=True, check=True).stdout.split("\n")
    raw = [l.split() for l in nm if len(l.split()) == 4 and l.split()[2] in "tTwW"]
    dem = subprocess.run([*tool(root, "swift-demangle"), "--simplified"], input="\n".join(r[3] for r in raw),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return [(int(r[0], 16), int(r[1], 16), d, r[3]) for r, d in zip(raw, dem)]


def disassemble(root, binary, start, size):
    out = subprocess.run([*tool(root, "aarch64-linux-gnu-objdump"), "-d", "--no-show-raw-insn",
                          f"--start-address={start:#x}", f"--stop-address={start + size:#x}", binary],
                         capture_output=True, text=True, check=True).stdout
    insns = []
    for line in out.split("\n"):
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return insns


def vector_bytes(op, args):
    """Bytes a vector load or store moves (q registers: 16 each; ld1-ld4 lists count their registers)."""
    if not VREG.search(args):
        return 0
    if op.startswith(("ld1", "ld2", "ld3", "ld4", "st1", "st2", "st3", "st4")):
        regs = re.findall(r"v\d+\.(\d+)([bhsd])", args.split("}")[0])
        return sum(int(n) * {"b": 1, "h": 2, "s": 4, "d": 8}[t] for n, t in regs)
    regs = re.findall(r"\bq\d+\b", args.split("[")[0])
    return 16 * len(regs)


def loops(insns):
    """The innermost loops: (first, last index) of each backward branch's body with no other loop inside."""
    index = {a: i for i, (a, _, _) in enumerate(insns)}
    found = []
    for i, (a, op, args) in enumerate(insns):
        if op.startswith("b") and op not in ("bl", "blr", "br"):
            m = re.search(r"\b([0-9a-f]+) <", args)
            if m and int(m.group(1), 16) <= a and int(m.group(1), 16) in index:
                found.append((index[int(m.group(1), 16)], i))
    return [l for l in found if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in found)]


def describe(insns, lo, hi):
    body = insns[lo:hi + 1]
    neon = sum(1 for _, op, args in body if VREG.search(args))
    loaded = sum(vector_bytes(op, args) for _, op, args in body if LOAD.match(op.split(".")[0]))
    stored = sum(vector_bytes(op, args) for _, op, args in body if STORE.match(op.split(".")[0]))
    return {"insns": len(body), "neon": neon, "loaded": loaded, "stored": stored,
            "ops": sorted({op for _, op, args in body if VREG.search(args)})}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--binary", default=os.path.join(PKG, ".build/cross-arm64/aarch64-unknown-linux-gnu/release/kiosk-carousel"))
    a = ap.parse_args()
    if not os.path.exists(a.binary):
        print(f"FAIL neon: no unstripped arm64 binary at {a.binary} (deploy/build-deb.sh --arch arm64 makes it)")
        print("0 passed, 1 failed")
        return 1
    a.binary = os.path.abspath(a.binary)
    BINDS.add(os.path.dirname(a.binary))
    syms = symbols(a.root, a.binary)
    passed = failed = 0
    for name, pattern, must in KERNELS:
        funcs = [s for s in syms if re.search(pattern, s[2]) and s[1] > 0]
        if not funcs:
            print(f"FAIL {name}: no function matching /{pattern}/ in {a.binary}")
            failed += 1
            continue
        best = None
        for addr, size, dem, _ in funcs:
            insns = disassemble(a.root, a.binary, addr, size)
            for lo, hi in loops(insns):
                d = describe(insns, lo, hi)
                d["where"] = f"{dem[:70]} @{insns[lo][0]:#x}"
                d["calls"] = sorted({args.split("<")[-1].rstrip(">") for _, op, args in insns if op == "bl"})
                if best is None or (d["neon"], d["loaded"]) > (best["neon"], best["loaded"]):
                    best = d
        calls = sorted({c for addr, size, dem, _ in funcs for _, op, args in disassemble(a.root, a.binary, addr, size)
                        if op == "bl" for c in [args.split("<")[-1].rstrip(">")]})
        copies = [c for c in calls if "memcpy" in c or "memmove" in c]
        if best and best["neon"] and best["loaded"]:
            px = best["loaded"] / (8 if name == "fade" else 4)   # the fade reads two pixels' bytes per pixel
            ipp = best["insns"] / px
            print(f"PASS {name}: NEON loop of {best['insns']} instructions ({best['neon']} NEON: {', '.join(best['ops'][:8])}) "
                  f"moving {best['loaded']} B in / {best['stored']} B out an iteration = {px:g} pixels: "
                  f"{ipp:.2f} instructions per pixel ({best['where']})")
            passed += 1
        elif must:
            print(f"FAIL {name}: its loops have no NEON instruction ({best})")
            failed += 1
        else:
            via = f"rows copied by {', '.join(copies)} (glibc's aarch64 memcpy: ldp/stp of q registers, 64 B a loop)" \
                if copies else f"scalar loop {best}"
            print(f"PASS {name}: {via}")
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
