#!/bin/sh
# Runs as the guest's command (vng --exec): load the kernel's Bluetooth stack, give the harness a
# private tmpfs for stores and scratch files (SQLite's WAL needs shared memory, which 9p lacks),
# then hand over to the agent, which serves the host runner until it says "exit".
#   init.sh WORKDIR
WORK=$1
HERE=$(cd "$(dirname "$0")" && pwd)
modprobe bluetooth || echo "init: modprobe bluetooth failed" >&2
modprobe hci_vhci || echo "init: modprobe hci_vhci failed" >&2
mkdir -p /run/hg && mount -t tmpfs -o mode=1777 hgtmp /run/hg
exec /usr/bin/python3 "$HERE/agent.py" /dev/virtio-ports/hgctl 2>>"$WORK/agent.stderr"
