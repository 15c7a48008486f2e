# SPDX-License-Identifier: Apache-2.0
"""The kernel suite's `screenshot` cases (docs/control-socket.md): the PNG kiosk-carousel
writes when asked on its control socket must be what QEMU itself shows, pixel for pixel.

run-kernel-tests.py names it in its boots."""
import base64, io, json, os, re, time
from PIL import Image

from qemu_vm import EVENT_TIMEOUT, CaseFailed, sh, stop_with
from screen_compare import psnr, reference, screen_is
from kernel_case import SHOWN0, case_dir, start_still_show

SOCKET = "/run/kc/control"
SHOT = "/run/kc/screenshots/shot.png"  # the screenshot folder: `screenshots` beside the socket


def run_screenshot_case(vm, case, args, size):
    """`--control` in /run/kc (the runtime directory is the socket's folder), photo A standing
    (and `--rotate` as the case says): `ctlsend` asks for a screenshot into /run/kc/screenshots
    (the screenshot folder, made by the program at start); the reply
    must name the file, the panel's size and item 0; the file, carried to the host in base64 over
    the serial console, must equal QMP `screendump` taken just before (>= 50 dB; identical on
    XRGB8888) and show photo A as the panel does (>= 40 dB against the offscreen frame turned).
    A path outside the screenshot folder is refused and nothing is written there."""
    out = case_dir(vm, case)
    ref_a = reference(args.binary, args.photos[0], size, case.rotation, args.out)
    sh(vm, "mkdir -p /run/kc /var/lib/kc; rm -f " + SHOT, 0)
    rot = ["--rotate", str(case.rotation)] if case.rotation else []
    start = start_still_show(vm, case, args, ["--control", SOCKET, "--state-dir", "/var/lib/kc"] + rot)
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    best = screen_is(vm, out, "before", ref_a)
    if best < case.psnr_min:
        raise CaseFailed(f"photo A is not on the screen before the screenshot: {best:.1f} dB")
    time.sleep(0.5)  # fbdev emulation copies its shadow buffer from a kernel worker
    dump = vm.screendump(os.path.join(out, "screendump.png"))

    request = json.dumps({"command": ["screenshot", SHOT]}, separators=(",", ":"))
    text, _ = sh(vm, f"/app/ctlsend {SOCKET} '{request}'", start)
    m = re.search(r"KC_CTL (\{.*\})", text)
    if not m:
        raise CaseFailed(f"no reply to screenshot: {text.strip()}")
    reply = json.loads(m.group(1))
    data = reply.get("data") or {}
    if reply.get("error") != "success":
        raise CaseFailed(f"screenshot refused: {reply}")
    if (data.get("path"), data.get("width"), data.get("height"), data.get("index")) != (SHOT, size[0], size[1], 0) \
            or not str(data.get("src", "")).endswith(os.path.basename(args.photos[0])):
        raise CaseFailed(f"screenshot reply: {reply}; expected {SHOT}, {size[0]}x{size[1]}, item 0")

    mark = vm.mark()
    vm.send(f"sh echo KC_B64_BEGIN; base64 {SHOT}; echo KC_B64_END")
    end = vm.wait_for(r"KC_B64_END", 180, mark)
    body = vm.log_text()[mark:end.start()].split("KC_B64_BEGIN", 1)[-1]
    lines = [ln.strip() for ln in body.splitlines() if re.fullmatch(r"[A-Za-z0-9+/=]+", ln.strip())]
    png = base64.b64decode("".join(lines))
    if len(png) != data.get("bytes"):
        raise CaseFailed(f"{len(png)} bytes came over the serial line, the reply says {data.get('bytes')}")
    with open(os.path.join(out, "shot.png"), "wb") as f:
        f.write(png)
    shot = Image.open(io.BytesIO(png)).convert("RGB")
    if shot.size != dump.size:
        raise CaseFailed(f"the screenshot is {shot.size}, the screendump {dump.size}")
    same, photo = psnr(shot, dump), psnr(shot, ref_a)
    if same < 50 or photo < case.psnr_min:
        raise CaseFailed(f"the screenshot is {same:.1f} dB from QEMU's screendump (>= 50 wanted) and "
                           f"{photo:.1f} dB from photo A (files in {out})")
    timing = re.search(r"screenshot written[^\n]*?(read back in [\d.]+ ms, PNG in [\d.]+ ms)", vm.log_text()[start:])

    text, _ = sh(vm, f"/app/ctlsend {SOCKET} '{{\"command\":[\"screenshot\",\"/run/kc/screenshots/../../../tmp/x.png\"]}}'; "
                       "ls /tmp/x.png 2>&1", start)
    if "written only in" not in text or "No such file" not in text:
        raise CaseFailed(f"a path outside /run/kc/screenshots was not refused: {text.strip()}")
    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"exit status {rc} after SIGTERM")
    return (f"screenshot {shot.size[0]}x{shot.size[1]}, {len(png)} bytes: {same:.1f} dB against QEMU's screendump, "
            f"{photo:.1f} dB against photo A; {timing.group(1) if timing else 'no timing in the log'}; "
            "a path outside refused")
