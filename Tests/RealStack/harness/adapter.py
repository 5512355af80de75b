"""The guest's Bluetooth adapter: hci0 through /dev/vhci (vhci_bridge), powered through mgmt,
with the Just Works pairing agent. Brought up and torn down between scenarios as they ask."""
from __future__ import annotations

import signal
import time
from pathlib import Path

from .errors import HarnessError
from .guest import Guest, Process


class Adapter:
    def __init__(self, guest: Guest, bin_dir: Path, log):
        self.guest, self.bin_dir, self.say = guest, bin_dir, log
        self.bridge: Process | None = None
        self.agent: Process | None = None
        self.state = "down"
        self.powered_at = 0.0     # host time of the last power-on (time.time())

    def forget(self) -> None:
        """The guest booted again (``Context.power_cut``): its bridge and agent died with it, and
        there is no hci0 until ``up()`` registers one."""
        self.bridge = self.agent = None
        self.state = "down"

    def modules(self) -> None:
        """The kernel's Bluetooth core and the vhci driver (guest/init.sh starts loading them)."""
        result = self.guest.run(["/bin/sh", "-c", "modprobe bluetooth && modprobe hci_vhci"], timeout=120)
        if result.rc != 0:
            raise HarnessError(f"the guest kernel cannot load its Bluetooth modules:\n{result.describe()}")

    def _exists(self) -> bool:
        return self.guest.run(["/bin/sh", "-c", "test -e /sys/class/bluetooth/hci0"], timeout=10).rc == 0

    def up(self, timeout: float = 30) -> None:
        if self.state == "up":
            self.power(True)
            return
        started = time.monotonic()
        self.modules()
        self.bridge = self.guest.spawn([str(self.bin_dir / "vhci_bridge"), "/dev/virtio-ports/hgvhci"])
        deadline = time.monotonic() + timeout
        while not self._exists():
            output = self.bridge.output()
            if not output["running"]:
                raise HarnessError(f"vhci_bridge exited with {output['rc']}: {output['stderr'].strip()}")
            if time.monotonic() > deadline:
                raise HarnessError(f"hci0 did not appear within {timeout:.0f}s of starting vhci_bridge")
            time.sleep(0.2)
        # Through mgmt, not `hciconfig up`: only a mgmt power-on registers the SMP channel that pairing needs.
        self.guest.sh("btmgmt --index 0 le on >/dev/null && btmgmt --index 0 bondable on >/dev/null && "
                      "btmgmt --index 0 power on", timeout=30)
        self.powered_at = time.time()
        self.agent = self.guest.spawn([str(self.bin_dir / "pairing_agent")])
        info = self.guest.sh("btmgmt --index 0 info", timeout=20)
        if "powered" not in info.stdout.split("current settings:")[-1]:
            raise HarnessError(f"hci0 is not powered after `btmgmt power on`:\n{info.describe()}")
        self.state = "up"
        self.say(f"adapter hci0 up and powered in {time.monotonic() - started:.1f}s")

    def power(self, on: bool) -> None:
        self.guest.sh(f"btmgmt --index 0 power {'on' if on else 'off'}", timeout=30)
        if on:
            self.powered_at = time.time()

    def down(self, timeout: float = 20) -> None:
        """Unregister hci0 altogether (closing /dev/vhci removes the controller)."""
        self.modules()    # "no adapter" means a kernel with Bluetooth but no controller
        for process in (self.agent, self.bridge):
            if process is not None:
                process.stop(signal.SIGTERM, timeout=10)
        self.agent = self.bridge = None
        deadline = time.monotonic() + timeout
        while self._exists():
            if time.monotonic() > deadline:
                raise HarnessError("hci0 still exists after stopping vhci_bridge")
            time.sleep(0.2)
        self.state = "down"
        self.say("adapter removed: the guest has no Bluetooth controller")

    def stop_agent(self) -> None:
        """Stops the harness's pairing agent (a scenario where bluetoothd answers instead)."""
        if self.agent is not None:
            self.agent.stop(signal.SIGTERM, timeout=10)
            self.agent = None

    def start_agent(self) -> None:
        if self.agent is None and self.state == "up":
            self.agent = self.guest.spawn([str(self.bin_dir / "pairing_agent")])

    def agent_log(self) -> str:
        return self.agent.output()["stdout"] if self.agent is not None else ""
