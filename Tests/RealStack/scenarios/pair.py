"""`healthgate pair`: reads location, Device Information and battery and remembers the device;
with --bond the link reaches encryption through Just Works."""
from harness.ble import addr
from harness.core import Context, address_in, scenario
from harness.peer import BATTERY, DEVICE_INFO


def remembered(ctx: Context, key: str) -> dict:
    result = ctx.hg("devices", "--json")
    ctx.expect(result.rc == 0, "`healthgate devices --json` failed", result)
    devices = [d for d in ctx.json_objects(result.stdout) if isinstance(d, dict) and address_in(d, addr(ctx, key))]
    ctx.expect(devices, f"`healthgate devices --json` does not list strap {key} ({addr(ctx, key)}) after pairing",
               result)
    return devices[0]


def values(obj) -> list:
    if isinstance(obj, dict):
        return [v for x in obj.values() for v in values(x)]
    if isinstance(obj, list):
        return [v for x in obj for v in values(x)]
    return [obj]


@scenario("pair", "pair reads chest location, Device Information strings, battery; devices remembers them", order=30)
def pair(ctx: Context) -> None:
    result = ctx.hg("pair", addr(ctx, "A"), "--name", "Chest strap", timeout=90)
    ctx.expect(result.rc == 0, f"`healthgate pair {addr(ctx, 'A')}` did not exit 0", result)
    ctx.expect(ctx.peer.events("A", "connected", ctx.mark), "strap A never saw a connection from the gateway")
    device = remembered(ctx, "A")
    flat = values(device)
    text = [str(v).lower() for v in flat]
    missing = [f"{k}={v!r}" for k, v in DEVICE_INFO.items() if v.lower() not in text]
    ctx.expect(not missing, f"remembered device lacks Device Information strings {missing}: {device}")
    ctx.expect("chest" in text, f"remembered device does not say its sensor location is chest: {device}")
    ctx.expect(BATTERY["A"] in [v for v in flat if isinstance(v, (int, float)) and not isinstance(v, bool)],
               f"remembered device does not carry battery level {BATTERY['A']}%: {device}")
    ctx.expect("chest strap" in text, f"remembered device does not carry the --name 'Chest strap': {device}")
    ctx.expect(ctx.peer.events("A", "read-battery", ctx.mark), "strap A's battery level was never read")


@scenario("pair-bond", "pair --bond: Just Works pairing, link encrypted, device remembered", order=35)
def pair_bond(ctx: Context) -> None:
    result = ctx.hg("pair", addr(ctx, "B"), "--bond", timeout=90)
    ctx.expect(result.rc == 0, f"`healthgate pair {addr(ctx, 'B')} --bond` did not exit 0", result)
    paired = ctx.peer.events("B", "paired", ctx.mark)
    failed = ctx.peer.events("B", "pairing-failed", ctx.mark)
    encrypted = [e for e in ctx.peer.events("B", "encrypted", ctx.mark) if e.get("enabled")]
    agent = ctx.adapter.agent_log()
    ctx.expect(not failed, f"the strap reports a failed pairing: {failed}")
    ctx.expect(paired, "the strap never completed pairing (no SMP pairing happened); pairing agent said:\n" + agent)
    ctx.expect(encrypted, "the link to strap B never became encrypted after pairing")
    ctx.expect("accepted" in agent, "the kernel never asked the agent to confirm a Just Works pairing:\n" + agent)
    remembered(ctx, "B")
