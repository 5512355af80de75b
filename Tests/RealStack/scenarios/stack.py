"""The harness's own smoke test: the guest kernel has a powered hci0 whose radio is the Bumble air,
and BlueZ's stock tools (not healthgate) see the strap on it. If this fails, every BLE scenario's
failure is the harness's, not healthgate's."""
from harness.core import Context, scenario


@scenario("stack", "hci0 exists, is powered through mgmt, and `btmgmt find` sees strap A", order=10)
def stack(ctx: Context) -> None:
    info = ctx.sh("btmgmt --index 0 info")
    ctx.expect(info.rc == 0 and "hci0" in info.stdout, "btmgmt does not see hci0", info)
    settings = info.stdout.split("current settings:")[-1]
    ctx.expect("powered" in settings and "le" in settings.split(), "hci0 is not powered with LE enabled", info)
    found = ctx.sh("timeout 12 btmgmt --index 0 find -l", timeout=30)
    address = ctx.straps["A"]["address"]
    ctx.expect(address in found.stdout.upper(),
               f"`btmgmt find -l` did not report strap A ({address}) on the virtual air", found)
