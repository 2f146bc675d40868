#!/usr/bin/env bash
# How often do the tests pass on this host? Runs each named ctest test N
# times, or with --suite the whole suite as the README's test command runs
# it (ctest -j 2, CI=true), and records the pass count, the time each run
# took, the load average before each run and what failed.
#   scripts/pass_rate.sh [--build DIR] [--runs N] [--out FILE] [--neighbour] TEST...
#   scripts/pass_rate.sh [--build DIR] [--runs N] [--out FILE] [--neighbour] --suite
#   scripts/pass_rate.sh [--runs N] [--out FILE] [--neighbour] [--sanitize] --command2
# --jobs N (any form): ctest's parallel jobs (default 2), passed to
# scripts/test.sh as RHOBENCH_TEST_JOBS. --sanitize (with --command2): CI's
# second suite, scripts/test.sh --sanitize (ASan + UBSan).
# --command2 runs README command 2 itself (CI=true scripts/test.sh: the
# install, the build, then every test) N times in a row in this tree, as a
# new user or CI would; the record says whether the tree had a build before
# its first run and how long the machine had been up.
# --neighbour runs a CPU-bound busy loop on one core at nice 0 for the whole
# measurement (bounded: killed at the end, and by a 3 h timeout), the noisy
# neighbour the tests must survive. A test that fails once in ten is fixed
# or moved to a benchmark (see README, Tests).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build" runs=10 out="$here/results/tests/pass_rate.md"
tests=() neighbour=0 suite=0 command2=0 jobs=2 sanitize=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --neighbour) neighbour=1; shift ;;
    --suite) suite=1; shift ;;
    --command2) command2=1; suite=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --sanitize) sanitize=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "pass_rate: unknown option '$1'" >&2; exit 2 ;;
    *) tests+=("$1"); shift ;;
  esac
done
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -gt 0 ] || { echo "pass_rate: --runs must be a positive integer" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "pass_rate: --jobs must be a positive integer, got '$jobs'" >&2; exit 2; }
[ "$sanitize" -eq 0 ] || [ "$command2" -eq 1 ] || { echo "pass_rate: --sanitize goes with --command2" >&2; exit 2; }
[ ${#tests[@]} -gt 0 ] || [ "$suite" -eq 1 ] || { echo "pass_rate: name at least one ctest test, or --suite" >&2; exit 2; }
[ ${#tests[@]} -eq 0 ] || [ "$suite" -eq 0 ] || { echo "pass_rate: --suite runs every test: name none" >&2; exit 2; }
fresh="a build folder ($build) before the first run: $([ -f "$build/CTestTestfile.cmake" ] && echo yes || echo no); machine up $(awk '{ printf "%.0f", $1 / 60 }' /proc/uptime) min at the start"
if [ "$command2" -eq 1 ]; then mkdir -p "$build"; else
[ -f "$build/CTestTestfile.cmake" ] || { echo "pass_rate: no ctest build in $build (scripts/setup.sh makes one)" >&2; exit 2; }
fi
. "$here/scripts/lib/neighbour.sh"
trap neighbour_stop EXIT
if [ "$neighbour" -eq 1 ]; then
  neighbour_start 0 100 10800
  echo "pass_rate: $(neighbour_describe) (pid $NEIGHBOUR_PID)" >&2
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
build=$(cd "$build" && pwd)
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
rows=()
[ "$suite" -eq 0 ] || tests=(suite)
for t in "${tests[@]}"; do
  pass=0 times=() loads=() fails=()
  for i in $(seq 1 "$runs"); do
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
    t0=$(date +%s.%N)
    if [ "$command2" -eq 1 ]; then
      san=()
      [ "$sanitize" -eq 0 ] || san=(--sanitize)
      if CI=true RHOBENCH_TEST_JOBS=$jobs bash "$here/scripts/test.sh" "${san[@]}" >"$build/pass_rate.log" 2>&1 &&
         grep -q "100% tests passed" "$build/pass_rate.log"; then
        pass=$((pass + 1))
      else
        fails+=("run $i: $(grep -E '\*\*\*(Failed|Timeout)|Skipped|test.sh:|setup:.*fail' "$build/pass_rate.log" | sed 's/.*Test *#[0-9]*: //; s/ *\.\.\.*/ /' | tr -s ' ' | tr '\n' ';' | cut -c1-300)")
      fi
    elif [ "$t" = suite ]; then
      if (cd "$build" && CI=true ctest -j "$jobs" --timeout 600 >"$build/pass_rate.log" 2>&1) &&
         grep -q "100% tests passed" "$build/pass_rate.log"; then
        pass=$((pass + 1))
      else
        fails+=("run $i: $(grep -E '\*\*\*(Failed|Timeout)|Skipped' "$build/pass_rate.log" | sed 's/.*Test *#[0-9]*: //; s/ *\.\.\.*/ /' | tr -s ' ' | tr '\n' ';' | cut -c1-300)")
      fi
    elif (cd "$build" && ctest -R "^${t}\$" --timeout 600 >"$build/pass_rate.log" 2>&1) &&
       grep -q "100% tests passed" "$build/pass_rate.log"; then
      pass=$((pass + 1))
    else
      fails+=("run $i: $(grep -m1 -E 'FAIL' "$build/Testing/Temporary/LastTest.log" 2>/dev/null | cut -c1-160 || true)")
    fi
    times+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')")
    echo "pass_rate: $t run $i: $pass passed so far" >&2
  done
  rows+=("| $t | $pass/$runs | ${times[*]} | ${loads[*]} |")
  for f in "${fails[@]}"; do rows+=("|  | $f | | |"); done
done
mkdir -p "$(dirname "$out")"
tmp_out=$(mktemp "$out.XXXXXX")
{
  echo "# Pass rates of the timing-sensitive tests"
  echo
  echo "| test | passed | seconds per run | load average (1 min) before each run |"
  echo "| --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  echo
  args=""
  [ "$neighbour" -eq 0 ] || args+=" --neighbour"
  [ "$jobs" -eq 2 ] || args+=" --jobs $jobs"
  [ "$sanitize" -eq 0 ] || args+=" --sanitize"
  if [ "$command2" -eq 1 ]; then args+=" --command2"; elif [ "$suite" -eq 0 ]; then args+=" ${tests[*]}"; else args+=" --suite"; fi
  [ "$build" = "$here/build" ] || [ "$command2" -eq 1 ] || args=" --build $(basename "$build")$args"
  echo "- command: \`scripts/pass_rate.sh --runs $runs$args\`$([ "$suite" -eq 0 ] || [ "$command2" -eq 1 ] || echo " (each run: CI=true ctest -j $jobs)")$([ "$command2" -eq 0 ] || echo " (each run: CI=true RHOBENCH_TEST_JOBS=$jobs scripts/test.sh$([ "$sanitize" -eq 0 ] || echo " --sanitize"), README command 2 whole: install, build, tests)")"
  echo "- $fresh"
  [ "$neighbour" -eq 0 ] || echo "- beside a neighbour: $(neighbour_describe) for the whole measurement"
  echo "- from $date_start to $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $commit at the start; build $(basename "$build")"
  echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) online CPUs; kernel $(uname -r)"
  # what a pass rate depends on: the tests and the code they run (scripts/records.sh)
  echo "- measures: tests loadgen simserver calibrate common models scripts/lib"
} >"$tmp_out"
mv "$tmp_out" "$out"
cat "$out"
