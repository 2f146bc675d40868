# Shared helpers of the reliability tests (sourced, not run). Binaries come
# from $RB_BUILD_DIR; every process a test starts is killed on exit (trap),
# whatever happens.
# shellcheck shell=bash disable=SC2034
set -euo pipefail
: "${RB_BUILD_DIR:?RB_BUILD_DIR must point at the build folder}"
LOADGEN="$RB_BUILD_DIR/loadgen/loadgen"
SIMSERVER="$RB_BUILD_DIR/simserver/simserver"
ABUSE="$RB_BUILD_DIR/tests/reliability/rel_abuse"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rel.XXXXXX")
CHILDREN=()

cleanup() {
  exec 2>/dev/null # no "Killed" job notices
  for pid in "${CHILDREN[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh" # fail, pass, skip, jnum, start_sim
# The test's own arguments, for unmet's second attempt.
REL_ARGS=("$@")
REL_SCALE=${REL_SCALE:-1}
# unmet WHAT: a condition that a check relies on did not hold, because the
# host ran the set-up slower than its durations allow (the abusers were gone
# before the probes were over). The test runs again from the start with every
# duration of its set-up scaled up (REL_SCALE 1 -> 2 -> 4); past the last it
# fails. A slow host makes the test longer, never wrong.
unmet() {
  echo "UNMET at scale $REL_SCALE: $*" >&2
  [ "$REL_SCALE" -lt 4 ] || fail "$* (still at scale $REL_SCALE, the last attempt)"
  trap - EXIT
  cleanup
  exec env REL_SCALE=$((REL_SCALE * 2)) bash "$0" "${REL_ARGS[@]}"
}
# fig KEY VALUE: a figure for results/reliability.md (grep '^FIG ').
fig() { echo "FIG $*"; }

# accounted FILE: dispatched = completed + failed, exactly, and the sum of
# failures_by_class = failed.
accounted() {
  local d c f byc
  d=$(jnum "$1" .dispatched); c=$(jnum "$1" .completed); f=$(jnum "$1" .failed)
  byc=$(jq '[.failures_by_class // {} | .[]] | add // 0' "$1")
  [ "$d" -eq $((c + f)) ] || fail "dispatched $d != completed $c + failed $f"
  [ "$byc" -eq "$f" ] || fail "failures_by_class adds to $byc, failed = $f"
}

# metrics_to FILE: a snapshot of simserver's /metrics.
metrics_to() { curl -sSf --max-time 5 "$SIM_URL/metrics" >"$1" || fail "GET /metrics"; }
# sim_fault METRICS TYPE: sim_injected_faults_total{type=TYPE} (0 if absent).
sim_fault() {
  awk -v t="type=\"$2\"" 'index($0, "sim_injected_faults_total{") == 1 && index($0, t) { v = $2 } END { print v + 0 }' "$1"
}
# sim_success METRICS: vllm:request_success_total over every finished_reason.
sim_success() {
  awk 'index($0, "vllm:request_success_total{") == 1 { v += $2 } END { print v + 0 }' "$1"
}

# wait_line FILE PATTERN SECONDS: waits for a line of the abuse tool.
wait_line() {
  for _ in $(seq 1 $(($3 * 20))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "no '$2' from the abuse tool in $3 s: $(cat "$1" "$1.err" 2>/dev/null)"
}
# kv FILE KEY: a value from the tool's last "key=value" line.
kv() { tail -n 1 "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# prom KEY: one sample of simserver's /metrics (KEY with its labels).
prom() { curl -sS --max-time 5 "$SIM_URL/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }

# rss_kb PID: the process's resident set (VmRSS, kB).
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# hwm_kb PID: the process's peak resident set so far (VmHWM, kB): a bound
# on it holds for the whole run, whenever it is read.
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

# health_max_ms URL [N]: the slowest of N (default 10) GET /health, in ms
# (curl's time_total); a probe that fails or is not a 200 counts as 9999.
health_max_ms() {
  local url=$1 n=${2:-10} max=0 t code out
  for _ in $(seq 1 "$n"); do
    out=$(curl -sS -o /dev/null --max-time 2 -w '%{http_code} %{time_total}' "$url/health" 2>/dev/null) || out="000 9.999"
    code=${out%% *}
    t=$(awk -v s="${out##* }" 'BEGIN { printf "%d", s * 1000 + 0.5 }')
    [ "$code" = 200 ] || t=9999
    [ "$t" -gt "$max" ] && max=$t
  done
  echo "$max"
}

# health_answers URL WHAT: 10 probes of /health, each must be a 200 within
# curl's 2 s: a sanity bound that a starved or dead server fails, not a
# latency target (how fast it answers is the host's; bench_control.sh
# measures it). Sets HEALTH_MS, the slowest probe, for the figures.
health_answers() {
  HEALTH_MS=$(health_max_ms "$1" 10)
  [ "$HEALTH_MS" -lt 9999 ] || fail "$2: a /health probe failed or took over 2 s"
}

# fd_count PID: the process's open file descriptors.
fd_count() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# loop_tool NAME MAX CMD...: runs CMD (a rel_abuse invocation, its arguments
# after the tool) up to MAX times in the background, its lines appended to
# $WORK/NAME, until stop_loop NAME. Sets TOOL_PID.
loop_tool() {
  local name=$1 max=$2
  shift 2
  rm -f "$WORK/$name.stop"
  ( for _ in $(seq 1 "$max"); do
      [ -e "$WORK/$name.stop" ] && break
      "$ABUSE" "$@" || exit 1
    done ) >"$WORK/$name" 2>"$WORK/$name.err" &
  TOOL_PID=$!
  CHILDREN+=("$TOOL_PID")
}
# stop_loop NAME: asserts the loop is still running (so what was checked
# meanwhile ran during the abuse), stops it after its current round, waits.
stop_loop() {
  kill -0 "$TOOL_PID" 2>/dev/null || fail "$1: the abuse loop ended before the checks made during it were over"
  : >"$WORK/$1.stop"
  local rc=0
  wait "$TOOL_PID" || rc=$?
  [ "$rc" -eq 0 ] || fail "$1: abuse tool failed: $(tail -n 3 "$WORK/$1" "$WORK/$1.err")"
}

# completion_ok URL: one normal streamed completion succeeds (ends in [DONE]).
completion_ok() {
  local out
  out=$(curl -sS -N --max-time 5 "$1/v1/completions" \
    -d '{"model":"sim-model","prompt":"a b c","max_tokens":4,"stream":true}' 2>&1) ||
    fail "a normal completion failed: $out"
  grep -q '^data: \[DONE\]' <<<"$out" || fail "a normal completion did not end in [DONE]: $out"
}

# stop_sim: SIGTERM, wait at most 5 s; simserver must exit 0 with no
# sanitizer report on its stderr (NAME as given to start_sim).
stop_sim() {
  local name=$1 rc=0
  kill -TERM "$SIM_PID" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$SIM_PID" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$SIM_PID" 2>/dev/null && fail "simserver still up 5 s after SIGTERM"
  wait "$SIM_PID" || rc=$?
  if grep -q 'Sanitizer\|runtime error' "$WORK/$name.err"; then cat "$WORK/$name.err" >&2; fail "simserver: sanitizer report"; fi
  [ "$rc" -eq 0 ] || { cat "$WORK/$name.err" >&2; fail "simserver exited $rc after SIGTERM"; }
}
