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

if [ $# -gt 0 ]; then
  harnesses=("$@")
else
  harnesses=()
  for src in "$here"/tests/fuzz/fuzz_*.c; do harnesses+=("$(basename "$src" .c)"); done
fi
# Only the harnesses (and the libraries they link): the rest of the tree,
# built with clang too, took half of the minute CI spent building here.
build_targets=()
for h in "${harnesses[@]}"; do
  [[ "$h" =~ ^fuzz_[a-z0-9_]+$ ]] && [ -f "$here/tests/fuzz/$h.c" ] || { echo "fuzz.sh: no harness named '$h' (tests/fuzz/$h.c)" >&2; exit 2; }
  build_targets+=(--target "$h")
done
build=$("$here/scripts/setup.sh" --fuzz "${build_targets[@]}" | tail -n 1) ||
  { echo "fuzz.sh: the build failed" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rhobench-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"

# Every check that can refuse the run first, before any harness starts.
for h in "${harnesses[@]}"; do
  if [ -d "$here/tests/fuzz/corpus/$h" ]; then
    # libFuzzer orders the seeds by size alone, ties in the directory's order
    # (which differs between file systems): equal sizes would make the
    # sequence, and so the fixed seed's promise, depend on the machine.
    same=$(find "$here/tests/fuzz/corpus/$h" -type f -printf '%s\n' | sort -n | uniq -d | tr '\n' ' ')
    if [ -n "$same" ]; then
      echo "fuzz.sh: tests/fuzz/corpus/$h has seeds of equal size ($same bytes); make each size distinct" >&2
      exit 2
    fi
  fi
  if [ -n "${RHOBENCH_FUZZ_RUNS_FILE:-}" ]; then
    cap=$(awk -v h="$h" '$1 == h { print $2 }' "$RHOBENCH_FUZZ_RUNS_FILE")
    case "$cap" in ''|*[!0-9]*) echo "fuzz.sh: $RHOBENCH_FUZZ_RUNS_FILE has no run count for $h" >&2; exit 2 ;; esac
  fi
done

# artifact_list H: the crash inputs kept for H, sorted. What a run added is
# told by name, not by time: a crash written in the clock tick of the run's
# start has the same mtime as a stamp touched then.
artifact_list() {
  find "$artifacts/$1" -maxdepth 1 -type f \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | LC_ALL=C sort
}

# fuzz_one H: runs harness H; its table row goes to $work/H.row, the crash
# inputs it left to $work/H.crashes, and a failure to $work/H.failed.
fuzz_one() {
  local h=$1 bin="$build/tests/fuzz/$1" corpus="$work/$1" seeds=0 rc=0 execs rate end n
  local before="$work/$1.before" log="$artifacts/$1/last-run.log"
  local -a extra=() found=()
  if [ ! -x "$bin" ]; then
    # A harness with a source but no binary was never fuzzed: that fails.
    echo "| $h | - | - | - | not built | - |" >"$work/$h.row"
    touch "$work/$h.failed"
    return
  fi
  mkdir -p "$corpus" "$artifacts/$h"
  if [ -d "$here/tests/fuzz/corpus/$h" ]; then
    cp "$here/tests/fuzz/corpus/$h"/* "$corpus"/ 2>/dev/null || true
    seeds=$(find "$corpus" -type f | wc -l)
  fi
  artifact_list "$h" >"$before"
  [ -f "$here/tests/fuzz/$h.dict" ] && extra=(-dict="$here/tests/fuzz/$h.dict")
  if [ -n "${RHOBENCH_FUZZ_RUNS_FILE:-}" ]; then
    extra+=(-runs="$(awk -v h="$h" '$1 == h { print $2 }' "$RHOBENCH_FUZZ_RUNS_FILE")")
  fi
  "$bin" -seed="$seed" -reload=0 -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
         "${extra[@]}" -artifact_prefix="$artifacts/$h/" "$corpus" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  end=$(find "$corpus" -type f | wc -l)
  mapfile -t found < <(artifact_list "$h" | comm -13 "$before" -)
  n=${#found[@]}
  if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then n="failed (exit $rc, see $log)"; touch "$work/$h.failed"; fi
  if [ "${#found[@]}" -gt 0 ]; then
    touch "$work/$h.failed"
    printf '%s\n' "${found[@]}" >"$work/$h.crashes"
  fi
  echo "| $h | $secs | ${execs:-?} | ${rate:-?} | $seeds -> $end | $n |" >"$work/$h.row"
}

# The harnesses are single-threaded and pure: one per core at a time
# (RHOBENCH_FUZZ_JOBS, default the core count). With the fixed seed each one
# runs the same inputs as it would alone; on two cores CI's fuzzing takes
# half as long.
jobs=${RHOBENCH_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
case "$jobs" in ''|*[!0-9]*|0) echo "fuzz.sh: RHOBENCH_FUZZ_JOBS must be a whole number >= 1, got '$jobs'" >&2; exit 2 ;; esac
running=0
for h in "${harnesses[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$h" &
  running=$((running + 1))
done
wait

echo "| harness | seconds | executions | exec/s | corpus (seeds -> end) | crashes |"
echo "| --- | ---: | ---: | ---: | --- | ---: |"
failed=0
crash_files=()
for h in "${harnesses[@]}"; do
  if [ -f "$work/$h.row" ]; then cat "$work/$h.row"; else echo "| $h | - | - | - | never ran | - |"; failed=1; fi
  [ ! -f "$work/$h.failed" ] || failed=1
  [ ! -f "$work/$h.crashes" ] || mapfile -t -O "${#crash_files[@]}" crash_files <"$work/$h.crashes"
done

if [ "$failed" -ne 0 ]; then
  echo
  echo "fuzz.sh: a harness was not built, failed, or found crashes. Reproduce a crash with: <build>/tests/fuzz/<harness> <file>" >&2
  for f in "${crash_files[@]}"; do echo "  $f" >&2; done
  exit 1
fi
