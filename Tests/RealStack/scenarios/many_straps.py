"""Issue 16's `many-straps`: seven straps at once under `healthgate run`.

Six straps notify at 4 Hz and one at 20 Hz for a minute over the real kernel stack. Every
notification each strap sent is stored once, in the order it was sent, tagged with its own strap;
SIGTERM then drains and exits 0, and every link goes down.

What it found (docs/bluetooth-linux.md, "Connect timeouts"): the kernel makes LE connections one
at a time, so with `run`'s old 10 s connect timeout the seventh strap's connect was cancelled
just as its turn came, and the immediate retry met a kernel bug (Debian 12's 6.1: list
corruption in `hci_chan_del` on close) that killed the strap's source thread: the strap stayed
connected and was never subscribed. On failure this scenario saves the daemon's threads
(`tasks.txt`, gdb's `stacks.txt`) and the kernel log (`dmesg.txt`) to its results."""
import signal
import time

from harness.ble import compare, quiesce, run_config, settle, wait_subscribed
from harness.core import Context, scenario

KEYS = ["A", "B", "C", "D", "E", "F", "G"]
FAST = "G"                  # 20 Hz; the others at the peer's default 4 Hz
FAST_PERIOD, PERIOD = 0.05, 0.25
SECONDS = 60


@scenario("many-straps", "run with 7 straps (6 at 4 Hz, one at 20 Hz) for a minute: every notification "
          "stored once, per-strap order kept", order=80)
def many_straps(ctx: Context) -> None:
    dormant = [k for k in KEYS if ctx.straps[k].get("dormant")]
    for key in dormant:
        ctx.peer.command("advertise", strap=key, on=True)
    ctx.peer.command("period", strap=FAST, seconds=FAST_PERIOD)
    config = run_config(ctx, "many-straps", KEYS, status_interval=10)
    since = ctx.peer.mark("many straps start")
    try:
        process = ctx.hg_spawn("run", "--config", config, env={"HEALTHGATE_LOG": "debug"})
        for key in KEYS:
            try:
                wait_subscribed(ctx, key, since, timeout=120, process=process)
            except Exception:
                tasks = ctx.guest.sh("p=$(pidof healthgate); for t in /proc/$p/task/*; do echo \"== $(cat $t/comm) $(cat $t/wchan) $(awk '{print $3}' $t/stat)\"; cat $t/stack 2>/dev/null | head -8; done",
                                     timeout=60, check=False).stdout
                (ctx.results / "tasks.txt").write_text(tasks)
                kernel = ctx.guest.sh("dmesg | tail -150", timeout=60, check=False).stdout
                (ctx.results / "dmesg.txt").write_text(kernel)
                stacks = ctx.guest.sh("gdb -p $(pidof healthgate) -batch -ex 'thread apply all bt 40' 2>&1 | grep -E '^Thread|^#' | grep -vE ' in (__|_dispatch|start_thread|clone)' | head -400",
                                      timeout=120, check=False).stdout
                (ctx.results / "stacks.txt").write_text(stacks) if hasattr(ctx, "results") else print(stacks)
                raise
        started = ctx.peer.mark("every strap subscribed")
        time.sleep(SECONDS)
        fast_in_minute = len(ctx.peer.notifications(FAST, started))
        held = quiesce(ctx, KEYS)
        result = ctx.record(process.stop(sig=signal.SIGTERM, timeout=60))
        ctx.spawned.remove(process)
        ctx.expect(not result.timed_out and result.rc == 0,
                   "`healthgate run` with 7 straps did not drain, commit and exit 0 within 60 s of SIGTERM", result)
        settle(ctx, KEYS, held, timeout=60)
    finally:
        ctx.peer.command("period", strap=FAST, seconds=PERIOD)
        for key in dormant:
            try:
                ctx.peer.command("advertise", strap=key, on=False)
            except Exception:   # not advertising (still connected when a check failed): nothing to stop
                pass
    # The load was what it says: the fast strap really notified at about 20 Hz during the minute.
    ctx.say(f"  strap {FAST} sent {fast_in_minute} notifications in {SECONDS} s "
            f"({fast_in_minute / SECONDS:.1f}/s); the others about {SECONDS / PERIOD:.0f} each")
    ctx.expect(fast_in_minute >= 0.8 * SECONDS / FAST_PERIOD,
               f"strap {FAST} sent only {fast_in_minute} notifications in {SECONDS} s (wanted about "
               f"{SECONDS / FAST_PERIOD:.0f}): the peer could not keep the 20 Hz load (harness problem)")
    # Thousands of samples: read on the host from a copy of the store (quicker than megabytes of
    # JSON through the guest agent's channel under TCG).
    heart, energy = ctx.samples("heartRate", on_host=True), ctx.samples("activeEnergyBurned", on_host=True)
    sent = {key: ctx.peer.notifications(key, since) for key in KEYS}
    total = sum(len(v) for v in sent.values())
    ctx.say(f"  {total} notifications sent by {len(KEYS)} straps, {len(heart)} heartRate samples stored")
    ctx.expect(len(heart) == total, f"the store holds {len(heart)} heartRate samples; the straps sent {total} "
                                    f"({', '.join(f'{k} {len(v)}' for k, v in sent.items())})")
    for key in KEYS:
        compare(ctx, key, sent[key], heart, energy)
