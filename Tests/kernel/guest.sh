#!/bin/busybox sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the QEMU guest (started by /init once the display drivers are loaded).
# A tiny command server: the host harness writes one command per line to the second serial
# port ($kc_ctl from the kernel command line, /dev/ttyS1 on a PC), each acknowledged (KC_ACK,
# see below); everything the guest says goes to the console (serial.log).
#   run ARGS...    start /app/kiosk-carousel ARGS in the background  -> KC_STARTED pid=N
#   mode TAG       print the foreground VT's KDGETMODE value         -> KC_KDMODE TAG N
#   term           SIGTERM the program and wait for it               -> KC_EXITED rc=N
#   signal SIG     send SIG (KILL, SEGV ...) and wait for it          -> KC_EXITED rc=N
#   wait           wait for the program to exit by itself            -> KC_EXITED rc=N
#   uinput DESC    create the device of evemu description DESC with /dev/uinput (/app/evemu-replay
#                  in the background; file names relative to /app/evemu) -> KC_UINPUT node=/dev/input/eventN ...
#   replay EVENTS  play an evemu recording on it, recorded timing    -> KC_REPLAY_DONE file=... events=N ...
#   unplug         destroy the uinput device                         -> KC_UINPUT_GONE node=...
#   evdump ARGS    /app/evdump ARGS in the background (events on the console) -> KC_EV ... KC_EVDUMP_DONE
#   sh CMD...      run a shell command, wait for it                  -> its output, KC_SH_DONE rc=N
#   vt N           switch the foreground VT to ttyN and wait for it   -> KC_VT from=A to=N ... | KC_VT_TIMEOUT ...
#   off            power off
CTL=${kc_ctl:-/dev/ttyS1}
stty -F "$CTL" raw -echo 2>/dev/null
# Text on the foreground VT, so that a screendump can tell "the console is back" from "black".
printf '\n  KIOSK-CAROUSEL KERNEL SUITE: THE TEXT CONSOLE (TTY1)\n' > /dev/tty1
echo "KC_READY dri=$(ls /dev/dri 2>/dev/null | tr '\n' ' ')fb=$(ls /dev/fb* 2>/dev/null | tr '\n' ' ')input=$(ls /dev/input 2>/dev/null | tr '\n' ' ')uinput=$([ -c /dev/uinput ] && echo yes || echo no)"
PID=
RPID=
DONE=0
# Each line is `SEQ LENGTH COMMAND [ARGS]` (qemu_vm.py `send`): a line whose length is not
# LENGTH (read in pieces) is refused with KC_BADLINE and sent again; a SEQ already run is
# acknowledged and not run twice.
while read -r seq len cmd rest; do
    case "$seq$len" in
        ''|*[!0-9]*) echo "KC_BADLINE"; continue ;;
    esac
    line="$cmd${rest:+ $rest}"
    if [ "${#line}" -ne "$len" ]; then echo "KC_BADLINE"; continue; fi
    echo "KC_ACK $seq"
    [ "$seq" -gt "$DONE" ] || continue
    DONE=$seq
    case "$cmd" in
        run)  eval "set -- $rest"
              /app/kiosk-carousel "$@" &
              PID=$!
              echo "KC_STARTED pid=$PID" ;;
        mode) echo "KC_KDMODE $rest $(/app/kdgetmode /dev/tty0 2>&1)" ;;
        term) kill -TERM "$PID"; wait "$PID"; echo "KC_EXITED rc=$?" ;;
        signal) kill -"$rest" "$PID"; wait "$PID"; echo "KC_EXITED rc=$?" ;;
        wait) wait "$PID"; echo "KC_EXITED rc=$?" ;;
        uinput) case "$rest" in /*) ;; *) rest=/app/evemu/$rest ;; esac
              /app/evemu-replay --control /tmp/evemu.ctl "$rest" &
              RPID=$! ;;
        replay) case "$rest" in /*) ;; *) rest=/app/evemu/$rest ;; esac
              echo "$rest" > /tmp/evemu.ctl ;;
        unplug) kill -TERM "$RPID"; wait "$RPID" ;;
        evdump) eval "set -- $rest"; /app/evdump "$@" & ;;
        sh)   eval "$rest"; echo "KC_SH_DONE rc=$?" ;;
        vt)   /app/vtswitch $rest 10 ;;
        off)  break ;;
        "")   ;;
        *)    echo "KC_UNKNOWN $cmd" ;;
    esac
done < "$CTL"
echo "KC_POWEROFF"
