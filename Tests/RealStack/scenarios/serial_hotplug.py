"""Serial pedometer hot-plug through the real USB stack: QEMU plugs a usb-serial (FTDI FT232
emulation) into an xHCI controller through QMP, systemd-udevd in the guest applies the project's
udev-rules/70-healthgate.rules (group, /dev/healthgate/pedometer-<serial>, tag), and
`healthgate serial watch --auto --match tag:healthgate-pedometer` picks the device up, counts the
steps fed through the device's chardev socket exactly, and lets go on unplug — twice in one boot.
Route and gotchas: ../shared/realstack/usb-serial/ (kept in sync with docs/serial-pedometers.md)."""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from harness.core import Context, scenario

ROOT = Path(__file__).resolve().parents[3]                  # the package root
RULES = ROOT / "udev-rules" / "70-healthgate.rules"
SERIAL = "PED0001"                                          # matches the rules' FTDI + PED* line
SOCK = f"/tmp/healthgate-realstack-ser0-{os.getpid()}.sock" # QEMU's chardev server for the device
LINK = f"/dev/healthgate/pedometer-{SERIAL}"


class QMP:
    """A minimal QMP client (JSON lines over the guest's unix socket)."""

    def __init__(self, path: str):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb", buffering=0)
        self.events: list[dict] = []
        json.loads(self.file.readline())                    # greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name: str, **arguments) -> dict:
        message = {"execute": name, **({"arguments": arguments} if arguments else {})}
        self.file.write(json.dumps(message).encode() + b"\n")
        while True:
            reply = json.loads(self.file.readline())
            if "event" in reply:
                self.events.append(reply)
                continue
            return reply

    def wait_event(self, name: str, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events:
                if event["event"] == name:
                    self.events.remove(event)
                    return event
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                self.events.append(json.loads(self.file.readline()))
            except (socket.timeout, TimeoutError, json.JSONDecodeError):
                pass
        return None

    def close(self) -> None:
        self.sock.close()


def events(process) -> list[dict]:
    out = process.output().get("stdout", "")
    found = []
    for line in out.splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def wait_for(ctx: Context, process, predicate, what: str, timeout: float = 120) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = events(process)
        if predicate(seen):
            return seen
        if not process.output().get("running", True):
            break
        time.sleep(0.2)
    output = process.output()
    ctx.fail(f"{what} did not happen within {timeout:.0f}s.\n  stdout: {output.get('stdout', '')[-1500:]}\n"
             f"  stderr: {output.get('stderr', '')[-1500:]}")
    return []


@scenario("serial-hotplug", "usb-serial hot-plugged twice via QMP: udev rules applied, serial watch --auto "
          "counts exact steps and releases the device on unplug", adapter="any", order=300,
          qemu_opts=["-device qemu-xhci,id=hgxhci", f"-chardev socket,id=hgser0,path={SOCK},server=on,wait=off"])
def serial_hotplug(ctx: Context) -> None:
    ctx.expect(RULES.is_file(), f"{RULES} is missing")
    # udevd with the project's rules. The guest's root is the host's, read-only: the healthgate
    # group is added through a bind-mounted copy of /etc/group.
    setup = ctx.sh(
        "set -e; mkdir -p /run/udev/rules.d && cp " + str(RULES) + " /run/udev/rules.d/70-healthgate.rules; "
        "if ! getent group healthgate >/dev/null; then cp /etc/group /run/hg/group && "
        "echo 'healthgate:x:987:' >> /run/hg/group && mount --bind /run/hg/group /etc/group; fi; "
        "if pgrep -x systemd-udevd >/dev/null; then udevadm control --reload; "
        "else /lib/systemd/systemd-udevd --daemon --resolve-names=late; fi; "
        # Coldplug only what this needs (the xHCI controller's driver, USB): a full trigger costs
        # a minute under TCG. Hot-plugged devices then go through udevd as they appear.
        "udevadm trigger --action=add --subsystem-match=pci --subsystem-match=usb --subsystem-match=tty; "
        "udevadm settle --timeout=120; getent group healthgate", timeout=180)
    ctx.expect(setup.rc == 0, "could not start udevd with udev-rules/70-healthgate.rules in the guest", setup)

    watch = ctx.hg_spawn("serial", "watch", "--auto", "--match", "tag:healthgate-pedometer", "--json")
    wait_for(ctx, watch, lambda e: any(o.get("event") == "monitor" for o in e), "the udev monitor start", 60)
    seen = events(watch)
    monitor = next(o for o in seen if o.get("event") == "monitor")
    ctx.expect(monitor.get("source") == "udev", f"with udevd running the monitor should use the udev source: {monitor}")

    qmp = QMP(str(ctx.guest.qmp_path))
    try:
        # cycle 1: a fresh device (baseline at 0, then 10 lines of +3); cycle 2: it was power-cycled
        # (new boot id): 5 steps since power-up, then 5 lines of +3. Exact total: 30 + 5 + 15 = 50.
        cycles = [("c1", [3 * i for i in range(11)]), ("c2", [5 + 3 * i for i in range(6)])]
        for n, (boot, counts) in enumerate(cycles, start=1):
            reply = qmp.cmd("device_add", driver="usb-serial", id="hgped0", chardev="hgser0", bus="hgxhci.0",
                            serial=SERIAL, **{"always-plugged": True})
            ctx.expect("error" not in reply, f"cycle {n}: QMP device_add failed: {reply}")
            wait_for(ctx, watch, lambda e, n=n: sum(o.get("event") == "plugged" for o in e) >= n,
                     f"cycle {n}: healthgate picking up the plugged pedometer")
            info = ctx.sh(f"stat -c '%G %a' /dev/ttyUSB0; readlink -f {LINK}; "
                          "udevadm info -q property -n /dev/ttyUSB0 | grep -E '^(ID_VENDOR_ID|ID_MODEL_ID|ID_SERIAL_SHORT|HEALTHGATE_PEDOMETER|CURRENT_TAGS)='")
            ctx.expect(info.rc == 0 and info.stdout.splitlines()[:2] == ["healthgate 660", "/dev/ttyUSB0"],
                       f"cycle {n}: the rules did not apply (want group healthgate, mode 660 and {LINK})", info)
            ser = socket.socket(socket.AF_UNIX)
            ser.connect(SOCK)
            last = ""
            for seq, count in enumerate(counts):
                last = json.dumps({"steps": count, "seq": seq, "boot": boot}, separators=(",", ":"))
                ser.sendall(last.encode() + b"\r\n")
                time.sleep(0.05)
            wait_for(ctx, watch, lambda e, last=last: any(o.get("event") == "line" and o.get("line") == last for o in e),
                     f"cycle {n}: healthgate reading the last line")
            reply = qmp.cmd("device_del", id="hgped0")
            ctx.expect("error" not in reply, f"cycle {n}: QMP device_del failed: {reply}")
            ctx.expect(qmp.wait_event("DEVICE_DELETED", 60) is not None, f"cycle {n}: QEMU never deleted the device")
            ser.close()
            wait_for(ctx, watch, lambda e, n=n: sum(o.get("event") == "unplugged" for o in e) >= n,
                     f"cycle {n}: healthgate releasing the unplugged pedometer")
            gone = ctx.sh(f"for i in $(seq 100); do [ -e /dev/ttyUSB0 ] || [ -e {LINK} ] || exit 0; sleep 0.1; done; exit 1")
            ctx.expect(gone.rc == 0, f"cycle {n}: /dev/ttyUSB0 or {LINK} still exists after the unplug", gone)
    finally:
        qmp.close()
        try:
            os.unlink(SOCK)
        except FileNotFoundError:
            pass

    result = ctx.finish(watch)
    ctx.expect(result.rc == 0, "`healthgate serial watch --auto` did not exit 0 on Ctrl-C", result)
    samples = ctx.samples("stepCount")
    total = sum(float(s.get("value", 0)) for s in samples)
    ctx.expect(total == 50, f"stored steps should total exactly 50 over two plug cycles, got {total} "
               f"({len(samples)} samples)")


@scenario("serial-hotplug-noudev", "without udevd: serial watch --auto hears the kernel's uevent, reads the USB "
          "ids from sysfs, counts exact steps and releases the device on unplug", adapter="any", order=290,
          qemu_opts=["-device qemu-xhci,id=hgxhci2",
                     f"-chardev socket,id=hgser1,path={SOCK}.noudev,server=on,wait=off"])
def serial_hotplug_noudev(ctx: Context) -> None:
    sock = f"{SOCK}.noudev"
    # No udev daemon: stop the one virtme-ng may have started, and load the drivers udevd would
    # have autoloaded (the xHCI controller's, usbserial's FTDI driver).
    setup = ctx.sh("udevadm control --exit 2>/dev/null; for i in $(seq 50); do pgrep -x systemd-udevd >/dev/null || break; "
                   "sleep 0.1; done; pkill -x systemd-udevd; rm -f /run/udev/control; "
                   "modprobe xhci_pci; modprobe ftdi_sio; ! pgrep -x systemd-udevd", timeout=60)
    ctx.expect(setup.rc == 0, "could not stop udevd and load ftdi_sio in the guest", setup)
    watch = ctx.hg_spawn("serial", "watch", "--auto", "--match", "0403:6001", "--json")
    seen = wait_for(ctx, watch, lambda e: any(o.get("event") == "monitor" for o in e), "the kernel monitor start", 60)
    monitor = next(o for o in seen if o.get("event") == "monitor")
    ctx.expect(monitor.get("source") == "kernel", f"without udevd the monitor should use the kernel source: {monitor}")
    qmp = QMP(str(ctx.guest.qmp_path))
    try:
        reply = qmp.cmd("device_add", driver="usb-serial", id="hgped1", chardev="hgser1", bus="hgxhci2.0",
                        serial="PED0002", **{"always-plugged": True})
        ctx.expect("error" not in reply, f"QMP device_add failed: {reply}")
        seen = wait_for(ctx, watch, lambda e: any(o.get("event") == "plugged" for o in e),
                        "healthgate picking up the plugged pedometer from a kernel uevent")
        plugged = next(o for o in seen if o.get("event") == "plugged")
        ctx.expect(plugged.get("device") == "PED0002",
                   f"the device id should be the USB serial number read from sysfs (PED0002): {plugged}")
        ser = socket.socket(socket.AF_UNIX)
        ser.connect(sock)
        last = ""
        for seq, count in enumerate([1000 + 4 * i for i in range(6)]):   # baseline, then 5 × +4
            last = f"steps:{count},seq:{seq},boot:nu"
            ser.sendall(last.encode() + b"\n")
            time.sleep(0.05)
        wait_for(ctx, watch, lambda e: any(o.get("event") == "line" and o.get("line") == last for o in e),
                 "healthgate reading the last line")
        reply = qmp.cmd("device_del", id="hgped1")
        ctx.expect("error" not in reply, f"QMP device_del failed: {reply}")
        ctx.expect(qmp.wait_event("DEVICE_DELETED", 60) is not None, "QEMU never deleted the device")
        ser.close()
        wait_for(ctx, watch, lambda e: any(o.get("event") == "unplugged" for o in e),
                 "healthgate releasing the unplugged pedometer")
    finally:
        qmp.close()
        try:
            os.unlink(sock)
        except FileNotFoundError:
            pass
    result = ctx.finish(watch)
    ctx.expect(result.rc == 0, "`healthgate serial watch --auto` did not exit 0 on Ctrl-C", result)
    total = sum(float(s.get("value", 0)) for s in ctx.samples("stepCount"))
    ctx.expect(total == 20, f"stored steps should total exactly 20, got {total}")
