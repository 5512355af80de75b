#!/usr/bin/python3
"""Guest agent of the real-stack harness: runs inside the QEMU guest (Debian's /usr/bin/python3)
and executes what the host runner asks, over a virtio-serial port.

Protocol: one JSON object per line in each direction. The agent first sends
{"hello": true, "uptime": ..., "kernel": ...}; then, for every request {"id": N, "op": ..., ...},
exactly one reply {"id": N, ...}.

  run     argv, [env], [timeout], [cwd], [input]   -> rc, stdout, stderr, seconds, timed_out
  spawn   argv, [env], [cwd], [quiet]               -> pid (output is collected in the background;
                                                     quiet: stdout goes to /dev/null)
  output  pid                                       -> stdout, stderr so far, running, rc
  signal  pid, sig                                  -> ok
  wait    pid, [timeout]                            -> rc, stdout, stderr, timed_out
  exit                                              -> the agent stops (the guest then powers off)

The agent knows nothing about Bluetooth or scenarios: all logic is in the host runner.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

PORT = sys.argv[1] if len(sys.argv) > 1 else "/dev/virtio-ports/hgctl"


class Background:
    """A spawned process whose output is collected by two threads."""

    def __init__(self, process):
        self.process = process
        self.out, self.err = [], []
        self.threads = [threading.Thread(target=self.pump, args=(stream, sink), daemon=True)
                        for stream, sink in ((process.stdout, self.out), (process.stderr, self.err)) if stream]
        for t in self.threads:
            t.start()

    @staticmethod
    def pump(stream, sink):
        for chunk in iter(lambda: stream.read1(65536) if hasattr(stream, "read1") else stream.read(4096), b""):
            sink.append(chunk)

    def text(self):
        return b"".join(self.out).decode(errors="replace"), b"".join(self.err).decode(errors="replace")

    def finish(self, timeout):
        try:
            rc = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        for t in self.threads:
            t.join(timeout=5)
        return rc


def environment(extra):
    env = dict(os.environ)
    env.update(extra or {})
    return env


def handle(request, children):
    op = request["op"]
    if op == "run":
        start = time.monotonic()
        try:
            done = subprocess.run(request["argv"], env=environment(request.get("env")), cwd=request.get("cwd"),
                                  input=(request.get("input") or "").encode(), capture_output=True,
                                  timeout=request.get("timeout", 120))
            return {"rc": done.returncode, "stdout": done.stdout.decode(errors="replace"),
                    "stderr": done.stderr.decode(errors="replace"), "timed_out": False,
                    "seconds": round(time.monotonic() - start, 3)}
        except subprocess.TimeoutExpired as expired:
            return {"rc": None, "stdout": (expired.stdout or b"").decode(errors="replace"),
                    "stderr": (expired.stderr or b"").decode(errors="replace"), "timed_out": True,
                    "seconds": round(time.monotonic() - start, 3)}
        except OSError as error:
            return {"rc": None, "stdout": "", "stderr": f"agent: cannot run {request['argv'][0]}: {error}",
                    "timed_out": False, "seconds": 0, "error": str(error)}
    if op == "spawn":
        try:
            process = subprocess.Popen(request["argv"], env=environment(request.get("env")), cwd=request.get("cwd"),
                                       stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL if request.get("quiet") else subprocess.PIPE)
        except OSError as error:
            return {"pid": None, "error": f"agent: cannot run {request['argv'][0]}: {error}"}
        children[process.pid] = Background(process)
        return {"pid": process.pid}
    if op == "output":
        child = children[request["pid"]]
        out, err = child.text()
        rc = child.process.poll()
        return {"stdout": out, "stderr": err, "running": rc is None, "rc": rc}
    if op == "signal":
        child = children.get(request["pid"])
        if child is None or child.process.poll() is not None:
            return {"ok": False}
        child.process.send_signal(int(request["sig"]))
        return {"ok": True}
    if op == "wait":
        child = children[request["pid"]]
        rc = child.finish(request.get("timeout", 60))
        out, err = child.text()
        return {"rc": rc, "stdout": out, "stderr": err, "timed_out": rc is None}
    return {"error": f"unknown op {op!r}"}


def main():
    channel = open(PORT, "r+b", buffering=0)
    reader = open(channel.fileno(), "rb", closefd=False)

    def send(obj):
        # An unbuffered write to the virtio-serial port may take only part of the bytes (about
        # 32 KiB when the host is slow to drain the queue, as under load): write the rest too,
        # or the host gets half a reply glued to the next one (a `samples --json` of 40 KB was
        # cut at byte 32,770 in CI, and the run waited for a line end that never came).
        data = memoryview((json.dumps(obj) + "\n").encode())
        while data:
            written = channel.write(data)
            data = data[written or 0:]

    uptime = open("/proc/uptime").read().split()[0]
    send({"hello": True, "uptime": float(uptime), "kernel": os.uname().release})
    children = {}
    for line in reader:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "exit":
            send({"id": request.get("id"), "ok": True})
            break
        try:
            reply = handle(request, children)
        except Exception as error:  # report, never die: the host must always get an answer
            reply = {"error": f"agent: {type(error).__name__}: {error}"}
        reply["id"] = request.get("id")
        send(reply)
    for child in children.values():
        if child.process.poll() is None:
            child.process.send_signal(signal.SIGKILL)


if __name__ == "__main__":
    main()
