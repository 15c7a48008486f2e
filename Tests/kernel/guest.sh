#!/bin/busybox sh
# Runs inside the QEMU guest (started by /init once the display drivers are loaded).
# A tiny command server: the host harness writes one command per line to the second serial
# port (/dev/ttyS1); everything the guest says goes to the console (ttyS0 = serial.log).
#   run ARGS...    start /app/kiosk-carousel ARGS in the background  -> KC_STARTED pid=N
#   mode TAG       print the foreground VT's KDGETMODE value         -> KC_KDMODE TAG N
#   term           SIGTERM the program and wait for it               -> KC_EXITED rc=N
#   signal SIG     send SIG (KILL, SEGV ...) and wait for it          -> KC_EXITED rc=N
#   wait           wait for the program to exit by itself            -> KC_EXITED rc=N
#   off            power off
stty -F /dev/ttyS1 raw -echo 2>/dev/null
# Text on the foreground VT, so that a screendump can tell "the console is back" from "black".
printf '\n  KIOSK-CAROUSEL KERNEL SUITE: THE TEXT CONSOLE (TTY1)\n' > /dev/tty1
echo "KC_READY dri=$(ls /dev/dri 2>/dev/null | tr '\n' ' ')fb=$(ls /dev/fb* 2>/dev/null | tr '\n' ' ')"
PID=
while read -r cmd rest; do
    case "$cmd" in
        run)  eval "set -- $rest"
              /app/kiosk-carousel "$@" &
              PID=$!
              echo "KC_STARTED pid=$PID" ;;
        mode) echo "KC_KDMODE $rest $(/app/kdgetmode /dev/tty0 2>&1)" ;;
        term) kill -TERM "$PID"; wait "$PID"; echo "KC_EXITED rc=$?" ;;
        signal) kill -"$rest" "$PID"; wait "$PID"; echo "KC_EXITED rc=$?" ;;
        wait) wait "$PID"; echo "KC_EXITED rc=$?" ;;
        off)  break ;;
        "")   ;;
        *)    echo "KC_UNKNOWN $cmd" ;;
    esac
done < /dev/ttyS1
echo "KC_POWEROFF"
