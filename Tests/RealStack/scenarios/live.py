"""`healthgate live --json`: ≥ 20 notifications; the stored samples equal what the strap sent."""
from harness.ble import addr, compare, live_objects, pair, quiesce, settle, stop_live, wait_notifications, \
    wait_subscribed
from harness.core import Context, scenario


@scenario("live", "live --json: ≥20 notifications; stored heartRate/energy equal the strap's log exactly", order=40)
def live(ctx: Context) -> None:
    pair(ctx, "A")
    since = ctx.peer.mark("live starts")
    process = ctx.hg_spawn("live", addr(ctx, "A"), "--json")
    wait_subscribed(ctx, "A", since, process=process)
    wait_notifications(ctx, "A", since, 24, timeout=60)
    held = quiesce(ctx, ["A"])
    result = stop_live(ctx, process)
    settle(ctx, ["A"], held)
    sent = ctx.peer.notifications("A", since)
    shown = live_objects(ctx, result.stdout)
    ctx.expect(len(shown) >= 20, f"`live --json` printed {len(shown)} measurement objects, expected ≥ 20 "
                                 f"(the strap sent {len(sent)})", result)
    ctx.expect(len(shown) == len(sent), f"`live --json` printed {len(shown)} measurements but the strap sent "
                                        f"{len(sent)}", result)
    compare(ctx, "A", sent, ctx.samples("heartRate"), ctx.samples("activeEnergyBurned"))
