#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Kernel suite: kiosk-carousel on Debian's own kernel in QEMU (TCG), checked on the virtual screen.

Each boot runs one QEMU machine (a display device at a resolution) with the initramfs made by
build-initramfs.sh. The guest (guest.sh) takes commands on its second serial port; the host
starts kiosk-carousel in it, reads its `shown` events from the serial log, captures the screen
with QMP `screendump` and compares the captures with what the offscreen backend renders for
the same photos at the same size on the host:

  * first frame: PSNR against the offscreen frame of photo A >= the case's bound;
  * fade (--fade 4000): every capture that differs from both photos must lie between them per
    pixel (within TOLERANCE) and be one blend of the two for the whole screen (a torn or
    half-drawn frame is not), and at least one such capture must be seen;
  * console: KDGETMODE on /dev/tty0 is KD_GRAPHICS (1) while it runs and KD_TEXT (0) after SIGTERM,
    and the program exits with status 0;
  * an unavailable mode is refused with the list of available modes;
  * touch (bochs-800x480 boot, with a virtio tablet and uinput): QMP input-send-event drags and
    taps on the tablet, and evemu recordings replayed through uinput (evemu-replay.c), must give
    the `shown`/`tap` events and screens docs/touch.md describes; evdump.c shows the events
    reach the guest as sent without the program.

Stdlib + Pillow only (Debian: python3-pil). Usage (see README.md):
  run-kernel-tests.py --binary KIOSK --initrd X.cpio.gz --photos A.jpg B.jpg --format-photos A.webp B.heic
                      --out DIR [--only NAME...]
Prints one PASS/FAIL line per case and, last, "N passed, M failed"; exit status 1 on any failure.

The code: qemu_vm.py (QEMU, QMP, serial log, guest commands), screen_compare.py (PSNR, blends,
offscreen references, screen checks), kernel_case.py (what the cases share), and the cases by
what they test: show_cases.py, console_cases.py, touch_cases.py, screenshot_case.py.
"""
import argparse, os, re, sys, time

from qemu_vm import EVENT_TIMEOUT, BootFailed, CaseFailed, VM, log, print_log, stop_with
from kernel_case import SHOWN0, Case, case_dir, start_show
from screen_compare import first_frame, reference
from show_cases import run_caption_case, run_crash_case, run_formats_case, run_missing_mode_case, run_show_case
from console_cases import run_display_off_case, run_vt_switch_case
from screenshot_case import run_screenshot_case
from outputs_case import run_mirrored_case
from planes_case import run_vkms_planes_case
from power_cases import run_cec_vivid_case, run_presence_gpio_case
from touch_cases import (TABLET_ARGS, end_touch_session, run_input_stack_case, run_touch_drag_case,
                         run_touch_replay_swipe_case, run_touch_replay_taps_case, run_touch_replay_vertical_case,
                         run_touch_tap_case)

def passed_over_first(reason):
    """The show on the card --display auto picks: its log says that card0 was passed over and why
    (`reason`, a regex) and which card was opened (the case's log_expect), the first frame is
    photo A (PSNR against the offscreen frame), and SIGTERM ends it with status 0."""
    def run(vm, case, args, size):
        out = case_dir(vm, case)
        ref_a = reference(args.binary, args.photos[0], size, case.rotation, args.out)
        start, _ = start_show(vm, case, args)
        vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
        text = vm.log_text()[start:]
        over = re.search(r'DRM card passed over detail="/dev/dri/card0: ' + reason + r'[^\n]*', text)
        if not over:
            raise CaseFailed(f"the log does not say that card0 was passed over for /{reason}/")
        opened = re.search(case.log_expect, text)
        if not opened:
            raise CaseFailed(f"the log does not match /{case.log_expect}/")
        best, _ = first_frame(vm, out, ref_a, case.psnr_min)
        if best < case.psnr_min:
            raise CaseFailed(f"first frame PSNR {best:.1f} dB < {case.psnr_min} dB against the offscreen frame")
        rc = stop_with(vm, "TERM", start)
        if rc != 0:
            raise CaseFailed(f"exit status after SIGTERM is {rc}, expected 0")
        return f"{over.group(0).strip()}; {opened.group(0).strip()}; first frame PSNR {best:.1f} dB"
    return run


# Boots: (name, QEMU display device, resolution, cases[, extra QEMU arguments[, kernel command line]])
BOOTS = [
    ("bochs-1280x800", "bochs", (1280, 800), [
        (Case("drm-bochs", "drm", log_expect=r"display opened.*DRM /dev/dri/card0 \(bochs-drm\)[^\n]*"),
         run_show_case),
        # A still for 8 s: decoding the HEIC under TCG on a busy host took over 2 s.
        (Case("formats-drm-bochs", "drm", interval_s=12), run_formats_case),
        (Case("fbdev-bochs", "fbdev", psnr_min=40.0, whole_frames=False,
              log_expect=r"display opened.*fbdev /dev/fb0[^\n]*"), run_show_case),
        (Case("drm-mode-missing", "drm,mode=1234x567"), run_missing_mode_case),
        (Case("console-crash", "drm"), run_crash_case),
        (Case("vt-switch-drm", "drm"), run_vt_switch_case),
        (Case("vt-switch-fbdev", "fbdev"), run_vt_switch_case),
        (Case("display-off-drm", "drm"), run_display_off_case),
        (Case("display-off-fbdev", "fbdev"), run_display_off_case),
        # vkms (Tests/kernel/vkms/, loaded by the case as a second card): the fade on planes
        (Case("drm-vkms-planes", "drm:/dev/dri/card1"), run_vkms_planes_case),
        # a motion sensor on gpio-sim (Tests/kernel/gpio-sim/), the TV over vivid's CEC bus
        (Case("presence-gpio", "drm"), run_presence_gpio_case),
        (Case("cec-vivid", "drm"), run_cec_vivid_case),
    ]),
    ("virtio-1280x800", "virtio", (1280, 800), [
        # --display auto must pick DRM where it exists
        (Case("auto-virtio", "auto", log_expect=r"display opened.*DRM /dev/dri/card0 \(virtio_gpu\)[^\n]*"),
         run_show_case),
    ]),
    # virtio-gpu with two outputs, QEMU's D-Bus display enabling, resizing and disabling the
    # second (docs/displays.md "Several outputs")
    ("virtio-2heads-1280x800", "virtio", (1280, 800), [
        (Case("mirrored-virtio-2heads", "drm"), run_mirrored_case),
    ], (), "", {"device_options": ",max_outputs=2", "dbus": True}),
    # card0 is a KMS card with nothing plugged in: a Cirrus VGA (cirrus, loaded before
    # virtio-gpu) whose only connector the kernel command line forces off (video=VGA-1:d, the
    # kernel's Documentation/fb/modedb.rst). --display auto must pass it over for card1.
    ("disconnected-card0-virtio-1280x800", "virtio", (1280, 800), [
        (Case("auto-skips-disconnected-card0", "auto",
              log_expect=r"display opened.*DRM /dev/dri/card1 \(virtio_gpu\)[^\n]*"),
         passed_over_first(r"no connected connector; connectors: VGA-1: disconnected")),
    ], ("-device", "cirrus-vga"), "video=VGA-1:d"),
    # + a virtio tablet bound to the display, and uinput: the touch cases (the show cases above
    # run with the tablet present and untouched)
    ("bochs-800x480", "bochs", (800, 480), [
        (Case("drm-bochs-800x480", "drm,mode=800x480"), run_show_case),
        (Case("drm-bochs-800x480-rotate90", "drm", rotation=90), run_show_case),
        (Case("caption-drm-bochs-800x480-rotate90", "drm", rotation=90), run_caption_case),
        (Case("screenshot-drm-rotate90", "drm", rotation=90), run_screenshot_case),
        (Case("screenshot-fbdev", "fbdev"), run_screenshot_case),
        (Case("touch-input-stack", "drm"), run_input_stack_case),
        (Case("touch-drag-virtio-tablet", "drm"), run_touch_drag_case),
        (Case("touch-tap-virtio-tablet", "drm"), run_touch_tap_case),
        (Case("touch-replay-atmel-maxtouch-taps", "drm"), run_touch_replay_taps_case),
        (Case("touch-replay-atmel-maxtouch-vertical", "drm"), run_touch_replay_vertical_case),
        (Case("touch-replay-ep0430m09-swipe", "drm"), run_touch_replay_swipe_case),
    ], TABLET_ARGS),
]

# arm64 (--arch arm64): Debian's arm64 kernel on QEMU's `virt` board, a Cortex-A72, at the
# official Raspberry Pi touchscreen's 800x480. The second boot has a render-only DRM device as
# card0 (vgem, kc_vgem=1), as a Raspberry Pi 4 has v3d beside its KMS card1 (vc4): --display
# auto must take card1, the card with a connected connector.
FBDEV_OPENED = r"display opened.*fbdev /dev/fb0[^\n]*"
ARM64_BOOTS = [
    ("arm64-virtio-800x480", "virtio", (800, 480), [
        (Case("drm-virtio-arm64", "drm", log_expect=r"display opened.*DRM /dev/dri/card0 \(virtio_gpu\)[^\n]*"),
         run_show_case),
        (Case("fbdev-virtio-arm64", "fbdev", psnr_min=40.0, whole_frames=False, log_expect=FBDEV_OPENED), run_show_case),
        (Case("formats-drm-virtio-arm64", "drm", interval_s=12), run_formats_case),
        (Case("console-crash-arm64", "drm"), run_crash_case),
    ]),
    ("arm64-render-only-card0-800x480", "virtio", (800, 480), [
        (Case("auto-skips-render-only-card0-arm64", "auto",
              log_expect=r"display opened.*DRM /dev/dri/card1 \(virtio_gpu\)[^\n]*"),
         passed_over_first(r"not a KMS \(modesetting\) device, driver vgem")),
        (Case("touch-drag-virtio-tablet-arm64", "auto"), run_touch_drag_case),
        (Case("touch-tap-virtio-tablet-arm64", "auto"), run_touch_tap_case),
        (Case("touch-replay-ep0430m09-swipe-arm64", "auto"), run_touch_replay_swipe_case),
    ], TABLET_ARGS, "kc_vgem=1"),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="amd64", choices=["amd64", "arm64"], help="the guest's (its boots: BOOTS, ARM64_BOOTS)")
    p.add_argument("--binary", required=True, help="kiosk-carousel built for the host: it renders the references")
    p.add_argument("--initrd", required=True)
    p.add_argument("--kernel", default=None, help="default: the newest /boot/vmlinuz-*")
    p.add_argument("--photos", nargs=2, required=True)
    p.add_argument("--format-photos", nargs=2, required=True, help="photo A as a WebP, photo B as a HEIC")
    p.add_argument("--out", default="/tmp/kc-kernel")
    p.add_argument("--only", nargs="*", default=None,
                   help="run only these boots or cases (NAME* matches names starting with NAME)")
    a = p.parse_args()
    a.binary = os.path.abspath(a.binary)
    a.photos = [os.path.abspath(x) for x in a.photos]
    a.format_photos = [os.path.abspath(x) for x in a.format_photos]
    if a.kernel is None:
        kernels = sorted((f for f in os.listdir("/boot") if f.startswith("vmlinuz-")),
                         key=lambda s: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)])
        if not kernels:
            log("no /boot/vmlinuz-* (apt-get install linux-image-amd64)")
            return 2
        a.kernel = "/boot/" + kernels[-1]
    os.makedirs(a.out, exist_ok=True)
    passed = failed = 0
    def only(name):
        return a.only is None or any(name == o or (o.endswith("*") and name.startswith(o[:-1])) for o in a.only)

    for boot_name, device, res, cases, *more in (ARM64_BOOTS if a.arch == "arm64" else BOOTS):
        extra = more[0] if more else ()
        append = more[1] if len(more) > 1 else ""
        vm_options = more[2] if len(more) > 2 else {}
        wanted = [(c, f) for c, f in cases if only(boot_name) or only(c.name)]
        if not wanted:
            continue
        vm, why = None, ""
        for attempt in (1, 2):
            vm = VM(a.kernel, a.initrd, device, res, os.path.join(a.out, boot_name), extra, arch=a.arch, append=append,
                    **vm_options)
            try:
                vm.start()
                break
            except BootFailed as e:
                why = str(e)
                log(f"boot {boot_name} attempt {attempt}: {e}")
                print_log(vm, 30)
                vm.stop()
                vm = None
            except CaseFailed as e:
                why = str(e)
                log(f"boot {boot_name}: {e}")
                print_log(vm)
                vm.stop()
                vm = None
                break
        if vm is None:
            for c, _ in wanted:
                log(f"FAIL {c.name}: the guest did not boot ({why})")
                failed += 1
            continue
        log(f"boot {boot_name}: /init after {vm.t_init:.1f}s, ready after {vm.t_ready:.1f}s")
        try:
            for c, fn in wanted:
                t = time.time()
                try:
                    detail = fn(vm, c, a, res)
                    log(f"PASS {c.name} ({time.time() - t:.1f}s): {detail}")
                    passed += 1
                except CaseFailed as e:
                    log(f"FAIL {c.name} ({time.time() - t:.1f}s): {e}")
                    print_log(vm)
                    failed += 1
                    # a stuck program would spoil the next case: end it
                    if vm.touch:
                        try:
                            end_touch_session(vm)
                        except CaseFailed:
                            vm.touch = None
                    else:
                        vm.send("term")
                        time.sleep(1)
            if vm.touch:
                end_touch_session(vm)
        finally:
            vm.stop()
            log(f"boot {boot_name}: {time.time() - vm.t0:.1f}s in all")
    log(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
