#!/usr/bin/env bash
# The README's "run the main job" command: installs what the machine lacks, builds HealthGate, and
# runs `healthgate demo` — simulated heart-rate straps (real ATT bytes over socket pairs) and a
# simulated pedometer (a real pty fed real line shapes) through the real ingest pipeline into a
# throw-away SQLite store, with a live view, then a summary from the store's statistics, then a
# couple of queries on what was stored. Bounded: about 10 s of ingest after the build.
#   DEMO_SECONDS=30 scripts/demo.sh      a longer run
#   DEMO_DB=/tmp/demo.sqlite scripts/demo.sh   keep the database afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== build"
swift build --product healthgate 2>&1 | { grep -E "error|warning: .*Sources/|Build.*complete" || true; } | tail -3
test "${PIPESTATUS[0]}" = 0 || { echo "build failed"; exit 1; }
bin="$(swift build --show-bin-path)/healthgate"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="${DEMO_DB:-$work/health.sqlite}"
hg() { echo "\$ healthgate $*"; "$bin" "$@"; echo; }

echo "== healthgate demo: 3 simulated straps at 4 Hz and 1 pedometer for ${DEMO_SECONDS:-10} s into $db"
echo
hg demo --db "$db" --duration "${DEMO_SECONDS:-10}" --straps 3 --rate 4 --pedometers 1

echo "== what was stored, through the store's query commands"
hg stats --db "$db" --type heartRate --option discreteAverage,discreteMin,discreteMax,mostRecent
hg stats --db "$db" --type stepCount
hg samples --db "$db" --type heartRate --limit 3
