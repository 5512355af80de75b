#!/usr/bin/env python3
"""HealthGate real-stack test peer: BLE heart-rate straps on a virtual "air", written with Bumble.

This is a *test peer*, independent of HealthGate's own Bluetooth code: the GATT server, the
Heart Rate Measurement encoder and the link layer are Bumble's (google/bumble, PyPI, pinned in
Tests/RealStack/requirements.txt).

One process holds one Bumble ``LocalLink`` (the air) with:
  * the *kernel-facing* emulated controller, exported as an H4 byte stream on a unix socket
    (``--hci unix-server:PATH``); inside the guest, ``vhci_bridge`` relays it to /dev/vhci, so the
    guest kernel gets an ``hci0`` whose radio is this link;
  * one emulated controller per peer device, each driven by a Bumble host:
      strap A  "HG Strap A"  full strap: 0x180D (2A37 notify, 2A38 = chest, 2A39 control point),
                             Device Information strings, Battery
      strap B  "HG Strap B"  the same, a second strap for the two-straps scenario
      strap C  "HG Strap NoCP" a strap without the Heart Rate Control Point (2A39 absent)
      straps D-G "HG Strap D".."G" dormant full straps for the many-straps scenario
      beacon   "HG Beacon"   a non-HR advertiser (Battery service UUID + manufacturer data)

Every value sent is logged as one JSON line in ``--log`` (the ground truth the scenarios compare
the gateway's store with):
  {"t": 1763790000.123, "kind": "notify", "strap": "A", "address": "F0:48:47:00:00:0A",
   "n": 17, "bpm": 74, "contact": "detected", "rr": [812, 790], "energy": 35, "hex": "1e4a23..."}
and so is every event (``"kind": "event"``: connected, disconnected, subscribed, unsubscribed,
paired, pairing-failed, encrypted, cp-write, energy-reset, advertising-on/off, held/released).

Control: a unix socket (``--control PATH``) taking one JSON object per line and answering one JSON
line each:
  {"cmd": "status"}                          -> straps, connections, subscriptions, counters, and
                                                how often the kernel asked for a link's RSSI
  {"cmd": "drop", "strap": "A"}              -> stop notifying, disconnect (advertising restarts)
  {"cmd": "vanish", "strap": "A", "seconds": 10}
                                             -> disconnect and stop advertising for N s
  {"cmd": "hold", "strap": "A"} / {"cmd": "release", "strap": "A"}
                                             -> pause / resume notifications (used before
                                                stopping the gateway, so no value is in flight)
  {"cmd": "mark", "label": "..."}            -> a marker line in the log
  {"cmd": "advertise", "strap": "B", "on": false}
  {"cmd": "out-of-range", "strap": "A", "seconds": 10}
                                             -> silent at the link layer (no disconnect): the gateway's controller
                                                reports Connection Timeout (0x08) after the supervision timeout;
                                                back after N s, advertising
  {"cmd": "radio-gone"}                      -> the gateway's radio vanished: every link times out (0x08)
  {"cmd": "period", "strap": "G", "seconds": 0.05}  -> notify every 50 ms from now on
Straps D-G are dormant (powered, not advertising) until told to advertise.
Prints READY on stdout when every device advertises.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import struct
import sys
import time

from bumble import hci, ll
from bumble.controller import Controller
from bumble.core import AdvertisingData, PhysicalTransport
from bumble.device import Device
from bumble.hci import Address
from bumble.link import LocalLink
from bumble.profiles.battery_service import BatteryService
from bumble.profiles.device_information_service import DeviceInformationService
from bumble.profiles.heart_rate_service import HeartRateService
from bumble.transport import open_transport

# Static random addresses (two most significant bits set). The harness reads them from here.
STRAPS = {
    "A": dict(name="HG Strap A", address="F0:48:47:00:00:0A", control_point=True, serial="HGA-0001"),
    "B": dict(name="HG Strap B", address="F0:48:47:00:00:0B", control_point=True, serial="HGB-0002"),
    "C": dict(name="HG Strap NoCP", address="F0:48:47:00:00:0C", control_point=False, serial="HGC-0003"),
    # Dormant until the many-straps scenario asks them to advertise: invisible to the others.
    "D": dict(name="HG Strap D", address="F0:48:47:00:00:0D", control_point=True, serial="HGD-0004", dormant=True),
    "E": dict(name="HG Strap E", address="F0:48:47:00:00:0E", control_point=True, serial="HGE-0005", dormant=True),
    "F": dict(name="HG Strap F", address="F0:48:47:00:00:0F", control_point=True, serial="HGF-0006", dormant=True),
    "G": dict(name="HG Strap G", address="F0:48:47:00:00:10", control_point=True, serial="HGG-0007", dormant=True),
}
BEACON = dict(name="HG Beacon", address="F0:48:47:00:00:BE")
DEVICE_INFO = dict(manufacturer_name="HealthGate Test Peers", model_number="Bumble-HRS-1",
                   hardware_revision="hw-1.0", firmware_revision="fw-2.3.4", software_revision="sw-5.6")
BATTERY = {"A": 87, "B": 64, "C": 42, "D": 90, "E": 80, "F": 70, "G": 60}
# What the kernel-side radio "measures" for each strap's link (HCI Read RSSI), in dBm.
RSSI = {"A": -58, "B": -71, "C": -64, "D": -60, "E": -62, "F": -66, "G": -68}


# The advertising interval a strap uses after losing its link, as Bumble's device takes it (ms).
# Bumble 0.0.236's emulated controller fires legacy advertising every <HCI interval> ms, the HCI
# value being in 0.625 ms units: 62.5 ms asked is 100 HCI units, so one advertisement every
# 100 ms on the virtual air (its default 1000 ms becomes one every 1.6 s).
FAST_ADVERTISING = 62.5


class KernelSide(Controller):
    """Bumble's emulated controller, answering HCI Read RSSI (Core 5.3 Vol 4 Part E 7.5.4), which
    it lists as supported but leaves unhandled: the link's figure is the strap's RSSI entry; an
    unknown handle is answered as a real controller does (Unknown Connection Identifier). The
    kernel asks for it (and for the transmit power) when the gateway sends the management
    command Get Connection Information."""

    rssi_reads = 0

    def on_hci_read_rssi_command(self, command):
        connection = self.find_connection_by_handle(command.handle)
        strap = None if connection is None else next(
            (k for k, spec in STRAPS.items() if str(connection.peer_address).startswith(spec["address"])), None)
        if strap is None:
            return hci.HCI_Read_RSSI_ReturnParameters(
                status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, handle=command.handle, rssi=127)
        KernelSide.rssi_reads += 1
        return hci.HCI_Read_RSSI_ReturnParameters(status=hci.HCI_ErrorCode.SUCCESS, handle=command.handle, rssi=RSSI[strap])

    supervision: dict[str, float] = {}   # seconds, per peer address, from each LE Create Connection

    def create_le_connection(self, peer_address) -> None:
        # The supervision timeout the host asked for (10 ms units), kept for `lose_link`.
        pending = self.pending_le_connection
        if pending is not None and hasattr(pending, "supervision_timeout"):
            self.supervision[str(peer_address).split("/")[0]] = pending.supervision_timeout * 0.01
        super().create_le_connection(peer_address)

    def lose_link(self, address: str) -> float | None:
        """A strap went out of range without a word: nothing reaches it any more (the air is
        muted for it), and once the connection's supervision timeout has passed this controller
        tells the host the link is gone with reason 0x08 (Connection Timeout), as a real one
        does; the strap's controller times out too. Returns the timeout, or None without a link."""
        connection = next((c for a, c in self.le_connections.items() if str(a).startswith(address)), None)
        if connection is None:
            return None
        timeout = self.supervision.get(address, 0.42)
        asyncio.get_running_loop().call_later(timeout, self._timed_out, connection)
        return timeout

    def _timed_out(self, connection) -> None:
        if self.le_connections.get(connection.peer_address) is connection:
            connection.send_ll_control_pdu(ll.TerminateInd(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR))
            self.on_le_disconnected(connection, hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR)

    def drop_links(self) -> int:
        """Ends every link without telling the host: the straps see their link time out (0x08),
        as a real strap does when the gateway's radio goes quiet (an adapter unplugged, reset or
        powered down without a goodbye). Returns how many links there were."""
        links = list(self.le_connections.values())
        for connection in links:
            connection.send_ll_control_pdu(ll.TerminateInd(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR))
        self.le_connections.clear()
        return len(links)

    def on_hci_reset_command(self, command):
        """A controller reset ends its links, as a real radio's does; Bumble's leaves them standing
        (its reset is a to-do), which would keep a strap connected to a controller that no longer
        talks to it, never advertising again. The host gets no Disconnection Complete: a reset
        ends the connections without events."""
        self.drop_links()
        return super().on_hci_reset_command(command)

    def on_hci_read_transmit_power_level_command(self, command):
        """Read Transmit Power Level (7.3.35), which the kernel sends with Read RSSI when asked for a
        connection's information (mgmt Get Connection Information): Bumble has no class for it,
        so the Command Complete is built from its bytes. Handle, then -8 dBm, for any handle."""
        op = command.op_code
        handle = command.parameters[0:2]
        raw = bytes([0x04, 0x0E, 7, 1, op & 0xFF, op >> 8, 0]) + handle + bytes([0xF8])
        self.send_hci_packet(hci.HCI_Packet.from_bytes(raw))
        return None


class Air(LocalLink):
    """The virtual air. One fix over Bumble 0.0.236's LocalLink: it stamps LE ACL data with the
    sender controller's *random* address, but the Linux kernel connects with its *public* address,
    so the strap's replies would be addressed to a connection that does not exist. Stamp the data
    with the address the connection was made from instead."""

    def __init__(self):
        super().__init__()
        self.muted: set[str] = set()    # straps out of range: no data reaches them or comes from them

    def out_of_reach(self, *addresses) -> bool:
        return any(str(a).split("/")[0] in self.muted for a in addresses)

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if self.out_of_reach(destination_address, sender_controller.random_address):
            return
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        connection = sender_controller.le_connections.get(destination_address)
        source = connection.self_address if connection is not None else sender_controller.random_address
        target = self.find_le_controller(destination_address)
        if target is not None:
            asyncio.get_running_loop().call_soon(target.on_link_acl_data, source, transport, data)


class Log:
    """Append-only JSON-lines log, flushed per line so the host can read it while we run."""

    def __init__(self, path: str):
        self.file = open(path, "a", buffering=1)

    def write(self, kind: str, **fields) -> None:
        record = {"t": round(time.time(), 6), "kind": kind, **fields}
        self.file.write(json.dumps(record, sort_keys=True) + "\n")


def contact_name(value: bool | None) -> str:
    return {None: "notSupported", False: "notDetected", True: "detected"}[value]


class Strap:
    """One heart-rate strap: a Bumble device with its own controller on the air."""

    def __init__(self, key: str, spec: dict, air: Air, log: Log, period: float):
        self.key, self.spec, self.log, self.period = key, spec, log, period
        self.address = spec["address"]
        self.controller = Controller(f"strap-{key}", link=air)
        self.device = Device.with_hci(spec["name"], Address(self.address), self.controller, self.controller)
        self.n = 0                 # notifications generated so far
        self.energy = 0            # kJ since the last reset
        self.subscribers: dict[int, object] = {}   # connection handle -> connection
        self.connections: dict[int, object] = {}
        self.held = False
        self.advertising_wanted = not spec.get("dormant", False)
        self.hrs = HeartRateService(
            read_heart_rate_measurement=lambda _c: self.measurement(peek=True),
            body_sensor_location=HeartRateService.BodySensorLocation.CHEST,
            reset_energy_expended=self.reset_energy if spec["control_point"] else None)
        self.device.add_service(DeviceInformationService(serial_number=spec["serial"], **DEVICE_INFO))
        self.device.add_service(BatteryService(read_battery_level=self.read_battery))
        self.device.add_service(self.hrs)
        self.device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<HH", 0x180D, 0x180F)),
            (AdvertisingData.COMPLETE_LOCAL_NAME, spec["name"].encode()),
        ]))
        self.hrs.heart_rate_measurement_characteristic.on("subscription", self.on_subscription)
        self.device.on("connection", self.on_connection)

    def event(self, event: str, **fields) -> None:
        self.log.write("event", strap=self.key, address=self.address, event=event, **fields)

    def read_battery(self, _connection) -> int:
        self.event("read-battery", level=BATTERY[self.key])
        return BATTERY[self.key]

    def reset_energy(self, _connection) -> None:
        self.event("energy-reset", before=self.energy)
        self.energy = 0

    def measurement(self, peek: bool = False) -> HeartRateService.HeartRateMeasurement:
        """The next measurement: a deterministic but varied sequence that exercises every field —
        uint8 and (rarely) uint16 bpm, all three contact states, energy only on every 4th
        notification, zero to three RR intervals in exact 1/1024 s ticks."""
        n = self.n + 1
        seed = n * 7 + ord(self.key)
        bpm = 55 + seed % 70
        if n % 25 == 0:
            bpm = 300 + seed % 10       # uint16 format (unrealistic, but legal and must round-trip)
        contact = {0: True, 1: True, 2: True, 3: False, 4: None}[(n // 6) % 5] if n % 6 == 5 else True
        self.energy = min(0xFFFF, self.energy + 3) if not peek else self.energy
        energy = self.energy if n % 4 == 0 else None
        ticks = [700 + (seed * 13 + 37 * i) % 400 for i in range(n % 4)]
        # ticks / 1024 is exact in binary floating point, so Bumble's int(rr * 1024) gives the ticks back
        return HeartRateService.HeartRateMeasurement(
            heart_rate=bpm, sensor_contact_detected=contact, energy_expended=energy,
            rr_intervals=[t / 1024 for t in ticks] if ticks else None)

    def on_connection(self, connection) -> None:
        handle = connection.handle
        self.connections[handle] = connection
        self.event("connected", peer=str(connection.peer_address), handle=handle)

        def on_disconnection(reason):
            self.connections.pop(handle, None)
            self.subscribers.pop(handle, None)
            self.event("disconnected", peer=str(connection.peer_address), reason=int(reason))
            if self.advertising_wanted:      # a real strap advertises again once the link is gone, fast
                asyncio.get_running_loop().create_task(self.start_advertising(fast=True))

        def on_encryption_change():
            self.event("encrypted", enabled=bool(connection.is_encrypted))

        connection.on("disconnection", on_disconnection)
        connection.on("connection_encryption_change", on_encryption_change)
        connection.on("pairing", lambda keys: self.event("paired", keys=str(keys)[:200]))
        connection.on("pairing_failure", lambda reason: self.event("pairing-failed", reason=str(reason)))

    def on_subscription(self, bearer, notify_enabled, indicate_enabled) -> None:
        connection = getattr(bearer, "connection", bearer)
        handle = connection.handle
        if notify_enabled:
            self.subscribers[handle] = connection
            self.event("subscribed", peer=str(connection.peer_address))
        else:
            self.subscribers.pop(handle, None)
            self.event("unsubscribed", peer=str(connection.peer_address))

    async def start_advertising(self, fast: bool = False) -> None:
        # Restarts after a disconnection are ours (see on_connection), not Bumble's auto-restart,
        # so that "vanish" can keep the strap silent. After losing its link a strap advertises
        # fast, as real ones do so their collector finds them at once (Apple's accessory
        # guidelines: 20 ms for the first 30 s); otherwise at Bumble's default.
        interval = FAST_ADVERTISING if fast else None
        await self.device.start_advertising(auto_restart=False, advertising_interval_min=interval,
                                            advertising_interval_max=interval)
        self.event("advertising-on", fast=fast)

    async def stop_advertising(self) -> None:
        await self.device.stop_advertising()
        self.event("advertising-off")

    async def tick(self) -> None:
        if self.held or not self.subscribers:
            return
        m = self.measurement()
        self.n += 1
        payload = bytes(m)
        for handle, connection in list(self.subscribers.items()):
            self.log.write("notify", strap=self.key, address=self.address, n=self.n, peer=str(connection.peer_address),
                           bpm=m.heart_rate, contact=contact_name(m.sensor_contact_detected),
                           energy=m.energy_expended,
                           rr=[int(r * 1024) for r in (m.rr_intervals or [])], hex=payload.hex())
            try:
                await self.device.notify_subscriber(connection, self.hrs.heart_rate_measurement_characteristic, m)
            except Exception as error:  # a notification that could not be sent is logged as such
                self.log.write("notify-failed", strap=self.key, n=self.n, error=repr(error))

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.period)
            await self.tick()

    async def disconnect_all(self) -> None:
        for connection in list(self.connections.values()):
            await connection.disconnect()

    def status(self) -> dict:
        return {"name": self.spec["name"], "address": self.address, "n": self.n, "energy": self.energy,
                "held": self.held, "connections": len(self.connections), "subscribers": len(self.subscribers),
                "control_point": self.spec["control_point"]}


async def make_beacon(air: Air, log: Log) -> Device:
    controller = Controller("beacon", link=air)
    device = Device.with_hci(BEACON["name"], Address(BEACON["address"]), controller, controller)
    device.advertising_data = bytes(AdvertisingData([
        (AdvertisingData.FLAGS, bytes([0x06])),
        (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x180F)),
        (AdvertisingData.COMPLETE_LOCAL_NAME, BEACON["name"].encode()),
        (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, bytes.fromhex("ffff48470001")),
    ]))
    await device.power_on()
    await device.start_advertising(auto_restart=True)
    log.write("event", strap="beacon", address=BEACON["address"], event="advertising-on")
    return device


class Control:
    """The JSON-lines control socket."""

    def __init__(self, straps: dict[str, Strap], log: Log, radio: KernelSide, air: Air):
        self.straps, self.log, self.radio, self.air = straps, log, radio, air
        self.tasks: set[asyncio.Task] = set()

    async def serve(self, path: str) -> None:
        if os.path.exists(path):
            os.unlink(path)
        await asyncio.start_unix_server(self.client, path=path)

    async def client(self, reader, writer) -> None:
        while line := await reader.readline():
            try:
                reply = await self.handle(json.loads(line))
            except Exception as error:
                reply = {"ok": False, "error": repr(error)}
            writer.write((json.dumps(reply) + "\n").encode())
            await writer.drain()
        writer.close()

    async def handle(self, request: dict) -> dict:
        cmd = request["cmd"]
        strap = self.straps.get(request.get("strap", ""))
        if cmd == "status":
            return {"ok": True, "straps": {k: s.status() for k, s in self.straps.items()}, "rssi_reads": KernelSide.rssi_reads}
        if cmd == "mark":
            self.log.write("mark", label=request.get("label", ""))
            return {"ok": True}
        if cmd == "radio-gone":
            # The gateway's adapter vanished without a word (unplugged): its links time out.
            links = self.radio.drop_links()
            self.log.write("event", strap="kernel-side", event="radio-gone", links=links)
            return {"ok": True, "links": links}
        if strap is None:
            return {"ok": False, "error": f"unknown strap {request.get('strap')!r}"}
        if cmd == "hold":
            strap.held = True
            strap.event("held")
        elif cmd == "release":
            strap.held = False
            strap.event("released")
        elif cmd == "drop":
            strap.held = True          # nothing in flight while the link goes down
            strap.event("dropping", connections=len(strap.connections))
            await strap.disconnect_all()
            strap.held = False
        elif cmd == "vanish":
            seconds = float(request.get("seconds", 10))
            strap.held = True
            strap.event("vanishing", seconds=seconds)
            strap.advertising_wanted = False
            await strap.stop_advertising()
            await strap.disconnect_all()
            task = asyncio.create_task(self.reappear(strap, seconds))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        elif cmd == "out-of-range":
            # Silent at the link layer, no disconnect: the gateway learns it from the supervision
            # timeout. Out of reach for N s (no advertising either), then back, advertising fast.
            seconds = float(request.get("seconds", 10))
            strap.advertising_wanted = False
            self.air.muted.add(strap.address)
            timeout = self.radio.lose_link(strap.address)
            strap.event("out-of-range", seconds=seconds, supervision_timeout=timeout)
            task = asyncio.create_task(self.in_range_again(strap, seconds))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            return {"ok": True, "supervision_timeout": timeout}
        elif cmd == "period":
            strap.period = float(request["seconds"])
        elif cmd == "advertise":
            strap.advertising_wanted = bool(request.get("on", True))
            if strap.advertising_wanted:
                await strap.start_advertising()
            else:
                await strap.stop_advertising()
        else:
            return {"ok": False, "error": f"unknown command {cmd!r}"}
        return {"ok": True}

    async def in_range_again(self, strap: Strap, seconds: float) -> None:
        await asyncio.sleep(seconds)
        self.air.muted.discard(strap.address)
        strap.advertising_wanted = True
        await strap.start_advertising(fast=True)
        strap.event("back")

    async def reappear(self, strap: Strap, seconds: float) -> None:
        await asyncio.sleep(seconds)
        strap.held = False
        strap.advertising_wanted = True
        await strap.start_advertising()
        strap.event("back")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hci", required=True, help="transport for the kernel-facing controller, e.g. unix-server:/path/vhci.sock")
    parser.add_argument("--control", required=True, help="unix socket path for the JSON-lines control channel")
    parser.add_argument("--log", required=True, help="JSON-lines log of every value sent and every event")
    parser.add_argument("--straps", default=",".join(STRAPS), help="which straps exist (comma-separated keys of STRAPS)")
    parser.add_argument("--no-beacon", action="store_true", help="no non-HR advertiser")
    parser.add_argument("--period", type=float, default=0.25, help="seconds between notifications")
    args = parser.parse_args()
    logging.basicConfig(level=os.environ.get("BUMBLE_LOGLEVEL", "WARNING").upper())

    log = Log(args.log)
    air = Air()
    hci_transport = await open_transport(args.hci)
    kernel_side = KernelSide("kernel-side", host_source=hci_transport.source, host_sink=hci_transport.sink,
                             link=air, public_address="C0:FF:EE:48:47:01")
    # Bumble's emulated controller answers legacy scans with *extended* advertising reports when it
    # claims LE Extended Advertising, and with LL Privacy Linux waits for an Enhanced Connection
    # Complete event that Bumble never sends. Present a plain LE 4.x controller to the kernel.
    kernel_side.le_features &= ~(hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LL_PRIVACY)

    straps = {k: Strap(k, STRAPS[k], air, log, args.period) for k in args.straps.split(",") if k}
    for strap in straps.values():
        await strap.device.power_on()
        if strap.advertising_wanted:
            await strap.start_advertising()
    if not args.no_beacon:
        await make_beacon(air, log)
    control = Control(straps, log, kernel_side, air)
    await control.serve(args.control)
    log.write("mark", label="ready")
    print("READY", json.dumps({k: s.address for k, s in straps.items()}), flush=True)
    await asyncio.gather(*(s.run() for s in straps.values()))


if __name__ == "__main__":
    # The log is written line by line, so there is nothing to flush: end at once on SIGTERM/SIGINT.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
