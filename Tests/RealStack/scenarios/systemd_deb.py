"""Issue 16's `systemd-deb`: the Debian package installed with apt and run by systemd, as on a Pi.

The harness's guest runs virtme-ng's init over the host's read-only root, not systemd. So the
guest starts a **systemd container** (Debian's `systemd-nspawn --boot`) on that same root with a
tmpfs overlay (`--volatile=overlay`: apt can write /usr, /etc and /var; nothing reaches the host).
It shares the guest's kernel and network namespace, so its services see the guest's hci0 and
the real Bluetooth stack. (`vng --systemd` was tried: in a host that is itself a container,
systemd ignores the kernel command line and its unit overrides, and its tmpfiles walk the host's
/tmp over 9p for minutes.)

The package is `scripts/package-deb.sh` run on the binary under test (the debug build: its Swift
runtime comes from the toolchain under /opt/swift, which the container's root shares, hence
`--allow-unpackaged-libs`; the release package links that runtime in and differs only in
/usr/bin/healthgate). Checked:
- `apt install ./healthgate_*.deb` works; the postinst made the `healthgate` system user (in
  `dialout`) and /var/lib/healthgate (0700), and started the service, idle;
- with strap A in /etc/healthgate/healthgate.toml and `systemctl restart`, `systemctl status`
  shows the daemon's status line "1/1 straps subscribed" (Type=notify, STATUS=);
- the process runs as `healthgate`, not root, with exactly CAP_NET_RAW and CAP_NET_ADMIN;
- the journal files the daemon's lines at their levels (no "<6>" prefix left in a message; the
  start line at info; nothing at warning or worse from the daemon in a clean run);
- a hung daemon (SIGSTOP) is killed by the watchdog (WatchdogSec=30) and restarted by systemd;
  every sample committed before the hang is still there and the new process stores again;
- `apt remove` stops the service and leaves /var/lib/healthgate and its store intact, and so
  does `apt purge`.

bluetoothd is masked in the container: the `bluetoothd` scenarios prove the daemon beside it; here
it would only add its own adapter management to what is checked. Runs in a boot of its own (boot 4):
the install takes one to three minutes under TCG, which boot 3's budget cannot also hold."""
from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

from harness.ble import addr, wait_notifications, wait_subscribed
from harness.core import Context, scenario
from harness.guest import Process, Result

ROOT = Path(__file__).resolve().parents[3]          # the package root (scripts/package-deb.sh)
STORE = "/var/lib/healthgate/health.sqlite"
CONFIG = "/etc/healthgate/healthgate.toml"
WATCHDOG = 30                                       # samples/healthgate.service: WatchdogSec=30
RESTART = 5                                         # RestartSec=5
# CAP_NET_ADMIN is bit 12, CAP_NET_RAW bit 13 (linux/capability.h).
NET_CAPS = (1 << 12) | (1 << 13)
# apt without the package lists: every dependency is installed already (the container's root is the
# host's), and parsing Debian's 19 MB of lists under TCG took about a minute per apt run.
APT = ("DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/dev/null "
       "-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=")
MASKED = ["bluetooth.service", "mosquitto.service", "postgresql.service", "systemd-timesyncd.service",
          "apt-daily.timer", "apt-daily-upgrade.timer", "man-db.timer", "e2scrub_all.timer", "fstrim.timer"]


class Container:
    """A systemd container on the guest's root (systemd-nspawn --boot, a tmpfs overlay)."""

    def __init__(self, ctx: Context, deb_dir: str, tools: str):
        self.ctx, self.deb_dir, self.tools = ctx, deb_dir, tools
        self.nspawn: Process | None = None
        self.leader = 0

    def start(self, timeout: float = 120) -> None:
        ctx = self.ctx
        made = ctx.sh("mkdir -p /run/nsroot && (mountpoint -q /run/nsroot || mount --bind / /run/nsroot)")
        ctx.expect(made.rc == 0, "could not bind the guest's root for the container (harness problem)", made)
        argv = ["systemd-nspawn", "-D", "/run/nsroot", "--volatile=overlay", "--boot", "--register=no",
                "--keep-unit", "--console=passive", "-M", "hg-systemd", "--capability=CAP_NET_ADMIN",
                f"--bind-ro={self.deb_dir}:/run/hgdeb", f"--bind-ro={self.tools}:/run/hgbin",
                *[f"systemd.mask={unit}" for unit in MASKED]]
        ctx.say(f"  $ {shlex.join(argv)} &")
        self.nspawn = ctx.guest.spawn(argv, quiet=True)
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            # The container's PID 1 is nspawn's child named systemd (nspawn's helper children that
            # come and go before it are not it).
            found = ctx.guest.sh(f"pgrep -P {self.nspawn.pid} -x systemd | head -1", check=False, timeout=15).stdout.strip()
            self.leader = int(found) if found.isdigit() else 0
            if not self.nspawn.output()["running"]:
                out = self.nspawn.output()
                ctx.fail(f"systemd-nspawn exited (rc {out['rc']}) before its systemd was up:\n"
                         f"  stdout: {out['stdout'][-1500:]}\n  stderr: {out['stderr'][-1500:]}")
            if self.leader:
                state = self.run(["systemctl", "is-system-running"], timeout=15).stdout.strip()
                if state in ("running", "degraded"):
                    break
            time.sleep(1)
        ctx.expect(state in ("running", "degraded"),
                   f"the container's systemd did not finish booting within {timeout:.0f}s (state {state!r})")
        failed = self.run(["systemctl", "--failed", "--no-legend", "--plain"], timeout=30)
        ctx.say(f"  container up (systemd {state}); failed units: {failed.stdout.strip() or 'none'}")

    def run(self, argv: list[str], timeout: float = 60) -> Result:
        """Runs ARGV inside the container (its mount, PID, UTS, IPC and cgroup namespaces)."""
        full = ["nsenter", "-t", str(self.leader), "-m", "-u", "-i", "-p", "-C", *argv]
        return self.ctx.record(self.ctx.guest.run(full, timeout=timeout))

    def sh(self, script: str, timeout: float = 60) -> Result:
        self.ctx.say(f"  (container) # {script}")
        return self.run(["/bin/sh", "-c", script], timeout=timeout)

    def stop(self) -> None:
        if self.nspawn is None:
            return
        if self.leader:
            self.run(["systemctl", "poweroff"], timeout=15)
        done = self.nspawn.wait(timeout=60)
        if done.timed_out:
            self.nspawn.stop(signal.SIGKILL, timeout=10)
        self.nspawn = None


def build_package(ctx: Context) -> Path:
    out = ctx.results / "deb"
    argv = [str(ROOT / "scripts/package-deb.sh"), "--binary", str(ctx.host_healthgate), "--allow-unpackaged-libs",
            "--compression", "none", "--out", str(out)]
    ctx.say(f"  (host) $ {shlex.join(argv)}")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    ctx.record(Result(argv, done.returncode, done.stdout, done.stderr, 0.0, False))
    ctx.expect(done.returncode == 0, f"scripts/package-deb.sh failed:\n{done.stderr[-2000:]}")
    debs = sorted(out.glob("healthgate_*.deb"))
    ctx.expect(len(debs) == 1, f"scripts/package-deb.sh made {len(debs)} packages in {out}: {debs}")
    return debs[0]


def heart_rates(ctx: Context, box: Container) -> set[tuple[str, str]]:
    """The stored heart-rate quantities, each as (UUID, start): a quantity inside a series shares
    the series' UUID (docs/data-model.md), so the UUID alone does not tell quantities apart."""
    listed = box.run(["/run/hgbin/healthgate", "samples", "--db", STORE, "--type", "heartRate", "--json"], timeout=60)
    ctx.expect(listed.rc == 0, "`healthgate samples` could not read the service's store", listed)
    return {(s["uuid"], s["start"]) for s in json.loads(listed.stdout or "[]")}


def show(box: Container, *properties: str) -> dict[str, str]:
    shown = box.run(["systemctl", "show", "healthgate", *[f"-p{p}" for p in properties]], timeout=30)
    return dict(line.split("=", 1) for line in shown.stdout.splitlines() if "=" in line)


def wait_status(ctx: Context, box: Container, pattern: str, timeout: float) -> str:
    deadline, status = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        status = show(box, "StatusText").get("StatusText", "")
        if re.search(pattern, status):
            return status
        time.sleep(1)
    ctx.fail(f"systemd's status of healthgate.service never matched {pattern!r} within {timeout:.0f}s "
             f"(last: {status!r})", box.run(["systemctl", "status", "healthgate", "--no-pager", "-l"]))
    return status


@scenario("systemd-deb", "the .deb installs with apt in a systemd container; the service runs as its own user with two "
          "capabilities, says its status, logs at journal levels, is restarted by the watchdog when hung without losing "
          "committed samples, and apt remove/purge keep the store", order=990, boot=4)
def systemd_deb(ctx: Context) -> None:
    deb = build_package(ctx)
    ctx.say(f"  package {deb.name}, {deb.stat().st_size / 1e6:.0f} MB")
    box = Container(ctx, str(deb.parent), f"{ctx.guest_tmp}/bin")
    try:
        box.start()
        installed = box.sh(f"{APT} install /run/hgdeb/{deb.name}", timeout=300)
        ctx.expect(installed.rc == 0, "`apt install ./healthgate_*.deb` failed", installed)
        user = box.run(["id", "healthgate"])
        ctx.expect(user.rc == 0 and "(dialout)" in user.stdout,
                   "the package did not create the `healthgate` system user in group dialout", user)
        state_dir = box.run(["stat", "-c", "%a %U %G", "/var/lib/healthgate"])
        ctx.expect(state_dir.stdout.split() == ["700", "healthgate", "healthgate"],
                   "/var/lib/healthgate is not 0700 healthgate:healthgate after the install", state_dir)
        idle = wait_status(ctx, box, r"ingesting from 0 source", 60)
        ctx.say(f"  installed and started, idle: {idle!r}")

        # Strap A configured, as a Pi owner does after `healthgate scan`.
        box.sh(f"printf '%s\\n' 'status_interval = 2' '[store]' 'path = \"{STORE}\"' '[[strap]]' "
               f"'address = \"{addr(ctx, 'A')}\"' 'name = \"Chest A\"' > {CONFIG}")
        since = ctx.peer.mark("systemd-deb: the service starts with strap A")
        restarted = box.run(["systemctl", "restart", "healthgate"], timeout=90)
        ctx.expect(restarted.rc == 0, "`systemctl restart healthgate` failed", restarted)
        wait_subscribed(ctx, "A", since)
        status = wait_status(ctx, box, r"\b1/1 straps subscribed", 30)
        ctx.say(f"  systemctl status: {status!r}")
        wait_notifications(ctx, "A", since, 12, timeout=60)

        first = show(box, "MainPID", "NRestarts")
        pid = int(first.get("MainPID", "0"))
        ctx.expect(pid > 0, f"healthgate.service has no main process: {first}")
        proc = box.run(["sh", "-c", f"stat -c %U /proc/{pid} && grep -E '^Cap(Eff|Prm|Bnd):' /proc/{pid}/status"])
        lines = proc.stdout.split()
        ctx.expect(proc.rc == 0 and lines and lines[0] == "healthgate",
                   "the daemon does not run as the `healthgate` user", proc)
        caps = {lines[i].rstrip(":"): int(lines[i + 1], 16) for i in range(1, len(lines) - 1, 2)}
        ctx.say(f"  main PID {pid} runs as healthgate, capabilities {', '.join(f'{k} {v:#x}' for k, v in caps.items())}")
        ctx.expect(caps.get("CapEff") == NET_CAPS and caps.get("CapBnd") == NET_CAPS,
                   f"the daemon's capabilities are not exactly CAP_NET_RAW and CAP_NET_ADMIN: {caps}", proc)

        journal = box.run(["journalctl", "-u", "healthgate", "-o", "json", "--no-pager"], timeout=60)
        entries = [json.loads(line) for line in journal.stdout.splitlines() if line.startswith("{")]
        mine = [e for e in entries if e.get("SYSLOG_IDENTIFIER") == "healthgate" and isinstance(e.get("MESSAGE"), str)]
        prefixed = [e["MESSAGE"] for e in mine if re.match(r"^<\d>", e["MESSAGE"])]
        ctx.expect(mine and not prefixed, f"the journal kept the daemon's syslog prefixes as text (or has no lines "
                                          f"from it): {prefixed[:3] or len(mine)}", journal)
        # The start line is a notice, the status lines info: two levels, as the daemon wrote them.
        start = [e for e in mine if e["MESSAGE"].startswith("healthgate run:")]
        ctx.expect(start and all(e.get("PRIORITY") == "5" for e in start),
                   f"the daemon's start line is not at notice (5) in the journal: {start[:2]}", journal)
        status_lines = [e for e in mine if "straps subscribed" in e["MESSAGE"]]
        ctx.expect(status_lines and all(e.get("PRIORITY") == "6" for e in status_lines),
                   f"the daemon's status lines are not at info (6) in the journal: {status_lines[:2]}", journal)
        loud = [f"<{e.get('PRIORITY')}> {e['MESSAGE']}" for e in mine if e.get("PRIORITY") in ("0", "1", "2", "3", "4")]
        ctx.expect(not loud, f"a clean run logged at warning or worse: {loud[:5]}", journal)
        levels = sorted({e.get("PRIORITY") for e in mine})
        ctx.say(f"  journal: {len(mine)} lines from the daemon at priorities {levels}, none at warning or worse")

        # A hung daemon: stopped, it sends no WATCHDOG=1; systemd aborts it after WatchdogSec and
        # starts it again after RestartSec.
        committed = heart_rates(ctx, box)
        ctx.expect(committed, "the service stored no heart rate from strap A before the hang")
        hang = ctx.peer.mark("systemd-deb: SIGSTOP the daemon")
        hung_at = time.monotonic()
        box.run(["kill", "-STOP", str(pid)])
        ctx.say(f"  SIGSTOP to the daemon ({len(committed)} heart-rate samples committed); waiting for the watchdog")
        deadline, now = hung_at + WATCHDOG + RESTART + 60, first
        while time.monotonic() < deadline:
            now = show(box, "MainPID", "NRestarts", "ActiveState")
            if now.get("MainPID", "0") not in ("0", str(pid)) and now.get("ActiveState") == "active":
                break
            time.sleep(2)
        took = time.monotonic() - hung_at
        ctx.expect(now.get("MainPID", "0") not in ("0", str(pid)) and int(now.get("NRestarts", "0")) >= 1,
                   f"systemd did not kill and restart the hung daemon within {WATCHDOG + RESTART + 60} s: {now}",
                   box.run(["systemctl", "status", "healthgate", "--no-pager", "-l"]))
        said = box.run(["journalctl", "-u", "healthgate", "--no-pager", "-o", "cat", "-g", "[Ww]atchdog timeout"])
        ctx.expect(said.rc == 0 and "atchdog timeout" in said.stdout,
                   "the journal does not say the watchdog ended the hung daemon", said)
        # What systemd did between the hang and the new process, for the transcript (commands.log).
        box.run(["sh", "-c", "journalctl -u healthgate --no-pager -o short-monotonic | tail -30"])
        ctx.say(f"  hung daemon {pid} replaced by {now['MainPID']} after {took:.0f} s (NRestarts {now['NRestarts']}): "
                f"{said.stdout.strip().splitlines()[0]}")
        wait_subscribed(ctx, "A", hang)
        wait_status(ctx, box, r"\b1/1 straps subscribed", 30)
        deadline, after = time.monotonic() + 30, set()
        while time.monotonic() < deadline:
            after = heart_rates(ctx, box)
            if len(after - committed) >= 4:
                break
            time.sleep(2)
        lost = committed - after
        ctx.expect(not lost, f"{len(lost)} heart-rate samples committed before the hang are gone after the restart")
        ctx.expect(len(after - committed) >= 4, f"the restarted daemon stored {len(after - committed)} new heart-rate "
                                                f"samples in 30 s (at least 4 expected)")
        ctx.say(f"  {len(committed)} samples committed before the hang all kept; {len(after - committed)} stored since")

        # apt remove: the service stops (committing what it holds), the store stays.
        removed = box.sh(f"{APT} remove healthgate", timeout=180)
        ctx.expect(removed.rc == 0, "`apt remove healthgate` failed", removed)
        gone = box.run(["sh", "-c", "systemctl is-active healthgate; test -e /usr/bin/healthgate && echo binary-left"])
        state = (gone.stdout.split() or [""])[0]
        ctx.expect(state in ("inactive", "unknown", "failed"), "healthgate.service still runs after `apt remove`", gone)
        ctx.expect("binary-left" not in gone.stdout, "/usr/bin/healthgate is still there after `apt remove`", gone)
        kept = heart_rates(ctx, box)
        ctx.expect(after <= kept, f"`apt remove` lost {len(after - kept)} stored heart-rate samples")
        check = box.run(["/run/hgbin/healthgate", "check", "--db", STORE, "--json"], timeout=60)
        ctx.expect(check.rc == 0 and json.loads(check.stdout or "{}").get("ok") is True,
                   "the store left by `apt remove` is not intact (healthgate check)", check)
        purged = box.sh(f"{APT} purge healthgate && "
                        f"test -s {STORE} && id healthgate", timeout=180)
        ctx.expect(purged.rc == 0, "`apt purge healthgate` failed or deleted the store or the user", purged)
        ctx.say(f"  apt remove and purge: service stopped, binary gone, {len(kept)} heart-rate samples kept, store intact")
    finally:
        box.stop()
