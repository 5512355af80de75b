#!/usr/bin/env bash
# scripts/fuzz.sh [TARGET|all] [SECONDS] — fuzzes HealthGate's parsers with libFuzzer (docs/fuzzing.md).
#
# Builds `healthgate-fuzz` with libFuzzer and AddressSanitizer (release, in .build-fuzz/), then
# runs TARGET (default: all, one after another) for SECONDS each (default 60), starting from the
# committed corpus Tests/FuzzTargetsTests/Corpus/TARGET/. New inputs it finds go to
# .fuzz/corpus/TARGET/ (not committed; copy the interesting ones next to the seeds); a crash, a
# hang (an input over 10 s) or a broken promise stops that target, is saved under
# .fuzz/crashes/TARGET/ and makes the script exit 1 after the other targets ran.
# Leak detection is off: LeakSanitizer reports the Swift runtime's Regex compiler (vendor profiles'
# patterns), not HealthGate's code (docs/fuzzing.md).
# FUZZ_RUNS=N runs N executions per target instead of a time (the long runs in docs/fuzzing.md).
# FUZZ_TIMEOUT=S: an input running longer than S seconds (wall clock, default 10) is a hang; raise
# it for a long run at low priority beside other work, where a starved fuzzer saw false hangs.
# Ends with one line per target: executions, seconds, executions/s, result.
#
#   scripts/fuzz.sh                          # every target, 60 s each
#   scripts/fuzz.sh heart-rate-measurement 600
#   FUZZ_RUNS=10000000 scripts/fuzz.sh att-pdu
#   .build/debug/healthgate-fuzz replay att-pdu .fuzz/crashes/att-pdu/crash-…   # reproduce without libFuzzer
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-all}
seconds=${2:-60}
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number (got '$seconds')" >&2; exit 64;; esac

echo "== building healthgate-fuzz with libFuzzer and AddressSanitizer (.build-fuzz)"
swift build -c release --product healthgate-fuzz --scratch-path .build-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld 2>&1 \
  | grep -E "error|warning: .*(Sources|Tests)/|Build complete|Compiling FuzzTargets" || true
fuzzer=$(swift build -c release --scratch-path .build-fuzz --show-bin-path)/healthgate-fuzz
[ -x "$fuzzer" ] || { echo "fuzz.sh: the fuzzing build failed (above)" >&2; exit 70; }

all_targets=$(ls Tests/FuzzTargetsTests/Corpus)
if [ "$target" = all ]; then targets=$all_targets
elif [ -d "Tests/FuzzTargetsTests/Corpus/$target" ]; then targets=$target
else echo "fuzz.sh: no target '$target'; targets: $(echo $all_targets)" >&2; exit 64
fi

limit=(-max_total_time="$seconds")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
failed=0
summary=()
for t in $targets; do
  mkdir -p ".fuzz/corpus/$t" ".fuzz/crashes/$t"
  log=".fuzz/$t.log"
  if [ -n "${FUZZ_RUNS:-}" ]; then echo "== $t ($FUZZ_RUNS runs)"; else echo "== $t ($seconds s)"; fi
  start=$(date +%s)
  set +e
  ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" HEALTHGATE_FUZZ_TARGET=$t "$fuzzer" ".fuzz/corpus/$t" "Tests/FuzzTargetsTests/Corpus/$t" \
    "${limit[@]}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -detect_leaks=0 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix=".fuzz/crashes/$t/" >"$log" 2>&1
  rc=$?
  set -e
  took=$(( $(date +%s) - start ))
  execs=$(grep -Eo "stat::number_of_executed_units: *[0-9]+" "$log" | tail -1 | grep -Eo "[0-9]+$" || echo 0)
  rate=$(( took > 0 ? execs / took : execs ))
  if [ $rc -eq 0 ]; then result="0 crashes"; else
    result="FAILED (exit $rc): $(ls .fuzz/crashes/$t | head -3 | tr '\n' ' ')— see $log"; failed=1
    grep -E "healthgate-fuzz:|ERROR: |SUMMARY" "$log" | head -5
  fi
  summary+=("$(printf '%-24s %12s execs %6s s %9s/s  %s' "$t" "$execs" "$took" "$rate" "$result")")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $failed
