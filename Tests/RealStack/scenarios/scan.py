"""`healthgate scan`: the strap is found with its address, address type, name and RSSI within 5 s,
and the non-HR advertiser next to it is not listed."""
from harness.ble import addr
from harness.core import Context, address_in, find_key, scenario
from harness.peer import BEACON


@scenario("scan", "scan --json finds strap A (address, random type, name, RSSI) in 5 s, not the beacon", order=20)
def scan(ctx: Context) -> None:
    result = ctx.hg("scan", "--timeout", "5", "--json", timeout=60)
    ctx.expect(result.rc == 0, "`healthgate scan --timeout 5 --json` did not exit 0", result)
    objects = [o for o in ctx.json_objects(result.stdout) if isinstance(o, dict)]
    ctx.expect(objects, "`healthgate scan --json` printed no JSON object", result)
    a = [o for o in objects if address_in(find_key(o, "address"), addr(ctx, "A"))]
    ctx.expect(a, f"strap A ({addr(ctx, 'A')}) is not in the scan output", result)
    strap = a[-1]
    kind = str(find_key(strap, "addressType", "address_type", "type"))
    ctx.expect("random" in kind.lower(), f"strap A's address type should be random (static), got {kind!r}", result)
    name = find_key(strap, "name", "localName")
    ctx.expect(name == ctx.straps["A"]["name"], f"strap A's name should be {ctx.straps['A']['name']!r}, got {name!r}",
               result)
    rssi = find_key(strap, "rssi", "RSSI")
    ctx.expect(isinstance(rssi, (int, float)) and -127 <= rssi <= 20, f"strap A's RSSI should be dBm, got {rssi!r}",
               result)
    for key in ("B", "C"):
        ctx.expect(any(address_in(find_key(o, "address"), addr(ctx, key)) for o in objects),
                   f"strap {key} ({addr(ctx, key)}) advertises 0x180D too but is not listed", result)
    ctx.expect(not any(address_in(o, BEACON["address"]) for o in objects),
               f"the non-HR beacon {BEACON['address']} (Battery service only) is listed, but scan without --all "
               "must list heart-rate straps only", result)
