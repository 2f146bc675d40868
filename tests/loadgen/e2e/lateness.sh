#!/usr/bin/env bash
# Lateness, measured from outside the code under test. A low, serial load
# (one worker, 50 requests/s, 16 tokens paced 5 ms apart, no jitter), with
# loadgen and simserver at real-time priority where the host allows it (as
# root, as in CI), so that a busy neighbour cannot stand between a timer and
# its wake-up:
#  - loadgen's dispatch: from the records (intended_ns, dispatch_ns), no
#    request leaves before its intended time, and the schedule lag's median
#    is under 0.5 ms; and the kernel's stamp of each response's first byte
#    comes within 1 ms of the intended time (median), which no dispatch stamp
#    can fake. The p99 is printed, not bounded: it is the host's figure (on
#    the 2-core VM at real-time priority, 0.85-1.58 ms in five runs under a
#    load average of 7.5, and 2.12 ms once in CI, where the median was
#    0.07 ms). A constant lateness moves the median, which is what the
#    mutants below need;
#  - simserver's pacer: the gaps between tokens that loadgen's kernel
#    receive times see have a median within 0.5 ms of the configured 5 ms
#    (the server's own lateness is not added: this is the client's view).
# A dispatch timer armed 3 ms late, or a pacer armed 2 ms late, fails it.
source "$(dirname "$0")/lib.sh"
rt=()
if chrt -f 10 true 2>/dev/null; then
  rt=(chrt -f 10)
else
  echo "note: no real-time priority here (chrt -f refused): the bounds hold on a quiet host only"
fi
SIM_WRAP="${rt[*]}"
start_sim sim --inter-token-latency 5ms --time-to-first-token 0
unset SIM_WRAP
out="$WORK/late.json"
"${rt[@]}" "$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 50 --num-prompts 200 \
  --seed 5 --random-input-len 16 --random-output-len 16 --quiet --no-progress \
  --save-result --save-detailed --result-dir "$WORK" --result-filename late.json ||
  fail "loadgen exited $?"
sent_equals_done "$out"
[ "$(jnum "$out" .failed)" -eq 0 ] || fail "failed requests: $(jq -c .failures_by_class "$out")"
recs="$WORK/late.jsonl"
[ "$(wc -l <"$recs")" -eq 200 ] || fail "$(wc -l <"$recs") records, expected 200"
# pct P FIELD-EXPRESSION: the P-th percentile (nearest rank), in ms, of a
# per-record quantity computed by jq from the records.
pct() {
  jq -s --argjson p "$1" "[.[] | ($2)] | sort | .[((length * \$p / 100) | ceil) - 1] / 1e6" "$recs"
}
lag0=$(jq -s '[.[] | .dispatch_ns - .intended_ns] | min / 1e6' "$recs")
lag50=$(pct 50 '.dispatch_ns - .intended_ns') lag99=$(pct 99 '.dispatch_ns - .intended_ns')
fb50=$(pct 50 '.first_byte_ns - .intended_ns')
echo "schedule lag from the records: min $lag0 ms, median $lag50 ms, p99 $lag99 ms (the p99 is not bounded: the host's figure); first byte after the intended time: median $fb50 ms"
in_range "$lag0" 0 1e9 "least schedule lag (ms, from the records: no request leaves early)"
in_range "$lag50" 0 0.5 "median schedule lag (ms, from the records)"
in_range "$fb50" 0 1 "median first byte after the intended time (ms, kernel stamps)"
itl50=$(jnum "$out" .median_itl_ms)
echo "token gaps seen by the client: median $itl50 ms (configured 5 ms)"
in_range "$itl50" 4.5 5.5 "median ITL by the client's receive times (ms)"
pass "dispatch on time (lag median $lag50 ms, p99 $lag99 ms) and tokens paced 5 ms apart as seen by the client (median $itl50 ms)"
