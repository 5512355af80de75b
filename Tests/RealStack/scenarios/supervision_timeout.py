"""Issue 16's `supervision-timeout`: a strap goes out of range without a disconnect.

Under `healthgate run`, strap A stops answering at the link layer: nothing reaches it or comes
from it any more, and no LL_TERMINATE_IND is sent. The gateway's controller ends the link when the
connection's supervision timeout has passed (HCI Disconnection Complete, reason 0x08 Connection
Timeout), as a real one does. The daemon must then show A as disconnected within a few seconds —
in `/v1/devices` (connected false, no heart rate, no contact: no stale bpm) and `/metrics`
(`healthgate_device_connected` 0) — log why in words about range, and reconnect and re-subscribe
by itself within 5 s of the strap advertising again; everything the strap sent is stored once.

The strap holds its notifications 1.5 s before it goes (nothing in flight: a notification its
controller still held would be lost over the air, yet its log would count it as sent)."""
import json
import re
import signal
import time

from harness.ble import addr, compare, quiesce, release, settle, wait_notifications, wait_subscribed
from harness.core import Context, scenario

HTTP_PORT = 8732
OUT_FOR = 8.0
BACK_WITHIN = 5.0
NOTICED_WITHIN = 3.0     # after the supervision timeout: the kernel's report, the daemon's event, a poll


@scenario("supervision-timeout", "a strap out of range without a disconnect: run sees the supervision timeout, "
          "shows it disconnected with no bpm, reconnects within 5 s of its return", order=59, boot=2)
def supervision_timeout(ctx: Context) -> None:
    config = f"{ctx.guest_tmp}/supervision.toml"
    ctx.sh(f"printf '%s\\n' 'status_interval = 5' '[[strap]]' 'address = \"{addr(ctx, 'A')}\"' "
           f"'name = \"Chest A\"' '[http]' 'listen = \"127.0.0.1:{HTTP_PORT}\"' > {config}")
    ctx.sh("ip link set lo up")
    token = ctx.hg("token", "create", "--name", "watch", "--read", "heartRate", "--metrics").stdout.strip()

    def get(path: str) -> str:
        return ctx.guest.sh(f"curl -s -H 'Authorization: Bearer {token}' http://127.0.0.1:{HTTP_PORT}{path}",
                            timeout=15, check=False).stdout

    def strap_state() -> dict | None:
        try:
            devices = json.loads(get("/v1/devices") or "[]")
        except ValueError:
            return None
        for d in devices:
            c = d.get("connection") or {}
            if c.get("kind") == "strap" and c.get("name") == "Chest A":
                return c
        return None

    since = ctx.peer.mark("supervision-timeout starts")
    process = ctx.hg_spawn("run", "--config", config)
    try:
        wait_subscribed(ctx, "A", since, process=process)
        wait_notifications(ctx, "A", since, 8, timeout=30)
        live = ctx.peer.wait_for(lambda: (lambda c: c if c and c.get("heartRate") else None)(strap_state()), 20,
                                 "strap A's heart rate in /v1/devices")
        ctx.expect(live and live.get("connected") is True, f"/v1/devices never showed strap A connected with a heart "
                                                           f"rate: {strap_state()}")
        quiesce(ctx, ["A"])
        cut = ctx.peer.mark("A goes out of range")
        reply = ctx.peer.command("out-of-range", strap="A", seconds=OUT_FOR)
        went = time.time()
        timeout = reply.get("supervision_timeout")
        ctx.expect(timeout is not None, f"strap A had no link to lose (harness problem): {reply}")
        ctx.say(f"  strap A silent at the link layer; the connection's supervision timeout is {timeout:.2f}s")
        # No goodbye on the air: the daemon learns it from the gateway's controller.
        gone = ctx.peer.wait_for(lambda: (lambda c: c if c and c.get("connected") is False else None)(strap_state()),
                                 timeout + NOTICED_WITHIN + 10, "/v1/devices to show strap A disconnected")
        noticed = time.time() - went
        ctx.say(f"  /v1/devices shows strap A disconnected {noticed:.2f}s after it went silent: {gone}")
        ctx.expect(gone is not None, f"/v1/devices still shows strap A connected {timeout + NOTICED_WITHIN + 10:.0f}s "
                                     f"after it went out of range: {strap_state()}")
        ctx.expect(noticed <= timeout + NOTICED_WITHIN,
                   f"the daemon showed strap A disconnected {noticed:.1f}s after it went silent; the supervision "
                   f"timeout is {timeout:.2f}s, expected within {timeout + NOTICED_WITHIN:.1f}s")
        ctx.expect("heartRate" not in gone and "contact" not in gone,
                   f"/v1/devices still shows a heart rate or contact for the disconnected strap A: {gone}")
        metrics = get("/metrics")
        connected = re.search(r'^healthgate_device_connected\{[^}]*name="Chest A"[^}]*\} (\S+)$', metrics, re.M)
        ctx.expect(connected is not None and float(connected.group(1)) == 0,
                   f"/metrics does not report strap A disconnected: "
                   f"{[l for l in metrics.splitlines() if 'Chest A' in l] or metrics[-600:]}")
        back = ctx.peer.wait_for(lambda: ctx.peer.events("A", "back", cut), OUT_FOR + 10, "strap A to come back")
        ctx.expect(back, "strap A never came back into range (harness problem)")
        release(ctx, ["A"])
        again = wait_subscribed(ctx, "A", cut, timeout=30 + BACK_WITHIN, process=process)
        delay = again["t"] - back[0]["t"]
        ctx.say(f"  daemon re-enabled notifications {delay:.2f}s after the strap was back")
        ctx.expect(delay <= BACK_WITHIN, f"the daemon re-enabled notifications {delay:.1f}s after the strap was back; "
                                         f"expected within {BACK_WITHIN:.0f}s")
        resumed = ctx.peer.mark("A back")
        wait_notifications(ctx, "A", resumed, 8, timeout=30)
        held = quiesce(ctx, ["A"])
        result = ctx.record(process.stop(sig=signal.SIGTERM, timeout=30))
        ctx.spawned.remove(process)
        ctx.expect(not result.timed_out and result.rc == 0,
                   "`healthgate run` did not drain, commit and exit 0 within 30 s of SIGTERM", result)
        settle(ctx, ["A"], held)
    finally:
        ctx.peer.command("release", strap="A")
    lost = [line for line in result.stderr.splitlines() if "disconnected (" in line]
    ctx.say(f"  the daemon's disconnect line: {lost}")
    ctx.expect(len(lost) == 1 and "timed out" in lost[0] and "range" in lost[0],
               f"the daemon did not log one disconnect that says the link timed out (out of range): {lost}", result)
    compare(ctx, "A", ctx.peer.notifications("A", since), ctx.samples("heartRate"), ctx.samples("activeEnergyBurned"))
