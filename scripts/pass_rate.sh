#!/usr/bin/env bash
# How often do the timing-sensitive tests pass on this host? Runs each named
# ctest test N times, alone (nothing else of ours running), and records the
# pass count, the time each run took and the load average before each run.
#   scripts/pass_rate.sh [--build DIR] [--runs N] [--out FILE] TEST...
# A test that fails once in ten is fixed or moved (see README, Tests).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build" runs=10 out="$here/results/tests/pass_rate.md"
tests=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    -*) echo "pass_rate: unknown option '$1'" >&2; exit 2 ;;
    *) tests+=("$1"); shift ;;
  esac
done
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -gt 0 ] || { echo "pass_rate: --runs must be a positive integer" >&2; exit 2; }
[ ${#tests[@]} -gt 0 ] || { echo "pass_rate: name at least one ctest test" >&2; exit 2; }
[ -f "$build/CTestTestfile.cmake" ] || { echo "pass_rate: no ctest build in $build (scripts/setup.sh makes one)" >&2; exit 2; }
build=$(cd "$build" && pwd)
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
rows=()
for t in "${tests[@]}"; do
  pass=0 times=() loads=() fails=()
  for i in $(seq 1 "$runs"); do
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
    t0=$(date +%s.%N)
    if (cd "$build" && ctest -R "^${t}\$" --timeout 600 >"$build/pass_rate.log" 2>&1) &&
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
{
  echo "# Pass rates of the timing-sensitive tests"
  echo
  echo "| test | passed | seconds per run | load average (1 min) before each run |"
  echo "| --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  echo
  echo "- command: \`scripts/pass_rate.sh --runs $runs ${tests[*]}\`"
  echo "- from $date_start to $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $commit at the start; build $(basename "$build")"
  echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) online CPUs; kernel $(uname -r)"
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
