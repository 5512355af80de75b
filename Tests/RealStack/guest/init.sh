#!/bin/sh
# Runs as the guest's command (vng --exec): give the harness a private tmpfs for stores and scratch
# files (SQLite's WAL needs shared memory, which 9p lacks), start loading the kernel's Bluetooth
# stack, and hand over to the agent at once, which serves the host runner until it says "exit".
# Module loading runs in the background (seconds under TCG); the runner's adapter set-up runs
# `modprobe` again, which waits for it.
#   init.sh WORKDIR
WORK=$1
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /run/hg && mount -t tmpfs -o mode=1777 hgtmp /run/hg
(modprobe bluetooth && modprobe hci_vhci) 2>>"$WORK/agent.stderr" &
# -S: the agent needs only the standard library; skipping site-packages saves 9p reads.
exec /usr/bin/python3 -S "$HERE/agent.py" /dev/virtio-ports/hgctl 2>>"$WORK/agent.stderr"
