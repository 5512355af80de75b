"""Two straps on the same air at once: both captured, each sample tagged with its own device."""
from harness.ble import compare, pair, quiesce, settle, stop_live, wait_notifications, wait_subscribed
from harness.core import Context, scenario


@scenario("two-straps", "live with two remembered straps: both captured, samples tagged per device", order=60)
def two_straps(ctx: Context) -> None:
    pair(ctx, "A")
    pair(ctx, "B")
    since = ctx.peer.mark("two straps start")
    process = ctx.hg_spawn("live", "--json")          # default: every remembered strap
    wait_subscribed(ctx, "A", since, process=process)
    wait_subscribed(ctx, "B", since, process=process)
    wait_notifications(ctx, "A", since, 12, timeout=30)
    wait_notifications(ctx, "B", since, 12, timeout=30)
    held = quiesce(ctx, ["A", "B"])
    stop_live(ctx, process)
    settle(ctx, ["A", "B"], held)
    heart, energy = ctx.samples("heartRate"), ctx.samples("activeEnergyBurned")
    sent_a, sent_b = ctx.peer.notifications("A", since), ctx.peer.notifications("B", since)
    ctx.expect(len(heart) == len(sent_a) + len(sent_b),
               f"the store holds {len(heart)} heartRate samples; the straps sent {len(sent_a)} + {len(sent_b)}")
    compare(ctx, "A", sent_a, heart, energy)
    compare(ctx, "B", sent_b, heart, energy)
