# SPDX-License-Identifier: Apache-2.0
"""What the kernel suite (Tests/kernel) and the system suite (Tests/system) share: commands on
QEMU's QMP socket, screen captures through it, PSNR, and the offscreen backend's reference
frames that a captured screen is compared with.

Stdlib + Pillow only (Debian: python3-pil).
"""
import json, math, os, shutil, subprocess
from PIL import Image, ImageChops, ImageStat


# The machine each suite boots for a Debian architecture, under TCG (no KVM: a foreign guest,
# and none on the build machines either):
#   qemu     the emulator;  machine  its board and CPU (arm64: QEMU's `virt` board with a
#            Cortex-A72, the Raspberry Pi 4's core);
#   console  the kernel's console on the board's own UART (ttyS0: the PC's 16550; ttyAMA0: the
#            virt board's PL011), which the first -serial option connects;
#   ctl      the kernel suite's command port: the PC's second 16550 (-serial), on `virt` a PCI
#            16550 (-device pci-serial, 8250_pci is built into Debian's arm64 kernel) as ttyS0.
MACHINES = {
    "amd64": {"qemu": "qemu-system-x86_64", "machine": [], "console": "ttyS0", "ctl": "ttyS1"},
    "arm64": {"qemu": "qemu-system-aarch64", "machine": ["-M", "virt", "-cpu", "cortex-a72"],
              "console": "ttyAMA0", "ctl": "ttyS0"},
}


def ctl_port_args(arch, socket_path):
    """QEMU arguments for the kernel suite's command port on a UNIX socket (see MACHINES)."""
    if arch == "amd64":
        return ["-serial", f"unix:{socket_path},server=on,wait=off"]
    return ["-chardev", f"socket,id=kcctl,path={socket_path},server=on,wait=off", "-device", "pci-serial,chardev=kcctl"]


class QMPCommands:
    """Mixed into a suite's VM, which sets `qmp_file` (the QMP socket as a text file, past its
    greeting) and `failure` (the exception class an error reply raises). QMP (QEMU's
    docs/interop/qmp-spec): one JSON object a line; events that arrive between are skipped."""

    def qmp_cmd(self, name, **args):
        self.qmp_file.write(json.dumps({"execute": name, "arguments": args}) + "\n")
        self.qmp_file.flush()
        while True:
            r = json.loads(self.qmp_file.readline())
            if "event" in r:
                continue
            if "error" in r:
                raise self.failure(f"QMP {name}: {r['error']}")
            return r["return"]

    def screendump(self, path, device=None, head=None):
        """The screen as QEMU's display device shows it, saved as a PNG at `path` (RGB); `head`:
        that output of the display `device` (QOM id), e.g. virtio-gpu's second with max_outputs=2."""
        ppm = path + ".ppm"
        where = {} if head is None else {"device": device, "head": head}
        self.qmp_cmd("screendump", filename=ppm, **where)
        img = Image.open(ppm).convert("RGB")
        img.load()
        os.remove(ppm)
        img.save(path)
        return img


def mse(a, b):
    stat = ImageStat.Stat(ImageChops.difference(a, b))
    return sum(v * v for v in stat.rms) / len(stat.rms)


def psnr(a, b):
    """Peak signal-to-noise ratio in dB (99 for identical images, 0 for different sizes)."""
    if a.size != b.size:
        return 0.0
    m = mse(a, b)
    return 99.0 if m == 0 else 10 * math.log10(255 * 255 / m)


def offscreen_frame(binary, source, size, directory, failure):
    """The first frame the offscreen backend renders for `source` at `size` (width, height),
    written under `directory` once and read from there afterwards; `failure` is raised when the
    program fails."""
    w, h = size
    png = os.path.join(directory, "frame-00000000.png")
    if not os.path.exists(png):
        shutil.rmtree(directory, ignore_errors=True)
        r = subprocess.run([binary, "--display", f"offscreen:{directory}", "--size", f"{w}x{h}", "--run-for", "1", source],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or not os.path.exists(png):
            raise failure(f"offscreen reference failed (rc {r.returncode}): {r.stderr.strip()}")
    return Image.open(png).convert("RGB")
