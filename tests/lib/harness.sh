# The helpers that loadgen's end-to-end tests (tests/loadgen/e2e/lib.sh) and
# the reliability tests (tests/reliability/lib.sh) share, sourced by both
# after they set WORK, SIMSERVER and CHILDREN: fail, pass, skip, jnum and
# start_sim.
# shellcheck shell=bash
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }
source "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

# jnum FILE FILTER: a value from a JSON file (jq -e), or fail.
jnum() {
  local v
  v=$(jq -e "$2" "$1") || fail "jq '$2' on $1"
  echo "$v"
}

# start_sim NAME [simserver flags...]: simserver on a free loopback port
# (scripts/lib/sim.sh, with $SIM_WRAP and $SIM_START_TRIES); sets SIM_URL,
# SIM_PORT and SIM_PID, and adds it to CHILDREN (killed on exit). Waits at
# most 5 s for its first line.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/sim.sh"
start_sim() {
  local name=$1 rc=0
  shift
  sim_start "$WORK" "$name" "$SIMSERVER" "$@" || rc=$?
  CHILDREN+=("$SIM_PID")
  [ "$rc" -eq 0 ] || fail "simserver $name did not start"
}
