#!/usr/bin/env bash
# Release micro-benchmark of the 0x2A37 decoder against an array-based baseline (same run).
# Wall-clock figures depend on machine load; `--callgrind` counts instructions instead
# (repeatable under load). Usage: scripts/bench-hrm-decode.sh [--callgrind]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sed '/^import HealthModel$/d' Sources/HeartRateProfile/HeartRateMeasurement.swift > "$out/hrm.swift"
cp scripts/bench/hrm-decode-main.swift "$out/main.swift"
swiftc -O -wmo -module-name HRMBench "$out/main.swift" Sources/HealthModel/*.swift "$out/hrm.swift" -o "$out/bench"
if [ "${1:-}" = --callgrind ]; then
  valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$out/bench" 20000 >/dev/null 2>&1
  callgrind_annotate --inclusive=yes "$out/cg" | grep -E 'HRMBenchyyXEfU[12]_$|HRMBenchyyXEfU[12]_ ' | head -2
  echo "(instructions for 100,000 decodes: closure U1 = this decoder, U2 = array baseline)"
else
  "$out/bench"
fi
