# SPDX-License-Identifier: Apache-2.0
"""The kernel suite's QEMU plumbing: one machine with its serial log, QMP socket and the command
channel to guest.sh, and the guest commands the cases share (shell, console mode, signals, VT)."""
import json, os, re, socket, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from qemu_common import MACHINES, QMPCommands, ctl_port_args

BOOT_TIMEOUT = 60         # s from QEMU start to KC_INIT (the first line of /init)
READY_TIMEOUT = 60        # s from KC_INIT to KC_READY (modules loaded)
EVENT_TIMEOUT = 60        # s for the app's first `shown` event and other guest answers
DISPLAY_ID = "video0"     # QOM id of the display device: QMP input-send-event and the tablet name it


def log(msg):
    print(msg, flush=True)


class BootFailed(Exception):
    pass


class CaseFailed(Exception):
    pass


class VM(QMPCommands):
    """One QEMU run: the serial log, QMP (qemu_common.QMPCommands) and the command channel to guest.sh."""

    failure = CaseFailed

    DEVICES = {"bochs": "bochs-display", "virtio": "virtio-gpu-pci"}

    def __init__(self, kernel, initrd, device, res, out, extra=(), arch="amd64", append="", device_options="",
                 dbus=False):
        """`device_options`: more of the display device's properties (`,max_outputs=2`); `dbus`:
        QEMU's D-Bus display on a private bus instead of none, whose Console.SetUIInfo enables,
        resizes and disables an output (``set_output``; QEMU 7.2 has no QMP command for it)."""
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.serial = os.path.join(out, "serial.log")
        self.qmp_path = os.path.join(out, "qmp.sock")
        self.ctl_path = os.path.join(out, "ctl.sock")
        for f in (self.serial, self.qmp_path, self.ctl_path):
            if os.path.exists(f):
                os.remove(f)
        w, h = res
        m = MACHINES[arch]
        # kc_ctl reaches /init as an environment variable (the kernel passes on unknown
        # parameters without a dot): the command port guest.sh reads.
        self.cmd = [m["qemu"]] + m["machine"] + [
                    "-m", "512M", "-smp", "2", "-accel", "tcg", "-display", "none",
                    "-no-reboot", "-kernel", kernel, "-initrd", initrd,
                    "-append", f"console={m['console']} quiet panic=-1 kc_ctl=/dev/{m['ctl']} {append}".strip(),
                    "-serial", f"file:{self.serial}"] + ctl_port_args(arch, self.ctl_path) + [
                    "-monitor", "none", "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
                    "-vga", "none",
                    "-device", f"{self.DEVICES[device]},id={DISPLAY_ID},xres={w},yres={h}{device_options}"] + list(extra)
        self.bus = self.bus_address = None
        if dbus:
            self.cmd[self.cmd.index("-display") + 1] = "dbus,addr=@BUS@,gl=off"
        self.proc = None
        self.touch = None         # the running touch session (see touch_session)
        self.qmp = self.ctl = None
        self.seq = 0  # the last command number sent to guest.sh
        self.ready = False  # guest.sh is taking commands (KC_READY seen)
        self.t0 = time.time()

    # -- lifecycle --
    def start(self):
        self.t0 = time.time()
        cmd = list(self.cmd)
        i = cmd.index("-display") + 1
        if "@BUS@" in cmd[i]:
            self.bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address"],
                                        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                        stderr=open(os.path.join(self.out, "dbus-daemon.log"), "wb"))
            self.bus_address = self.bus.stdout.readline().strip().split(",")[0]  # QEMU's options split at commas
            cmd[i] = cmd[i].replace("@BUS@", self.bus_address)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        try:
            self.qmp = self._connect(self.qmp_path)
            self.qmp_file = self.qmp.makefile("rw")
            json.loads(self.qmp_file.readline())                  # greeting
            self.qmp_cmd("qmp_capabilities")
            self.ctl = self._connect(self.ctl_path)
        except (OSError, ValueError, CaseFailed) as e:
            # QEMU gone right after it opened its sockets (a kernel it cannot load, say): the
            # reason is in its own output, read once it has exited.
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
            raise BootFailed(f"QEMU's monitor went away ({type(e).__name__}: {e}); qemu: {self._qemu_output().strip()}")
        try:
            self.wait_for(r"KC_INIT", BOOT_TIMEOUT, since=0)
        except CaseFailed as e:
            raise BootFailed(str(e))
        self.t_init = time.time() - self.t0
        self.wait_for(r"KC_READY", READY_TIMEOUT, since=0)
        self.t_ready = time.time() - self.t0
        self.ready = True

    def _connect(self, path, timeout=10):
        deadline = time.time() + timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(path)
                return s
            except OSError:
                if time.time() > deadline or (self.proc and self.proc.poll() is not None):
                    raise BootFailed(f"cannot connect to {path}: qemu output: {self._qemu_output()}")
                time.sleep(0.05)

    def _qemu_output(self):
        if self.proc and self.proc.poll() is not None and self.proc.stdout:
            return self.proc.stdout.read().decode(errors="replace")
        return "(qemu still running)"

    def stop(self):
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None and self.ready:  # before KC_READY nobody would answer
                self.send("off")
                self.proc.wait(3)
        except Exception:
            pass
        if self.proc.poll() is None:
            try:
                self.qmp_cmd("quit")
                self.proc.wait(5)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        for s in (self.qmp, self.ctl):
            if s:
                s.close()
        if self.bus:
            self.bus.terminate()
            self.bus.wait(10)
            self.bus = None

    def set_output(self, head, width, height):
        """Output `head` of the display device as the D-Bus display asks for it: 0x0 disables it
        (the guest sees its connector disconnected), a size enables it at that size
        (org.qemu.Display1.Console.SetUIInfo: width_mm, height_mm, xoff, yoff, width, height)."""
        if not self.bus_address:
            raise CaseFailed("no D-Bus display: QEMU runs with -display none")
        r = subprocess.run(["busctl", f"--address={self.bus_address}", "call", "org.qemu",
                            f"/org/qemu/Display1/Console_{head}", "org.qemu.Display1.Console", "SetUIInfo", "qqiiuu",
                            "0", "0", "0", "0", str(width), str(height)], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise CaseFailed(f"SetUIInfo head {head} {width}x{height}: {r.stderr.strip()}")

    # -- channels --
    def send(self, line):
        """Sends one command to guest.sh and waits for its KC_ACK.

        Each line goes out as `SEQ LENGTH COMMAND`: under a loaded host the guest's shell has
        been seen to read one line as two pieces (`evdump ... /dev/input/e`, then `vent2`), so
        guest.sh runs a line only when its length matches, answers KC_BADLINE otherwise, and
        acknowledges a sequence number it already ran without running it again."""
        cmd, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        line = cmd + (" " + rest if rest else "")
        self.seq += 1
        for attempt in range(5):
            mark = self.mark()
            self.ctl.sendall(f"{self.seq} {len(line.encode())} {line}\n".encode())
            m = self.wait_for(rf"KC_ACK {self.seq}\b|KC_BADLINE", EVENT_TIMEOUT, mark)
            if m.group(0).startswith("KC_ACK"):
                return
            time.sleep(0.5)  # the rest of a split line is refused too before the next try
        raise CaseFailed(f"the guest did not take the command {line!r} in 5 tries")

    def log_text(self):
        try:
            with open(self.serial, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def mark(self):
        """The current end of the serial log, to look for output after this point."""
        return len(self.log_text())

    def wait_for(self, pattern, timeout, since):
        """Waits until `pattern` (a regex) appears in the serial log after offset `since`."""
        deadline = time.time() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.log_text(), since)
            if m:
                return m
            if self.proc.poll() is not None:
                raise CaseFailed(f"QEMU exited while waiting for /{pattern}/")
            if time.time() > deadline:
                raise CaseFailed(f"timed out after {timeout}s waiting for /{pattern}/")
            time.sleep(0.05)


def console_mode(vm, tag, start):
    vm.send(f"mode {tag}")
    return vm.wait_for(rf"KC_KDMODE {re.escape(tag)} (\S+)", EVENT_TIMEOUT, start).group(1)


def stop_with(vm, signal, start):
    """Sends `signal` (TERM, KILL, SEGV ...) to the program; returns its exit status."""
    vm.send("term" if signal == "TERM" else f"signal {signal}")
    return int(vm.wait_for(r"KC_EXITED rc=(\d+)", EVENT_TIMEOUT, start).group(1))


def sh(vm, command, start, timeout=EVENT_TIMEOUT):
    """Runs `command` in the guest shell; returns (its output, exit status)."""
    mark = vm.mark()
    vm.send("sh " + command)
    m = vm.wait_for(r"KC_SH_DONE rc=(\d+)", timeout, mark)
    return vm.log_text()[mark:m.start()], int(m.group(1))


def switch_vt(vm, n):
    """vtswitch N in the guest (VT_ACTIVATE + VT_WAITACTIVE); returns its KC_VT line."""
    mark = vm.mark()
    vm.send(f"vt {n}")
    m = vm.wait_for(r"KC_VT(_TIMEOUT)? [^\n]*", EVENT_TIMEOUT, mark)
    if m.group(1):
        raise CaseFailed(f"VT switch to {n} did not happen: {m.group(0).strip()}")
    return m.group(0).strip()


def print_log(vm, lines=80):
    log(f"---- guest serial log ({vm.serial}), last {lines} lines ----")
    if not vm.log_text().strip():
        log("  (empty: the guest wrote nothing on its serial console)")
    for line in vm.log_text().splitlines()[-lines:]:
        log("  | " + line)
    log("---- end of guest log ----")
