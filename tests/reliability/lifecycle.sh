#!/usr/bin/env bash
# loadgen when the run is cut: the server SIGKILLed mid-run, loadgen itself
# interrupted (SIGINT, SIGTERM, a second SIGINT during the drain), an
# unwritable result folder, and the per-request file flushed while the run
# goes. Extends loadgen's own
# dead_server/sigint/certificate tests (2 workers) to the in-process worker
# and to the per-request records, which must match the report exactly.
source "$(dirname "$0")/lib.sh"

# records_match REPORT: the .jsonl beside REPORT holds one record per
# dispatched request, each index once, and as many failures as the report.
records_match() {
  local rep=$1 jl=${1%.json}.jsonl d n u nf
  [ -f "$jl" ] || fail "no per-request file $jl"
  d=$(jnum "$rep" .dispatched)
  n=$(wc -l <"$jl")
  u=$(jq -r .index "$jl" | sort -n | uniq | wc -l)
  nf=$(jq -r 'select(.class != "ok" and .class != null and .class != "") | .index' "$jl" | wc -l)
  [ "$n" -eq "$d" ] || fail "$jl: $n records, dispatched $d"
  [ "$u" -eq "$d" ] || fail "$jl: $u distinct indices, dispatched $d"
  [ "$nf" -eq "$(jnum "$rep" .failed)" ] || fail "$jl: $nf failed records, report says $(jnum "$rep" .failed) ($(jq -r .class "$jl" | sort | uniq -c | tr '\n' ' '))"
}

# --- 1. simserver SIGKILLed mid-run, in-process worker (--num-workers 0)
# (the KILL after 20 s is a sanity bound against a hang: the run's schedule
# is 4 s, plus at most the 2 s request timeout; 4 s so that much of it is
# left after the kill on a slow host)
start_sim dead --inter-token-latency 5ms
timeout -s KILL 20 "$LOADGEN" --base-url "$SIM_URL" --num-workers 0 --request-rate 150 --duration 4s \
  --random-input-len 8 --random-output-len 40 --request-timeout 2s --quiet --no-progress \
  --save-result --save-detailed --result-dir "$WORK" --result-filename dead.json 2>"$WORK/dead.lg.err" &
lg=$!
CHILDREN+=("$lg")
# Kill once the server finished 30 requests (streams are in flight then).
for _ in $(seq 1 100); do
  metrics_to "$WORK/m"
  [ "$(sim_success "$WORK/m")" -ge 30 ] && break
  sleep 0.05
done
kill -KILL "$SIM_PID"
wait "$SIM_PID" 2>/dev/null || true
t0=$(date +%s%N)
rc=0
wait "$lg" || rc=$?
el_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" -ne 137 ] || fail "dead server: loadgen hung (killed 20 s in)"
[ "$rc" -eq 0 ] || { cat "$WORK/dead.lg.err" >&2; fail "dead server: loadgen exited $rc"; }
out="$WORK/dead.json"
jq -e . "$out" >/dev/null || fail "dead server: the report is not valid JSON"
accounted "$out"
conn=$(jq '[.failures_by_class | (.connect, .reset, .midstream) // 0] | add' "$out")
[ "$(jq '.failures_by_class.connect // 0' "$out")" -gt 50 ] || fail "dead server: connect errors $(jq -c .failures_by_class "$out")"
[ "$(jnum "$out" .completed)" -ge 30 ] || fail "dead server: completed before the kill $(jnum "$out" .completed)"
# The streams cut by the kill are midstream (or reset), never lost.
[ "$(jq '(.failures_by_class.midstream // 0) + (.failures_by_class.reset // 0)' "$out")" -gt 0 ] ||
  fail "dead server: no stream counted as cut ($(jq -c .failures_by_class "$out"))"
[ "$(jq -r .lost_workers "$out")" = null ] || fail "dead server: lost_workers $(jq -r .lost_workers "$out")"
records_match "$out"
fig "sigkill_sim dispatched=$(jnum "$out" .dispatched) completed=$(jnum "$out" .completed) failures=$(jq -c .failures_by_class "$out") ms_after_kill=$el_ms"
pass "simserver SIGKILLed: exit 0, valid report, $conn connection errors, records = dispatched"

# --- 2. SIGINT (in-process worker) and SIGTERM (2 workers) mid-run
start_sim live --inter-token-latency 2ms
for sig in INT TERM; do
  if [ "$sig" = INT ]; then k=0 want=130; else k=2 want=143; fi
  "$LOADGEN" --base-url "$SIM_URL" --num-workers $k --request-rate 200 --duration 20s \
    --random-input-len 8 --random-output-len 20 --quiet --no-progress --save-result --save-detailed \
    --result-dir "$WORK" --result-filename "sig$sig.json" 2>"$WORK/sig.err" &
  lg=$!
  CHILDREN+=("$lg")
  # Wait until requests are really flowing (the server finished 20 more).
  metrics_to "$WORK/m"
  base=$(sim_success "$WORK/m")
  for _ in $(seq 1 100); do
    metrics_to "$WORK/m"
    [ "$(sim_success "$WORK/m")" -gt $((base + 20)) ] && break
    sleep 0.05
  done
  kill -"$sig" "$lg"
  rc=0
  wait "$lg" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$WORK/sig.err" >&2; fail "SIG$sig: exit $rc, expected $want"; }
  out="$WORK/sig$sig.json"
  [ "$(jq -r .interrupted "$out")" = true ] || fail "SIG$sig: interrupted is not true"
  accounted "$out"
  d=$(jnum "$out" .dispatched)
  [ "$d" -gt 20 ] && [ "$d" -lt 2000 ] || fail "SIG$sig: dispatched $d (the run did not stop early)"
  records_match "$out"
  pass "SIG$sig (k=$k): exit $want, partial report with interrupted: true, $d requests accounted for"
done

# --- 2b. A second SIGINT during the drain cancels what is in flight at once
# (30-token streams at 1 s per token: the 5 s drain would not end them).
live_url=$SIM_URL live_pid=$SIM_PID
start_sim slow --inter-token-latency 1s
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 50 --duration 20s \
  --random-input-len 8 --random-output-len 30 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename two.json 2>"$WORK/two.err" &
lg=$!
CHILDREN+=("$lg")
run=0
for _ in $(seq 1 100); do
  metrics_to "$WORK/m"
  run=$(awk '/^vllm:num_requests_running/ { print $2 }' "$WORK/m")
  [ "${run%.*}" -ge 10 ] && break
  sleep 0.05
done
[ "${run%.*}" -ge 10 ] || fail "second SIGINT: only $run streams running"
kill -INT "$lg"
for _ in $(seq 1 100); do grep -q draining "$WORK/two.err" && break; sleep 0.02; done
grep -q draining "$WORK/two.err" || fail "second SIGINT: loadgen did not say it drains: $(cat "$WORK/two.err")"
t0=$(date +%s%N)
kill -INT "$lg"
rc=0
wait "$lg" || rc=$?
el_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" -eq 130 ] || fail "second SIGINT: exit $rc"
# Cancelled, not drained: it stopped before the 5 s drain could have ended
# (the streams need 30 s); how much sooner is the host's, and a figure.
[ "$el_ms" -lt 5000 ] || fail "second SIGINT: loadgen took $el_ms ms to stop: it waited for the 5 s drain"
out="$WORK/two.json"
accounted "$out"
[ "$(jq -r .interrupted "$out")" = true ] || fail "second SIGINT: interrupted is not true"
[ "$(jq '.failures_by_class.cancelled // 0' "$out")" -ge 10 ] || fail "second SIGINT: $(jq -c .failures_by_class "$out")"
pass "second SIGINT: stopped $el_ms ms later, $(jq '.failures_by_class.cancelled' "$out") in-flight requests cancelled and counted"
stop_sim slow
SIM_URL=$live_url SIM_PID=$live_pid

# --- 3. An unwritable result folder (below a regular file: root is not
# stopped by permission bits) is refused before any request: exit 2 and
# nothing reaches the server (the time it takes is a figure).
metrics_to "$WORK/m0"
before=$(sim_success "$WORK/m0")
: >"$WORK/afile"
for extra in "" --save-detailed; do
  t0=$(date +%s%N)
  rc=0
  # shellcheck disable=SC2086
  timeout -s KILL 10 "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 5s \
    --random-input-len 8 --random-output-len 8 --quiet --no-progress --save-result $extra \
    --result-dir "$WORK/afile/dir" 2>"$WORK/unw.err" || rc=$?
  el_ms=$((($(date +%s%N) - t0) / 1000000))
  [ "$rc" -eq 2 ] || fail "unwritable folder${extra:+ ($extra)}: exit $rc, expected 2"
  grep -q -- --result-dir "$WORK/unw.err" || fail "unwritable folder: message '$(cat "$WORK/unw.err")' does not name --result-dir"
done
metrics_to "$WORK/m1"
[ "$(sim_success "$WORK/m1")" -eq "$before" ] || fail "unwritable folder: requests reached the server"
ptok() { awk '/^vllm:prompt_tokens_total/ { print $2 }' "$1"; }
[ "$(ptok "$WORK/m1")" = "$(ptok "$WORK/m0")" ] || fail "unwritable folder: prompt tokens reached the server"
pass "unwritable result folder: exit 2 in ${el_ms} ms, nothing sent"

# --- 4. The per-request file is flushed while the run goes: while the 6 s
# run is still going, the workers' part files hold whole JSON records.
mkdir -p "$WORK/flush"
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 6s \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result --save-detailed \
  --result-dir "$WORK/flush" --result-filename f.json 2>"$WORK/flush.err" &
lg=$!
CHILDREN+=("$lg")
t0=$(date +%s%N)
got=0
for _ in $(seq 1 100); do
  # whole lines only (a partial last line does not count)
  got=$(cat "$WORK"/flush/.f.json.w*.part 2>/dev/null | grep -c '}$' || true)
  [ "$got" -gt 0 ] && break
  kill -0 "$lg" 2>/dev/null || break
  sleep 0.05
done
el_ms=$((($(date +%s%N) - t0) / 1000000))
kill -0 "$lg" 2>/dev/null || fail "flush: the run ended before a record was seen on disk"
[ "$got" -gt 0 ] || fail "flush: no record on disk ${el_ms} ms into a 6 s run"
cat "$WORK"/flush/.f.json.w*.part | grep '}$' | jq -e -s 'length > 0 and all(.[]; has("index") and has("end_ns"))' >/dev/null ||
  fail "flush: the records on disk are not JSON records"
kill -INT "$lg"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 130 ] || fail "flush: exit $rc after SIGINT"
records_match "$WORK/flush/f.json"
ls "$WORK"/flush/.f.json.w*.part >/dev/null 2>&1 && fail "flush: part files left behind"
pass "per-request records on disk $el_ms ms into the run ($got records), concatenated at the end"
stop_sim live
