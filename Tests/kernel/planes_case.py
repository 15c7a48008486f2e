# SPDX-License-Identifier: Apache-2.0
"""The kernel suite's `drm-vkms-planes` case (docs/planes.md): the cross-fade on KMS planes,
proved on vkms (built out of tree with a per-plane "alpha" property, Tests/kernel/vkms/, GPL-2.0,
test-only) through its writeback connector, which hands back the frame the driver composed.

run-kernel-tests.py names it in its boots."""
import base64, io, json, os, re, time
from PIL import Image

from qemu_vm import EVENT_TIMEOUT, CaseFailed, sh, stop_with
from screen_compare import reference
from kernel_case import SHOWN0, SHOWN1, case_dir, guest_photos

SOCKET = "/run/kc/control"
SHOT = "/run/kc/screenshots/fade.png"  # the screenshot folder: `screenshots` beside the socket
SIZE = (640, 480)
CARD = "/dev/dri/card1"
SHOWN_AGAIN0 = r'\{[^\n]*"event" *: *"shown"[^\n]*"index" *: *0[^\n]*\}'


def div_round(x, d):
    """The kernel's DIV_ROUND_CLOSEST for unsigned values."""
    return (x + d // 2) // d


def vkms_table(alpha):
    """What vkms composes for an opaque XRGB8888 plane at plane alpha `alpha` (0..0xffff) over
    an opaque primary plane, channel by channel, as the writeback connector's XRGB8888 gives it:
    the patched vkms_composer.c's integer steps (staged 16-bit channels times alpha, rounded;
    pre_mul_blend_channel; DIV_ROUND_CLOSEST by 257 on the way out). table[a * 256 + b]."""
    out = bytearray(65536)
    for b in range(256):
        top = div_round(b * 257 * alpha, 0xffff)
        for a in range(256):
            v = top + div_round(a * 257 * (0xffff - alpha), 0xffff)
            out[a * 256 + b] = div_round(v, 257)
    return bytes(out)


def exact_alpha(shot, below, above):
    """The plane alpha for which `shot` is, byte for byte, vkms's blend of `above` over `below`
    (PIL RGB images), with the count of bytes that differ; (None, n) when no alpha near the
    least-squares estimate gives an exact match."""
    s, a, b = shot.tobytes(), below.tobytes(), above.tobytes()
    idx = [i for i in range(0, len(s), 97) if abs(a[i] - b[i]) >= 48]
    if not idx:
        raise CaseFailed("the two photos are too alike to tell a blend")
    num = sum((s[i] - a[i]) * (b[i] - a[i]) for i in idx)
    den = sum((b[i] - a[i]) ** 2 for i in idx)
    guess = round(num / den * 0xffff)
    sample = idx[:4000]
    best = (None, len(s))
    for alpha in sorted(range(max(0, guess - 700), min(0xffff, guess + 700) + 1), key=lambda x: abs(x - guess)):
        ok = True
        for i in sample:
            top = div_round(b[i] * 257 * alpha, 0xffff)
            if div_round(top + div_round(a[i] * 257 * (0xffff - alpha), 0xffff), 257) != s[i]:
                ok = False
                break
        if not ok:
            continue
        table = vkms_table(alpha)
        wrong = sum(1 for x, y, z in zip(s, a, b) if table[y * 256 + z] != x)
        if wrong < best[1]:
            best = (alpha, wrong)
        if wrong == 0:
            return alpha, 0
    return best


def cpu_and_frames(vm, start):
    """(CPU time of every thread of the program in ns from /proc/PID/task/*/schedstat, frames
    presented from the control socket's `status`)."""
    text, _ = sh(vm, "cat /proc/$PID/task/*/schedstat | awk '{ s += $1 } END { printf \"KC_CPU %.0f\\n\", s }'; "
                 "echo KC_TICKS $(cut -d' ' -f14,15 /proc/$PID/stat); "
                 f"/app/ctlsend {SOCKET} '{{\"command\":[\"status\"]}}'", start)
    cpu = re.search(r"KC_CPU (\d+)", text)
    ticks = re.search(r"KC_TICKS (\d+) (\d+)", text)
    reply = re.search(r"KC_CTL (\{.*\})", text)
    if not cpu or not reply:
        raise CaseFailed(f"no CPU time or status: {text.strip()}")
    return (int(cpu.group(1)), int((json.loads(reply.group(1)).get("data") or {}).get("frames", -1)),
            (int(ticks.group(1)), int(ticks.group(2))) if ticks else (0, 0))


def fade_cost(vm, display, args, out, tag, screenshot=None):
    """Runs the show of A and B on vkms (`display`), measures the CPU time per frame of the first
    fade (A to B, 4 s), and, with `screenshot`, asks for one mid-way through the second (B to A).
    Returns (ms of CPU a frame, frames, the program's log, the screenshot or None)."""
    start = vm.mark()
    vm.send("run " + " ".join(["--display", display, "--interval", "6", "--fade", "4000", "--control", SOCKET])
            + " " + guest_photos(args))
    shown0 = vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    time.sleep(0.7)  # still: the first fade starts 2 s after the first frame
    cpu0, frames0, ticks0 = cpu_and_frames(vm, start)
    vm.wait_for(SHOWN1, EVENT_TIMEOUT, shown0.end())
    cpu1, frames1, ticks1 = cpu_and_frames(vm, start)
    frames = frames1 - frames0
    if frames < 10:
        raise CaseFailed(f"{tag}: only {frames} frames in the fade")
    per_frame = (cpu1 - cpu0) / frames / 1e6
    # utime and stime (clock ticks of 10 ms, every thread): how much of it is the kernel's.
    user, system = ticks1[0] - ticks0[0], ticks1[1] - ticks0[1]
    split = f"{100 * system // max(1, user + system)} % in the kernel"
    shot = None
    if screenshot:
        # The second fade (B to A) starts 6 s after the first; ask half-way through it.
        time.sleep(3.0)
        request = json.dumps({"command": ["screenshot", SHOT]}, separators=(",", ":"))
        text, _ = sh(vm, f"timeout 30 /app/ctlsend {SOCKET} '{request}' || for t in /proc/$PID/task/*; do "
                     "echo KC_STUCK $(cat $t/comm) $(cat $t/wchan); cat $t/stack; done", start, timeout=90)
        m = re.search(r"KC_CTL (\{.*\})", text)
        if not m or json.loads(m.group(1)).get("error") != "success":
            raise CaseFailed(f"{tag}: screenshot refused: {text.strip()}")
        mark = vm.mark()
        vm.send(f"sh echo KC_B64_BEGIN; base64 {SHOT}; echo KC_B64_END")
        end = vm.wait_for(r"KC_B64_END", 180, mark)
        body = vm.log_text()[mark:end.start()].split("KC_B64_BEGIN", 1)[-1]
        lines = [ln.strip() for ln in body.splitlines() if re.fullmatch(r"[A-Za-z0-9+/=]+", ln.strip())]
        png = base64.b64decode("".join(lines))
        with open(os.path.join(out, f"{tag}-mid-fade.png"), "wb") as f:
            f.write(png)
        shot = Image.open(io.BytesIO(png)).convert("RGB")
    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"{tag}: exit status {rc} after SIGTERM")
    return per_frame, frames, vm.log_text()[start:], shot, split


def run_vkms_planes_case(vm, case, args, size):
    """vkms (`enable_overlay=1`: a primary plane, eight overlays with the patch's "alpha", a
    writeback connector) as a second card beside bochs. `--display drm:/dev/dri/card1,mode=640x480`:
    the log must say atomic commits, the planes with alpha and writeback, and `frames on planes`;
    a screenshot half-way through a fade, read through the writeback connector, must be exactly
    (every byte) vkms's blend of the two offscreen frames at one alpha strictly between 5 % and
    95 %; the CPU time per frame of a fade must be at most 0.85 of the same fade with
    `planes=off` (composed on the CPU: it must never say `frames on planes`). After SIGTERM no
    overlay plane is left on the CRTC (debugfs state)."""
    out = case_dir(vm, case)
    text, rc = sh(vm, f"mkdir -p /run/kc; [ -e {CARD} ] || insmod /app/vkms.ko enable_overlay=1; "
                  f"i=0; while [ ! -e {CARD} ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; ls {CARD}", 0)
    if rc != 0:
        raise CaseFailed(f"vkms did not load: {text.strip()}")
    ref_a = reference(args.binary, args.photos[0], SIZE, 0, args.out)
    ref_b = reference(args.binary, args.photos[1], SIZE, 0, args.out)

    planes_ms, planes_frames, log, shot, planes_split = fade_cost(vm, f"drm:{CARD},mode={SIZE[0]}x{SIZE[1]}", args, out, "planes",
                                                    screenshot=True)
    opened = re.search(r"display opened[^\n]*", log)
    if not opened or "atomic commits" not in opened.group(0) or "with alpha" not in opened.group(0) \
            or "writeback" not in opened.group(0):
        raise CaseFailed(f"the log does not say atomic commits, planes with alpha and writeback: "
                         f"{opened.group(0) if opened else 'no display opened line'}")
    if "frames on planes" not in log:
        raise CaseFailed("the log never says 'frames on planes'")
    if shot.size != SIZE:
        raise CaseFailed(f"the writeback frame is {shot.size}, not {SIZE}")
    # The second fade: B below, A above at the fade's alpha.
    refused = re.search(r"writeback failed[^\n]*", log)
    if refused:
        raise CaseFailed(f"the screenshot was not read through writeback: {refused.group(0)}")
    alpha, wrong = exact_alpha(shot, ref_b, ref_a)
    if alpha is None or wrong != 0:
        raise CaseFailed(f"the mid-fade writeback frame is not an exact blend of B and A "
                         f"(best alpha {alpha}: {wrong} bytes differ; files in {out})")
    blend = f"writeback mid-fade frame = vkms's blend of B and A at alpha {alpha / 0xffff:.3f}, every byte"
    if not 0.05 * 0xffff < alpha < 0.95 * 0xffff:
        raise CaseFailed(f"the screenshot is not mid-fade: alpha {alpha / 0xffff:.3f}")
    state, _ = sh(vm, "mount -t debugfs none /sys/kernel/debug 2>/dev/null; cat /sys/kernel/debug/dri/1/state", 0)
    blocks = re.findall(r"plane\[\d+\]: (plane-\d+)\n\tcrtc=(\S+)", state)
    if not blocks:
        raise CaseFailed(f"no plane state in debugfs: {state[-300:].strip()}")
    # plane-0 is the primary (the console's framebuffer again), plane-9 the cursor; 1..8 the overlays.
    overlays_left = [name for name, crtc in blocks if name not in ("plane-0", "plane-9") and crtc != "(null)"]
    if overlays_left:
        raise CaseFailed(f"planes still on the CRTC after exit: {overlays_left}")

    cpu_ms, cpu_frames, cpu_log, _, cpu_split = fade_cost(vm, f"drm:{CARD},mode={SIZE[0]}x{SIZE[1]},planes=off", args, out, "cpu")
    if "frames on planes" in cpu_log:
        raise CaseFailed("planes=off still put frames on planes")
    # Under TCG most of the plane path's time is the kernel's side of each commit (vkms maps
    # every plane's buffer per commit): measured 0.32 to 0.63 of the CPU path at 640x480 on
    # 2 vCPUs, with the host under load.
    if planes_ms > 0.85 * cpu_ms:
        raise CaseFailed(f"CPU time per fade frame on planes {planes_ms:.2f} ms is more than 0.85 of the "
                         f"CPU path's {cpu_ms:.2f} ms")
    return (f"{blend}; "
            f"CPU a fade frame: planes {planes_ms:.2f} ms ({planes_frames} frames, {planes_split}), "
            f"planes=off {cpu_ms:.2f} ms ({cpu_frames} frames, {cpu_split}), ratio {planes_ms / cpu_ms:.3f} (TCG guest)")
