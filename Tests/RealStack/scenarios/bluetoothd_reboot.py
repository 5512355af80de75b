"""Issue 16's `bluetoothd` after a reboot: a bond made through bluetoothd survives it, and `run`
reconnects to the strap encrypted with the stored key, without pairing again.

bluetoothd keeps its bonds in /var/lib/bluetooth and loads their keys into the kernel when it
starts (mgmt Load Long Term Keys); the kernel then encrypts a link to a bonded strap with that key.
Here /var/lib/bluetooth is an ext4 disk of the guest (as a Pi's SD card): strap B is bonded with
`healthgate pair --bond` beside bluetoothd and bluetoothctl's agent, the disk is synced and the
guest is stopped and booted again, bluetoothd starts on the same disk, and `healthgate run` with
B's `[[strap]]` marked `encrypt = true` must subscribe to it over an encrypted link (the strap logs
the encryption) with no new pairing (the strap logs none), and store what it sent."""
import signal
import time

from harness.ble import addr, compare, quiesce, run_config, settle, wait_notifications, wait_subscribed
from harness.core import Context, scenario
from scenarios.bluetoothd import start_bluetoothd


def _agent(ctx: Context):
    # bluetoothctl's agent, answering bluetoothd's "Accept pairing (yes/no)" (docs/operations.md).
    return ctx.guest.spawn(["/bin/sh", "-c", "(echo 'agent NoInputNoOutput'; echo 'default-agent'; "
                                             "for i in $(seq 120); do sleep 1; echo yes; done) | bluetoothctl"])


@scenario("bluetoothd-reboot", "a bond made through bluetoothd survives a reboot: run with encrypt = true reconnects "
          "encrypted with the stored key, no new pairing", order=95, boot=3, disks=["btstate"])
def bluetoothd_reboot(ctx: Context) -> None:
    device = ctx.disk("btstate")
    made = ctx.sh(f"mkfs.ext4 -q -F {device}", timeout=60)
    ctx.expect(made.rc == 0, f"could not make an ext4 file system on {device} (harness problem)", made)
    ctx.adapter.stop_agent()
    daemon = start_bluetoothd(ctx, state=device)
    agent = _agent(ctx)
    time.sleep(3)
    since = ctx.peer.mark("pair --bond beside bluetoothd, its state on a disk")
    bonded = ctx.hg("pair", addr(ctx, "B"), "--bond", timeout=90)
    agent.stop(signal.SIGTERM, timeout=10)
    ctx.expect(bonded.rc == 0, "`healthgate pair --bond` beside bluetoothd with bluetoothctl's agent did not exit 0", bonded)
    ctx.expect("encrypt = true" in bonded.stdout, "pair --bond did not tell how to make run's reconnects encrypted", bonded)
    ctx.expect(ctx.peer.events("B", "paired", since), "strap B logged no pairing for `pair --bond` (harness problem)")
    info = ctx.guest.sh(f"cat /var/lib/bluetooth/*/{addr(ctx, 'B')}/info", check=False)
    ctx.expect("LongTermKey" in info.stdout, "bluetoothd did not store strap B's bond on its disk", info)
    (ctx.results / "bluetoothd-before.log").write_text(daemon.output()["stderr"])

    # A reboot: everything on the disk (sync), then the guest stops and boots again.
    ctx.guest.sh("sync", timeout=30, check=False)
    ctx.power_cut()
    ctx.adapter.up()
    ctx.adapter.stop_agent()        # bluetoothd answers, as on a Pi
    daemon = start_bluetoothd(ctx, state=ctx.disk("btstate"))
    try:
        kept = ctx.guest.sh(f"cat /var/lib/bluetooth/*/{addr(ctx, 'B')}/info", check=False)
        ctx.expect("LongTermKey" in kept.stdout, "strap B's bond is not on bluetoothd's disk after the reboot", kept)
        config = run_config(ctx, "bluetoothd-reboot", ["B"], extra=["encrypt = true"])
        since = ctx.peer.mark("run with encrypt = true after the reboot")
        process = ctx.hg_spawn("run", "--config", config)
        # bluetoothd may connect a bonded strap itself and hold its ATT channel (see the bluetoothd
        # scenario): run then says so, and one `bluetoothctl disconnect` frees it.
        subscribed = ctx.peer.wait_for(lambda: ctx.peer.events("B", "subscribed", since), 20, "B subscribed by run")
        if not subscribed:
            said = [l for l in process.output()["stderr"].splitlines() if "Strap B" in l]
            ctx.say(f"  not subscribed within 20 s; run says {said[-2:]}; freeing the link bluetoothd holds")
            ctx.sh(f"bluetoothctl disconnect {addr(ctx, 'B')}", timeout=30)
        wait_subscribed(ctx, "B", since, process=process)
        encrypted = [e for e in ctx.peer.events("B", "encrypted", since) if e.get("enabled")]
        paired = ctx.peer.events("B", "paired", since)
        ctx.say(f"  after the reboot: encrypted events {len(encrypted)}, pairings {len(paired)}")
        ctx.expect(encrypted, "run's link to strap B after the reboot was not encrypted (encrypt = true, a stored bond)")
        ctx.expect(not paired, f"strap B was paired again after the reboot: the stored key was not used ({paired})")
        wait_notifications(ctx, "B", since, 12, timeout=30)
        held = quiesce(ctx, ["B"])
        result = ctx.record(process.stop(sig=signal.SIGTERM, timeout=30))
        ctx.spawned.remove(process)
        ctx.expect(not result.timed_out and result.rc == 0, "`healthgate run` after the reboot did not exit 0", result)
        settle(ctx, ["B"], held)
        compare(ctx, "B", ctx.peer.notifications("B", since), ctx.samples("heartRate"), ctx.samples("activeEnergyBurned"))
    finally:
        (ctx.results / "bluetoothd.log").write_text(daemon.output()["stderr"])
        daemon.stop(signal.SIGTERM, timeout=10)
        ctx.guest.sh("pkill dbus-daemon; umount /var/lib/bluetooth", check=False)
        ctx.adapter.start_agent()
