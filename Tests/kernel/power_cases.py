# SPDX-License-Identifier: Apache-2.0
"""The kernel suite's power cases (docs/power.md): a motion sensor on a gpio-sim line
(`presence-gpio`), and the TV over HDMI-CEC on vivid's emulated bus (`cec-vivid`).

run-kernel-tests.py names them in its boots."""
import json, os, re, time

from qemu_vm import EVENT_TIMEOUT, CaseFailed, sh, stop_with
from screen_compare import psnr, reference, screen_is
from kernel_case import SHOWN0, case_dir, guest_photos
from console_cases import display_event

SOCKET = "/run/kc/control"
SIM = "/sys/kernel/config/gpio-sim/kc"   # the gpio-sim device the case makes
LINE = 3                                  # its line the sensor is on (named "pir")
TIMEOUT_S = 20                            # --presence-timeout: longer than a first decode under TCG at load


def load_modules(vm, listfile, start):
    """insmod every module of /etc/LISTFILE (build-initramfs.sh), dependencies first; one already
    loaded (an earlier case) is fine."""
    text, _ = sh(vm, f"while read -r ko; do insmod $ko 2>/dev/null || grep -q \"^$(basename $ko .ko | tr - _) \" "
                     f"/proc/modules || echo KC_INSMOD_FAILED $ko; done < /etc/{listfile}", start)
    if "KC_INSMOD_FAILED" in text:
        raise CaseFailed(f"modules of /etc/{listfile} did not load: {text.strip()}")


def status(vm, start):
    """The control socket's `status` data (ctlsend)."""
    text, _ = sh(vm, f"/app/ctlsend {SOCKET} '{{\"command\":[\"status\"]}}'", start)
    m = re.search(r"KC_CTL (\{.*\})", text)
    if not m:
        raise CaseFailed(f"no reply to status: {text.strip()}")
    return json.loads(m.group(1)).get("data", {})


def control(vm, command, start):
    request = json.dumps({"command": command}, separators=(",", ":"))
    text, _ = sh(vm, f"/app/ctlsend {SOCKET} '{request}'", start)
    if '"error":"success"' not in text:
        raise CaseFailed(f"{command}: {text.strip()}")


def dpms(vm, start):
    text, _ = sh(vm, "cat /sys/class/drm/card0-*/dpms", start)
    return " ".join(re.findall(r"^(On|Off|Standby|Suspend)\s*$", text, re.M))


def run_presence_gpio_case(vm, case, args, size):
    """A PIR sensor on gpio-sim line 3 (active-low: the line idles pulled up), `--presence
    gpio:CHIP:3,active-low --presence-timeout 20`, photo A standing: no motion for the timeout
    switches the screen off (a `display` `off` `presence` event, the connector's DPMS reads Off in
    sysfs, `status` says why); pulling the line down (motion) lights it again: a `display` `on`
    `presence` event, the connector's DPMS On within a second of the edge (timed in the guest)
    and photo A on the screen (>= 40 dB), `status` naming the sensor and `presence`."""
    out = case_dir(vm, case)
    ref_a = reference(args.binary, args.photos[0], size, 0, args.out)
    start = vm.mark()
    load_modules(vm, "modules.gpio", start)
    text, rc = sh(vm, "grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config; "
                      f"[ -d {SIM} ] || {{ mkdir {SIM} {SIM}/bank0 {SIM}/bank0/line{LINE} && echo 8 > {SIM}/bank0/num_lines "
                      f"&& echo pir > {SIM}/bank0/line{LINE}/name && echo 1 > {SIM}/live; }}; "
                      f"echo KC_SIM dev=$(cat {SIM}/dev_name) chip=$(cat {SIM}/bank0/chip_name)", start)
    m = re.search(r"KC_SIM dev=(\S+) chip=(\S+)", text)
    if not m or rc != 0:
        raise CaseFailed(f"gpio-sim chip not made: {text.strip()}")
    dev, chip = m.group(1), m.group(2)
    pull = f"/sys/devices/platform/{dev}/{chip}/sim_gpio{LINE}/pull"
    sh(vm, f"echo pull-up > {pull}; mkdir -p /run/kc", start)   # idle: high, inactive (active-low)
    notes = [f"gpio-sim {dev} {chip} line {LINE}"]

    vm.send(f"run --display {case.display} --interval 120 --fade 300 --control {SOCKET} "
            f"--presence gpio:{chip}:{LINE},active-low --presence-timeout {TIMEOUT_S} {guest_photos(args)}")
    attached = vm.wait_for(r"motion sensor attached[^\n]*", EVENT_TIMEOUT, start).group(0)
    if f"line {LINE} \\\"pir\\\"" not in attached and f'line {LINE} "pir"' not in attached.replace('\\"', '"'):
        raise CaseFailed(f"the sensor's line is not the one named: {attached}")
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    best = screen_is(vm, out, "before", ref_a)
    if best < case.psnr_min:
        raise CaseFailed(f"photo A is not on the screen: {best:.1f} dB")
    notes.append(f"photo A {best:.1f} dB")

    # Nobody: off after the timeout.
    off = vm.wait_for(display_event("off", "presence"), TIMEOUT_S + 15, start)
    off_line = vm.wait_for(r"display off[^\n]*", 5, start).group(0).strip()
    state = dpms(vm, start)
    if "Off" not in state:
        raise CaseFailed(f"the connector's DPMS does not read Off after the timeout: {state!r}")
    # (QEMU's bochs-display still shows its VRAM with the CRTC off: the capture is not checked.)
    data = status(vm, start)
    if data.get("display") != "off" or data.get("display_reason") != "presence" or data.get("presence", {}).get("state") != "absent":
        raise CaseFailed(f"status while nobody is there: {data}")
    notes.append(f"{off_line.split('detail=')[-1]}; sysfs dpms {state}; "
                 f"status display off, display_reason presence, presence absent")

    # Motion: the line pulled low, and the screen must be back within a second of the edge. Timed
    # in the guest: its monotonic clock (/proc/uptime, 10 ms steps) read just before the pull and
    # again once the connector's DPMS reads On (polled every 5 ms). A capture cannot time it:
    # QEMU's bochs-display shows its VRAM, the photo, with the CRTC off too.
    mark = vm.mark()
    t_sent = time.time()
    text, _ = sh(vm, "d=$(ls /sys/class/drm/card0-*/dpms | head -n 1); read t0 rest < /proc/uptime; "
                     f"echo pull-down > {pull}; i=0; until grep -q '^On' $d || [ $i -ge 600 ]; do usleep 5000; "
                     "i=$((i+1)); done; read t1 rest < /proc/uptime; echo KC_LAT $t0 $t1 $(cat $d)", start)
    host_s = time.time() - t_sent
    m = re.search(r"KC_LAT (\d+\.\d+) (\d+\.\d+) (\w+)", text)
    if not m:
        raise CaseFailed(f"no latency from the guest: {text.strip()!r}")
    seen = float(m.group(2)) - float(m.group(1))
    if m.group(3) != "On":
        raise CaseFailed(f"the connector's DPMS does not read On within 3 s of the motion edge: {m.group(3)!r}")
    if seen > 1.0:
        raise CaseFailed(f"the screen back on {seen:.2f} s after the motion edge: over a second")
    best = screen_is(vm, out, "on", ref_a)
    if best < case.psnr_min:
        raise CaseFailed(f"photo A is not on the screen after motion: {best:.1f} dB (captures in {out})")
    vm.wait_for(display_event("on", "presence"), 5, mark)
    state = dpms(vm, start)
    if "On" not in state:
        raise CaseFailed(f"the connector's DPMS does not read On after motion: {state!r}")
    data = status(vm, start)
    presence = data.get("presence", {})
    if data.get("display") != "on" or presence.get("state") != "present" or "gpio-sim" not in presence.get("sensor", ""):
        raise CaseFailed(f"status after motion: {data}")
    notes.append(f"motion edge: DPMS On {seen:.2f} s after it in the guest ({host_s:.2f} s from the host's "
                 f"command to its reply), photo A {best:.1f} dB, display on presence, sysfs dpms {state}; "
                 f"status sensor {presence.get('sensor')!r}")
    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"exit status after SIGTERM is {rc}")
    return "; ".join(notes)


CEC_LOG = "/tmp/cec-monitor.log"


def cec_monitor(vm, start):
    text, _ = sh(vm, f"cat {CEC_LOG}", start)
    return text


def run_cec_vivid_case(vm, case, args, size):
    """vivid's emulated CEC bus: its HDMI input's adapter plays the TV (`cec-ctl --tv`), its HDMI
    output's is the kiosk's (`--cec /dev/cec1`). Before the TV is configured the kiosk's Image
    View On at the start goes unanswered: `status` says CEC unavailable, "no TV answered", logged
    once. With the TV there and `cec-ctl --monitor` on it: `display off` sends Standby (0x36)
    from Playback Device 1 to the TV, `display on` Image View On (0x04) and Active Source (0x82,
    1.0.0.0); `status` says ready. vivid unbound (the adapter vanishes): `display off` still
    switches DPMS Off, and CEC unavailable is logged once for it."""
    out = case_dir(vm, case)
    ref_a = reference(args.binary, args.photos[0], size, 0, args.out)
    start = vm.mark()
    load_modules(vm, "modules.vivid", start)
    text, _ = sh(vm, "i=0; while [ ! -e /dev/cec1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; "
                     "/app/cec-ctl -d /dev/cec0 | grep -i 'name'; /app/cec-ctl -d /dev/cec1 | grep -i 'name'; mkdir -p /run/kc", start)
    if "vid-cap" not in text or "vid-out" not in text:
        raise CaseFailed(f"vivid's CEC adapters are not cec0 (input) and cec1 (output): {text.strip()}")
    notes = ["vivid: cec0 its HDMI input (the TV), cec1 its HDMI output (the kiosk)"]

    vm.send(f"run --display {case.display} --interval 120 --fade 300 --control {SOCKET} --cec /dev/cec1 {guest_photos(args)}")
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    vm.wait_for(r"CEC unavailable[^\n]*no TV answered[^\n]*", 20, start)
    data = status(vm, start)
    cec = data.get("cec", {})
    if cec.get("state") != "unavailable" or "CEC unavailable: no TV answered" not in cec.get("reason", ""):
        raise CaseFailed(f"status without a TV: {cec}")
    notes.append(f"no TV yet: status {cec.get('reason')!r}")

    # The TV.
    text, _ = sh(vm, f"/app/cec-ctl -d /dev/cec0 --tv >/dev/null && (/app/cec-ctl -d /dev/cec0 --monitor > {CEC_LOG} 2>&1 &) ; sleep 1", start)
    mark = vm.mark()
    control(vm, ["display", "off"], start)
    vm.wait_for(r"CEC: TV to standby[^\n]*", 15, mark)
    deadline = time.time() + 10
    while "STANDBY" not in cec_monitor(vm, start) and time.time() < deadline:
        time.sleep(0.5)
    monitor = cec_monitor(vm, start)
    if not re.search(r"Playback Device 1 to TV \(4 to 0\): STANDBY \(0x36\)", monitor):
        raise CaseFailed(f"the TV did not receive Standby from Playback Device 1: {monitor.strip()[-800:]}")
    state = dpms(vm, start)
    if "Off" not in state:
        raise CaseFailed(f"DPMS does not read Off with the TV in standby: {state!r}")
    data = status(vm, start)
    cec = data.get("cec", {})
    if cec.get("state") != "ready" or cec.get("logical_address") != 4 or cec.get("physical_address") != "1.0.0.0":
        raise CaseFailed(f"status with the TV there: {cec}")
    notes.append(f"display off: the TV's monitor shows STANDBY (0x36) 4 to 0; dpms {state}; status ready, "
                 f"logical address 4, physical address 1.0.0.0")

    mark = vm.mark()
    control(vm, ["display", "on"], start)
    vm.wait_for(r"CEC: TV on[^\n]*", 15, mark)
    deadline = time.time() + 10
    while "ACTIVE_SOURCE" not in cec_monitor(vm, start) and time.time() < deadline:
        time.sleep(0.5)
    monitor = cec_monitor(vm, start)
    ivo = re.search(r"Playback Device 1 to TV \(4 to 0\): IMAGE_VIEW_ON \(0x04\)", monitor)
    active = re.search(r"Playback Device 1 to all \(4 to 15\): ACTIVE_SOURCE \(0x82\):\s*\n\s*phys-addr: 1\.0\.0\.0", monitor)
    if not ivo or not active:
        raise CaseFailed(f"the TV did not receive Image View On and Active Source 1.0.0.0: {monitor.strip()[-800:]}")
    best = screen_is(vm, out, "on", ref_a)
    if best < case.psnr_min:
        raise CaseFailed(f"photo A is not back on the screen: {best:.1f} dB")
    notes.append(f"display on: IMAGE_VIEW_ON (0x04) 4 to 0, ACTIVE_SOURCE (0x82) phys-addr 1.0.0.0; photo A {best:.1f} dB")

    # The adapter vanishes.
    sh(vm, "echo vivid.0 > /sys/bus/platform/drivers/vivid/unbind", start)
    mark = vm.mark()
    control(vm, ["display", "off"], start)
    vm.wait_for(r"CEC unavailable[^\n]*", 15, mark)
    state = dpms(vm, start)
    if "Off" not in state:
        raise CaseFailed(f"DPMS does not read Off once the adapter is gone: {state!r}")
    control(vm, ["display", "on"], start)
    vm.wait_for(r"display on[^\n]*", 10, mark)
    time.sleep(1.0)
    gone = re.findall(r"CEC unavailable[^\n]*", vm.log_text()[mark:])
    data = status(vm, start)
    cec = data.get("cec", {})
    if len(gone) != 1 or cec.get("state") != "unavailable":
        raise CaseFailed(f"after the adapter went away: {len(gone)} 'CEC unavailable' lines {gone}, status {cec}")
    notes.append(f"vivid unbound: dpms {state} all the same, one line {gone[0].split('detail=')[-1][:90]!r}")
    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"exit status after SIGTERM is {rc}")
    return "; ".join(notes)
