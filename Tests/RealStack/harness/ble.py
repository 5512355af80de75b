"""Shared steps of the BLE scenarios: pairing as setup, a `healthgate live` session, and the
comparison of what the strap sent (peripheral.jsonl) with what the store holds."""
from __future__ import annotations

import time
from datetime import datetime

from .core import Context, address_in, find_key
from .guest import Process, Result

CONNECT_TIMEOUT = 60      # healthgate start + LE connect + discovery under TCG, generous


def addr(ctx: Context, key: str) -> str:
    return ctx.straps[key]["address"]


def run_config(ctx: Context, name: str, keys: list[str], status_interval: int = 5,
               extra: list[str] | None = None) -> str:
    """Writes a `healthgate run` configuration for straps `keys` (named "Strap K") to the guest's
    tmpfs and returns its path; `extra` lines (e.g. an `[http]` table) go after the straps."""
    path = f"{ctx.guest_tmp}/{name}.toml"
    lines = [f"status_interval = {status_interval}"]
    for key in keys:
        lines += ["[[strap]]", f'address = "{addr(ctx, key)}"', f'name = "Strap {key}"']
    lines += extra or []
    ctx.sh("printf '%s\\n' " + " ".join(f"'{line}'" for line in lines) + f" > {path}")
    return path


def pair(ctx: Context, key: str, *extra: str) -> Result:
    """`healthgate pair` as a scenario's setup step: a failure says so. Returns once the strap has
    seen pair's link go down: the kernel keeps an LE link up about 2 s after the last socket on it
    closes, and a next command connecting inside that window reuses the link, so the strap would
    log no new connection (and a check that the command really connected could not tell)."""
    since = ctx.peer.mark(f"pair {key}")
    result = ctx.hg("pair", addr(ctx, key), *extra, timeout=90)
    ctx.expect(result.rc == 0, f"setup: `healthgate pair {addr(ctx, key)}` (strap {key}) failed, so this "
                               "scenario cannot run its own check", result)
    down = ctx.peer.wait_for(lambda: ctx.peer.events(key, "disconnected", since), 10,
                             f"strap {key} to see pair's link go down")
    ctx.expect(down, f"strap {key} was still connected 10s after `healthgate pair` exited: the gateway "
                     "must not leave the strap's link up", result)
    return result


def wait_subscribed(ctx: Context, key: str, since: int, timeout: float = CONNECT_TIMEOUT,
                    process: Process | None = None) -> dict:
    def check():
        if process is not None and not process.output()["running"]:
            out = process.output()
            ctx.fail(f"healthgate exited (rc {out['rc']}) before strap {key} was subscribed:\n"
                     f"  stdout: {out['stdout'][-1500:]}\n  stderr: {out['stderr'][-1500:]}")
        found = ctx.peer.events(key, "subscribed", since)
        return found[0] if found else None
    event = ctx.peer.wait_for(check, timeout, f"strap {key} subscription", poll=0.5)
    ctx.expect(event is not None, f"strap {key} never saw its Heart Rate Measurement CCCD written within "
                                  f"{timeout:.0f}s (no notifications enabled); peer events: "
                                  f"{[e['event'] for e in ctx.peer.events(key, since=since)]}")
    return event


def wait_notifications(ctx: Context, key: str, since: int, count: int, timeout: float) -> list[dict]:
    sent = ctx.peer.wait_for(lambda: (lambda n: n if len(n) >= count else None)(ctx.peer.notifications(key, since)),
                             timeout, f"{count} notifications from strap {key}")
    ctx.expect(sent is not None, f"strap {key} sent only {len(ctx.peer.notifications(key, since))} notifications "
                                 f"in {timeout:.0f}s (wanted {count}); was the subscription lost?")
    return sent


def quiesce(ctx: Context, keys: list[str]) -> int:
    """Stop the straps' notifications before stopping the gateway, so nothing is in flight when it
    disconnects: every value the log says was sent must then be in the store. Returns the log
    position of the hold, for ``settle``."""
    position = len(ctx.peer.records())
    for key in keys:
        ctx.peer.command("hold", strap=key)
    time.sleep(1.5)
    return position


def settle(ctx: Context, keys: list[str], since: int, timeout: float = 10) -> None:
    """After the gateway exited, wait until each strap saw its link go down, then let the straps
    notify again. (The kernel keeps an LE link up about 2 s after the last socket on it closes; a
    strap notifying into that window would log values no gateway could receive.)"""
    try:
        for key in keys:
            down = ctx.peer.wait_for(lambda: ctx.peer.events(key, "disconnected", since), timeout,
                                     f"strap {key} to see the link go down")
            ctx.expect(down, f"strap {key} was still connected {timeout:.0f}s after `healthgate live` exited: "
                             "the gateway must not leave the strap's link up")
    finally:
        release(ctx, keys)


def release(ctx: Context, keys: list[str]) -> None:
    for key in keys:
        ctx.peer.command("release", strap=key)


def stop_live(ctx: Context, live: Process) -> Result:
    result = ctx.finish(live, timeout=20)
    ctx.expect(not result.timed_out, "`healthgate live` did not stop within 20 s of Ctrl-C (SIGINT)", result)
    ctx.expect(result.rc == 0, "`healthgate live` did not exit 0 after Ctrl-C (a clean disconnect and summary "
                               "are expected)", result)
    return result


# -- comparison ------------------------------------------------------------------------------------

def _contact(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "detected" if value else "notDetected"
    text = str(value).replace("_", "").replace(" ", "").lower()
    return {"detected": "detected", "notdetected": "notDetected", "notsupported": "notSupported",
            "contact": "detected", "nocontact": "notDetected"}.get(text, str(value))


def _rr(sample) -> list[int]:
    value = find_key(sample, "rrIntervals", "rrTicks", "rr", "rrIntervalTicks")
    if isinstance(value, dict):
        value = find_key(value, "ticks", "values", "intervals")
    if value is None:
        return []
    out = []
    for item in value:
        if isinstance(item, dict):
            item = find_key(item, "ticks", "value")
        out.append(int(item))
    return out


def stored_for(samples: list[dict], address: str) -> list[dict]:
    return [s for s in samples if address_in(s.get("device"), address) or address_in(s.get("metadata"), address)]


def when(sample: dict) -> datetime:
    return datetime.fromisoformat(sample["start"].replace("Z", "+00:00"))


def compare(ctx: Context, key: str, sent: list[dict], heart: list[dict], energy: list[dict]) -> None:
    """Stored heartRate samples of strap ``key`` must equal what it sent: same count, same order,
    same bpm, contact and RR ticks; the activeEnergyBurned deltas must add up to the energy sent."""
    address = addr(ctx, key)
    mine = stored_for(heart, address)
    problems = []
    if len(mine) != len(sent):
        problems.append(f"strap {key} sent {len(sent)} notifications but the store holds {len(mine)} heartRate "
                        f"samples from {address} ({'missing' if len(mine) < len(sent) else 'duplicated/extra'})")
    for i, (s, m) in enumerate(zip(sent, mine)):
        got = {"bpm": m.get("value"), "contact": _contact(find_key(m.get("metadata", {}), "sensorContact",
                                                                    "HKMetadataKeyHeartRateSensorContact",
                                                                    "heartRateSensorContact")),
               "rr": _rr(m)}
        want = {"bpm": s["bpm"], "contact": s["contact"], "rr": s["rr"]}
        if got["contact"] is None and want["contact"] == "notSupported":
            got["contact"] = "notSupported"
        if got["bpm"] is None or abs(float(got["bpm"]) - want["bpm"]) > 1e-9 or got["contact"] != want["contact"] \
                or got["rr"] != want["rr"]:
            problems.append(f"sample #{i} (notification n={s['n']}, payload {s['hex']}): sent {want}, stored {got}")
        if len(problems) > 6:
            break
    energies = [s["energy"] for s in sent if s["energy"] is not None]
    mine_energy = stored_for(energy, address)
    if len(energies) >= 2:
        want_kj = energies[-1] - energies[0]
        got_kj = sum(float(e.get("value", 0)) for e in mine_energy)
        if abs(got_kj - want_kj) > 1e-6:
            problems.append(f"strap {key} energy expended went {energies[0]} -> {energies[-1]} kJ "
                            f"({want_kj} kJ); the store's activeEnergyBurned samples from it add up to {got_kj} kJ "
                            f"({len(mine_energy)} samples)")
    if problems:
        ctx.fail("store does not match the peripheral's log:\n  " + "\n  ".join(problems))


def live_objects(ctx: Context, text: str) -> list[dict]:
    """The heart-rate measurement objects of `live --json` (event "heartRate", or any object with bpm)."""
    return [o for o in ctx.json_objects(text) if isinstance(o, dict) and o.get("event", "heartRate") == "heartRate"
            and find_key(o, "bpm", "beatsPerMinute") is not None]
