"""The QEMU guest: booted once with virtme-ng under TCG, driven through guest/agent.py."""
from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .errors import HarnessError

HERE = Path(__file__).resolve().parent.parent          # Tests/RealStack
# Under TCG every driver the guest's udev coldplug loads costs seconds; none of these is used (the
# q35 machine's SATA/CD-ROM, KVM, mouse, watchdog, display, CPU frequency). Crypto modules stay:
# SMP needs ECDH and AES-CMAC. USB and serial drivers stay for hot-plug scenarios.
KERNEL_APPEND = os.environ.get("REALSTACK_APPEND", "modprobe.blacklist=" + ",".join([
    "ahci", "libahci", "sr_mod", "cdrom", "sg", "kvm", "kvm_amd", "kvm_intel", "irqbypass", "powernow_k8",
    "acpi_cpufreq", "psmouse", "serio_raw", "evdev", "pcspkr", "joydev", "i2c_i801", "i2c_smbus", "lpc_ich",
    "iTCO_wdt", "iTCO_vendor_support", "i6300esb", "bochs", "bochs_drm", "drm_vram_helper", "drm_kms_helper",
    "ttm", "drm", "floppy", "parport_pc", "ppdev", "parport", "intel_rapl_msr", "intel_rapl_common",
    "efi_pstore", "button", "ac", "virtio_balloon"]))


@dataclass
class Result:
    """What one command inside the guest did."""
    argv: list[str]
    rc: int | None
    stdout: str
    stderr: str
    seconds: float = 0.0
    timed_out: bool = False

    def describe(self, limit: int = 1500) -> str:
        def tail(text: str) -> str:
            text = text.rstrip()
            return text if len(text) <= limit else "…" + text[-limit:]
        rc = "timed out" if self.timed_out else f"exit {self.rc}"
        return (f"$ {shlex.join(self.argv)}  -> {rc} after {self.seconds:.1f}s\n"
                f"  stdout: {tail(self.stdout) or '(empty)'}\n  stderr: {tail(self.stderr) or '(empty)'}")


@dataclass
class Process:
    """A background process in the guest (see Guest.spawn)."""
    guest: "Guest"
    argv: list[str]
    pid: int
    started: float = field(default_factory=time.monotonic)

    def output(self) -> dict:
        return self.guest.request("output", pid=self.pid)

    def send_signal(self, sig: int) -> bool:
        return bool(self.guest.request("signal", pid=self.pid, sig=int(sig)).get("ok"))

    def wait(self, timeout: float = 30) -> Result:
        reply = self.guest.request("wait", pid=self.pid, timeout=timeout, io_timeout=timeout + 30)
        return Result(self.argv, reply.get("rc"), reply.get("stdout", ""), reply.get("stderr", ""),
                      round(time.monotonic() - self.started, 3), bool(reply.get("timed_out")))

    def stop(self, sig: int = signal.SIGINT, timeout: float = 20) -> Result:
        """Signal the process (Ctrl-C by default) and wait; SIGKILL if it does not end in time."""
        self.send_signal(sig)
        result = self.wait(timeout)
        if result.timed_out:
            self.send_signal(signal.SIGKILL)
            killed = self.wait(10)
            killed.timed_out = True
            return killed
        return result


class Guest:
    """One boot of Debian's stock kernel under QEMU/TCG (virtme-ng), sharing the host's root."""

    def __init__(self, workdir: Path, venv_bin: Path, kernel: Path, extra_qemu_opts: list[str],
                 vhci_socket: Path, log):
        self.workdir, self.venv_bin, self.kernel = workdir, venv_bin, kernel
        self.extra_qemu_opts, self.vhci_socket, self.log = extra_qemu_opts, vhci_socket, log
        self.control_path = workdir / "agent.sock"
        self.qmp_path = workdir / "qmp.sock"
        self.console_log = workdir / "guest-console.log"
        self.vng: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.buffer = b""
        self.next_id = 0
        self.hello: dict = {}

    # -- boot -----------------------------------------------------------------------------------
    def boot(self, timeout: float = 300) -> None:
        for path in (self.control_path, self.qmp_path):
            path.unlink(missing_ok=True)
        qemu = [
            f"-chardev socket,id=hgvhci,path={self.vhci_socket}",
            "-device virtserialport,chardev=hgvhci,name=hgvhci",
            f"-chardev socket,id=hgctl,path={self.control_path},server=on,wait=off",
            "-device virtserialport,chardev=hgctl,name=hgctl",
            f"-qmp unix:{self.qmp_path},server=on,wait=off",
            *[opt.replace("{workdir}", str(self.workdir)) for opt in self.extra_qemu_opts],
        ]
        init = HERE / "guest" / "init.sh"
        argv = [str(self.venv_bin / "vng"), "--run", str(self.kernel), "--disable-kvm",
                "--cpus", "2", "--memory", "2G", *(["--verbose"] if os.environ.get("REALSTACK_VERBOSE") else []), "--rwdir", str(self.workdir),
                "--qemu-opts=" + " ".join(qemu), *(["--append", KERNEL_APPEND] if KERNEL_APPEND else []),
                "--exec", f"{init} {self.workdir}"]
        self.log(f"booting guest: {shlex.join(argv)}")
        env = dict(os.environ, PATH=f"{self.venv_bin}:{os.environ['PATH']}")
        self.started = time.monotonic()
        self.vng = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=open(self.console_log, "wb"),
                                    stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self.control_path.exists():
            self._check_alive("before its control socket appeared")
            if time.monotonic() > deadline:
                raise HarnessError(f"guest: QEMU did not create {self.control_path} within {timeout:.0f}s")
            time.sleep(0.05)
        self.sock = socket.socket(socket.AF_UNIX)
        while True:
            try:
                self.sock.connect(str(self.control_path))
                break
            except (ConnectionRefusedError, FileNotFoundError):
                # QEMU made the socket but is not listening yet, or it exited (its options refused).
                self._check_alive("before its control socket accepted a connection")
                if time.monotonic() > deadline:
                    raise HarnessError(f"guest: QEMU did not accept connections on {self.control_path} within {timeout:.0f}s")
                time.sleep(0.05)
        self.hello = self._read_message(deadline, "the agent's hello (boot did not finish)")
        self.log(f"guest up after {time.monotonic() - self.started:.1f}s: kernel {self.hello.get('kernel')}, "
                 f"guest uptime {self.hello.get('uptime')}s")

    def _check_alive(self, when: str) -> None:
        if self.vng is not None and self.vng.poll() is not None:
            tail = self.console_log.read_text(errors="replace")[-3000:] if self.console_log.exists() else ""
            raise HarnessError(f"guest: virtme-ng exited with {self.vng.returncode} {when}. "
                               f"Console tail ({self.console_log}):\n{tail}")

    def _read_message(self, deadline: float, what: str) -> dict:
        while b"\n" not in self.buffer:
            self._check_alive(f"while waiting for {what}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise HarnessError(f"guest: no answer in time while waiting for {what}")
            self.sock.settimeout(min(remaining, 1.0))
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                self._check_alive(f"(control channel closed) while waiting for {what}")
                raise HarnessError(f"guest: control channel closed while waiting for {what}")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    # -- requests -------------------------------------------------------------------------------
    def request(self, op: str, io_timeout: float | None = None, **fields) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "op": op, **fields}
        self.sock.sendall((json.dumps(message) + "\n").encode())
        timeout = io_timeout or (fields.get("timeout", 60) + 30)
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline, f"the reply to {op} {fields.get('argv', fields.get('pid', ''))}")
            if reply.get("id") == self.next_id:
                if "error" in reply and op not in ("run", "spawn"):
                    raise HarnessError(f"guest agent: {reply['error']}")
                return reply

    def run(self, argv: list[str], timeout: float = 60, env: dict | None = None, check: bool = False) -> Result:
        started = time.monotonic()
        reply = self.request("run", argv=argv, timeout=timeout, env=env or {})
        result = Result(argv, reply.get("rc"), reply.get("stdout", ""), reply.get("stderr", ""),
                        reply.get("seconds", round(time.monotonic() - started, 3)), bool(reply.get("timed_out")))
        if check and result.rc != 0:
            raise HarnessError(f"guest command failed:\n{result.describe()}")
        return result

    def sh(self, script: str, timeout: float = 60, check: bool = True) -> Result:
        return self.run(["/bin/sh", "-c", script], timeout=timeout, check=check)

    def spawn(self, argv: list[str], env: dict | None = None, quiet: bool = False) -> Process:
        reply = self.request("spawn", argv=argv, env=env or {}, quiet=quiet)
        if reply.get("pid") is None:
            raise HarnessError(reply.get("error", f"guest: could not start {argv[0]}"))
        return Process(self, argv, reply["pid"])

    # -- shutdown -------------------------------------------------------------------------------
    def kill(self) -> float:
        """SIGKILL QEMU (vng's process group): a power cut. Returns the host time it was sent."""
        cut = time.time()
        if self.vng is not None:
            try:
                os.killpg(self.vng.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.vng.wait()
        if self.sock is not None:
            self.sock.close()
        self.sock, self.buffer, self.vng = None, b"", None
        return cut

    def shutdown(self) -> None:
        try:
            if self.sock is not None:
                self.request("exit", io_timeout=20)
        except Exception:
            pass
        if self.vng is not None:
            try:
                self.vng.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
            try:       # vng and its QEMU child share a process group (start_new_session)
                os.killpg(self.vng.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.vng.wait()
