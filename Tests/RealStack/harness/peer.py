"""The Bumble test peer (peripheral.py) seen from the runner: start it, steer it, read its log."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from .errors import HarnessError

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
from peripheral import BEACON, DEVICE_INFO, BATTERY, STRAPS  # noqa: E402  (addresses and strings to expect)


class Peer:
    def __init__(self, workdir: Path, python: Path, log):
        self.workdir, self.python, self.say = workdir, python, log
        self.vhci_socket = workdir / "vhci.sock"
        self.control_path = workdir / "peer-control.sock"
        self.log_path = workdir / "peripheral.jsonl"
        self.stdout_path = workdir / "peripheral.out"
        self.process: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.reader = None

    def start(self, timeout: float = 30) -> None:
        for p in (self.vhci_socket, self.control_path, self.log_path):
            p.unlink(missing_ok=True)
        argv = [str(self.python), str(HERE / "peripheral.py"), "--hci", f"unix-server:{self.vhci_socket}",
                "--control", str(self.control_path), "--log", str(self.log_path)]
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=open(self.stdout_path, "wb"),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise HarnessError(f"peripheral.py exited with {self.process.returncode}:\n"
                                   f"{self.stdout_path.read_text(errors='replace')[-3000:]}")
            if b"READY" in self.stdout_path.read_bytes() and self.vhci_socket.exists():
                break
            if time.monotonic() > deadline:
                raise HarnessError(f"peripheral.py not ready within {timeout:.0f}s (see {self.stdout_path})")
            time.sleep(0.05)
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(str(self.control_path))
        self.reader = self.sock.makefile("rb")
        self.say(f"peripheral ready: straps {', '.join(k + '=' + v['address'] for k, v in STRAPS.items())}, "
                 f"beacon {BEACON['address']}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self, cmd: str, **fields) -> dict:
        if not self.alive():
            raise HarnessError(f"peripheral.py is not running (exit {self.process.returncode}); "
                               f"see {self.stdout_path}")
        self.sock.sendall((json.dumps({"cmd": cmd, **fields}) + "\n").encode())
        reply = json.loads(self.reader.readline())
        if not reply.get("ok"):
            raise HarnessError(f"peripheral control {cmd} {fields}: {reply.get('error')}")
        return reply

    def mark(self, label: str) -> int:
        """Write a marker and return the log position after it: records(since=...) reads from there."""
        self.command("mark", label=label)
        return len(self.records())

    def records(self, since: int = 0) -> list[dict]:
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text().splitlines()
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:    # a line being written right now
                break
        return out[since:]

    def notifications(self, strap: str, since: int = 0) -> list[dict]:
        return [r for r in self.records(since) if r["kind"] == "notify" and r["strap"] == strap]

    def events(self, strap: str, event: str | None = None, since: int = 0) -> list[dict]:
        return [r for r in self.records(since)
                if r["kind"] == "event" and r["strap"] == strap and (event is None or r["event"] == event)]

    def wait_for(self, predicate, timeout: float, what: str, poll: float = 0.2):
        """Poll the log until predicate() returns something truthy; ScenarioFailure-free: returns None on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            if not self.alive():
                raise HarnessError(f"peripheral.py died while waiting for {what}")
            time.sleep(poll)
        return None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
