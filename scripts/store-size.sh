#!/usr/bin/env bash
# Bytes per heart-rate sample for a day of one strap at 1 Hz (issue #12's storage goal: ≤ 8 B),
# with RR intervals and without: generates a day capture (86,400 notifications, receipt times
# at millisecond resolution with a few ms of jitter, heart rate drifting, one or two RR
# intervals each), replays it with `healthgate replay --max` into a fresh store, VACUUMs it and
# prints the file size divided by the heart-rate samples stored.
# Usage: scripts/store-size.sh [path/to/healthgate] [seconds]   (default: .build/release or debug, 86400)
set -euo pipefail
HG=${1:-}
if [[ -z "$HG" ]]; then
  for c in .build/release/healthgate .build/debug/healthgate; do [[ -x $c ]] && { HG=$c; break; }; done
fi
[[ -x "${HG:-}" ]] || { echo "store-size: no healthgate binary; build it or pass its path" >&2; exit 66; }
SECONDS_OF_DATA=${2:-86400}
command -v sqlite3 >/dev/null || { echo "store-size: needs the sqlite3 command for VACUUM" >&2; exit 69; }
DIR=$(mktemp -d /tmp/hg-store-size.XXXXXX)
trap '[[ -n "${HG_STORE_SIZE_KEEP:-}" ]] && cp "$DIR"/*.sqlite "$HG_STORE_SIZE_KEEP"/ ; rm -rf "$DIR"' EXIT
for mode in rr hr; do
  python3 - "$DIR/$mode.capture.jsonl" "$SECONDS_OF_DATA" "$mode" <<'PY'
import json, math, random, sys
path, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
random.seed(12)
dev = {"name": "Day Strap", "manufacturer": "HealthGate", "model": "SIM-HR1", "localIdentifier": "AA:BB:CC:DD:EE:42"}
with open(path, "w") as f:
    f.write('{"format":"healthgate-capture","version":1}\n')
    carry = 0.0
    for i in range(n):
        t = 1_790_000_000 + i + random.randint(-4, 4) / 1000
        bpm = int(70 + 20 * math.sin(i / 900) + random.randint(-2, 2))
        b = [0x16 if mode == "rr" else 0x06, bpm]
        if mode == "rr":
            carry += bpm / 60
            beats = int(carry); carry -= beats
            for _ in range(beats):
                rr = int(60 * 1024 / bpm) + random.randint(-20, 20)
                b += [rr & 0xFF, rr >> 8]
        f.write(json.dumps({"t": round(t, 3), "kind": "ble", "device": dev, "address": dev["localIdentifier"],
                            "characteristic": "2A37", "hex": bytes(b).hex().upper()}, separators=(",", ":")) + "\n")
PY
  "$HG" replay "$DIR/$mode.capture.jsonl" --max --db "$DIR/$mode.sqlite" >/dev/null
  sqlite3 "$DIR/$mode.sqlite" "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;" >/dev/null
  hr=$("$HG" samples --db "$DIR/$mode.sqlite" --type heartRate --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  size=$(stat -c %s "$DIR/$mode.sqlite")
  chunks=$(sqlite3 "$DIR/$mode.sqlite" "SELECT count(*) || ' chunks, ' || sum(length(data)) || ' B of chunk data' FROM series_chunks")
  label=$([[ $mode == rr ]] && echo "heart rate with RR" || echo "heart rate alone  ")
  awk -v l="$label" -v s="$size" -v n="$hr" -v c="$chunks" 'BEGIN { printf "%s: %d samples, file %d B after VACUUM = %.2f B/sample (%s)\n", l, n, s, s / n, c }'
done
