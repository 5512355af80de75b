#!/usr/bin/env bash
# scripts/sanitize.sh [thread|address|all] — the sanitizer passes of issue #16 (docs/fuzzing.md).
#
#   thread:  the concurrent code's suites (IngestTests: the rings, the batching writer, the
#            gateway's sources and runtime; GATTTests: the GATT client over its bearers;
#            PlatformTests: stop signals and wake-ups) under ThreadSanitizer, in .build-tsan/.
#   address: the parsers' suites (HeartRateProfile, GATT, SerialPedometer, Capture, HealthModel,
#            Configuration, TOML, the fuzz corpora, the import parsers) under AddressSanitizer, in .build-asan/.
# Each is a full build of the tests with the sanitizer (its own scratch path: the normal build is
# untouched) and then the suites; a report from the sanitizer fails the run (halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}

run_pass() {  # run_pass SANITIZER SCRATCH FILTER [SKIP]
  local sanitizer=$1 scratch=$2 filter=$3 skip=${4:-}
  # Under ThreadSanitizer the package's one lock type (Sources/Locking) is a pthread mutex,
  # which TSan intercepts, instead of Synchronization.Mutex, which it cannot see.
  local defines=()
  [ "$sanitizer" = thread ] && defines=(-Xswiftc -DHEALTHGATE_TSAN)
  echo "== $sanitizer sanitizer: building the tests ($scratch)"
  local t0=$(date +%s)
  swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" "${defines[@]}" 2>&1 \
    | grep -E "error:|Build complete" || true
  echo "== $sanitizer sanitizer: built in $(( $(date +%s) - t0 )) s; running $filter"
  t0=$(date +%s)
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  ASAN_OPTIONS="halt_on_error=1 detect_leaks=0 ${ASAN_OPTIONS:-}" \
    swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${defines[@]}" --filter "$filter" ${skip:+--skip "$skip"}
  echo "== $sanitizer sanitizer: suites passed in $(( $(date +%s) - t0 )) s"
}

case $which in
  # ZipTests: the Apple Health zip's inflating thread and its chunk queue.
  thread|all) run_pass thread .build-tsan "^(IngestTests|GATTTests|PlatformTests)\.|ZipTests" ;;&
  # memoryStaysFlat measures import's resident memory, which ASan's shadow and quarantine inflate
  # (370 MB for the 50,000-sample file): a figure of the sanitizer, not of HealthGate.
  address|all) run_pass address .build-asan "^(HeartRateProfileTests|GATTTests|SerialPedometerTests|CaptureTests|HealthModelTests|ConfigurationTests|TOMLTests|FuzzTargetsTests)\.|FastSampleParser|Import" "memoryStaysFlat" ;;
  thread) ;;
  *) echo "sanitize.sh: expected thread, address or all (got '$which')" >&2; exit 64 ;;
esac
