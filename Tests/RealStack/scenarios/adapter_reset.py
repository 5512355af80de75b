"""Issue 16's `adapter-reset`: the adapter goes away under `healthgate run` and comes back.

While the daemon ingests from two straps, hci0 goes away twice: first powered off and on again
through mgmt (what `bluetoothctl power off/on`, rfkill and a suspend do), then removed altogether
and registered again (a USB dongle re-plugged or reset by its driver; on a Pi, `hciuart`
re-attaching the built-in controller). Each time the daemon must keep running, and within 5 s of
the adapter being powered again have reconnected and re-subscribed every strap by itself; say
once per strap, at warning level, that the adapter is off or gone (not "check the address",
not a line per retry); and store every notification the straps sent while connected, once, in
order.

Nothing is in flight when the adapter goes down (the straps hold their notifications 1.5 s
first): a notification the strap's controller still held at that instant is lost over the air
whatever the gateway does, yet the strap's log would count it as sent."""
import signal
import time

from harness.ble import addr, compare, quiesce, release, run_config, settle, wait_notifications, wait_subscribed
from harness.core import Context, scenario

KEYS = ["A", "B"]
BACK_WITHIN = 5.0
OFF_FOR = 6.0          # long enough for several reconnect attempts against the missing adapter
# (what happens, how it is undone, the words the daemon's warning must use)
ROUNDS = [
    ("powered off", lambda ctx: ctx.sh("btmgmt --index 0 power off"), lambda ctx: ctx.adapter.power(True),
     "is powered off"),
    # Unregistering hci0 sends the radio nothing; the peer's controller is told its radio is
    # gone, and the straps see their links time out, as they would when a dongle is pulled.
    ("removed", lambda ctx: (ctx.adapter.down(), ctx.peer.command("radio-gone")), lambda ctx: ctx.adapter.up(),
     "No Bluetooth adapter"),
]


@scenario("adapter-reset", "run with two straps: hci0 powered off and on, then removed and re-registered; "
          "every strap re-subscribed within 5 s, the outage logged once, nothing lost", order=58, boot=2)
def adapter_reset(ctx: Context) -> None:
    config = run_config(ctx, "adapter-reset", KEYS)
    since = ctx.peer.mark("adapter-reset starts")
    # At debug level: the attempts and their failures are in results/ when a bound is missed.
    process = ctx.hg_spawn("run", "--config", config, env={"HEALTHGATE_LOG": "debug"})
    restore = None
    try:
        for key in KEYS:
            wait_subscribed(ctx, key, since, process=process)
        for key in KEYS:
            wait_notifications(ctx, key, since, 8, timeout=30)
        for what, take_away, bring_back, _ in ROUNDS:
            quiesce(ctx, KEYS)
            cut = ctx.peer.mark(f"adapter {what} under the daemon")
            take_away(ctx)
            restore = bring_back
            for key in KEYS:
                gone = ctx.peer.wait_for(lambda: ctx.peer.events(key, "disconnected", cut), 10,
                                         f"strap {key}'s link to go down with the adapter")
                ctx.expect(gone, f"strap {key} stayed connected after the adapter was {what} (harness problem)")
            release(ctx, KEYS)
            time.sleep(OFF_FOR)
            ctx.expect(process.output()["running"], f"`healthgate run` exited while the adapter was {what}; "
                                                    f"stderr: {process.output()['stderr'][-1500:]}")
            back = ctx.peer.mark(f"adapter back after being {what}")
            bring_back(ctx)
            restore = None
            for key in KEYS:
                again = wait_subscribed(ctx, key, back, timeout=30 + BACK_WITHIN, process=process)
                delay = again["t"] - ctx.adapter.powered_at
                ctx.say(f"  {what}: strap {key}'s notifications re-enabled {delay:.2f}s after hci0 was powered again")
                ctx.expect(delay <= BACK_WITHIN, f"after the adapter was {what}, the daemon re-enabled strap {key}'s "
                                                 f"notifications {delay:.1f}s after it was powered again; expected "
                                                 f"within {BACK_WITHIN:.0f}s")
            resumed = ctx.peer.mark("both straps back")
            for key in KEYS:
                wait_notifications(ctx, key, resumed, 8, timeout=30)
        held = quiesce(ctx, KEYS)
        result = ctx.record(process.stop(sig=signal.SIGTERM, timeout=30))
        ctx.spawned.remove(process)
        ctx.expect(not result.timed_out and result.rc == 0,
                   "`healthgate run` did not drain, commit and exit 0 within 30 s of SIGTERM", result)
        settle(ctx, KEYS, held)
    finally:
        if restore is not None:
            restore(ctx)
        for key in KEYS:
            ctx.peer.command("release", strap=key)
    # Each outage in the log: once per strap at warning, in words about the adapter (a line per
    # retry would fill a Pi's journal during a long outage; "check the address" would send the
    # owner after the strap); nothing at error (nothing was given up).
    lines = result.stderr.splitlines()

    def level(line: str) -> str:
        parts = line.split(" ", 2)
        return parts[1] if len(parts) > 2 else ""
    warnings = [line for line in lines if level(line) == "warning"]
    ctx.say("  the daemon's warnings:\n    " + "\n    ".join(warnings))
    ctx.say("  its disconnect lines:\n    " + "\n    ".join(l for l in lines if "disconnected (" in l))
    (ctx.results / "daemon.log").write_text(result.stderr)
    for key in KEYS:
        mine = [line for line in warnings if f"Strap {key} " in line]
        for what, _, _, words in ROUNDS:
            said = [line for line in mine if words in line]
            ctx.expect(len(said) == 1, f"the daemon warned {len(said)} times that the adapter was {what} for strap "
                                       f"{key} (wanted once, with \"{words}\"): {mine}", result)
        ctx.expect(len(mine) == len(ROUNDS), f"the daemon logged other warnings for strap {key}: {mine}", result)
    errors = [line for line in lines if level(line) in ("error", "critical")]
    ctx.expect(not errors, f"the daemon logged errors during the adapter outages: {errors}", result)
    heart, energy = ctx.samples("heartRate"), ctx.samples("activeEnergyBurned")
    for key in KEYS:
        compare(ctx, key, ctx.peer.notifications(key, since), heart, energy)
