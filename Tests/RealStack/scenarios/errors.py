"""Errors a user will meet: no adapter, adapter powered off, no capabilities when not root. Each
must be one clear sentence with a distinct exit code (69 unavailable, 77 no permission)."""
from harness.core import Context, one_sentence, scenario

MESSAGES: dict[str, str] = {}


@scenario("errors-no-adapter", "no Bluetooth adapter at all: scan says so, exit 69", adapter="down", order=5)
def no_adapter(ctx: Context) -> None:
    present = ctx.sh("ls /sys/class/bluetooth/ 2>/dev/null | grep -c hci || true")
    ctx.expect(present.stdout.strip() == "0", "harness: hci0 still exists", present)
    result = ctx.hg("scan", "--timeout", "3", timeout=60)
    ctx.expect(result.rc == 69, "`healthgate scan` without any adapter must exit 69", result)
    ctx.expect(one_sentence(result.stderr), "the error must be one clear sentence on stderr", result)
    ctx.expect("adapter" in result.stderr.lower(), "the sentence should say there is no Bluetooth adapter", result)
    MESSAGES["no-adapter"] = result.stderr.strip()


@scenario("errors-powered-off", "adapter present but powered off: scan says so, exit 69", order=90)
def powered_off(ctx: Context) -> None:
    ctx.adapter.power(False)
    try:
        result = ctx.hg("scan", "--timeout", "3", timeout=60)
    finally:
        ctx.adapter.power(True)
    ctx.expect(result.rc == 69, "`healthgate scan` with hci0 powered off must exit 69", result)
    ctx.expect(one_sentence(result.stderr), "the error must be one clear sentence on stderr", result)
    text = result.stderr.lower()
    ctx.expect("power" in text or " off" in text or "down" in text,
               "the sentence should say the adapter is powered off (and how to power it on)", result)
    if "no-adapter" in MESSAGES:
        ctx.expect(result.stderr.strip() != MESSAGES["no-adapter"],
                   "powered off and no adapter at all must not give the same message", result)


@scenario("errors-not-root", "not root, no capabilities: scan names the missing capability, exit 77", order=95)
def not_root(ctx: Context) -> None:
    result = ctx.hg("scan", "--timeout", "3", db=f"{ctx.guest_tmp}/nobody.sqlite", timeout=60,
                    prefix=["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"],
                    env={"HOME": "/run/hg", "XDG_DATA_HOME": "/run/hg"})
    ctx.expect(result.rc == 77, "`healthgate scan` as an unprivileged user without CAP_NET_RAW/CAP_NET_ADMIN "
                                "must exit 77 (no permission)", result)
    ctx.expect(one_sentence(result.stderr), "the error must be one clear sentence on stderr", result)
    text = result.stderr.lower()
    ctx.expect(any(w in text for w in ("cap_net", "capabilit", "root", "permission")),
               "the sentence should name the missing capability (CAP_NET_RAW/CAP_NET_ADMIN) or how to get it", result)
