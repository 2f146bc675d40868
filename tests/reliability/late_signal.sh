#!/usr/bin/env bash
# A signal after the workers have ended (rel_late_signal): 2 workers, a
# closed loop of 100,000 requests against a zero-latency simserver, every
# output asked for (--save-detailed --report-format both). The signal lands
# in a named phase of the coordinator's end (the merge, the JSONL join, the
# exports), made certain by loadgen's test hook (RB_TEST_PAUSE_AT: at that
# phase it creates RB_TEST_PAUSE_FILE and waits for the signal), not by
# timing. Each must leave the whole result: r.json with every request,
# r.jsonl with every record, both exports, no part file and no lock; the
# exit code says the signal (128 + its number). A second signal skips the
# exports and the result says interrupted, with every record still there
# and the result's vLLM arrays too, whether it comes during the join or once
# the result is written (it is then written again) (those cases and the
# next run a tenth of the requests).
# A SIGINT during the start-up walk of the schedule stops the run before its
# first request: a partial report that says interrupted, every request
# counted as not dispatched, no part file, no lock.
source "$(dirname "$0")/lib.sh"
N=${N:-100000}
start_sim late

# run_at PHASE SIGNAL COUNT TAG [loadgen flags...]: loadgen in the
# background, paused at PHASE, then COUNT x SIGNAL; sets RC, OUT (the folder).
run_at() {
  local phase=$1 sig=$2 count=$3 tag=$4 pid
  shift 4
  OUT="$WORK/$tag"
  mkdir -p "$OUT"
  rm -f "$WORK/ready-$tag"
  # timeout --foreground: without it timeout sends a signal it gets to the
  # child and again to its process group, and a slow loadgen could then
  # count one signal as two.
  RB_TEST_PAUSE_AT=$phase RB_TEST_PAUSE_FILE="$WORK/ready-$tag" RB_TEST_PAUSE_SIGNALS=$count \
    timeout --foreground -s KILL 300 "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --random-input-len 8 \
    --random-output-len 4 --quiet --no-progress --save-result --save-detailed \
    --report-format both --result-dir "$OUT" --result-filename r.json "$@" 2>"$WORK/$tag.err" &
  pid=$!
  CHILDREN+=("$pid")
  # Bounded: 300 s is the run's own bound (a slow sanitizer build).
  for _ in $(seq 1 3000); do
    [ -e "$WORK/ready-$tag" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -e "$WORK/ready-$tag" ] || { cat "$WORK/$tag.err" >&2; fail "$tag: loadgen never reached the $phase phase"; }
  # One at a time: two signals sent at once can reach the process as one
  # (pending signals merge), so the next goes once the hook counted the last.
  local i
  for i in $(seq 1 "$count"); do
    kill -"$sig" "$pid"
    [ "$i" -lt "$count" ] || break
    for _ in $(seq 1 300); do
      [ "$(cat "$WORK/ready-$tag" 2>/dev/null || echo 0)" -ge "$i" ] && break
      sleep 0.1
    done
  done
  RC=0
  wait "$pid" || RC=$?
  [ "$RC" -ne 137 ] || fail "$tag: loadgen hung (killed after 300 s)"
  ! grep -q 'Sanitizer\|runtime error' "$WORK/$tag.err" || { cat "$WORK/$tag.err" >&2; fail "$tag: sanitizer report"; }
}

# no_leftovers DIR TAG: no part file, no lock, no temporary.
no_leftovers() {
  local left
  left=$(find "$1" -name '*.part' -o -name '*.lock' -o -name '*.tmp*' | tr '\n' ' ')
  [ -z "$left" ] || fail "$2: left behind: $left"
}

# arrays_kept FILE N TAG: the result's vLLM arrays (--save-detailed), N each.
arrays_kept() {
  jq -e --argjson n "$2" '.detailed_arrays == $n and ([.input_lens, .output_lens, .ttfts, .itls, .errors]
         | all(length == $n))' "$1" >/dev/null ||
    fail "$3: arrays $(jq -c '{detailed_arrays, detailed_arrays_omitted, n: (.input_lens | length?)}' "$1")"
}

declare -A NUM=([INT]=2 [TERM]=15 [HUP]=1)
for case in merge:INT join:TERM export:HUP; do
  phase=${case%%:*} sig=${case##*:}
  run_at "$phase" "$sig" 1 "$phase" --max-concurrency 32 --num-prompts "$N"
  [ "$RC" -eq $((128 + NUM[$sig])) ] || { cat "$WORK/$phase.err" >&2; fail "SIG$sig at $phase: exit $RC, expected $((128 + NUM[$sig]))"; }
  r="$OUT/r.json"
  [ -f "$r" ] || { cat "$WORK/$phase.err" >&2; fail "SIG$sig at $phase: no r.json"; }
  accounted "$r"
  [ "$(jnum "$r" .completed)" -eq "$N" ] || fail "SIG$sig at $phase: completed $(jnum "$r" .completed) of $N"
  [ "$(jq -r .interrupted "$r")" = false ] || fail "SIG$sig at $phase: the whole run says interrupted"
  [ "$(wc -l <"$OUT/r.jsonl")" -eq "$N" ] || fail "SIG$sig at $phase: $(wc -l <"$OUT/r.jsonl") records of $N"
  jq -e . "$OUT/r.vllm.json" >/dev/null || fail "SIG$sig at $phase: no vLLM export"
  [ -d "$OUT/r.inference-perf" ] || fail "SIG$sig at $phase: no Inference Perf export"
  no_leftovers "$OUT" "SIG$sig at $phase"
  grep -q "after the requests ended" "$WORK/$phase.err" || fail "SIG$sig at $phase: loadgen did not say it writes on"
  pass "SIG$sig during the $phase: exit $RC, r.json with $N requests, $N records, both exports, nothing left behind"
done

# Two signals during the JSONL join: the join finishes (nothing finished is
# lost), the exports are skipped, the result says interrupted.
# (a tenth of the requests: the phases above hold the 100,000)
run_at join INT 2 twice --max-concurrency 32 --num-prompts $((N / 10))
[ "$RC" -eq 130 ] || { cat "$WORK/twice.err" >&2; fail "two SIGINTs: exit $RC"; }
r="$OUT/r.json"
[ -f "$r" ] || fail "two SIGINTs: no r.json"
[ "$(jq -r .interrupted "$r")" = true ] || fail "two SIGINTs: the cut result does not say interrupted"
[ "$(jnum "$r" .completed)" -eq $((N / 10)) ] || fail "two SIGINTs: completed $(jnum "$r" .completed) of $((N / 10))"
[ "$(wc -l <"$OUT/r.jsonl")" -eq $((N / 10)) ] || fail "two SIGINTs: $(wc -l <"$OUT/r.jsonl") records of $((N / 10))"
[ ! -e "$OUT/r.vllm.json" ] || fail "two SIGINTs: the exports were not skipped"
arrays_kept "$r" $((N / 10)) "two SIGINTs"
no_leftovers "$OUT" "two SIGINTs"
pass "two SIGINTs during the join: every record kept, exports skipped, result says interrupted"

# Two signals once the result is written, before the exports: skipped, and
# the result written again to say interrupted, its vLLM arrays still there.
run_at export INT 2 twice-export --max-concurrency 32 --num-prompts $((N / 10))
[ "$RC" -eq 130 ] || { cat "$WORK/twice-export.err" >&2; fail "two SIGINTs at the export: exit $RC"; }
r="$OUT/r.json"
[ "$(jq -r .interrupted "$r")" = true ] || fail "two SIGINTs at the export: the result does not say interrupted"
[ ! -e "$OUT/r.vllm.json" ] || fail "two SIGINTs at the export: the exports were not skipped"
arrays_kept "$r" $((N / 10)) "two SIGINTs at the export"
no_leftovers "$OUT" "two SIGINTs at the export"
pass "two SIGINTs before the exports: skipped, the result rewritten as interrupted with its arrays"

# SIGINT during the start-up walk of an open, count-bounded schedule.
run_at walk INT 1 walk --request-rate 1000 --num-prompts $((N / 10))
[ "$RC" -eq 130 ] || { cat "$WORK/walk.err" >&2; fail "SIGINT at the walk: exit $RC"; }
r="$OUT/r.json"
[ -f "$r" ] || { cat "$WORK/walk.err" >&2; fail "SIGINT at the walk: no partial report"; }
[ "$(jq -r .interrupted "$r")" = true ] || fail "SIGINT at the walk: the report does not say interrupted"
[ "$(jnum "$r" .dispatched)" -eq 0 ] || fail "SIGINT at the walk: $(jnum "$r" .dispatched) requests sent"
[ "$(jnum "$r" .not_dispatched)" -eq $((N / 10)) ] || fail "SIGINT at the walk: not_dispatched $(jnum "$r" .not_dispatched) of $((N / 10))"
no_leftovers "$OUT" "SIGINT at the walk"
pass "SIGINT during the start-up walk: exit 130, report interrupted, $((N / 10)) not dispatched, nothing left behind"
