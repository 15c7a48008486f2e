# SPDX-License-Identifier: Apache-2.0
"""The system suite's plumbing: one QEMU machine booting the suite's Debian image (systemd as
PID 1), a root shell on its serial console, QMP for the screen and the tablet, and the image
comparisons the kernel suite uses (PSNR against what the offscreen backend renders).

Stdlib + Pillow only (Debian: python3-pil).
"""
import json, os, random, re, socket, subprocess, sys, threading, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from qemu_common import MACHINES, QMPCommands, offscreen_frame, psnr  # noqa: F401 (psnr: for run-system-tests.py)

DISPLAY_ID = "video0"     # QOM id of the display device; the tablet is bound to it (QMP input-send-event)
TABLET_MAX = 32767        # QEMU's virtio tablet: ABS_X/ABS_Y 0..32767, the finger is BTN_LEFT
SCREEN = (1024, 768)      # xres/yres given to both display devices: the mode DRM picks
# The kernel command line of a kiosk (docs/boot.md), plus the suite's serial console.
CLEAN_BOOT = "quiet loglevel=3 vt.global_cursor_default=0 consoleblank=0"


class GuestError(Exception):
    pass


class VM(QMPCommands):
    """One QEMU run of the image. The disk is opened with snapshot=on: the guest's writes (the
    journal, an upgrade, a purge) last until QEMU exits, across guest reboots, and the cached
    image is never changed."""

    DEVICES = {"bochs": "bochs-display", "virtio": "virtio-gpu-pci"}
    failure = GuestError  # raised by a QMP error reply (qemu_common.QMPCommands)

    def __init__(self, image_dir, device, out, arch="amd64", memory_mib=1536):
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.serial_path = os.path.join(out, "serial.sock")
        self.qmp_path = os.path.join(out, "qmp.sock")
        for f in (self.serial_path, self.qmp_path):
            if os.path.exists(f):
                os.remove(f)
        w, h = SCREEN
        m = MACHINES[arch]
        # no_timer_check (x86): under TCG on a loaded host the kernel's IO-APIC timer check
        # can fail ("IO-APIC + timer doesn't work!" panic) although the timer works.
        quirks = "no_timer_check " if arch == "amd64" else ""
        self.console = m["console"]
        self.cmd = [m["qemu"]] + m["machine"] + ["-accel", "tcg", "-m", str(memory_mib), "-smp", "2",
                    "-kernel", os.path.join(image_dir, "vmlinuz"), "-initrd", os.path.join(image_dir, "initrd.img"),
                    "-append", f"root=/dev/vda rw console={self.console} {quirks}{CLEAN_BOOT}",
                    "-drive", f"file={os.path.join(image_dir, 'image.raw')},format=raw,if=virtio,snapshot=on",
                    "-vga", "none", "-device", f"{self.DEVICES[device]},id={DISPLAY_ID},xres={w},yres={h}",
                    "-device", f"virtio-tablet-pci,id=tablet0,display={DISPLAY_ID},head=0",
                    "-chardev", f"socket,id=ser0,path={self.serial_path},server=on,wait=off",
                    "-serial", "chardev:ser0",
                    "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
                    "-monitor", "none", "-display", "none", "-nic", "none"]
        # virtio-gpu gets QEMU's D-Bus display on a private bus: its Console.SetUIInfo with a
        # size of 0x0 disables the output (the guest sees its connector disconnected), with a
        # size enables it again (QEMU 7.2 has no QMP command for it).
        self.bus, self.bus_address = None, None
        if device == "virtio":
            self.cmd[self.cmd.index("-display") + 1] = "dbus,addr=@BUS@,gl=off"
        self.proc = None
        self.buf = b""
        self.lock = threading.Lock()
        self.serial_log = open(os.path.join(out, "serial.log"), "wb")
        self.shell_ready = False

    # -- lifecycle --
    def start(self):
        self.t0 = time.time()
        env = dict(os.environ, TMPDIR=os.environ.get("KC_SNAPSHOT_DIR", "/var/tmp"))
        cmd = list(self.cmd)
        i = cmd.index("-display") + 1
        if "@BUS@" in cmd[i]:
            self.bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address"],
                                        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                        stderr=open(os.path.join(self.out, "dbus-daemon.log"), "wb"))
            self.bus_address = self.bus.stdout.readline().strip().split(",")[0]  # QEMU's options split at commas
            cmd[i] = cmd[i].replace("@BUS@", self.bus_address)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=open(os.path.join(self.out, "qemu.out"), "wb"),
                                     stderr=subprocess.STDOUT, env=env)
        self.qmp = self._connect(self.qmp_path)
        self.qmp_file = self.qmp.makefile("rw")
        json.loads(self.qmp_file.readline())
        self.qmp_cmd("qmp_capabilities")
        self.ser = self._connect(self.serial_path)
        threading.Thread(target=self._reader, daemon=True).start()

    def _connect(self, path, timeout=15):
        deadline = time.time() + timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(path)
                return s
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise GuestError(f"cannot connect to {path} (qemu: {self.proc.poll()})")
                time.sleep(0.05)

    def _reader(self):
        while True:
            try:
                d = self.ser.recv(65536)
            except OSError:
                return
            if not d:
                return
            self.serial_log.write(d)
            self.serial_log.flush()
            with self.lock:
                self.buf += d

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.qmp_cmd("quit")
                self.proc.wait(10)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        for s in (getattr(self, "qmp", None), getattr(self, "ser", None)):
            if s:
                s.close()
        self.serial_log.close()
        if self.bus:
            self.bus.terminate()
            self.bus.wait(10)

    # -- QMP (qmp_cmd and screendump from qemu_common.QMPCommands) --
    def set_output(self, width, height):
        """The virtio-gpu output's size as the D-Bus display asks for it: 0x0 disables it
        (org.qemu.Display1.Console.SetUIInfo: width_mm, height_mm, xoff, yoff, width, height)."""
        if not self.bus_address:
            raise GuestError("no D-Bus display: QEMU runs with -display none")
        r = subprocess.run(["busctl", f"--address={self.bus_address}", "call", "org.qemu", "/org/qemu/Display1/Console_0",
                            "org.qemu.Display1.Console", "SetUIInfo", "qqiiuu", "0", "0", "0", "0", str(width), str(height)],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise GuestError(f"SetUIInfo {width}x{height}: {r.stderr.strip()}")

    def tablet(self, *events):
        self.qmp_cmd("input-send-event", device=DISPLAY_ID, head=0, events=list(events))

    def drag(self, x0, x1, y, duration=0.4, steps=12):
        """A finger down at (x0, y) (fractions of the screen), moved to x1 over `duration` s, lifted."""
        ab = lambda axis, f: {"type": "abs", "data": {"axis": axis, "value": round(f * TABLET_MAX)}}
        btn = lambda down: {"type": "btn", "data": {"down": down, "button": "left"}}
        self.tablet(ab("x", x0), ab("y", y), btn(True))
        t0 = time.time()
        for i in range(1, steps + 1):
            time.sleep(max(0.0, t0 + duration * i / steps - time.time()))
            self.tablet(ab("x", x0 + (x1 - x0) * i / steps))
        self.tablet(btn(False))

    def tap(self, x, y, hold=0.08):
        ab = lambda axis, f: {"type": "abs", "data": {"axis": axis, "value": round(f * TABLET_MAX)}}
        btn = lambda down: {"type": "btn", "data": {"down": down, "button": "left"}}
        self.tablet(ab("x", x), ab("y", y), btn(True))
        time.sleep(hold)
        self.tablet(btn(False))

    # -- the serial console shell (root autologin on the console: ttyS0, ttyAMA0) --
    def _wait_marker(self, tok, timeout):
        rx = re.compile(rb"@@E" + tok.encode() + rb":(\d+)@@")
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                m = rx.search(self.buf)
                if m:
                    out = self.buf[:m.start()]
                    self.buf = self.buf[m.end():]
                    return int(m.group(1)), out
            if self.proc.poll() is not None:
                raise GuestError("QEMU exited")
            time.sleep(0.03)
        return None

    def _send(self, text):
        self.ser.sendall(text.encode())

    def wait_shell(self, timeout):
        """Waits for the root shell on the serial console (after a boot or reboot) and sets it up for
        machine reading: no echo, no prompt, wide lines, no pager, no colours."""
        setup = ("stty -echo cols 250 rows 50 2>/dev/null; export PS1= PS2= TERM=dumb SYSTEMD_PAGER= "
                 "PAGER=cat SYSTEMD_COLORS=0 COLUMNS=250 LANG=C.UTF-8")
        deadline = time.time() + timeout
        while time.time() < deadline:
            tok = "%08x" % random.getrandbits(32)
            self._send("\x15" + "{ %s\n} >/dev/null 2>&1; echo \"@@E%s:$?@@\"\n" % (setup, tok))
            if self._wait_marker(tok, 2):   # not there yet: the line goes out again (Ctrl-U first)
                self.shell_ready = True
                with self.lock:
                    self.buf = b""
                return time.time() - self.t0
        raise GuestError(f"no shell on the serial console within {timeout}s")

    def sh(self, cmd, timeout=60, check=False):
        """Runs `cmd` in the guest's root shell; returns (status, output with stderr)."""
        tok = "%08x" % random.getrandbits(32)
        with self.lock:
            self.buf = b""
        self._send("{ %s\n} 2>&1; echo \"@@E%s:$?@@\"\n" % (cmd, tok))
        r = self._wait_marker(tok, timeout)
        if r is None:
            raise GuestError(f"no answer within {timeout}s to: {cmd}")
        rc, out = r
        text = out.decode(errors="replace").replace("\r\n", "\n").replace("\r", "")
        text = "\n".join(l for l in text.split("\n") if "@@E" + tok not in l).strip("\n")
        if check and rc != 0:
            raise GuestError(f"`{cmd}` exited with {rc}: {text[-2000:]}")
        return rc, text

    def run(self, cmd, timeout=60):
        return self.sh(cmd, timeout, check=True)[1]

    def reboot(self):
        """`systemctl reboot` in the guest (QEMU stays: the snapshot keeps the guest's writes)."""
        self.shell_ready = False
        self._send("systemctl reboot\n")
        time.sleep(3)
        with self.lock:
            self.buf = b""
        self.t0 = time.time()


# -- the unit's journal --
class Journal:
    """The unit's journal lines of this boot. A point in it is a mark: the guest's wall clock
    (whole seconds, to narrow what journalctl reads) and its monotonic clock in µs (to cut
    exactly, as journal entries carry both)."""

    def __init__(self, vm):
        self.vm = vm

    def entries(self, after=None, unit="kiosk-carousel"):
        """[(monotonic µs, pid, message, cursor, identifier)] of this boot, after a mark."""
        since = f"--since=@{after[0] - 1}" if after else ""
        text = self.vm.run(f"journalctl -b -u {unit} -o json --output-fields=MESSAGE,_PID,SYSLOG_IDENTIFIER {since}", 60)
        out = []
        for line in text.split("\n"):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            msg = e.get("MESSAGE")
            if isinstance(msg, list):
                msg = bytes(msg).decode(errors="replace")
            mono = int(e["__MONOTONIC_TIMESTAMP"])
            if after and mono <= after[1]:
                continue
            out.append((mono, e.get("_PID"), msg or "", e["__CURSOR"], e.get("SYSLOG_IDENTIFIER")))
        return out

    def cursor(self):
        """A mark for now: (wall clock s, monotonic µs) in the guest."""
        rt, up = self.vm.run("date +%s; cut -d' ' -f1 /proc/uptime").split()
        return int(rt), int(float(up) * 1e6)

    def wait(self, pred, timeout, after=None, what="a journal line"):
        """Waits for an entry matching pred(message) after the mark; returns the entry."""
        deadline = time.time() + timeout
        while True:
            entries = self.entries(after)
            for e in entries:
                if pred(e[2]):
                    return e
            if time.time() > deadline:
                tail = "; ".join(e[2][:160] for e in entries[-4:])
                raise GuestError(f"no {what} in the unit's journal within {timeout}s (last lines: {tail})")
            time.sleep(0.5)


def event(msg, kind=None):
    """The JSON event in a journal message, or None."""
    if not msg.startswith("{"):
        return None
    try:
        e = json.loads(msg)
    except ValueError:
        return None
    if not isinstance(e, dict) or "event" not in e or (kind and e["event"] != kind):
        return None
    return e


# -- image comparisons (mse and psnr from qemu_common, as the kernel suite does them) --
def reference(binary, photo, size, out):
    """What the offscreen backend renders for `photo` at `size` (the show's default fit)."""
    w, h = size
    return offscreen_frame(binary, photo, size, os.path.join(out, f"ref-{os.path.basename(photo)}-{w}x{h}"), GuestError)
