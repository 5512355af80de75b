"""Scenario registry and the context every scenario gets.

A scenario is a function ``def name(ctx: Context) -> None`` decorated with ``@scenario(...)`` in a
module under Tests/RealStack/scenarios/. It passes by returning and fails by raising
ScenarioFailure (use ``ctx.expect``/``ctx.fail``); any other exception fails it too. The runner
imports every module in scenarios/, sorts the scenarios by ``order`` and runs them in one guest.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

from .errors import HarnessError, ScenarioFailure
from .guest import Guest, Process, Result
from .peer import STRAPS, Peer

REGISTRY: dict[str, "Scenario"] = {}


@dataclass
class Scenario:
    name: str
    function: Callable[["Context"], None]
    summary: str
    adapter: str            # "up": hci0 powered with the pairing agent; "down": no adapter; "any": untouched
    order: int
    qemu_opts: list[str] = field(default_factory=list)
    boot: int = 1
    disks: list[str] = field(default_factory=list)


def scenario(name: str, summary: str, adapter: str = "up", order: int = 100,
             qemu_opts: list[str] | None = None, boot: int = 1, disks: list[str] | None = None):
    """Register a scenario. ``qemu_opts`` are extra QEMU arguments the guest needs for it (they are
    added to the single boot whenever the scenario is selected, e.g. a USB controller). ``boot``
    is the guest boot CI runs it in (`run --boot N`): the scenarios are split over boots so each
    stays inside the harness's budget, rather than dropping any. ``disks`` names raw disk images
    the harness creates empty (256 MiB, sparse, in the workdir) and attaches as virtio disks whose
    serial is the name (``Context.disk(name)`` finds the guest's device)."""
    def register(function):
        if name in REGISTRY:
            raise HarnessError(f"scenario {name!r} is defined twice")
        REGISTRY[name] = Scenario(name, function, summary, adapter, order, list(qemu_opts or []), boot, list(disks or []))
        return function
    return register


class Context:
    """What a scenario works with: the guest, the peer, its own results folder, and helpers."""

    def __init__(self, name: str, guest: Guest, peer: Peer | None, healthgate: Path, results: Path,
                 guest_tmp: str, log, host_healthgate: Path | None = None):
        self.name, self.guest, self.peer, self.healthgate = name, guest, peer, healthgate
        self.host_healthgate = host_healthgate    # the same binary, to read a copied store on the host
        self.results, self.guest_tmp, self.say = results, guest_tmp, log
        self.db = f"{guest_tmp}/{name}.sqlite"     # each scenario gets its own store ($HEALTHGATE_DB)
        self.transcript = open(results / "commands.log", "a")
        self.spawned: list[Process] = []
        self.straps = STRAPS
        self.rebooted = False          # power_cut() booted the guest again
        self.prepare_guest = lambda guest: None   # set by the runner: what a fresh boot needs

    # -- assertions ------------------------------------------------------------------------------
    def fail(self, message: str, result: Result | None = None) -> None:
        raise ScenarioFailure(message + (f"\n{result.describe()}" if result is not None else ""))

    def expect(self, condition, message: str, result: Result | None = None) -> None:
        if not condition:
            self.fail(message, result)

    # -- running things --------------------------------------------------------------------------
    def record(self, result: Result) -> Result:
        self.transcript.write(result.describe(limit=20000) + "\n\n")
        self.transcript.flush()
        return result

    def hg(self, *args: str, timeout: float = 60, db: str | None = None, env: dict | None = None,
           prefix: list[str] | None = None) -> Result:
        """Run ``healthgate ARGS`` in the guest with the scenario's store (``$HEALTHGATE_DB``, so
        commands without a --db option run unchanged) and log it."""
        argv = [*(prefix or []), str(self.healthgate), *args]
        environment = {"HEALTHGATE_DB": db or self.db, **(env or {})}
        self.say(f"  $ {shlex.join(argv)}")
        return self.record(self.guest.run(argv, timeout=timeout, env=environment))

    def hg_spawn(self, *args: str, db: str | None = None, env: dict | None = None) -> Process:
        argv = [str(self.healthgate), *args]
        self.say(f"  $ {shlex.join(argv)} &")
        process = self.guest.spawn(argv, env={"HEALTHGATE_DB": db or self.db, **(env or {})})
        self.spawned.append(process)
        return process

    def finish(self, process: Process, timeout: float = 20) -> Result:
        """Ctrl-C a spawned healthgate and wait for it (SIGKILL after ``timeout``)."""
        result = self.record(process.stop(timeout=timeout))
        if process in self.spawned:
            self.spawned.remove(process)
        return result

    def sh(self, script: str, timeout: float = 60) -> Result:
        self.say(f"  # {script}")
        return self.record(self.guest.sh(script, timeout=timeout, check=False))

    # -- healthgate output -----------------------------------------------------------------------
    @staticmethod
    def json_objects(text: str) -> list:
        """Objects from JSON-lines output, or from one JSON array/object; non-JSON lines are skipped."""
        text = text.strip()
        if not text:
            return []
        try:
            value = json.loads(text)
            return value if isinstance(value, list) else [value]
        except json.JSONDecodeError:
            pass
        out = []
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("{") or line.startswith("["):
                try:
                    value = json.loads(line)
                except json.JSONDecodeError:
                    continue
                out.extend(value if isinstance(value, list) else [value])
        return out

    def samples(self, type_identifier: str, on_host: bool = False) -> list[dict]:
        """The store's samples of one type, through ``healthgate samples --type T --json``, oldest first.

        ``on_host``: the store is copied into the results folder (shared with the guest) and read
        by the same binary on the host. For thousands of samples: quicker than megabytes of JSON
        through the guest agent's channel under TCG. Only once nothing writes the store."""
        if on_host and self.host_healthgate is not None:
            copy = self.results / f"{self.name}-read.sqlite"
            self.guest.sh(f"rm -f {copy}*; for f in {self.db}*; do cp -f \"$f\" {copy}${{f#{self.db}}}; done", timeout=60)
            argv = [str(self.host_healthgate), "samples", "--db", str(copy), "--type", type_identifier, "--json"]
            self.say(f"  (host) $ {shlex.join(argv)}")
            done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            result = self.record(Result(argv, done.returncode, done.stdout, done.stderr, 0.0, False))
        else:
            result = self.hg("samples", "--type", type_identifier, "--json")
        self.expect(result.rc == 0, f"`healthgate samples --type {type_identifier} --json` failed", result)
        try:
            value = json.loads(result.stdout)
        except json.JSONDecodeError as error:
            self.fail(f"`healthgate samples --json` did not print a JSON array ({error})", result)
        self.expect(isinstance(value, list), "`healthgate samples --json` did not print a JSON array", result)
        # Sort by time, not by text: "…:19Z" sorts after "…:19.726Z" as a string ('.' < 'Z').
        return sorted(value, key=lambda s: (_instant(s.get("start")), _instant(s.get("end"))))

    def disk(self, name: str) -> str:
        """The guest's block device of the scenario's disk ``name`` (virtio_blk loaded first)."""
        found = self.guest.sh(f"modprobe virtio_blk; for i in $(seq 50); do for d in /sys/block/vd*; do "
                              f"[ \"$(cat $d/serial 2>/dev/null)\" = {name} ] && echo /dev/${{d##*/}} && exit 0; done; "
                              f"sleep 0.1; done; exit 1", timeout=30, check=False)
        self.expect(found.rc == 0 and found.stdout.strip(), f"the guest has no virtio disk with serial {name} (harness problem)", found)
        return found.stdout.strip()

    def power_cut(self) -> float:
        """Kills QEMU outright (SIGKILL: no shutdown, no sync; the guest's page cache is lost as in a
        power cut, what the guest had handed to its disks stays) and boots the guest again, ready
        for commands (the healthgate binary copied again). Returns when QEMU was killed (host
        time). The processes this scenario spawned died with the guest, and there is no adapter
        until ``ctx.adapter.up()`` (the next scenario's set-up brings it up again)."""
        cut = self.guest.kill()
        self.spawned.clear()
        self.rebooted = True
        self.say(f"  power cut: QEMU killed; booting the guest again")
        self.guest.boot()
        self.prepare_guest(self.guest)
        adapter = getattr(self, "adapter", None)
        if adapter is not None:
            adapter.forget()
        return cut

    def cleanup(self) -> None:
        for process in list(self.spawned):
            try:
                self.finish(process, timeout=10)
            except Exception:
                pass
        self.transcript.close()


def address_in(value, address: str) -> bool:
    """True when ``address`` (case-insensitive) appears anywhere in a JSON value."""
    needle = address.lower()
    if isinstance(value, str):
        return needle in value.lower()
    if isinstance(value, dict):
        return any(address_in(v, address) for v in value.values())
    if isinstance(value, list):
        return any(address_in(v, address) for v in value)
    return False


def find_key(value, *names):
    """The first value under any of ``names`` (searched depth-first through dicts), or None."""
    if isinstance(value, dict):
        for name in names:
            if name in value:
                return value[name]
        for v in value.values():
            found = find_key(v, *names)
            if found is not None:
                return found
    return None


def one_sentence(stderr: str) -> bool:
    """A user-facing error: short, no stack trace, no Swift runtime crash text."""
    text = stderr.strip()
    return (0 < len(text) <= 600 and "Fatal error" not in text and "Stack dump" not in text
            and not re.search(r"\bat /.*\.swift:\d+", text))


def _instant(text: str | None) -> float:
    """An ISO 8601 timestamp from the CLI as Unix seconds (missing → -inf, so it sorts first)."""
    if not text:
        return float("-inf")
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
