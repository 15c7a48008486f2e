#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""System suite: the .deb on a booted Debian 12 (systemd as PID 1) under QEMU (TCG).

One boot per display device (bochs-display, then virtio-gpu), each running its cases in order
on the same machine; a case that fails is reported and the next one goes on. The cases:

  boot        active on tty1 as `kiosk`, getty@tty1 not running, the first frame on screen
              against the offscreen backend's frame of the same photo (PSNR), and the times:
              kernel start -> first `shown`, the unit's start -> first `shown`
  ready       READY=1 (systemd's ActiveEnterTimestamp) not before the first `shown`
  touch       swipe left, swipe right and a tap on the virtio tablet, through the sandbox
  watchdog    SIGSTOP: killed and restarted within WatchdogSec + RestartSec (+ start), photo back
  reload      `systemctl reload`: SIGHUP logged, same process, tty1 still KD_GRAPHICS/VT_PROCESS
  stop-start  `systemctl stop`: KD_TEXT, VT_AUTO, the login prompt back on tty1; start again
  control     the control socket as a member of group kiosk (and refused to others)
  sandbox     the unit's sandbox as the booted system applies it: its own user namespace, the
              groups video/render/kiosk-touch and not input or tty, the touchscreen's node the
              group kiosk-touch's and a keyboard's unreadable to kiosk, StateDirectoryMode 0750,
              link-local and metadata addresses refused to the unit's cgroup (IPAddressDeny=),
              nothing it may write runnable in its mount namespace (NoExecPaths=), and
              `systemd-analyze security` on the running unit
  journal     the unit's lines are the program's own (events, `kiosk-carousel: LEVEL ...`),
              none about EPERM or thread priorities
  hotplug     the DRM driver unbound and bound again: the same process notices at once, waits
              (no CPU spent, no frames), reopens the new card and goes on at the same image
  reconnect   (virtio-gpu) the output disabled and enabled again through QEMU's D-Bus display:
              the same process stops drawing, then sets the mode again and shows the same image
  no-display  started with no display: waits (no frames to disk), logs once, shows when one appears
  reboot      without network: the manifest's photos from the stored manifest and the disk cache
  memory      the unit's peak memory (its cgroup's memory.peak) under its MemoryMax, after the cases
  upgrade     `apt install` of a newer .deb while the show runs: restarted, config and cache kept
  purge       `apt purge`: removes what docs/deployment.md "Remove" says and nothing else

Every case runs on both devices but `reconnect` (bochs-display has no output to disconnect).
Prints one PASS/FAIL line per case and, last, "N passed, M failed"; exit status 1 on any failure.
"""
import argparse, os, re, sys, time
from systemvm import VM, Journal, GuestError, event, psnr, reference, SCREEN
RECONNECT_SIZE = (800, 600)   # case_reconnect: the output comes back at this size, then goes back to SCREEN

BOOT_TIMEOUT = 300        # s from QEMU start to the unit active (TCG, 2 cores shared)
EVENT_TIMEOUT = 30        # s for the show's answer to a command or gesture
PSNR_MIN = 40.0           # dB: a screen that is the photo (the kernel suite's bound; measured: identical)
WATCHDOG_S, RESTART_S = 30, 2   # the unit's WatchdogSec= and RestartSec=
READY_SLACK_S = 0.45      # s the first `shown` may reach the journal after READY=1 (see case_ready)
NO_DISPLAY_QUIET_S = 4    # s after the waiting line in which no second one may come
START_ALLOWANCE_S = 30    # s for systemd to stop the old process and the new one to show a photo, under TCG
MANIFEST_URL = "http://127.0.0.1:8080/show.json"
UNIT = "kiosk-carousel"
SOCKET = "/run/kiosk-carousel/control"
VIRTIO_ONLY = {"reconnect"}   # bochs-display has no output to disconnect
CASES = ["boot", "ready", "touch", "watchdog", "reload", "stop-start", "control", "sandbox", "journal",
         "hotplug", "reconnect", "no-display", "reboot", "memory", "upgrade", "purge"]
# arm64 (--arch arm64): what a Raspberry Pi owner sees first, on Debian 13's arm64 kernel and
# userland under qemu-system-aarch64, at 1 GiB and at a Pi Zero 2 W's or Pi 3's 512 MiB.
ARM64_CASES = ["boot", "touch", "watchdog", "reboot", "memory"]


def shquote(text):
    """`text` as one sh word."""
    return "'" + text.replace("'", "'\\''") + "'"


def log(msg):
    print(msg, flush=True)


class CaseFailed(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise CaseFailed(msg)


class Suite:
    def __init__(self, args):
        self.args = args
        self.refs = {}
        self.figures = []

    # -- helpers on the running guest --
    def photo_for(self, src):
        """The host file of a playlist source: a sample in the images folder or a manifest photo."""
        name = os.path.basename(src)
        if src.startswith("http://"):
            return {"a.jpg": self.args.manifest_photos[0], "b.jpg": self.args.manifest_photos[1]}[name]
        for p in self.args.photos:
            if os.path.basename(p) == name:
                return p
        raise CaseFailed(f"no host photo for the source {src}")

    def ref(self, src):
        p = self.photo_for(src)
        if p not in self.refs:
            self.refs[p] = reference(self.args.binary, p, SCREEN, self.args.out)
        return self.refs[p]

    def on_screen(self, src, name, tries=8):
        """The screen shows `src` (PSNR >= PSNR_MIN against its offscreen frame); returns the PSNR."""
        best = -1.0
        for k in range(tries):
            img = self.vm.screendump(os.path.join(self.out, f"{name}-{k}.png"))
            best = max(best, psnr(img, self.ref(src)))
            if best >= PSNR_MIN:
                return best
            time.sleep(0.3)
        raise CaseFailed(f"the screen is not {os.path.basename(src)}: PSNR {best:.1f} dB < {PSNR_MIN} "
                         f"(captures {name}-*.png in {self.out})")

    def current_on_screen(self, name):
        """Pauses the show, checks the photo `status` names is on screen, resumes; (src, PSNR)."""
        self.control('["pause"]')
        try:
            time.sleep(1.0)   # a fade under way ends
            src = self.status()["src"]
            return src, self.on_screen(src, name)
        finally:
            self.control('["resume"]')

    def control(self, command, user="root"):
        """One control socket request (a JSON array); returns the reply object."""
        req = '{"command":%s}' % command
        run = "" if user == "root" else f"runuser -u {user} -- "
        rc, text = self.vm.sh(f"echo '{req}' | {run}socat -t 2 - UNIX-CONNECT:{SOCKET}", 30)
        for line in text.split("\n"):
            if line.startswith("{") and '"error"' in line:
                import json
                return json.loads(line)
        raise CaseFailed(f"no reply to {req} as {user} (status {rc}): {text[-500:]}")

    def status(self):
        r = self.control('["status"]')
        expect(r.get("error") == "success", f"status: {r}")
        return r["data"]

    def main_pid(self):
        return int(self.vm.run(f"systemctl show -P MainPID {UNIT}"))

    def vt(self):
        return self.vm.run("kc-vt /dev/tty1")

    def ensure_running(self):
        """Starts the unit if an earlier case left it stopped or failed (so one failure does
        not fail every case after it); waits for it to be active with a photo on screen."""
        if self.vm.run(f"systemctl is-active {UNIT} || true") == "active":
            return
        c = self.journal.cursor()
        self.vm.sh(f"systemctl reset-failed {UNIT}; systemctl start {UNIT}", 120)
        self.wait_active(60)
        self.wait_shown(c, 60)

    def wait_active(self, timeout):
        deadline = time.time() + timeout
        while True:
            state = self.vm.run(f"systemctl is-active {UNIT} || true")
            if state == "active":
                return
            if time.time() > deadline:
                raise CaseFailed(f"{UNIT} is {state}, not active, after {timeout}s")
            time.sleep(1)

    def wait_shown(self, after, timeout=EVENT_TIMEOUT, pred=lambda e: True, what="`shown`"):
        e = self.journal.wait(lambda m: (ev := event(m, "shown")) is not None and pred(ev), timeout, after, what)
        return e, event(e[2], "shown")

    def unit_times(self):
        props = self.vm.run(f"systemctl show {UNIT} -p ExecMainStartTimestampMonotonic -p ActiveEnterTimestampMonotonic "
                            "-p NRestarts -p MainPID")
        return {k: int(v) for k, v in (l.split("=", 1) for l in props.split("\n") if "=" in l)}

    def login_prompt_on_tty1(self, name):
        """getty@tty1 active, an agetty on tty1, and console text (not a photo) on the screen."""
        deadline = time.time() + 20
        while self.vm.run("systemctl is-active getty@tty1 || true") != "active":
            if time.time() > deadline:
                raise CaseFailed("getty@tty1 is not active: no login prompt on tty1")
            time.sleep(1)
        ps = self.vm.run("ps -o tty=,comm= -C agetty || true")
        expect(re.search(r"tty1\s+agetty", ps), f"no agetty on tty1: {ps!r}")
        for k in range(20):
            img = self.vm.screendump(os.path.join(self.out, f"{name}-{k}.png"))
            lit = sum(img.convert("L").histogram()[128:])
            if 100 < lit < img.width * img.height // 20:
                return
            time.sleep(0.5)
        raise CaseFailed(f"no console text on the screen ({lit} bright pixels; captures {name}-*.png)")

    # -- cases --
    def case_boot(self):
        t_shell = self.vm.wait_shell(BOOT_TIMEOUT)
        self.wait_active(BOOT_TIMEOUT - (time.time() - self.vm.t0))
        pid = self.main_pid()
        # The first `shown` of this boot, and that of the process running now (an earlier
        # start may have failed).
        deadline = time.time() + 60
        while True:
            shows = [x for x in self.journal.entries() if event(x[2], "shown")]
            mine = [x for x in shows if str(x[1]) == str(pid)]
            if mine:
                break
            expect(time.time() < deadline, f"no `shown` from the running process {pid} within 60s")
            time.sleep(0.5)
        first_any, e = shows[0][0], mine[0]
        shown = event(e[2], "shown")
        times = self.unit_times()
        self.first_shown_us, self.times = e[0], times
        kernel_to_shown = first_any / 1e6
        unit_to_shown = (e[0] - times["ExecMainStartTimestampMonotonic"]) / 1e6
        restarts = times["NRestarts"]
        analyze = self.vm.run("systemd-analyze time 2>&1 | head -1 || true")
        # The kiosk's own share: its show clock (`t`) runs from "show started" to the first
        # `shown`; before it, systemd's sandbox set-up and the program's start-up (a bare
        # `kiosk-carousel --version` measures loading the binary and its libraries under TCG,
        # the ones a show opens on first use included: it opens them to ask their versions).
        version_s = self.vm.run("TIMEFORMAT=%R; { time /usr/bin/kiosk-carousel --version >/dev/null; } 2>&1 | tail -1")
        own = self.own_share(pid)
        self.figures.append(f"{self.device}: kernel start -> first `shown` {kernel_to_shown:.1f}s; unit start -> first "
                            f"`shown` {unit_to_shown:.2f}s, of which show start -> first `shown` {shown['t'] / 1000:.2f}s "
                            f"(`t`); {own}; `kiosk-carousel --version` takes {version_s}s; {restarts} restarts before; "
                            f"shell on ttyS0 after {t_shell:.0f}s of QEMU; {analyze}")
        try:
            psnr_first = self.on_screen(shown["src"], "first", tries=2)
            first_note = f"first frame {os.path.basename(shown['src'])}"
        except CaseFailed:
            # Under a loaded TCG the show may be at its next photo before the screen is read:
            # then the photo on screen now (paused, so it stays) is checked.
            src, psnr_first = self.current_on_screen("first-current")
            first_note = f"first photo gone by; current {os.path.basename(src)}"
        user = self.vm.run(f"ps -o user=,tty= -p {pid}").split()
        expect(user[0] == "kiosk", f"the show runs as {user[0]}, not kiosk")
        expect(user[1] == "tty1", f"the show's terminal is {user[1]}, not tty1")
        getty = self.vm.run("systemctl is-active getty@tty1 || true")
        expect(getty != "active", "getty@tty1 is running beside the show")
        expect(restarts == 0, f"the service was restarted {restarts} times during the boot")
        vt_line = [m for _, p, m, _, _ in self.journal.entries() if str(p) == str(pid) and "console switched" in m]
        expect(vt_line and "path=/dev/tty1" in vt_line[0], f"the console is not tty1 by its path: {vt_line}")
        return (f"{user[0]} on {user[1]}, getty@tty1 {getty}, {first_note} at "
                f"{psnr_first:.1f} dB; kernel -> first shown {kernel_to_shown:.1f}s, unit start -> first shown "
                f"{unit_to_shown:.2f}s")

    def own_share(self, pid):
        """The kiosk's own share of its start from its `first frame` line (phases in seconds
        since the process started): the process start to the first `shown`, less the wait for
        a display when it started before the DRM driver was there."""
        deadline = time.time() + 10
        while True:
            mine = [(t, m) for t, p, m, _, _ in self.journal.entries() if str(p) == str(pid)]
            line = next((m for _, m in mine if " info first frame " in m), None)
            if line or time.time() > deadline:
                break
            time.sleep(0.5)
        if not line:
            return "no `first frame` line"
        detail = line.split('detail="', 1)[1].rstrip('"')
        total = float(re.match(r"([\d.]+) s after", detail).group(1))
        # The wait: from the line saying so to the one saying the display appeared (journal times).
        waiting = next((t for t, m in mine if "waiting for a display" in m), None)
        appeared = next((t for t, m in mine if "display appeared" in m), None)
        waited = waiting is not None and appeared is not None
        wait = (appeared - waiting) / 1e6 if waited else 0.0
        return (f"the kiosk's own share {total - wait:.2f}s (process start -> first `shown` {total:.2f}s"
                + (f", less {wait:.2f}s waiting for the DRM driver" if waited else "") + f"; {detail})")

    def case_ready(self):
        expect(hasattr(self, "times"), "no first `shown` measured at boot")
        times = self.times
        ready = times["ActiveEnterTimestampMonotonic"]
        lead = (self.first_shown_us - ready) / 1e6
        # READY=1 is sent right after the first frame is put up, the `shown` line in the same turn
        # of the frame loop but written by the event writer's queue, and its journal time is when
        # journald read it: seen 0.11 s after READY=1 at boot on a loaded host, 0.33 s at load 24. (READY=1 sent
        # before the photo was on screen came 0.5-1.5 s early.)
        expect(lead <= READY_SLACK_S, f"READY=1 came {lead:.2f}s before the first `shown`")
        return f"READY=1 {-lead:.2f}s after the first `shown` reached the journal"

    def case_touch(self):
        # The manifest's items join the playlist when it is fetched: touch on a settled playlist.
        deadline = time.time() + 60
        while self.status()["playlist_length"] < len(self.args.photos) + 2:
            expect(time.time() < deadline, f"the manifest's items never joined the playlist: {self.status()}")
            time.sleep(1)
        r = self.control('["pause"]')
        expect(r.get("error") == "success", f"pause: {r}")
        time.sleep(1.0)   # a fade under way ends
        st = self.status()
        n, cur = st["playlist_length"], st["index"]
        c = self.journal.cursor()
        self.vm.drag(0.8, 0.2, 0.5)
        _, s1 = self.wait_shown(c, what="`shown` after a swipe left")
        expect(s1["index"] == (cur + 1) % n, f"swipe left showed index {s1['index']}, expected {(cur + 1) % n}")
        time.sleep(0.8)
        self.on_screen(s1["src"], "swipe-left")
        c = self.journal.cursor()
        self.vm.drag(0.2, 0.8, 0.5)
        _, s2 = self.wait_shown(c, what="`shown` after a swipe right")
        expect(s2["index"] == cur, f"swipe right showed index {s2['index']}, expected {cur}")
        time.sleep(0.8)
        self.on_screen(s2["src"], "swipe-right")
        c = self.journal.cursor()
        self.vm.tap(0.5, 0.5)
        e = self.journal.wait(lambda m: event(m, "tap") is not None, EVENT_TIMEOUT, c, "`tap`")
        tap = event(e[2], "tap")
        self.control('["resume"]')
        return f"swipe left -> index {s1['index']}, swipe right -> index {s2['index']}, tap at ({tap.get('x')}, {tap.get('y')})"

    def case_watchdog(self):
        pid = self.main_pid()
        restarts = self.unit_times()["NRestarts"]
        c = self.journal.cursor()
        t0 = time.time()
        self.vm.run(f"systemctl kill -s SIGSTOP {UNIT}")
        bound = WATCHDOG_S + RESTART_S + START_ALLOWANCE_S
        e, shown = self.wait_shown(c, bound + 10, what="`shown` after the watchdog restart")
        elapsed = time.time() - t0
        new = self.main_pid()
        expect(new != pid, f"still the stopped process {pid}")
        expect(self.unit_times()["NRestarts"] == restarts + 1, "NRestarts did not grow by one")
        text = "\n".join(m for _, _, m, _, _ in self.journal.entries(c))
        expect("atchdog timeout" in text, "no watchdog timeout in the journal")
        expect(elapsed <= bound, f"photo back {elapsed:.0f}s after SIGSTOP, more than {bound}s")
        self.current_on_screen("after-watchdog")  # auto-advance may have moved on since `shown`
        self.check_on_tty1_alone("after the watchdog restart")
        return f"killed by the watchdog, photo back {elapsed:.0f}s after SIGSTOP (bound {bound}s)"

    def case_reload(self):
        pid = self.main_pid()
        c = self.journal.cursor()
        rc, text = self.vm.sh(f"systemctl reload {UNIT}", 30)
        expect(rc == 0, f"systemctl reload failed ({rc}): {text}")
        self.journal.wait(lambda m: "SIGHUP received" in m, EVENT_TIMEOUT, c, "SIGHUP line")
        time.sleep(2)
        expect(self.main_pid() == pid, "the show was restarted by a reload")
        mode = self.vt()
        expect(mode == "KD_GRAPHICS VT_PROCESS", f"tty1 after the reload: {mode}")
        c2 = self.journal.cursor()
        r = self.control('["next"]')
        expect(r.get("error") == "success", f"next after the reload: {r}")
        _, shown = self.wait_shown(c2, what="`shown` after next")
        time.sleep(0.8)
        self.current_on_screen("after-reload")  # auto-advance may have moved on since `shown`
        bad = [m for _, _, m, _, _ in self.journal.entries(c) if "Input/output error" in m or "EIO" in m]
        expect(not bad, f"errors after the reload: {bad[:3]}")
        return f"SIGHUP logged, same process {pid}, tty1 {mode}, the show goes on"

    def case_stop_start(self):
        rc, text = self.vm.sh(f"systemctl stop {UNIT}", 30)
        expect(rc == 0, f"systemctl stop failed: {text}")
        mode = self.vt()
        expect(mode == "KD_TEXT VT_AUTO", f"tty1 after stop: {mode}")
        self.login_prompt_on_tty1("after-stop")
        c = self.journal.cursor()
        rc, text = self.vm.sh(f"systemctl start {UNIT}", 120)
        expect(rc == 0, f"systemctl start failed: {text}")
        _, shown = self.wait_shown(c, 60)
        self.current_on_screen("after-start")  # auto-advance may have moved on since `shown`
        getty = self.vm.run("systemctl is-active getty@tty1 || true")
        expect(getty != "active", "getty@tty1 still active after start")
        pid = self.main_pid()
        c = self.journal.cursor()
        rc, text = self.vm.sh(f"systemctl restart {UNIT}", 120)
        expect(rc == 0, f"systemctl restart failed: {text}")
        self.wait_shown(c, 60, what="`shown` after restart")
        expect(self.main_pid() != pid, "systemctl restart kept the old process")
        self.check_on_tty1_alone("after restart")
        return (f"after stop: {mode}, login prompt on tty1; started again: {os.path.basename(shown['src'])} on screen; "
                "restarted: on tty1, no getty")

    def check_on_tty1_alone(self, when):
        """The show's process has tty1 as its terminal, in KD_GRAPHICS/VT_PROCESS, no getty on tty1."""
        pid = self.main_pid()
        tty = self.vm.run(f"ps -o tty= -p {pid}").strip()
        expect(tty == "tty1", f"{when}: the show's terminal is {tty!r}, not tty1")
        getty = self.vm.run("systemctl is-active getty@tty1 || true")
        expect(getty != "active", f"{when}: getty@tty1 is {getty}")
        mode = self.vt()
        expect(mode == "KD_GRAPHICS VT_PROCESS", f"{when}: tty1 is {mode}")

    def case_control(self):
        r = self.control('["status"]', user="tester")
        expect(r.get("error") == "success" and "index" in r["data"], f"status as tester: {r}")
        rc, text = self.vm.sh(f"echo '{{\"command\":[\"status\"]}}' | runuser -u nobody -- socat -t 2 - UNIX-CONNECT:{SOCKET}")
        expect(rc != 0 and "ermission denied" in text, f"nobody reached the socket: {rc} {text}")
        return f"tester (group kiosk): {r['data']['playlist_length']} items, index {r['data']['index']}; nobody: permission denied"

    def case_sandbox(self):
        pid = self.main_pid()
        notes = []
        # Its own user namespace (PrivateUsers=): not the identity map of every id.
        uid_map = " ".join(self.vm.run(f"cat /proc/{pid}/uid_map").split())
        expect(uid_map and "4294967295" not in uid_map, f"no user namespace of its own: uid_map {uid_map!r}")
        # Its groups: the user's own from /etc/group, the devices' and no more.
        groups = set(self.vm.run("id -nG kiosk").split())
        expect({"video", "render", "kiosk-touch"} <= groups, f"kiosk's groups {sorted(groups)}")
        expect(not groups & {"input", "tty"}, f"kiosk is in {sorted(groups & {'input', 'tty'})}")
        gids = self.vm.run(f"awk '/^Groups:/ {{$1=\"\"; print}}' /proc/{pid}/status").split()
        expect(len(gids) >= 3, f"the process has {gids} as supplementary groups")
        notes.append(f"uid_map {uid_map!r}, groups {' '.join(sorted(groups))}")
        # The touchscreen it reads is kiosk-touch's, 0640; a keyboard's node is not kiosk's to read.
        attached = [m for _, p, m, _, _ in self.journal.entries() if str(p) == str(pid) and "touchscreen attached" in m]
        expect(attached, "no touchscreen attached in this process's lines")
        node = re.search(r"path=(/dev/input/event\d+)", attached[-1]).group(1)
        owner = self.vm.run(f"stat -c '%G %a' {node}")
        expect(owner == "kiosk-touch 640", f"{node} is {owner}, not kiosk-touch 640")
        keyboards = self.vm.run("for n in /sys/class/input/event*; do "
                                "udevadm info -q property $n | grep -qx ID_INPUT_KEYBOARD=1 && echo /dev/input/${n##*/}; done; true")
        expect(keyboards, "no keyboard in the guest to check")
        for kb in keyboards.split():
            rc, text = self.vm.sh(f"setpriv --reuid=kiosk --regid=kiosk --init-groups -- "
                                  f"python3 -c \"open('{kb}', 'rb')\"")
            expect(rc != 0 and "Permission denied" in text, f"kiosk can read the keyboard {kb}: {rc} {text[-200:]}")
        notes.append(f"touchscreen {node} kiosk-touch 0640, keyboards {' '.join(keyboards.split())} unreadable to kiosk")
        # StateDirectoryMode=0750.
        mode = self.vm.run("stat -c %a /var/lib/kiosk-carousel")
        expect(mode == "750", f"/var/lib/kiosk-carousel has mode {mode}")
        # IPAddressDeny=: made local addresses of the guest (routes of type local on lo: the guest
        # has no other network), link-local and metadata addresses answer "connection refused"
        # (111, nothing listens on port 9) to a process outside the unit's cgroup, and to one
        # inside nothing: its SYNs are dropped by the cgroup's filter (TCP retries a SYN whose
        # sending failed, so connect times out, 3 s here); loopback connects from both. (A plain
        # route to lo would make them time out from both.)
        cgroup = self.vm.run(f"cat /proc/{pid}/cgroup").split("::", 1)[1]
        self.vm.run("ip route replace local 169.254.0.0/16 dev lo; ip route replace local 100.100.100.200/32 dev lo; "
                    "ip route replace local 192.0.0.192/32 dev lo")
        probe = ("import os, socket, sys\n"
                 "if len(sys.argv) > 1: open(sys.argv[1] + '/cgroup.procs', 'w').write(str(os.getpid()))\n"
                 "for host, port in (('127.0.0.1', 8080), ('169.254.169.254', 9), ('169.254.1.1', 9), "
                 "('100.100.100.200', 9), ('192.0.0.192', 9)):\n"
                 "    s = socket.socket()\n"
                 "    s.settimeout(3)\n"
                 "    try:\n"
                 "        s.connect((host, port)); print(host, 'connected')\n"
                 "    except socket.timeout:\n"
                 "        print(host, 'timeout')\n"
                 "    except OSError as e:\n"
                 "        print(host, e.errno)\n")
        self.vm.run(f"printf '%s' {shquote(probe)} > /run/kc-probe.py")
        def probe_from(*where):
            text = self.vm.run("python3 /run/kc-probe.py " + " ".join(where), 60)
            return dict(l.split(" ", 1) for l in text.split("\n") if " " in l)
        outside, inside = probe_from(), probe_from(f"/sys/fs/cgroup{cgroup}")
        for out in (outside, inside):
            expect(out.get("127.0.0.1") == "connected", f"loopback: outside {outside}, inside {inside}")
        for host in ("169.254.169.254", "169.254.1.1", "100.100.100.200", "192.0.0.192"):
            expect(outside.get(host) == "111" and inside.get(host) == "timeout",
                   f"{host}: {outside.get(host)} outside the unit's cgroup (111 wanted), {inside.get(host)} inside "
                   f"(timeout wanted)")
        notes.append("link-local and metadata addresses dropped from its cgroup (refused, 111, outside it), "
                     "loopback connects")
        # NoExecPaths= / ExecPaths=: in its mount namespace, what it may write does not run.
        script = "cp /usr/bin/true $d/kc-exec && $d/kc-exec && echo ran; rm -f $d/kc-exec"
        # The unit's own mounts (StateDirectory=, CacheDirectory=, RuntimeDirectory=, PrivateTmp=)
        # are set up apart from the remount of / under systemd 252: the unit names them in
        # NoExecPaths= too, and none of them may run a program.
        runs = []
        for d in ("/var/lib/kiosk-carousel", "/var/cache/kiosk-carousel", "/run/kiosk-carousel", "/tmp", "/var/tmp",
                  "/dev/shm"):
            rc, text = self.vm.sh(f"nsenter -t {pid} -m -- sh -c 'd={d}; {script}' 2>&1")
            if "ran" in text:
                runs.append(d)
        rc, text = self.vm.sh(f"nsenter -t {pid} -m -- /usr/bin/kiosk-carousel --version 2>&1 | head -1")
        expect(rc == 0 and "kiosk-carousel" in text, f"/usr/bin/kiosk-carousel does not run in its namespace: {text}")
        expect(not runs, f"a program copied there runs in the unit's mount namespace: {', '.join(runs)}")
        notes.append("/usr runs; nothing it may write does (state, cache, runtime, /tmp, /var/tmp, /dev/shm)")
        # The exposure systemd computes for the running unit.
        score = self.vm.run(f"systemd-analyze security --no-pager {UNIT}.service | tail -1")
        m = re.search(r"exposure level for \S+: ([\d.]+) (\w+)", score)
        expect(m, f"no exposure line: {score}")
        self.figures.append(f"{self.device}: systemd-analyze security on the booted system: {m.group(1)} {m.group(2)}")
        notes.append(f"exposure {m.group(1)} {m.group(2)}")
        return "; ".join(notes)

    def case_journal(self):
        pids = set()
        bad, noise, fonts = [], [], []
        for mono, pid, msg, _, ident in self.journal.entries():
            if ident != "kiosk-carousel":
                continue
            pids.add(pid)
            if "info fonts " in msg:
                fonts.append(msg)
            if re.search(r"EPERM|Operation not permitted|errno[ =]1\b|thread priority", msg):
                bad.append(msg)
            elif not (event(msg) or re.match(r"kiosk-carousel: (info|warning|error) ", msg)):
                noise.append(msg)
        expect(not bad, f"{len(bad)} lines about EPERM/priorities, e.g. {bad[:2]}")
        # "Fontconfig error: ..." lines count as noise: fontconfig runs under the unit's sandbox,
        # its cache in the CacheDirectory, whenever the show first draws text (a "Loading…"
        # status screen when the first photo is not decoded within the start grace, a caption,
        # the clock). A show whose photos were always ready in time draws none and loads no
        # text library (docs/benchmarks.md: what is opened with dlopen and when).
        expect(not noise, f"{len(noise)} lines not the program's own, e.g. {noise[:3]}")
        expect(not fonts or "DejaVu Sans" in fonts[0], f"the fonts line names no DejaVu Sans: {fonts[:1]}")
        text = f"fontconfig silent, {fonts[0].split('detail=')[-1]}" if fonts else "no text drawn, fontconfig not loaded"
        return f"the program's lines of this boot ({len(pids)} processes) are its own ({text}), none about EPERM"

    def drm_pci(self):
        """(driver directory, device name) of the display's driver binding in sysfs."""
        # The first card by name: a card reopened after an unbind may come back as card1.
        path = self.vm.run("c=$(ls -d /sys/class/drm/card[0-9]* | grep -v -- - | head -1); "
                           "readlink -f $c/device/driver; basename $(readlink -f $c/device)")
        drv, dev = path.split("\n")
        return drv, dev

    def cpu_seconds(self, pid):
        """utime + stime of a process (/proc/PID/stat fields 14 and 15, in clock ticks)."""
        f = self.vm.run(f"cat /proc/{pid}/stat; getconf CLK_TCK").split("\n")
        fields = f[0].rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / int(f[1])

    def case_hotplug(self):
        drv, dev = self.drm_pci()
        pid = self.main_pid()
        restarts = self.unit_times()["NRestarts"]
        # Unbound just after a `shown`, not during a cross-fade: a card lost mid-fade ends that
        # fade on its target when it is back, while `status` at the loss still names the image
        # the fade was leaving.
        self.wait_shown(self.journal.cursor(), 30, what="a `shown` before the unbind")
        c = self.journal.cursor()
        self.vm.run(f"echo {dev} > {drv}/unbind")
        # The loss is noticed at once (the card's node removed from /dev/dri), not at the next frame.
        lost = self.journal.wait(lambda m: "display lost" in m, EVENT_TIMEOUT, c, "`display lost` line")
        expect(str(lost[1]) == str(pid), f"`display lost` from pid {lost[1]}, not the show's {pid}")
        src = self.status()["src"]   # paused while lost: the image it goes on with
        # Waiting costs nothing: no busy loop (CPU time over 5 s of waiting) and no frames anywhere.
        cpu0, t0 = self.cpu_seconds(pid), time.time()
        time.sleep(5)
        cpu = self.cpu_seconds(pid) - cpu0
        waited = time.time() - t0
        # A busy wait would take nearly all of it; the loss itself (buffers unmapped, the card
        # closed) was measured at 0.01-0.3 s of CPU under TCG on a loaded host.
        expect(cpu < 1.0, f"{cpu:.2f} s of CPU in {waited:.1f} s without a display (a busy wait?)")
        frames = self.vm.run("find / -xdev -name 'kiosk-frames' -o -name 'frame-0*.png' 2>/dev/null | head -3")
        expect(not frames, f"frames written to disk: {frames}")
        dark = [event(m, "display") for _, p, m, _, _ in self.journal.entries(c) if event(m, "display")]
        expect(dark and dark[0].get("state") == "off" and dark[0].get("reason") == "device", f"display events: {dark}")
        expect(not [m for _, _, m, _, _ in self.journal.entries(c) if event(m, "shown")], "`shown` while no display")
        c2 = self.journal.cursor()
        self.vm.run(f"echo {dev} > {drv}/bind")
        back = self.journal.wait(lambda m: "display reopened" in m, 60, c2, "`display reopened` line")
        _, shown = self.wait_shown(c2, what="`shown` on the reopened display")
        expect(self.main_pid() == pid, f"the show was restarted (pid {pid} -> {self.main_pid()})")
        expect(self.unit_times()["NRestarts"] == restarts, "NRestarts grew")
        expect(shown["src"] == src, f"the show went on at {shown['src']}, not at its image {src}")
        time.sleep(0.8)
        p = self.on_screen(src, "after-bind")
        # And it goes on: auto-advance to the next image.
        _, later = self.wait_shown(c2, 30, pred=lambda e: e["src"] != src, what="`shown` of the next image")
        self.check_on_tty1_alone("after the driver came back")
        card = re.search(r"DRM (\S+)", back[2])
        took = (back[0] - c2[1]) / 1e6
        return (f"{drv.rsplit('/', 1)[1]} unbound: lost at once, {cpu:.2f} s CPU in {waited:.0f} s of waiting, no frames; "
                f"bound: reopened {took:.1f}s later by the same process {pid} on {card.group(1) if card else '?'}, {os.path.basename(src)} back at {p:.1f} dB, "
                f"then {os.path.basename(later['src'])}")

    def case_reconnect(self):
        pid = self.main_pid()
        restarts = self.unit_times()["NRestarts"]
        # Disabled just after a `shown`, not during a cross-fade (see case_hotplug).
        self.wait_shown(self.journal.cursor(), 30, what="a `shown` before the output is disabled")
        c = self.journal.cursor()
        # QEMU applies a UI size only when it differs from the last one asked for, which starts
        # at 0x0: the size in use first, then 0x0. Linux 6.1's virtio-gpu asks for the display
        # info on QEMU's event but probes its connector before the answer is in, so the status
        # stays "connected": the probe an HPD interrupt would start is started through sysfs.
        self.vm.set_output(SCREEN[0], SCREEN[1])
        self.vm.set_output(0, 0)
        try:
            time.sleep(1)
            self.vm.run("for s in /sys/class/drm/card*-Virtual-*/status; do echo detect > $s; done")
            lost = self.journal.wait(lambda m: "display lost" in m and "disconnected" in m, EVENT_TIMEOUT, c,
                                     "`display lost` for the disconnected connector")
            expect(str(lost[1]) == str(pid), f"`display lost` from pid {lost[1]}, not the show's {pid}")
            status = self.vm.run("cat /sys/class/drm/card*-Virtual-*/status")
            expect(status == "disconnected", f"the connector is {status!r} with the output disabled")
            src = self.status()["src"]   # paused while disconnected
            time.sleep(3)
            shown = [m for _, _, m, _, _ in self.journal.entries((c[0], lost[0])) if event(m, "shown")]
            expect(not shown, f"`shown` while disconnected: {shown[:2]}")
            c2 = self.journal.cursor()
        finally:
            # Back at another size (another monitor): no sysfs probe, the show probes a
            # disconnected connector itself.
            self.vm.set_output(RECONNECT_SIZE[0], RECONNECT_SIZE[1])
        try:
            back = self.journal.wait(lambda m: "display reopened" in m and "mode chosen again" in m, EVENT_TIMEOUT, c2,
                                     "the mode chosen again")
            new = "%dx%d" % RECONNECT_SIZE
            self.journal.wait(lambda m: "display size changed" in m and f"-> {new} " in m, EVENT_TIMEOUT, c2,
                              f"the `display size changed` line for {new}")
            modes = self.vm.run("cat /sys/class/drm/card*-Virtual-*/modes").split()
            expect(modes and modes[0] == new, f"the connector's preferred (first) mode is {modes[:1]}, not {new}")
            _, shown = self.wait_shown(c2, what="`shown` on the output back at another size")
            expect(self.main_pid() == pid and self.unit_times()["NRestarts"] == restarts, "the show was restarted")
            expect(shown["src"] == src, f"the show went on at {shown['src']}, not at its image {src}")
            st = self.status()
            expect((st.get("width"), st.get("height")) == RECONNECT_SIZE, f"status reports {st.get('width')}x{st.get('height')}")
            time.sleep(0.8)
            # The image the show is at when each capture is taken: on a loaded host the case may
            # get here after the 5 s interval, and the show has rightly moved on.
            p = self.on_screen_at(None, "after-reconnect", RECONNECT_SIZE)
            took = (back[0] - c2[1]) / 1e6
            # Touch follows: a tap at 3/4 across, 1/4 down lands at that place of the new size.
            c3 = self.journal.cursor()
            self.vm.tap(0.75, 0.25)
            tap = event(self.journal.wait(lambda m: event(m, "tap") is not None, EVENT_TIMEOUT, c3, "`tap`")[2], "tap")
            want = (RECONNECT_SIZE[0] * 3 // 4, RECONNECT_SIZE[1] // 4)
            expect(abs(tap.get("x", -9) - want[0]) <= 2 and abs(tap.get("y", -9) - want[1]) <= 2,
                   f"a tap at (0.75, 0.25) landed at ({tap.get('x')}, {tap.get('y')}), not {want} of {new}")
        finally:
            self.restore_output_size()
        return (f"output disabled: connector {status}, drawing stopped; enabled at {new}: mode chosen again {took:.1f}s "
                f"later by the same process {pid}, preferred mode {modes[0]}, {os.path.basename(src)} back at {new} "
                f"{p:.1f} dB, a tap at ({tap['x']}, {tap['y']}); size restored while connected")

    def on_screen_at(self, src, name, size, tries=8):
        """The screen, at `size`, shows `src` as the offscreen backend renders it at that size; the PSNR.
        With `src` None: the image `status` names just before each capture."""
        best, seen = -1.0, []
        for k in range(tries):
            now = src or self.status()["src"]
            ref = reference(self.args.binary, self.photo_for(now), size, self.args.out)
            img = self.vm.screendump(os.path.join(self.out, f"{name}-{k}.png"))
            expect(img.size == tuple(size), f"the screen is {img.size[0]}x{img.size[1]}, not {size[0]}x{size[1]}")
            best = max(best, psnr(img, ref))
            seen.append(os.path.basename(now))
            if best >= PSNR_MIN:
                return best
            time.sleep(0.3)
        raise CaseFailed(f"the screen is not {'/'.join(dict.fromkeys(seen))} at {size[0]}x{size[1]}: PSNR {best:.1f} dB "
                         f"< {PSNR_MIN} (captures {name}-*.png in {self.out})")

    def restore_output_size(self):
        """The output back at SCREEN while connected: its modes probed through sysfs, the show
        chooses the preferred mode again (a connected connector's modes changing) in the same process."""
        c = self.journal.cursor()
        self.vm.set_output(SCREEN[0], SCREEN[1])
        time.sleep(1)
        self.vm.run("for s in /sys/class/drm/card*-Virtual-*/status; do echo detect > $s; done")
        old = "%dx%d" % SCREEN
        self.journal.wait(lambda m: "display size changed" in m and f"-> {old} " in m, EVENT_TIMEOUT, c,
                          f"the show back at {old}")
        self.wait_shown(c, what=f"`shown` back at {old}")

    def case_no_display(self):
        drv, dev = self.drm_pci()
        self.vm.run(f"systemctl stop {UNIT}")
        self.vm.run(f"echo {dev} > {drv}/unbind")
        c = self.journal.cursor()
        try:
            self.vm.run(f"systemctl start --no-block {UNIT}")
            self.journal.wait(lambda m: re.search(r"no display|waiting for a display", m), 60, c,
                              "line about waiting for a display")
            # Then long enough for a second line if it were logged on each try (every second, and
            # on each change in /dev/dri).
            time.sleep(NO_DISPLAY_QUIET_S)
            entries = self.journal.entries(c)
            frames = self.vm.run("find / -xdev -name 'kiosk-frames' -o -name 'frame-0*.png' 2>/dev/null | head -3")
            expect(not frames, f"frames written to disk: {frames}")
            waiting = [m for _, _, m, _, _ in entries if re.search(r"no display|waiting for a display", m)]
            expect(len(waiting) == 1, f"expected one line about waiting for a display, got {len(waiting)}: "
                   + "; ".join(m for _, _, m, _, _ in entries[-5:]))
            state = self.vm.run(f"systemctl is-active {UNIT} || true")
            expect(state in ("active", "activating"), f"the service is {state} while waiting")
        finally:
            self.vm.run(f"echo {dev} > {drv}/bind")
        _, shown = self.wait_shown(c, 60, what="`shown` once the display appeared")
        time.sleep(1)
        self.current_on_screen("display-appeared")  # auto-advance may have moved on since `shown`
        self.check_on_tty1_alone("once the display appeared")
        return f"waited without a display ({state}), logged once, showed on bind"

    def case_reboot(self):
        # disable runs systemd-sysv-install (update-rc.d, perl): seconds under TCG, over a minute
        # on a loaded host.
        self.vm.run("systemctl disable --now nginx 2>&1", 240)
        st = self.status()
        expect(st["playlist_length"] == len(self.args.photos) + 2, f"manifest not applied before the reboot: {st}")
        self.vm.reboot()
        self.vm.wait_shell(BOOT_TIMEOUT)
        self.wait_active(BOOT_TIMEOUT)
        rc, _ = self.vm.sh("exec 3<>/dev/tcp/127.0.0.1/8080", 10)
        expect(rc != 0, "the manifest server still answers")
        deadline = time.time() + 30
        while (st := self.status())["playlist_length"] != len(self.args.photos) + 2:
            expect(time.time() < deadline, f"after the reboot without network: {st}")
            time.sleep(1)
        self.control('["pause"]')
        c = self.journal.cursor()
        # The manifest's items follow the folder's in the playlist. (In the journal this goto's
        # `shown` follows the first one within seconds: a jump to index 5 that is not auto-advance.)
        idx = len(self.args.photos)
        r = self.control(f'["goto",{idx}]')
        expect(r.get("error") == "success", f"goto: {r}")
        _, shown = self.wait_shown(c, what="`shown` for the manifest's first item")
        expect(shown["src"].startswith("http://127.0.0.1:8080/"), f"index {idx} is {shown['src']}")
        time.sleep(1)
        p = self.on_screen(shown["src"], "offline-manifest")
        self.control('["resume"]')
        return f"{st['playlist_length']} items without network; {shown['src']} from the disk cache at {p:.1f} dB"

    def case_upgrade(self):
        pid = self.main_pid()
        cache = self.vm.run("cd /var/cache/kiosk-carousel && find . -type f | sort | xargs -r sha256sum")
        conf = self.vm.run("cat /etc/kiosk-carousel/kiosk-carousel.conf")
        c = self.journal.cursor()
        rc, text = self.vm.sh("DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/upgrade/*.deb", 300)
        expect(rc == 0, f"apt install of the newer .deb failed: {text[-1500:]}")
        version = self.vm.run("dpkg-query -W -f '${Version}' kiosk-carousel")
        expect(version == self.args.newer_version, f"installed version {version}")
        self.wait_active(60)
        expect(self.main_pid() != pid, "the running show was not restarted")
        _, shown = self.wait_shown(c, 60)
        expect(self.vm.run("cat /etc/kiosk-carousel/kiosk-carousel.conf") == conf, "the configuration changed")
        expect(MANIFEST_URL in conf, "the edited configuration lost its manifest line")
        after = self.vm.run("cd /var/cache/kiosk-carousel && find . -type f | sort | xargs -r sha256sum")
        expect(cache and after == cache, f"the cache changed: {cache!r} -> {after!r}")
        return f"{self.args.version} -> {version}: restarted (pid {pid} -> {self.main_pid()}), configuration and {len(cache.splitlines())} cache files kept"

    def case_purge(self):
        # The file lists stay in the guest (/run: not in the listing): only their differences
        # and a few counts cross the serial console.
        listing = ("find / -xdev \\( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /var/log "
                   "-o -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/cache/apt -o -path /var/cache/debconf "
                   "-o -path /var/cache/man -o -path /var/tmp \\) -prune -o -print | sort")
        self.vm.run(f"{listing} > /run/kc-before", 120)
        owned = set(self.vm.run("dpkg -L kiosk-carousel").split("\n"))
        # dpkg names /lib/...; the listing sees it through merged /usr as /usr/lib/...
        owned |= {"/usr" + p for p in owned if p.startswith("/lib/")}
        rc, text = self.vm.sh("DEBIAN_FRONTEND=noninteractive apt-get purge -y -q kiosk-carousel", 300)
        expect(rc == 0, f"apt purge failed: {text[-1500:]}")
        self.vm.run(f"{listing} > /run/kc-after", 120)
        added = [p for p in self.vm.run("comm -13 /run/kc-before /run/kc-after").split("\n") if p]
        gone = [p for p in self.vm.run("comm -23 /run/kc-before /run/kc-after").split("\n") if p]
        expect(not added, f"purge added files: {added[:5]}")
        may_go = lambda p: (p in owned or p.startswith(("/etc/kiosk-carousel", "/var/cache/kiosk-carousel",
                                                         "/var/lib/kiosk-carousel/", "/var/lib/systemd/deb-systemd-"))
                            or "kiosk-carousel.service" in p)
        unexpected = sorted(p for p in gone if not may_go(p) or p.startswith("/var/lib/kiosk-carousel/images"))
        expect(not unexpected, f"purge removed more than docs/deployment.md says: {unexpected[:8]}")
        for p in ("/usr/bin/kiosk-carousel", "/etc/kiosk-carousel", "/var/cache/kiosk-carousel",
                  "/lib/systemd/system/kiosk-carousel.service"):
            expect(self.vm.sh(f"test -e {p}")[0] != 0, f"{p} is still there after purge")
        left = [p for p in self.vm.run("grep '^/var/lib/kiosk-carousel/' /run/kc-after || true").split("\n") if p]
        kept = [p for p in left if p.startswith("/var/lib/kiosk-carousel/images/")]
        expect(len(kept) == len(self.args.photos), f"the images folder holds {kept}")
        expect(self.vm.sh("id kiosk")[0] == 0, "the user kiosk is gone")
        state = [p for p in left if not p.startswith("/var/lib/kiosk-carousel/images")]
        expect(not state, f"state left: {state[:5]}")
        self.login_prompt_on_tty1("after-purge")
        return f"{len(gone)} paths removed, the {len(kept)} photos and the user kiosk kept, login prompt on tty1"

    def save_journal(self, name):
        """The whole journal (every boot of this run: it is kept on the disk) into the device's
        output directory, for reading failures."""
        try:
            text = self.vm.sh("journalctl --no-hostname -o short-monotonic", 120)[1]
            with open(os.path.join(self.out, name), "w") as f:
                f.write(text)
        except GuestError:
            pass

    def serial_tail(self, lines=30):
        """The end of the guest's serial console (the boot's last words), for a boot that failed."""
        try:
            with open(os.path.join(self.out, "serial.log"), "rb") as f:
                text = f.read().decode(errors="replace").replace("\r", "")
        except OSError:
            text = ""
        log(f"---- {self.device}: serial console, last {lines} lines ----")
        for line in (text.splitlines()[-lines:] or ["(empty)"]):
            log("  | " + line)
        log("---- end of the serial console ----")

    # -- driver --
    def case_memory(self):
        cg = f"/sys/fs/cgroup/system.slice/{UNIT}.service"
        peak = int(self.vm.run(f"cat {cg}/memory.peak"))
        limit = self.vm.run(f"systemctl show -P MemoryMax {UNIT}")
        total_kib = int(self.vm.run("sed -n 's/^MemTotal: *\\([0-9]*\\) kB/\\1/p' /proc/meminfo"))
        expect(limit.isdigit(), f"the unit has no MemoryMax: {limit!r}")
        expect(peak < int(limit), f"the unit's peak memory {peak} B reached its MemoryMax {limit} B")
        note = (f"peak {peak / 2**20:.0f} MiB of MemoryMax {int(limit) / 2**20:.0f} MiB "
                f"(MemTotal {total_kib / 1024:.0f} MiB; memory.peak since the unit's last start)")
        self.figures.append(f"{self.device}: {note}")
        return note

    def run_device(self, device, only, memory_mib=1536, name=None):
        self.device = name or device
        self.out = os.path.join(self.args.out, self.device)
        os.makedirs(self.out, exist_ok=True)
        cases = ARM64_CASES if self.args.arch == "arm64" else CASES
        cases = [c for c in cases if device != "bochs" or c not in VIRTIO_ONLY]
        if only:
            cases = [c for c in cases if c in only or self.device in only or f"{self.device}-{c}" in only]
            if cases and "boot" not in cases:
                cases.insert(0, "boot")
        if not cases:
            return
        self.vm = VM(self.args.image_dir, device, self.out, arch=self.args.arch, memory_mib=memory_mib)
        self.journal = Journal(self.vm)
        booted = True
        try:
            try:
                self.vm.start()
            except (GuestError, OSError, ValueError) as e:
                for case in cases:
                    self.results.append((f"{self.device}-{case}", False, f"not run: QEMU did not start: {e}"))
                    log(f"FAIL {self.device}-{case}: not run: QEMU did not start: {e}")
                self.serial_tail()
                return
            for case in cases:
                name = f"{self.device}-{case}"
                if not booted:
                    self.results.append((name, False, "not run: the boot failed"))
                    log(f"FAIL {name}: not run: the boot failed")
                    continue
                t0 = time.time()
                try:
                    if case not in ("boot", "ready", "purge"):
                        self.ensure_running()
                    note = getattr(self, "case_" + case.replace("-", "_"))()
                    self.results.append((name, True, note))
                    log(f"PASS {name} ({time.time() - t0:.0f}s): {note}")
                except (CaseFailed, GuestError) as e:
                    self.results.append((name, False, str(e)))
                    log(f"FAIL {name} ({time.time() - t0:.0f}s): {e}")
                    if case == "boot":
                        booted = self.vm.shell_ready
                        if not booted:
                            self.serial_tail()
                    if not self.vm.shell_ready or self.vm.proc.poll() is not None:
                        booted = False
        finally:
            if self.vm.shell_ready and self.vm.proc.poll() is None:
                self.save_journal("journal.txt")
            self.vm.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--newer-version", required=True)
    ap.add_argument("--photos", nargs="+", required=True)
    ap.add_argument("--manifest-photos", nargs=2, required=True)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--arch", default="amd64", choices=["amd64", "arm64"], help="the image's architecture")
    ap.add_argument("--machines", nargs="+", default=["bochs:1536", "virtio:1536"],
                    help="DEVICE:MiB for each boot, in order (a boot's name is DEVICE, or DEVICE-MiBm "
                         "after the first of a device)")
    args = ap.parse_args()
    suite = Suite(args)
    suite.results = []
    t0 = time.time()
    seen = set()
    for machine in args.machines:
        device, _, mib = machine.partition(":")
        name = device if device not in seen else f"{device}-{mib}m"
        seen.add(device)
        suite.run_device(device, args.only, int(mib or 1536), name)
    for f in suite.figures:
        log("figure: " + f)
    passed = sum(1 for _, ok, _ in suite.results if ok)
    failed = len(suite.results) - passed
    try:
        with open("/proc/loadavg") as f:
            load = " (host load average " + " ".join(f.read().split()[:3]) + " at the end)"
    except OSError:
        load = ""
    log(f"boots and cases took {time.time() - t0:.0f}s{load}")
    log(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
