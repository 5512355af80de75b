#!/usr/bin/env bash
# The README's test command: builds with no warnings allowed in HealthGate's own code, then runs
# every test suite. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# ---- BLE heart rate (blecore): the pinned peer decoders (bumble, bluetooth-sig, pycycling,
# bleakheart, Adafruit, blehrm) in .venv-peers/ for PeerDifferentialTests, from
# ../shared/peers/requirements.txt. 1–4 min on a fresh machine (numpy, cryptography wheels),
# a few seconds when present.
# Under CI=true a missing ../shared or a failed install fails the run (and the test itself
# fails if the peers are absent): never a silent skip.
if [ -f ../shared/peers/requirements.txt ]; then
  [ -x .venv-peers/bin/python ] || python3 -m venv .venv-peers
  .venv-peers/bin/pip install -q --disable-pip-version-check -r ../shared/peers/requirements.txt
elif [ "${CI:-}" = true ]; then
  echo "CI: ../shared/peers/requirements.txt is missing: the BLE peer decoders cannot be installed"; exit 1
else
  echo "note: ../shared/peers not found: PeerDifferentialTests will skip (loudly)"
fi

# ---- HTTP API (issue 13): the pinned independent OpenAPI 3.1 validator (openapi-spec-validator,
# jsonschema) in .venv-openapi/ for OpenAPITests, from Tests/HTTPAPITests/openapi-requirements.txt.
# Pure-Python wheels: a few seconds on a fresh machine. Under CI=true the test fails without it.
[ -x .venv-openapi/bin/python ] || python3 -m venv .venv-openapi
.venv-openapi/bin/pip install -q --disable-pip-version-check -r Tests/HTTPAPITests/openapi-requirements.txt
# The export formats' independent validators (ExportTests): fhir.resources and jsonschema pinned in
# .venv-interop/ from Tests/ExportTests/interop-requirements.txt (pure-Python and manylinux wheels,
# a few seconds). Under CI=true the tests fail without them.
[ -x .venv-interop/bin/python ] || python3 -m venv .venv-interop
.venv-interop/bin/pip install -q --disable-pip-version-check -r Tests/ExportTests/interop-requirements.txt
# The HRV peer (HeartRateVariabilityTests): neurokit2 pinned with its dependencies in .venv-hrv/
# from Tests/HeartRateVariabilityTests/hrv-requirements.txt (binary wheels, about 20 s and 500 MB
# on a fresh machine). Under CI=true the test fails without it.
[ -x .venv-hrv/bin/python ] || python3 -m venv .venv-hrv
.venv-hrv/bin/pip install -q --disable-pip-version-check -r Tests/HeartRateVariabilityTests/hrv-requirements.txt
# WorkoutFilesTests' readers (FIT, TCX, GPX, the GPX XSD): a whole pinned closure, --no-deps, in .venv-workout-files/ (wheels, seconds); CI=true fails without it.
[ -x .venv-workout-files/bin/python ] || python3 -m venv .venv-workout-files
.venv-workout-files/bin/pip install -q --disable-pip-version-check --no-deps -r Tests/WorkoutFilesTests/workout-files-requirements.txt
# healthgate-bench's apple-health baseline (AppleHealthBenchPartTests, and the bench itself):
# healthkit-to-sqlite with its whole closure pinned, --no-deps, in .venv-bench/ from
# Benchmarks/python/apple-health-requirements.txt (pure-Python wheels, seconds); CI=true fails without it.
[ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
.venv-bench/bin/pip install -q --disable-pip-version-check --no-deps -r Benchmarks/python/apple-health-requirements.txt
# The live page's browser test (LivePageTests): Selenium pinned in .venv-browser/ from
# Tests/HTTPAPITests/browser-requirements.txt (pure-Python wheels, a few seconds); the browser is
# Debian's chromium + chromium-driver (scripts/setup.sh). Under CI=true the test fails without them.
[ -x .venv-browser/bin/python ] || python3 -m venv .venv-browser
.venv-browser/bin/pip install -q --disable-pip-version-check -r Tests/HTTPAPITests/browser-requirements.txt

echo "== build (warnings in Sources/ or Tests/ fail the run)"
swift build --build-tests 2>&1 | tee .build-log.txt
# SwiftPM's own warnings about this package (files a target neither uses nor excludes) name it
# by its folder, in lower case: they count too.
if grep -E "^$PWD/(Sources|Tests)/.*warning:" .build-log.txt \
   || grep -iE "^warning: '$(basename "$PWD")':" .build-log.txt; then
  echo "build produced warnings in HealthGate's own code (above)"; exit 1
fi
rm -f .build-log.txt

# A test that hangs must fail this run with its stacks, not run into CI's 90-minute limit with
# nothing to show: each pass below has a watchdog (a pass takes well under a minute on a quiet
# machine) that prints every thread's stack of this checkout's test process (gdb) and kills it
# and the healthgate children it started.
watchdog_seconds=${TEST_WATCHDOG_SECONDS:-1200}
bin=$(swift build --show-bin-path)   # once, before swift test holds the build lock
run_tests() {  # run_tests LABEL [ENV=VALUE…]: swift test --skip-build under the watchdog
  local label=$1; shift
  env "$@" swift test --skip-build 2>&1 &
  test_pid=$!
  local pid=$test_pid waited=0
  # A cancelled job (or this script failing) leaves no test process behind.
  trap 'if [ -n "${test_pid:-}" ]; then kill -9 "$test_pid" 2>/dev/null; pkill -9 -f "^$bin/HealthGatePackageTests.xctest"; fi; true' EXIT
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5; waited=$((waited + 5))
    if [ "$waited" -ge "$watchdog_seconds" ]; then
      echo "== $label: still running after $watchdog_seconds s: a test hangs. Stacks of the test process:"
      for t in $(pgrep -f "^$bin/HealthGatePackageTests.xctest" || true); do
        gdb -p "$t" -batch -ex "thread apply all bt 30" 2>&1 | grep -E "^Thread|^#|ptrace|denied" \
          | grep -vE " in (__|_dispatch|start_thread|clone)" || true
      done
      pkill -9 -f "^$bin/HealthGatePackageTests.xctest" || true
      pkill -9 -f "^$bin/healthgate " || true   # its children
      kill -9 "$pid" 2>/dev/null || true
      test_pid=
      echo "== $label: killed after $watchdog_seconds s (TEST_WATCHDOG_SECONDS)"; return 1
    fi
  done
  test_pid=
  wait "$pid"
}

echo "== unit and integration tests"
run_tests "tests"

# The same tests with a one-thread cooperative pool (Tests/Support/one-cpu-pool.c makes
# sysconf report one CPU, as on a single-core board; children inherit it): code that blocks a
# pool thread while waiting for other async work deadlocks here every time, instead of only
# when a 2-core CI machine schedules unluckily. As long as the first pass.
echo "== the tests again with a one-thread cooperative pool"
shim="$PWD/.build/one-cpu-pool.so"
cc -shared -fPIC -O2 -o "$shim" Tests/Support/one-cpu-pool.c -ldl
run_tests "tests with a one-thread pool" LD_PRELOAD="$shim"

# ---- Fuzzing (issue 16): every parser's libFuzzer target briefly, from its committed corpus
# (docs/fuzzing.md); a crash, a hang or a broken promise fails the run. The fuzzing build is a
# release build with AddressSanitizer in .build-fuzz/.
echo "== fuzzing: every target for ${FUZZ_SECONDS:-20} s"
scripts/fuzz.sh all "${FUZZ_SECONDS:-20}"

# The parsers' suites under AddressSanitizer and the concurrent suites (Ingest, GATT, Platform)
# under ThreadSanitizer (issue #16; docs/fuzzing.md "Sanitizer passes"): each a build of the tests
# of its own (.build-asan/, .build-tsan/; about 6-8 and 5-6 min on two cores), a report fails the
# run. SANITIZE=0 skips both. The TSan pass left CI once for a false report on a lazily initialised
# global of the test helpers (swift_once is invisible to TSan); that lock is a C static now.
if [ "${SANITIZE:-1}" != 0 ]; then
  echo "== AddressSanitizer pass (scripts/sanitize.sh address)"
  scripts/sanitize.sh address
  echo "== ThreadSanitizer pass (scripts/sanitize.sh thread)"
  scripts/sanitize.sh thread
fi

# ---- Real-stack harness (issue 4): healthgate against the real Linux Bluetooth stack in a QEMU/TCG
# guest and an independent Bumble strap, plus the serial hot-plug scenarios (docs/realstack.md).
# Four guest boots (each scenario names its boot; `Tests/RealStack/run --list` shows them): boot 1
# holds the 17 first-wave scenarios (about 280-300 s on a quiet machine of this kind, 334 s with load
# average 8), boot 2 the adapter, link-supervision, clock and bluetoothd ones (about 175 s), boot 3
# the two that restart the guest themselves, bluetoothd-reboot and power-cut (about 170 s), boot 4
# systemd-deb (the .deb installed with apt into a systemd container in the guest, 4-6 min); each
# boot stays inside the harness's 540-s budget rather than one boot outgrowing it. Each ends with
# "N passed, M failed"; boot N's results (N > 1) go to Tests/RealStack/work/bootN/.
# REALSTACK_SCENARIOS="a b" runs just those, in one boot (e.g. while a scenario is known broken).
echo "== real-stack harness (Tests/RealStack/run)"
healthgate_bin="$(swift build --show-bin-path)/healthgate"
if [ -n "${REALSTACK_SCENARIOS:-}" ]; then
  realstack_args=()
  for s in $REALSTACK_SCENARIOS; do realstack_args+=(--scenario "$s"); done
  Tests/RealStack/run --healthgate "$healthgate_bin" "${realstack_args[@]}"
else
  realstack_failed=0
  Tests/RealStack/run --healthgate "$healthgate_bin" --boot 1 || realstack_failed=1
  Tests/RealStack/run --healthgate "$healthgate_bin" --boot 2 --workdir "$PWD/Tests/RealStack/work/boot2" || realstack_failed=1
  Tests/RealStack/run --healthgate "$healthgate_bin" --boot 3 --workdir "$PWD/Tests/RealStack/work/boot3" || realstack_failed=1
  Tests/RealStack/run --healthgate "$healthgate_bin" --boot 4 --workdir "$PWD/Tests/RealStack/work/boot4" || realstack_failed=1
  [ "$realstack_failed" = 0 ]
fi
