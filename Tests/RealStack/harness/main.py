"""Entry point of the real-stack harness (called by Tests/RealStack/run)."""
from __future__ import annotations

import argparse
import fcntl
import importlib
import json
import os
import pkgutil
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

from .adapter import Adapter
from .core import REGISTRY, Context, Scenario
from .errors import HarnessError, ScenarioFailure
from .guest import Guest
from .peer import Peer

HERE = Path(__file__).resolve().parent.parent           # Tests/RealStack
ROOT = HERE.parent.parent                               # the package root
GUEST_TMP = "/run/hg"                                   # a tmpfs in the guest (guest/init.sh)
GUEST_HEALTHGATE = f"{GUEST_TMP}/bin/healthgate"         # copied there, readable by everyone
BUDGET_SECONDS = float(os.environ.get("REALSTACK_BUDGET", 540))   # the harness must stay under 10 minutes
T0 = time.monotonic()


def say(message: str) -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {message}", flush=True)


def load_scenarios() -> None:
    import scenarios
    for module in pkgutil.iter_modules(scenarios.__path__):
        importlib.import_module(f"scenarios.{module.name}")


def find_kernel() -> Path:
    kernels = sorted(Path("/boot").glob("vmlinuz-*"), key=lambda p: [int(x) if x.isdigit() else x
                                                                      for x in p.name.replace("-", ".").split(".")])
    for kernel in reversed(kernels):
        release = kernel.name.removeprefix("vmlinuz-")
        modules = Path("/lib/modules") / release / "kernel/drivers/bluetooth"
        if any(modules.glob("hci_vhci.ko*")):
            if not os.access(kernel, os.R_OK):
                raise HarnessError(f"{kernel} is not readable (run as root)")
            return kernel
    raise HarnessError("no Debian kernel with hci_vhci found under /boot and /lib/modules: "
                       "install linux-image-amd64 (scripts/setup.sh does)")


def preflight(args) -> tuple[Path, Path]:
    missing = [tool for tool in ("qemu-system-x86_64", "gcc", "btmgmt", "btmon", "setpriv")
               if shutil.which(tool) is None]
    if missing:
        raise HarnessError(f"missing tools: {', '.join(missing)} (apt: qemu-system-x86 gcc bluez util-linux; "
                           "scripts/setup.sh installs them)")
    if not Path("/usr/bin/python3").exists():
        raise HarnessError("the guest agent needs /usr/bin/python3 (apt: python3)")
    kernel = find_kernel()
    healthgate = Path(args.healthgate or os.environ.get("HEALTHGATE_BIN") or ROOT / ".build/debug/healthgate")
    if not healthgate.is_file() or not os.access(healthgate, os.X_OK):
        raise HarnessError(f"no healthgate binary at {healthgate}: build it first (swift build --product healthgate) "
                           "or pass --healthgate PATH")
    return kernel, healthgate.resolve()


def build_helpers(bin_dir: Path) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in ("vhci_bridge", "pairing_agent"):
        source = HERE / "guest" / f"{name}.c"
        done = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(bin_dir / name), str(source)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise HarnessError(f"building {source.name} failed:\n{done.stderr}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="Tests/RealStack/run",
                                     description="Run healthgate against the real Linux Bluetooth stack in a QEMU guest.")
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help="run only this scenario (repeatable); default: all")
    parser.add_argument("--boot", type=int, metavar="N",
                        help="run only the scenarios of boot N (CI runs each boot in turn; see docs/realstack.md)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--healthgate", help="the healthgate binary (default: .build/debug/healthgate or $HEALTHGATE_BIN)")
    parser.add_argument("--workdir", default=str(HERE / "work"), help="results folder (default: Tests/RealStack/work)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(HERE))
    load_scenarios()
    ordered = sorted(REGISTRY.values(), key=lambda s: (s.order, s.name))
    if args.list:
        for s in ordered:
            print(f"{s.name:24} boot {s.boot}  {s.summary}")
        return 0
    unknown = [n for n in args.scenario if n not in REGISTRY]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(s.name for s in ordered)}")
        return 64
    selected = [s for s in ordered if (not args.scenario or s.name in args.scenario)
                and (args.boot is None or s.boot == args.boot)]

    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    lock = open(workdir / ".lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"another real-stack run is using {workdir} (its sockets and results would collide); "
              "wait for it, or pass --workdir DIR")
        print(f"0 passed, {len(selected)} failed")
        return 1
    # SIGTERM/SIGHUP (e.g. `timeout`, a closed terminal) unwind like Ctrl-C, so the guest and the
    # peer are always shut down: a QEMU left behind would eat a core for nothing.
    def interrupted(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)
    shutil.rmtree(workdir / "results", ignore_errors=True)
    (workdir / "results").mkdir(parents=True, exist_ok=True)
    outcomes: dict[str, tuple[bool, str, float]] = {}
    guest = peer = None
    try:
        kernel, healthgate = preflight(args)
        say(f"kernel {kernel}, healthgate {healthgate}, results in {workdir / 'results'}")
        build_helpers(workdir / "bin")
        peer = Peer(workdir, Path(sys.executable), say)
        peer.start()
        extra = [opt for s in selected for opt in s.qemu_opts]
        for s in selected:
            for disk in s.disks:    # fresh, empty, sparse; the scenario makes its file system
                image = workdir / f"{disk}.img"
                image.unlink(missing_ok=True)
                with open(image, "wb") as f:
                    f.truncate(256 << 20)
                extra += [f"-drive file={{workdir}}/{disk}.img,if=none,id={disk},format=raw",
                          f"-device virtio-blk-pci,drive={disk},serial={disk}"]
        guest = Guest(workdir, Path(sys.executable).parent, kernel, extra, peer.vhci_socket, say)
        guest.boot()
        helpers = workdir / "bin"

        def prepare(g: Guest) -> None:
            # Run healthgate from the guest's tmpfs: signals never hit a 9p read, and the unprivileged
            # user of the capability scenario can execute it whatever the checkout's permissions are.
            g.sh(f"mkdir -p {GUEST_TMP}/bin && cp {healthgate} {GUEST_HEALTHGATE} && "
                 f"cp {helpers}/vhci_bridge {helpers}/pairing_agent {GUEST_TMP}/bin/ && "
                 f"chmod 755 {GUEST_TMP}/bin {GUEST_TMP}/bin/*", timeout=60)
        prepare(guest)
        adapter = Adapter(guest, Path(GUEST_TMP) / "bin", say)
        for s in selected:
            outcomes[s.name] = run_one(s, guest, peer, adapter, healthgate, workdir, prepare)
    except HarnessError as error:
        say(f"HARNESS ERROR: {error}")
        for s in selected:
            outcomes.setdefault(s.name, (False, f"not run: harness error: {str(error).splitlines()[0]}", 0.0))
    except KeyboardInterrupt:
        for s in selected:
            outcomes.setdefault(s.name, (False, "not run: interrupted", 0.0))
    finally:
        if guest is not None:
            guest.shutdown()
        if peer is not None:
            peer.stop()

    passed = sum(1 for ok, _, _ in outcomes.values() if ok)
    failed = len(outcomes) - passed
    print("\n== real-stack results (details and btmon captures: "
          f"{workdir / 'results'}/<scenario>/)")
    for s in selected:
        ok, why, seconds = outcomes[s.name]
        print(f"  {'PASS' if ok else 'FAIL'}  {s.name:22} {seconds:6.1f}s  {'' if ok else why.splitlines()[0]}")
    print(f"harness wall time {time.monotonic() - T0:.1f}s")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


def run_one(s: Scenario, guest: Guest, peer: Peer | None, adapter: Adapter, healthgate: Path,
            workdir: Path, prepare=None) -> tuple[bool, str, float]:
    started = time.monotonic()
    if started - T0 > BUDGET_SECONDS:
        return False, f"not run: the harness passed its {BUDGET_SECONDS}s budget", 0.0
    results = workdir / "results" / s.name
    results.mkdir(parents=True, exist_ok=True)
    say(f"--- {s.name}: {s.summary}")
    ctx = Context(s.name, guest, peer, GUEST_HEALTHGATE, results, GUEST_TMP, say, host_healthgate=healthgate)
    if prepare is not None:
        ctx.prepare_guest = prepare
    btmon = None
    try:
        if s.adapter == "up":
            adapter.up()
        elif s.adapter == "down":
            adapter.down()
        ctx.adapter = adapter
        # btmon writes to the guest's tmpfs: interrupting a process in the middle of a 9p write can
        # wedge the guest's 9p mount (seen here), so captures are copied to the results afterwards.
        btmon = guest.spawn(["btmon", "-w", f"{GUEST_TMP}/{s.name}.snoop"], quiet=True)
        for key in ctx.straps:      # a scenario starts with every strap notifying normally
            peer.command("release", strap=key)
        ctx.mark = peer.mark(f"scenario {s.name}")
        s.function(ctx)
        ok, why = True, ""
    except ScenarioFailure as failure:
        ok, why = False, str(failure)
    except HarnessError as error:
        ok, why = False, f"harness: {error}"
        if not guest.vng or guest.vng.poll() is not None:
            raise
    except Exception as error:   # a bug in the scenario is a failure too, with its traceback
        ok, why = False, f"{type(error).__name__}: {error}\n{traceback.format_exc()}"
    finally:
        ctx.cleanup()
        if btmon is not None and not ctx.rebooted:     # a power cut took btmon with the guest
            try:
                stopped = btmon.stop(signal.SIGINT, timeout=10)
                if stopped.timed_out or stopped.rc not in (0, -2, 130):
                    say(f"  btmon: {stopped.describe(300)}")
            except Exception as error:
                say(f"  btmon could not be stopped: {error}")
        try:
            guest.sh(f"cp -f {ctx.db}* {results}/ 2>/dev/null; cp -f {GUEST_TMP}/{s.name}.snoop {results}/btmon.snoop",
                     timeout=30, check=False)
        except Exception:
            pass
        if peer.alive():
            with open(results / "peripheral.jsonl", "w") as f:
                for r in peer.records(getattr(ctx, "mark", 0)):
                    f.write(json.dumps(r, sort_keys=True) + "\n")
    seconds = time.monotonic() - started
    if ok:
        say(f"PASS {s.name} ({seconds:.1f}s)")
    else:
        say(f"FAIL {s.name} ({seconds:.1f}s): {why}")
        (results / "FAILED.txt").write_text(why + "\n")
    return ok, why, seconds


if __name__ == "__main__":
    sys.exit(main())
