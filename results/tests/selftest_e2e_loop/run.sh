#!/usr/bin/env bash
# Runs tests/calibrate/e2e/selftest.sh (ctest's e2e_calibrate_selftest) over
# and over, alternating a quiet host with one where a busy loop at nice 0
# competes for the CPUs, and keeps each run's whole output, so that a rare
# failure leaves its assertion and figures to read.
#   results/tests/selftest_e2e_loop/run.sh BUILD OUT [RUNS] [SECONDS]
# BUILD: a configured and built tree; OUT: a new directory for the outputs
# (out.N, one per run, and res.txt, one line per run: run, quiet or busy,
# exit code, seconds, the verdict line). At most RUNS runs (default 24) and
# none started after SECONDS (default 2700).
set -u
build=${1:?usage: run.sh BUILD OUT [RUNS] [SECONDS]}
out=${2:?usage: run.sh BUILD OUT [RUNS] [SECONDS]}
runs=${3:-24}
secs=${4:-2700}
here=$(cd "$(dirname "$0")/../../.." && pwd)
[ -x "$build/calibrate/calibrate" ] || { echo "run.sh: no calibrate in $build" >&2; exit 2; }
mkdir "$out" || exit 2
end=$(($(date +%s) + secs))
i=0
while [ "$(date +%s)" -lt "$end" ] && [ "$i" -lt "$runs" ]; do
  i=$((i + 1))
  mode=quiet bp=""
  if [ $((i % 2)) = 0 ]; then
    mode=busy
    timeout 200 nice -n 0 bash -c 'while :; do :; done' &
    bp=$!
  fi
  s=$(date +%s)
  RB_BUILD_DIR=$build RB_SOURCE_DIR=$here bash "$here/tests/calibrate/e2e/selftest.sh" >"$out/out.$i" 2>&1
  rc=$?
  [ -z "$bp" ] || { kill "$bp" 2>/dev/null; wait "$bp" 2>/dev/null; }
  echo "$i $mode rc=$rc $(($(date +%s) - s))s $(grep -o 'self-test: [A-Z]* ([0-9]* of [0-9]* checks failed)' "$out/out.$i")" >>"$out/res.txt"
done
cat "$out/res.txt"
