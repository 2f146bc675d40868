#!/usr/bin/env bash
# A SIGKILLed worker: the report leaves its requests out, and so does the
# JSONL; the report says how many of its records were left out. Report and
# JSONL agree (one record per request counted), none from the lost worker.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rel_lib.sh"
start_sim sim --inter-token-latency 1ms
lg_bg "$WORK/err" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 3s \
  --random-input-len 8 --random-output-len 8 --quiet --no-progress --save-result --save-detailed \
  --result-dir "$WORK" --result-filename crash.json
lg=$LG_PID
# Kill a worker once both have flushed records (parts are flushed each second).
wait_parts crash.json 0
wait_parts crash.json 1
victim=$(pgrep -P "$lg" | sort -n | tail -n 1)
[ -n "$victim" ] || fail "no worker process found"
kill -9 "$victim"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 1 ] || fail "exit code $rc, expected 1 (a worker was lost)"
out="$WORK/crash.json"
lostw=$(jq -r '.lost_workers' "$out" | sed -n 's/^worker \([0-9]*\) killed by signal 9.*/\1/p')
[ -n "$lostw" ] || fail "lost_workers: $(jq .lost_workers "$out")"
records_agree "$out"
left=$(jnum "$out" .detailed_records_left_out)
[ "$left" -gt 0 ] || fail "detailed_records_left_out = $left: the lost worker's flushed records are not counted"
jq -e -s --argjson w "$lostw" 'all(.[]; .worker != $w)' "$WORK/crash.jsonl" >/dev/null ||
  fail "the JSONL holds records of the lost worker $lostw"
ls -A "$WORK" | grep -q '\.part$' && fail "part files left behind: $(ls -A "$WORK")"
pass "killed worker $lostw: JSONL $(wc -l <"$WORK/crash.jsonl") = report, $left of its records left out and counted"
