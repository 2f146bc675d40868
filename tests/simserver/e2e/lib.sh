# Shared helpers of simserver's end-to-end tests (sourced, not run).
# Every server a test starts is killed on exit, whatever happens.
set -euo pipefail
SIM="${RB_BUILD_DIR:?RB_BUILD_DIR must point at the build directory}/simserver/simserver"
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
FAILS=0
CHECKS=0

ok() { CHECKS=$((CHECKS + 1)); echo "ok: $*"; }
bad() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL: $*"; }
# check DESCRIPTION COMMAND...: runs the command as a condition.
check() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
# checkx DESCRIPTION 'CONDITION': a compound shell condition, evaluated.
checkx() {
  local what=$1
  if eval "$2"; then ok "$what"; else bad "$what"; fi
}
finish() {
  echo "$((CHECKS - FAILS)) passed, $FAILS failed"
  [ "$FAILS" -eq 0 ]
}

# start_sim NAME ARGS...: starts simserver on a free port (scripts/lib/sim.sh);
# sets PORT, URL and the pid in SIM_PID_<NAME>. Waits (at most 5 s) for the
# listening line.
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/sim.sh"
start_sim() {
  local name=$1 rc=0
  shift
  sim_start "$TMP" "$name" "$SIM" "$@" || rc=$?
  PIDS+=("$SIM_PID")
  eval "SIM_PID_$name=$SIM_PID"
  [ "$rc" -eq 0 ] || exit 1
  PORT=$SIM_PORT
  URL=$SIM_URL
}

# stop_sim NAME: SIGTERM, then waits (at most 5 s); sets STOP_RC, and checks
# that the server's stderr holds no sanitizer report.
stop_sim() {
  local pid
  eval "pid=\$SIM_PID_$1"
  kill -TERM "$pid" 2>/dev/null || true
  STOP_RC=0
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$pid" 2>/dev/null; then STOP_RC=124; kill -KILL "$pid"; fi
  wait "$pid" || STOP_RC=$?
  [ "$STOP_RC" -eq 0 ] || bad "server $1: exit $STOP_RC after SIGTERM"
  if grep -q 'Sanitizer\|runtime error' "$TMP/$1.err"; then
    bad "server $1: sanitizer report"
    cat "$TMP/$1.err"
  fi
}

# metric NAME_WITH_LABELS: the value of one sample from /metrics.
metric() {
  curl -sS "$URL/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}

# sse_data FILE: the JSON of each data event except [DONE], one per line.
sse_data() { sed -n 's/^data: \(.*\)$/\1/p' "$1" | grep -v '^\[DONE\]$' || true; }

# strip_stamps: removes the ground-truth comments (stamp lines, and the last
# comment with its blank line), giving back the standard stream.
strip_stamps() { awk '/^: \{/ { skip = 1; next } skip && /^$/ { skip = 0; next } /^: t=/ { next } { print }'; }
