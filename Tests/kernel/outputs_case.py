# SPDX-License-Identifier: Apache-2.0
"""Several outputs (docs/displays.md "Several outputs"): virtio-gpu with max_outputs=2, the second
output enabled, resized and disabled through QEMU's D-Bus display (Console_1's SetUIInfo), each
head captured with QMP `screendump` (device, head)."""
import os, re, time

from qemu_vm import DISPLAY_ID, EVENT_TIMEOUT, CaseFailed, stop_with
from screen_compare import psnr, reference
from kernel_case import SHOWN0, SHOWN1, case_dir, guest_photos

INTERVAL_S, FADE_MS = 20, 1000   # photo A on screen for 19 s: time to unplug the second head


def head_is(vm, out, name, head, ref, psnr_min=40.0, timeout=15.0):
    """Captures `head` until it matches `ref` (size and PSNR); returns (best PSNR, last size)."""
    best, size, deadline, k = -1.0, None, time.time() + timeout, 0
    while True:
        try:
            img = vm.screendump(os.path.join(out, f"{name}-{k}.png"), device=DISPLAY_ID, head=head)
            size = img.size
            best = max(best, psnr(img, ref) if img.size == ref.size else 0.0)
        except CaseFailed:
            pass  # a head being switched on answers nothing for a moment
        if best >= psnr_min or time.time() > deadline:
            return best, size
        k += 1
        time.sleep(0.3)


def run_mirrored_case(vm, case, args, size):
    """Both heads show photo A fitted to their own size (1280x800 and 800x480); the second
    unplugged, the first goes on to photo B with no `display` event; the second plugged back
    at 1024x600 shows photo B fitted to that size."""
    out = case_dir(vm, case)
    second, third = (800, 480), (1024, 600)
    ref_a = reference(args.binary, args.photos[0], size, 0, args.out)
    ref_a2 = reference(args.binary, args.photos[0], second, 0, args.out)
    ref_b = reference(args.binary, args.photos[1], size, 0, args.out)
    ref_b3 = reference(args.binary, args.photos[1], third, 0, args.out)
    vm.set_output(1, *second)
    time.sleep(2)  # the guest's driver reads the new display info
    start = vm.mark()
    vm.send("run " + " ".join(["--display", case.display, "--interval", str(INTERVAL_S), "--fade", str(FADE_MS)])
            + " " + guest_photos(args))
    vm.wait_for(SHOWN0, EVENT_TIMEOUT, start)
    text = vm.log_text()[start:]
    mirrored = re.search(r'outputs mirrored detail="Virtual-1 1280x800[^,"]*, Virtual-2 800x480[^"]*"', text)
    if not mirrored:
        raise CaseFailed("the log does not say that Virtual-1 1280x800 and Virtual-2 800x480 are mirrored")
    notes = [mirrored.group(0)]
    for head, ref, what in ((0, ref_a, "1280x800"), (1, ref_a2, "800x480")):
        best, got = head_is(vm, out, f"a-head{head}", head, ref)
        if best < 40.0:
            raise CaseFailed(f"head {head} is not photo A fitted to {what}: {best:.1f} dB, screen {got} (captures in {out})")
        notes.append(f"head {head} A@{what} {best:.1f} dB")

    # The second head unplugged: logged, the first goes on (no display event, B on time).
    unplugged = vm.mark()
    vm.set_output(1, 0, 0)
    vm.wait_for(r"display output lost[^\n]*Virtual-2", EVENT_TIMEOUT, unplugged)
    vm.wait_for(SHOWN1, INTERVAL_S + EVENT_TIMEOUT, start)
    if re.search(r'"event" *: *"display"', vm.log_text()[start:]):
        raise CaseFailed("a `display` event although the first output showed all along")
    best, got = head_is(vm, out, "b-head0", 0, ref_b)
    if best < 40.0:
        raise CaseFailed(f"head 0 is not photo B after the second head went: {best:.1f} dB, screen {got}")
    notes.append(f"head 0 B {best:.1f} dB with head 1 unplugged")

    # Plugged back at another size: taken up again, B fitted to 1024x600.
    replugged = vm.mark()
    vm.set_output(1, *third)
    vm.wait_for(r"display reopened[^\n]*Virtual-2", EVENT_TIMEOUT, replugged)
    best, got = head_is(vm, out, "b-head1", 1, ref_b3, timeout=30.0)
    if best < 40.0:
        raise CaseFailed(f"head 1 back is not photo B fitted to 1024x600: {best:.1f} dB, screen {got} (captures in {out})")
    notes.append(f"head 1 back B@1024x600 {best:.1f} dB")
    rc = stop_with(vm, "TERM", start)
    if rc != 0:
        raise CaseFailed(f"exit status after SIGTERM is {rc}, expected 0")
    return "; ".join(notes)
