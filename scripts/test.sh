#!/usr/bin/env bash
# The README's test command: builds with no warnings allowed in HealthGate's own code, then runs
# every test suite. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== build (warnings in Sources/ or Tests/ fail the run)"
swift build --build-tests 2>&1 | tee .build-log.txt
if grep -E "^$PWD/(Sources|Tests)/.*warning:" .build-log.txt; then
  echo "build produced warnings in HealthGate's own code (above)"; exit 1
fi
rm -f .build-log.txt

echo "== unit and integration tests"
swift test --skip-build 2>&1
