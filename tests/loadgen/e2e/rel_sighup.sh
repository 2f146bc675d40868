#!/usr/bin/env bash
# SIGHUP (a closed terminal or ssh session) ends the run like SIGTERM: it
# drains, writes a partial report marked interrupted, exits 129, and leaves
# no hidden part files.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rel_lib.sh"
start_sim sim --inter-token-latency 1ms
lg_bg "$WORK/err" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 10s \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result --save-detailed \
  --result-dir "$WORK" --result-filename hup.json
lg=$LG_PID
wait_parts hup.json
kill -0 "$lg" 2>/dev/null || fail "the run ended before the signal"
# a hang-up reaches the whole process group, workers included
kill -HUP "$lg" $(pgrep -P "$lg")
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 129 ] || { cat "$WORK/err" >&2; fail "exit $rc after SIGHUP, expected 129"; }
out="$WORK/hup.json"
[ -f "$out" ] || fail "no report after SIGHUP"
jq -e '.interrupted == true' "$out" >/dev/null || fail "report not marked interrupted"
grep -q "SIGHUP: stopping" "$WORK/err" || fail "stderr: $(cat "$WORK/err")"
sent_equals_done "$out"
records_agree "$out"
ls -A "$WORK" | grep -q '\.part$' && fail "part files left behind: $(ls -A "$WORK")"
pass "SIGHUP: drained, interrupted report ($(jnum "$out" .completed) completed), exit 129, no part files"
