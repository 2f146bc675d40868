#!/usr/bin/env bash
# Bad input is refused with exit 2 and a message naming the flag and the
# value (rel_bad_input): values with a leading blank (which strtod, strtoll
# and strtoull would skip, and strtoull would take " -1" as 2^64 - 1), lists
# with an empty item, and --mpi on a build without MPI.
source "$(dirname "$0")/lib.sh"

# refused WHAT FLAG CMD...: CMD exits 2 and its stderr names FLAG and WHAT.
refused() {
  local what=$1 flag=$2 rc=0
  shift 2
  timeout -s KILL 20 "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "$flag '$what': exit $rc, expected 2"; }
  grep -qF -- "$flag" "$WORK/err" || fail "$flag '$what': the message does not name the flag: $(cat "$WORK/err")"
  grep -qF -- "'$what'" "$WORK/err" || fail "$flag '$what': the message does not show the value: $(cat "$WORK/err")"
  pass "$flag '$what': $(head -n 1 "$WORK/err")"
}

lg=("$LOADGEN" --base-url http://127.0.0.1:9 --dry-run --request-rate 5 --num-prompts 10)
refused " 5s" --duration "${lg[@]}" --duration " 5s"
refused " 5" --request-rate "${lg[@]}" --request-rate " 5"
refused " 8" --random-input-len "${lg[@]}" --random-input-len " 8"
refused "50,,90" --metric-percentiles "${lg[@]}" --metric-percentiles 50,,90
refused "50,90," --metric-percentiles "${lg[@]}" --metric-percentiles 50,90,
refused "," --percentile-metrics "${lg[@]}" --percentile-metrics ,
refused "ttft,,itl" --percentile-metrics "${lg[@]}" --percentile-metrics ttft,,itl
refused " -1" --max-write-queue "$SIMSERVER" --port 0 --max-write-queue " -1"
refused " 64k" --max-body "$SIMSERVER" --port 0 --max-body " 64k"
if [ "${RB_HAVE_MPI:-OFF}" != ON ]; then
  refused on --mpi "${lg[@]}" --mpi
fi
