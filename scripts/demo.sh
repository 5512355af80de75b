#!/usr/bin/env bash
# The README's "main job" for now: install what the machine lacks, build HealthGate (release), and
# walk through the store against a throw-away database: manual entries, an import with two
# overlapping sources and one bad line, merged statistics, buckets, unit conversion.
# The ingestion issue will turn this into `healthgate demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== build (release)"
swift build -c release --product healthgate 2>&1 | grep -E "error|warning: .*Sources/|Compiling|Build complete" | tail -3
bin="$(swift build -c release --show-bin-path)/healthgate"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HEALTHGATE_DB="$work/health.sqlite"
hg() { echo "\$ healthgate $*"; "$bin" "$@"; echo; }

echo "== a throw-away store at $HEALTHGATE_DB"
echo
hg add --type heartRate --value 62 --unit count/min --start 2026-11-02T07:00:00Z --sensor-location chest
hg add --type heartRate --value 1.5 --unit count/s --start 2026-11-02T07:01:00Z --sensor-location chest
hg add --type heartRate --value 71 --start 2026-11-02T07:02:00Z
hg stats --type heartRate --option discreteAverage,discreteMin,discreteMax,mostRecent
hg stats --type heartRate --option discreteAverage --unit count/s --json

cat > "$work/walk.jsonl" <<'JSONL'
{"type":"stepCount","value":1000,"unit":"count","start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:10:00Z","source":"iPhone","device":{"name":"iPhone","manufacturer":"Apple"}}
{"type":"stepCount","value":1100,"unit":"count","start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:10:00Z","source":"Watch","device":{"name":"Watch","manufacturer":"Apple"}}
this line is not JSON
{"type":"stepCount","value":300,"unit":"count","start":"2026-11-02T08:10:00Z","end":"2026-11-02T08:15:00Z","source":"Watch"}
{"type":"stepCount","value":2400,"start":"2026-11-02T22:30:00Z","end":"2026-11-02T23:30:00Z","source":"Watch"}
JSONL
echo "# walk.jsonl: the iPhone and the Watch counted the same walk; line 3 is garbage"
echo "\$ healthgate import --jsonl walk.jsonl   (exits 65: the bad line is reported and skipped, the rest is saved)"
"$bin" import --jsonl "$work/walk.jsonl" || echo "(exit code $?)"
echo
hg samples --type stepCount
hg sources --type stepCount
echo "# merged: the overlap counts once (Watch ranks first: newest third-party source)"
hg stats --type stepCount --from 2026-11-02T08:00:00Z --to 2026-11-02T09:00:00Z --separate-by-source
echo "# hand the iPhone priority; the sum now takes its 1000 plus the Watch's uncovered 300"
hg sources priority iPhone 1
hg stats --type stepCount --from 2026-11-02T08:00:00Z --to 2026-11-02T09:00:00Z --json
echo "# daily buckets in Berlin: the 22:30–23:30 UTC hour straddles local midnight and is split by time"
hg stats --type stepCount --from 2026-11-02 --to 2026-11-04 --interval 1d --tz Europe/Berlin --json
echo "# a DST day: 2026-03-29 in Berlin is 23 hours long"
hg stats --type stepCount --from 2026-03-29 --to 2026-03-30 --interval 1d --tz Europe/Berlin --json
echo "\$ healthgate stats --type heartRate --unit kg   (incompatible unit: exit 65)"
"$bin" stats --type heartRate --unit kg || echo "(exit code $?)"
