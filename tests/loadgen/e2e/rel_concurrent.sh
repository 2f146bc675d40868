#!/usr/bin/env bash
# Two runs with the same result name and --save-detailed at once: the second
# is refused before it sends anything (exit 2, naming the first's pid), and
# the first's records survive whole (its parts carry its pid).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rel_lib.sh"
start_sim sim --inter-token-latency 1ms
common=(--base-url "$SIM_URL" --num-workers 2 --random-input-len 8 --random-output-len 4 --quiet
  --no-progress --save-result --save-detailed --result-dir "$WORK" --result-filename same.json)
lg_bg "$WORK/a.err" "${common[@]}" --request-rate 100 --duration 3s
a=$LG_PID
wait_parts same.json # the first is running
kill -0 "$a" 2>/dev/null || fail "the first run ended before the second started"
rc=0
"$LOADGEN" "${common[@]}" --request-rate 100 --num-prompts 50 2>"$WORK/b.err" || rc=$?
[ "$rc" -eq 2 ] || { cat "$WORK/b.err" >&2; fail "second run: exit $rc, expected 2 (refused)"; }
grep -q "another run (pid $a) is writing" "$WORK/b.err" || fail "second run's message: $(cat "$WORK/b.err")"
ra=0
wait "$a" || ra=$?
[ "$ra" -eq 0 ] || { cat "$WORK/a.err" >&2; fail "first run exited $ra"; }
records_agree "$WORK/same.json"
[ "$(jnum "$WORK/same.json" .completed)" -gt 200 ] || fail "first run: $(jnum "$WORK/same.json" .completed) completed"
ls -A "$WORK" | grep -q '\.part$\|\.lock$' && fail "files left behind: $(ls -A "$WORK")"
pass "same name twice at once: the second refused (exit 2), the first's $(wc -l <"$WORK/same.jsonl") records whole"
