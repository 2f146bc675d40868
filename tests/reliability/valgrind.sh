#!/usr/bin/env bash
# Leaks, end to end: simserver (10% fault mix) and loadgen both under
# valgrind memcheck for a few hundred requests, streamed and whole, with the
# in-process worker (--num-workers 0) and one forked worker (--num-workers 1,
# --trace-children=yes). Zero errors, zero definite/indirect leaks.
# A sanitizer build does not register it (valgrind and ASan do not mix);
# without valgrind it is skipped, which under CI=true is a failure.
source "$(dirname "$0")/lib.sh"
[ "${RB_SANITIZE:-OFF}" != ON ] || fail "a sanitizer build: valgrind and ASan do not mix (not registered there)"
command -v valgrind >/dev/null || skip "valgrind is not installed (scripts/setup.sh installs it)"

VG=(valgrind --tool=memcheck --leak-check=full --error-exitcode=99
  --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
  --child-silent-after-fork=no)

# vg_clean LOG...: every valgrind log says 0 errors; prints its summary.
vg_clean() {
  local f
  for f in "$@"; do
    grep -q 'ERROR SUMMARY: 0 errors' "$f" || { cat "$f" >&2; fail "valgrind: errors in $(basename "$f")"; }
    if grep -q 'definitely lost: [1-9]\|indirectly lost: [1-9]' "$f"; then
      cat "$f" >&2
      fail "valgrind: leaks in $(basename "$f")"
    fi
    echo "  $(basename "$f"): $(grep -o "ERROR SUMMARY: [0-9]* errors" "$f"); $(grep -o "in use at exit: .*" "$f"); $(grep -o "total heap usage: .*" "$f")"
  done
}

SIM_WRAP="${VG[*]} --log-file=$WORK/vg-sim.%p.log"
SIM_START_TRIES=600 # valgrind starts slowly: 30 s at most
start_sim sim --failure-injection-rate 10 --inter-token-latency 1ms --seed 3
unset SIM_WRAP

# run_lg NAME WORKERS [loadgen flags...]: loadgen under valgrind; 300
# requests at 100/s, each bounded by 2 s (stalls), the whole run by 90 s.
run_lg() {
  local name=$1 k=$2 rc=0
  shift 2
  local extra=()
  [ "$k" -gt 0 ] && extra=(--trace-children=yes)
  timeout -s KILL 90 "${VG[@]}" "${extra[@]}" --log-file="$WORK/vg-$name.%p.log" \
    "$LOADGEN" --base-url "$SIM_URL" --num-workers "$k" --request-rate 100 --num-prompts 300 \
    --random-input-len 16 --random-output-len 8 --request-timeout 2s --quiet --no-progress \
    --save-result --save-detailed --result-dir "$WORK" --result-filename "$name.json" "$@" \
    2>"$WORK/$name.err" || rc=$?
  [ "$rc" -ne 137 ] || fail "$name: loadgen under valgrind did not finish in 90 s"
  [ "$rc" -ne 99 ] || { cat "$WORK"/vg-"$name".*.log >&2; fail "$name: valgrind found errors (exit 99)"; }
  [ "$rc" -eq 0 ] || { cat "$WORK/$name.err" >&2; fail "$name: loadgen exited $rc"; }
  accounted "$WORK/$name.json"
  [ "$(jnum "$WORK/$name.json" .dispatched)" -eq 300 ] || fail "$name: dispatched $(jnum "$WORK/$name.json" .dispatched)"
  [ "$(jnum "$WORK/$name.json" .failed)" -gt 0 ] || fail "$name: no fault reached loadgen"
  echo "loadgen $name (k=$k $*): $(jq -c '{completed, failed, failures_by_class}' "$WORK/$name.json")"
  vg_clean "$WORK"/vg-"$name".*.log
}
run_lg k0 0
run_lg k1 1 --no-stream
# k=1: the coordinator's log and the worker's (forked) log.
[ "$(ls "$WORK"/vg-k1.*.log | wc -l)" -ge 2 ] || fail "k1: no valgrind log of the forked worker"

# Under valgrind too, loadgen invents no fault and loses none. Valgrind slows
# both programs many times over, so a request may reach its 2 s timeout
# before its fault (or its last token) arrives: it is then counted as a
# timeout. The exact per-class equality is the fault tests' (rel_fault_*,
# without valgrind); here: no class is counted more often than it was
# injected, every stall ends as a timeout, and every injected fault is a
# failure of some class.
metrics_to "$WORK/metrics"
injected=0
for pair in rate_limit:http_429 server_error:http_500 unavailable:http_503 invalid_request:http_400 \
  invalid_api_key:http_401 connection_reset:reset midstream_drop:midstream malformed_chunk:malformed stall:timeout; do
  s=$(sim_fault "$WORK/metrics" "${pair%%:*}")
  o=$(jq -s --arg c "${pair##*:}" 'map(.failures_by_class[$c] // 0) | add' "$WORK/k0.json" "$WORK/k1.json")
  injected=$((injected + s))
  if [ "${pair%%:*}" = stall ]; then
    [ "$o" -ge "$s" ] || fail "stall: simserver injected $s, loadgen counted only $o timeouts"
  else
    [ "$o" -le "$s" ] || fail "${pair%%:*}: simserver injected $s, loadgen counted $o (more than injected)"
  fi
done
failed=$(jq -s 'map(.failed) | add' "$WORK/k0.json" "$WORK/k1.json")
[ "$failed" -ge "$injected" ] || fail "simserver injected $injected faults, loadgen counted $failed failures"

# simserver: SIGTERM; valgrind's exit code says errors (99) or not.
kill -TERM "$SIM_PID"
rc=0
for _ in $(seq 1 600); do kill -0 "$SIM_PID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$SIM_PID" 2>/dev/null && fail "simserver under valgrind still up 30 s after SIGTERM"
wait "$SIM_PID" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK"/vg-sim.*.log >&2; fail "simserver under valgrind exited $rc"; }
echo "simserver:"
vg_clean "$WORK"/vg-sim.*.log
pass "valgrind: simserver and loadgen (k=0, k=1), 600 requests with 10% faults: 0 errors, 0 definite/indirect leaks"
