#!/usr/bin/env bash
# The SD-card write profile of `healthgate run` (issue #12's write goal: bytes written per stored
# sample <= 1.5x the one-4-KiB-page-per-commit floor). Starts `healthgate simulate` (10 straps at
# 1 Hz on Unix sockets, 4 pty pedometers at 1 reading/s) and `healthgate run` on its configuration
# with a status line every second; once every strap is subscribed it reads the daemon's
# /proc/PID/io write_bytes (what the process sent to the storage layer, page-cache level: the WAL,
# the checkpoints into the main file, the -shm index) and its status line (samples committed,
# store commits), waits SECONDS, reads both again and prints the difference:
#   bytes written per stored sample, commits, and the ratio to the floor (commits x 4096 B).
# The store lives in a fresh directory under $HG_WRITE_PROFILE_DIR (default /var/tmp: a real
# disk; tmpfs accounts no writes).
# Usage: scripts/write-profile.sh [path/to/healthgate] [seconds] [flush_ms ...]
#        (default: .build/release or debug, 60 s, 250 ms = the shipped default)
# Extra `healthgate run` settings for the runs: HG_WRITE_PROFILE_INGEST="key = value; key = value"
# (lines added to the [ingest] table, e.g. durability = "every-commit" or sync_interval_ms = 0;
# printed with the result).
# HG_WRITE_PROFILE_PEDOMETERS=0 leaves the pedometers out (straps only).
# HG_WRITE_PROFILE_PAGES=1 ends each run with SIGKILL instead of SIGTERM, so the WAL keeps its
# commits, and prints scripts/wal-pages.py's table for it: which b-trees the commits since the
# last checkpoint wrote, pages per commit.
# HG_WRITE_PROFILE_PAGE_SIZE=1024 creates the store with that SQLite page size (an experiment:
# HealthGate creates stores with SQLite's default, 4096).
set -euo pipefail
HG=${1:-}
if [[ -z "$HG" ]]; then
  for c in .build/release/healthgate .build/debug/healthgate; do [[ -x $c ]] && { HG=$c; break; }; done
fi
[[ -x "${HG:-}" ]] || { echo "write-profile: no healthgate binary; build it or pass its path" >&2; exit 66; }
HG=$(readlink -f "$HG")
SECS=${2:-60}
shift $(( $# > 2 ? 2 : $# ))
FLUSHES=("$@")
[[ ${#FLUSHES[@]} -gt 0 ]] || FLUSHES=(250)
BASE=${HG_WRITE_PROFILE_DIR:-/var/tmp}
DIR=$(mktemp -d "$BASE/hg-write-profile.XXXXXX")
SIM=
RUN=
cleanup() {
  [[ -n "$RUN" ]] && kill "$RUN" 2>/dev/null && wait "$RUN" 2>/dev/null
  [[ -n "$SIM" ]] && kill "$SIM" 2>/dev/null && wait "$SIM" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT
for flush in "${FLUSHES[@]}"; do
  rm -rf "$DIR/sim" "$DIR/store.sqlite"*; mkdir -p "$DIR/sim"
  "$HG" simulate --straps 10 --pedometers "${HG_WRITE_PROFILE_PEDOMETERS:-4}" --flush-ms "$flush" --dir "$DIR/sim" --config-out "$DIR/sim.toml" --json \
    >"$DIR/sim.json" 2>"$DIR/sim.log" &
  SIM=$!
  for _ in $(seq 200); do [[ -s "$DIR/sim.json" ]] && break; sleep 0.1; done
  [[ -s "$DIR/sim.json" ]] || { echo "write-profile: healthgate simulate did not start:" >&2; cat "$DIR/sim.log" >&2; exit 69; }
  sed -i 's/^status_interval = .*/status_interval = 1/' "$DIR/sim.toml"
  if [[ -n "${HG_WRITE_PROFILE_INGEST:-}" ]]; then
    IFS=';' read -ra extra <<<"$HG_WRITE_PROFILE_INGEST"
    for e in "${extra[@]}"; do sed -i "/^\[ingest\]/a $(echo "$e" | sed 's/^ *//')" "$DIR/sim.toml"; done
  fi
  if [[ -n "${HG_WRITE_PROFILE_PAGE_SIZE:-}" ]]; then
    sqlite3 "$DIR/store.sqlite" "PRAGMA page_size=$HG_WRITE_PROFILE_PAGE_SIZE; CREATE TABLE t(x); DROP TABLE t; VACUUM;"
  fi
  "$HG" run --config "$DIR/sim.toml" --db "$DIR/store.sqlite" 2>"$DIR/run.log" &
  RUN=$!
  python3 - "$RUN" "$DIR/run.log" "$SECS" "$flush" "${HG_WRITE_PROFILE_PAGES:-}" "${HG_WRITE_PROFILE_INGEST:-}" <<'PY'
import os, re, sys, time
pid, log, secs, flush = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
settings = f" ({sys.argv[6]})" if sys.argv[6] else ""
line_re = re.compile(r"(\d+)/(\d+) straps subscribed.*?(\d+) committed in (\d+) batches.*?(\d+) store commits")
def write_bytes():
    with open(f"/proc/{pid}/io") as f:
        for l in f:
            if l.startswith("write_bytes:"): return int(l.split()[1])
def follow():
    pos = 0
    while True:
        if not os.path.exists(f"/proc/{pid}"): sys.exit("write-profile: healthgate run exited early; its log:\n" + open(log).read()[-2000:])
        with open(log) as f:
            f.seek(pos); chunk = f.read(); pos = f.tell()
        hits = [m for m in line_re.finditer(chunk)]
        if hits:
            m = hits[-1]
            yield time.monotonic(), write_bytes(), int(m[1]), int(m[2]), int(m[3]), int(m[5])
        time.sleep(0.02)
deadline = time.monotonic() + 180
lines = follow()
for t0, w0, sub, total, c0, k0 in lines:
    if sub == total == 10: break
    if time.monotonic() > deadline: sys.exit(f"write-profile: only {sub}/{total} straps subscribed after 180 s")
# One more line, so the first window starts on a steady second.
t0, w0, _, _, c0, k0 = next(lines)
for t1, w1, _, _, c1, k1 in lines:
    if t1 - t0 >= secs: break
samples, commits, written = c1 - c0, k1 - k0, w1 - w0
floor = commits * 4096
print(f"flush {flush} ms{settings}, {t1 - t0:.0f} s: {samples} samples in {commits} commits ({samples / max(1, commits):.1f} a commit, "
      f"{commits / (t1 - t0):.2f} commits/s); {written} B written = {written / max(1, samples):.0f} B/sample, "
      f"{written / max(1, commits):.0f} B/commit; floor {floor / max(1, samples):.0f} B/sample; ratio {written / max(1, floor):.2f} (goal <= 1.5)",
      flush=True)
if sys.argv[5] == "1":
    import signal
    os.kill(pid, signal.SIGKILL)
PY
  kill "$RUN" 2>/dev/null || true; wait "$RUN" 2>/dev/null || true; RUN=
  if [[ "${HG_WRITE_PROFILE_PAGES:-}" == 1 ]]; then
    python3 "$(dirname "$0")/wal-pages.py" "$DIR/store.sqlite"
  fi
  kill "$SIM"; wait "$SIM" 2>/dev/null || true; SIM=
done
