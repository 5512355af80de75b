"""Issue 16's `power-cut`: the machine loses power while the daemon ingests.

SIGKILL of the daemon (the crash tests) leaves the kernel's page cache standing: everything
committed survives. A power cut does not: whatever the kernel had not written to the disk is
gone. Here `healthgate run` ingests from strap A onto an ext4 file system on a virtio disk of the
guest (a Pi's SD card), with the default flush interval (250 ms) and sync interval (5 s); then
QEMU is killed outright (no shutdown, no sync: the guest's page cache is lost; what it had handed
to the disk stays, as on a card that honours flushes) and the guest boots again.

Checked against docs/operations.md ("SD cards": a power cut loses at most the sync interval of
committed batches plus the flush window): the file system mounts (journal replay), `healthgate
check` finds the store intact, the stored heart-rate samples are exactly the first notifications
the strap sent, in order, none twice and none missing in between, and every notification sent up
to 5 s + 0.25 s (plus 1.5 s for the air and the harness's clock) before the cut is stored.

It restarts the guest, so it runs in boot 3 with the other scenario that does (bluetoothd-reboot)."""
import json

from harness.ble import _rr, addr, run_config, stored_for, wait_notifications, wait_subscribed
from harness.core import Context, scenario

SYNC_INTERVAL = 5.0      # [ingest] sync_interval_ms, the default
FLUSH_INTERVAL = 0.25    # [ingest] flush_interval_ms, the default
SLACK = 1.5              # the air, the guest's receipt, the host's clock reading of the cut
MOUNT = "/run/hg/power-cut"    # the guest's root is the host's, read-only: a mount point on its tmpfs


@scenario("power-cut", "run ingests onto an ext4 disk, QEMU is killed (no sync), the guest boots again: the store is "
          "intact (healthgate check), the samples are the strap's first notifications in order, the loss within "
          "the sync interval", order=999, boot=3, disks=["powercut"])
def power_cut(ctx: Context) -> None:
    device = ctx.disk("powercut")
    made = ctx.sh(f"mkfs.ext4 -q -F {device} && mkdir -p {MOUNT} && mount {device} {MOUNT}", timeout=60)
    ctx.expect(made.rc == 0, f"could not make and mount an ext4 file system on {device} (harness problem)", made)
    ctx.db = f"{MOUNT}/health.sqlite"      # the scenario's store is on the disk (read back after the boot)
    config = run_config(ctx, "power-cut", ["A"])
    since = ctx.peer.mark("power-cut starts")
    process = ctx.hg_spawn("run", "--config", config)
    wait_subscribed(ctx, "A", since, process=process)
    # About 12 s of notifications at 4 Hz: two sync intervals and more behind the cut.
    wait_notifications(ctx, "A", since, 48, timeout=60)
    cut = ctx.power_cut()
    sent = [n for n in ctx.peer.notifications("A", since) if n["t"] < cut]
    ctx.say(f"  {len(sent)} notifications sent before the cut")

    mounted = ctx.guest.sh(f"mkdir -p {MOUNT} && mount {ctx.disk('powercut')} {MOUNT} && dmesg | grep -i 'EXT4-fs ({device[5:]})' | tail -3",
                           timeout=60, check=False)
    ctx.say(f"  mounted again: {mounted.stdout.strip()}")
    ctx.expect(mounted.rc == 0, "the disk's ext4 file system did not mount after the power cut", mounted)
    check = ctx.hg("check", "--json")
    ctx.expect(check.rc == 0, "`healthgate check` does not find the store intact after the power cut", check)
    report = json.loads(check.stdout or "{}")
    ctx.say(f"  healthgate check: {report}")
    ctx.expect(report.get("ok") is True, f"healthgate check: {report}")

    mine = stored_for(ctx.samples("heartRate"), addr(ctx, "A"))
    ctx.expect(len(mine) <= len(sent), f"the store holds {len(mine)} heart-rate samples from A, more than the "
                                       f"{len(sent)} notifications it sent before the cut")
    problems = []
    for i, (s, m) in enumerate(zip(sent, mine)):
        got = {"bpm": m.get("value"), "rr": _rr(m)}
        want = {"bpm": s["bpm"], "rr": s["rr"]}
        if got["bpm"] is None or abs(float(got["bpm"]) - want["bpm"]) > 1e-9 or got["rr"] != want["rr"]:
            problems.append(f"sample #{i} (notification n={s['n']}): sent {want}, stored {got}")
        if len(problems) > 5:
            break
    ctx.expect(not problems, "the stored samples are not the strap's first notifications in order (a hole, a "
                             "duplicate or a damaged row):\n  " + "\n  ".join(problems))
    bound = cut - SYNC_INTERVAL - FLUSH_INTERVAL - SLACK
    must = [n for n in sent if n["t"] <= bound]
    lost = sent[len(mine):]
    lost_seconds = cut - lost[0]["t"] if lost else 0.0
    ctx.say(f"  stored {len(mine)} of {len(sent)}: the last {len(lost)} notifications ({lost_seconds:.2f} s before "
            f"the cut) were lost; the bound is {SYNC_INTERVAL + FLUSH_INTERVAL:.2f} s (+{SLACK} s slack)")
    ctx.expect(len(mine) >= len(must), f"the power cut lost notifications sent more than the sync interval + flush "
                                       f"window before it: {len(must)} were sent before {bound:.2f} "
                                       f"(cut at {cut:.2f}), the store holds {len(mine)}")
