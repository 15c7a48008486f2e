#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Makes the kernel run arm64 programs through qemu-user (Debian's qemu-user-static), as its
# package does on a machine with systemd: binfmt_misc mounted and the qemu-aarch64 entry of
# /usr/lib/binfmt.d registered (flag F: the interpreter is opened now, so it works in chroots,
# where mmdebstrap runs an arm64 root's maintainer scripts and the arm64 unit tests run).
# Idempotent; needs root. Prints what it did.
set -eu
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
[ -f "$conf" ] || { echo "binfmt.sh: no $conf: apt-get install -y qemu-user-static" >&2; exit 1; }
dir=/proc/sys/fs/binfmt_misc
[ -e "$dir/register" ] || mount -t binfmt_misc binfmt_misc "$dir"
if [ -e "$dir/qemu-aarch64" ]; then
    grep -q '^enabled' "$dir/qemu-aarch64" || echo 1 > "$dir/qemu-aarch64"
    echo "binfmt.sh: qemu-aarch64 registered: $(sed -n 's/^interpreter //p' "$dir/qemu-aarch64")"
else
    grep -v '^#' "$conf" > "$dir/register"
    echo "binfmt.sh: registered qemu-aarch64 from $conf"
fi
