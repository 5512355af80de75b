"""Issue 16's clock: the gateway's clock a year behind, stepped forward mid-run as NTP does.

A Raspberry Pi has no RTC: it boots with the time `fake-hwclock` saved at its last shutdown
(months old after a long power cut), or with 1970, and NTP steps the clock once it reaches a
server. Here `healthgate run` starts in the guest with the clock set a year behind (the guest
is shared by the boot's scenarios, so the clock is set back just before `run` starts rather
than at boot; `run` cannot tell the difference), ingests from strap A, and the clock is then set
to the real time with `date -s` (a `settimeofday`, as `systemd-timesyncd` and chrony step it).

What docs/operations.md ("The clock") promises, checked:
- `run` warns at start that the clock reads before 2026 and has not been set, and when it steps,
  once, at warning level: by how much, the old clock's range whose samples keep their dates;
- every notification is stored once, in order (before the step by the old clock, after it by
  the new one) and nothing is dated in 1970 or outside those two spans;
- the energy interval across the step lasts what really passed (seconds), not the year;
- `/metrics` counts the step (`healthgate_clock_steps_total 1`) and its size.
The guest's clock is set back to the real time whatever happens."""
import json
import re
import signal
import time
from datetime import datetime, timezone

from harness.ble import addr, compare, quiesce, run_config, settle, stored_for, wait_notifications, wait_subscribed
from harness.core import Context, scenario

YEAR = 365 * 86_400
HTTP_PORT = 8733


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


@scenario("clock", "run with the clock a year behind, stepped forward mid-run: warned at start and at the step, "
          "every sample stored in order, the energy interval across the step seconds long, the step in /metrics",
          order=60, boot=2)
def clock(ctx: Context) -> None:
    config = run_config(ctx, "clock", ["A"], extra=["[http]", f'listen = "127.0.0.1:{HTTP_PORT}"'])
    ctx.sh("ip link set lo up")
    token = ctx.hg("token", "create", "--name", "clock", "--read", "heartRate", "--metrics").stdout.strip()
    behind_from = time.time() - YEAR
    ctx.sh(f"date -u -s @{behind_from:.3f} >/dev/null")
    since = ctx.peer.mark("clock starts: guest clock a year behind")
    process = ctx.hg_spawn("run", "--config", config)
    stepped_at = None
    try:
        wait_subscribed(ctx, "A", since, process=process)
        wait_notifications(ctx, "A", since, 12, timeout=30)
        before_step = time.time()
        ctx.sh(f"date -u -s @{time.time():.3f} >/dev/null")
        stepped_at = time.time()
        ctx.say(f"  guest clock stepped forward a year at {datetime.fromtimestamp(stepped_at, timezone.utc).isoformat()}")
        after = ctx.peer.mark("clock stepped")
        wait_notifications(ctx, "A", after, 12, timeout=30)
        metrics = ctx.guest.sh(f"curl -s -H 'Authorization: Bearer {token}' http://127.0.0.1:{HTTP_PORT}/metrics",
                               timeout=15, check=False).stdout
        held = quiesce(ctx, ["A"])
        result = ctx.record(process.stop(sig=signal.SIGTERM, timeout=30))
        ctx.spawned.remove(process)
        ctx.expect(not result.timed_out and result.rc == 0,
                   "`healthgate run` did not drain, commit and exit 0 within 30 s of SIGTERM", result)
        settle(ctx, ["A"], held)
    finally:
        ctx.peer.command("release", strap="A")
        ctx.guest.sh(f"date -u -s @{time.time():.3f} >/dev/null", check=False)

    # What run said.
    warnings = [line for line in result.stderr.splitlines() if "system clock" in line]
    ctx.say(f"  run's clock lines: {warnings}")
    unset = [line for line in warnings if " warning " in line and "the system clock reads" in line and "has not been set" in line]
    ctx.expect(len(unset) == 1, f"run did not warn once at start that the clock (a year behind, before 2026) was not set: "
                                f"{warnings}", result)
    steps = [line for line in warnings if " warning " in line and "stepped forward by 365 d" in line]
    ctx.expect(len(steps) == 1, f"run did not say once that the clock stepped forward by 365 d: {warnings}", result)
    ctx.expect(steps and "by the old clock" in steps[0] and "the old clock was not set" in steps[0],
               f"the step's line does not name the old clock's range and that it was not set: {steps}", result)

    count = re.search(r"^healthgate_clock_steps_total (\S+)$", metrics, re.M)
    ctx.expect(count is not None and float(count.group(1)) == 1,
               f"/metrics does not count one clock step: {[l for l in metrics.splitlines() if 'clock' in l] or metrics[-600:]}")
    size = re.search(r"^healthgate_clock_last_step_seconds (\S+)$", metrics, re.M)
    ctx.expect(size is not None and abs(float(size.group(1)) - YEAR) < 600,
               f"/metrics does not give the step's size (about {YEAR} s): {size.group(0) if size else None}")

    # What the store holds: everything, once, in order (compare), dated in the two spans.
    sent = ctx.peer.notifications("A", since)
    heart = ctx.samples("heartRate")
    energy = ctx.samples("activeEnergyBurned")
    compare(ctx, "A", sent, heart, energy)
    mine = stored_for(heart, addr(ctx, "A"))
    old_span = (behind_from - 5, before_step - YEAR + 30)
    new_span = (before_step - 5, stepped_at + 600)
    outside = [s["start"] for s in mine
               if not (old_span[0] <= _seconds(s["start"]) <= old_span[1] or new_span[0] <= _seconds(s["start"]) <= new_span[1])]
    ctx.expect(not outside, f"heart-rate samples dated outside the old clock's span and the new one's "
                            f"(none may be in 1970 or anywhere else): {outside[:5]}")
    old = [s for s in mine if _seconds(s["start"]) <= old_span[1]]
    ctx.say(f"  {len(old)} heart-rate samples by the old clock, {len(mine) - len(old)} by the new one")
    ctx.expect(old and len(old) < len(mine), f"expected samples on both sides of the step: {len(old)} of {len(mine)} before it")
    mine_energy = stored_for(energy, addr(ctx, "A"))
    lengths = [(_seconds(e["end"]) - _seconds(e["start"]), e["start"], e["end"]) for e in mine_energy]
    long = [x for x in lengths if x[0] > 10 or x[0] < 0]
    ctx.expect(not long, f"energy intervals longer than 10 s or ending before they start (the step must not make "
                         f"one a year long): {long[:3]}")
    first_new = next((x for x in lengths if _seconds(x[1]) > old_span[1]), None)
    ctx.say(f"  the first energy interval by the new clock (it covers the step): {first_new}")
    ctx.expect(first_new is not None and any(_seconds(x[2]) <= old_span[1] for x in lengths),
               f"expected energy intervals on both sides of the step (the strap sends energy every 4th notification): {lengths}")
    across = [x for x in lengths if _seconds(x[1]) <= old_span[1] < _seconds(x[2])]
    ctx.expect(not across, f"an energy interval starts by the old clock and ends by the new one: {across[:3]}")
