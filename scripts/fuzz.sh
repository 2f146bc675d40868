#!/usr/bin/env bash
# Runs every libFuzzer harness (tests/fuzz/fuzz_*.c) for a while and says
# whether any input crashed one. Builds first with `scripts/setup.sh --fuzz`.
#   scripts/fuzz.sh [SECONDS_PER_HARNESS (default 45)] [HARNESS...]
# Each harness runs over a temporary copy of its seeds (tests/fuzz/corpus/
# <harness>/ is never written to), with tests/fuzz/<harness>.dict as its
# dictionary when there is one; crash inputs are kept under
# build-fuzz/fuzz-artifacts/<harness>/. Exit 0 if nothing crashed, 1 if
# something did, 2 on bad usage or a failed build.
# RHOBENCH_FUZZ_SEED (default 1) is libFuzzer's -seed. A fixed seed makes the
# run a prefix of one fixed sequence of inputs (the harnesses are pure), so a
# run of S seconds here covers CI's shorter one on a slower machine: CI does
# not pass or fail by luck. 0 lets libFuzzer pick one (exploration).
# RHOBENCH_FUZZ_RUNS_FILE: lines "HARNESS N" capping each harness at N
# inputs (-runs; the seconds still bound it), for CI (tests/fuzz/ci_runs.txt).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-45}
case "$secs" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS_PER_HARNESS must be a whole number, got '$secs'" >&2; exit 2 ;; esac
[ "$secs" -ge 1 ] || { echo "fuzz.sh: SECONDS_PER_HARNESS must be >= 1" >&2; exit 2; }
seed=${RHOBENCH_FUZZ_SEED:-1}
case "$seed" in ''|*[!0-9]*) echo "fuzz.sh: RHOBENCH_FUZZ_SEED must be a whole number, got '$seed'" >&2; exit 2 ;; esac
shift || true

build=$("$here/scripts/setup.sh" --fuzz | tail -n 1) || { echo "fuzz.sh: the build failed" >&2; exit 2; }
if [ $# -gt 0 ]; then
  harnesses=("$@")
else
  harnesses=()
  for src in "$here"/tests/fuzz/fuzz_*.c; do harnesses+=("$(basename "$src" .c)"); done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rhobench-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"

echo "| harness | seconds | executions | exec/s | corpus (seeds -> end) | crashes |"
echo "| --- | ---: | ---: | ---: | --- | ---: |"
failed=0
crash_files=()
for h in "${harnesses[@]}"; do
  bin="$build/tests/fuzz/$h"
  if [ ! -x "$bin" ]; then
    # A harness with a source but no binary was never fuzzed: that fails.
    echo "| $h | - | - | - | not built | - |"
    failed=1
    continue
  fi
  corpus="$work/$h"
  mkdir -p "$corpus" "$artifacts/$h"
  seeds=0
  if [ -d "$here/tests/fuzz/corpus/$h" ]; then
    cp "$here/tests/fuzz/corpus/$h"/* "$corpus"/ 2>/dev/null || true
    seeds=$(find "$corpus" -type f | wc -l)
    # libFuzzer orders the seeds by size alone, ties in the directory's order
    # (which differs between file systems): equal sizes would make the
    # sequence, and so the fixed seed's promise, depend on the machine.
    same=$(find "$here/tests/fuzz/corpus/$h" -type f -printf '%s\n' | sort -n | uniq -d | tr '\n' ' ')
    if [ -n "$same" ]; then
      echo "fuzz.sh: tests/fuzz/corpus/$h has seeds of equal size ($same bytes); make each size distinct" >&2
      exit 2
    fi
  fi
  stamp="$work/$h.stamp"
  touch "$stamp"
  log="$artifacts/$h/last-run.log"
  rc=0
  extra=()
  [ -f "$here/tests/fuzz/$h.dict" ] && extra=(-dict="$here/tests/fuzz/$h.dict")
  if [ -n "${RHOBENCH_FUZZ_RUNS_FILE:-}" ]; then
    cap=$(awk -v h="$h" '$1 == h { print $2 }' "$RHOBENCH_FUZZ_RUNS_FILE")
    case "$cap" in ''|*[!0-9]*) echo "fuzz.sh: $RHOBENCH_FUZZ_RUNS_FILE has no run count for $h" >&2; exit 2 ;; esac
    extra+=(-runs="$cap")
  fi
  "$bin" -seed="$seed" -reload=0 -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
         "${extra[@]}" -artifact_prefix="$artifacts/$h/" "$corpus" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  end=$(find "$corpus" -type f | wc -l)
  mapfile -t found < <(find "$artifacts/$h" -maxdepth 1 -type f \
                         \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
                         -newer "$stamp")
  n=${#found[@]}
  if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then n="failed (exit $rc, see $log)"; failed=1; fi
  [ "${#found[@]}" -gt 0 ] && { failed=1; crash_files+=("${found[@]}"); }
  echo "| $h | $secs | ${execs:-?} | ${rate:-?} | $seeds -> $end | $n |"
done

if [ "$failed" -ne 0 ]; then
  echo
  echo "fuzz.sh: a harness was not built, failed, or found crashes. Reproduce a crash with: <build>/tests/fuzz/<harness> <file>" >&2
  for f in "${crash_files[@]}"; do echo "  $f" >&2; done
  exit 1
fi
