#!/usr/bin/env bash
# Plans past the schedule's range (rel_plan_range): every time of a plan is
# an int64 of ns, so a plan whose span passes the range (stages of 10^9 s, a
# rate of 1e-20/s) is refused with exit 2, by the dry run and by the run
# alike, before anything is sent; and a valid plan is never rewritten: an
# arrival that a long draw puts past the range is kept (at its end), so
# every planned request is dispatched or counted as not dispatched.
source "$(dirname "$0")/lib.sh"
start_sim plan

# refused TAG FLAGS...: exit 2 and the range named, in the dry run and the run.
refused() {
  local tag=$1 rc
  shift
  for mode in --dry-run ""; do
    rc=0
    # shellcheck disable=SC2086 # $mode is one flag or none
    timeout -s KILL 30 "$LOADGEN" --base-url "$SIM_URL" $mode --quiet --no-progress "$@" \
      >"$WORK/out" 2>"$WORK/err" || rc=$?
    [ "$rc" -eq 2 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "$tag ${mode:-run}: exit $rc, expected 2"; }
    grep -q "past the schedule's range" "$WORK/err" || fail "$tag ${mode:-run}: no clear message: $(cat "$WORK/err")"
    ! grep -q "the plan is valid" "$WORK/out" || fail "$tag: the dry run called the plan valid"
  done
  pass "$tag: refused with exit 2 (dry run and run): $(tail -n 1 "$WORK/err")"
}

big=()
for _ in $(seq 1 10); do big+=(--stage 1:999999999); done
refused "ten stages of 999999999 s" --stage 50:2s "${big[@]}"
sweep=()
for i in $(seq 1 64); do sweep+=(--stage "$i:1000000000"); done
refused "a 64-stage sweep of 10^9 s stages" "${sweep[@]}"
refused "rate 1e-20 for 2 requests" --request-rate 1e-20 --num-prompts 2

# Seed 30 at 1e-9 requests/s draws its third arrival past the range: it is
# kept. The run is stopped once the first request is answered: 1 dispatched,
# the other 2 counted as not dispatched.
flags=(--request-rate 1e-9 --num-prompts 3 --seed 30 --random-input-len 8 --random-output-len 4)
"$LOADGEN" --base-url "$SIM_URL" --dry-run "${flags[@]}" >"$WORK/dry" 2>&1 || fail "the dry run refused a valid plan: $(cat "$WORK/dry")"
grep -q '^total: expected 3 requests' "$WORK/dry" || fail "the dry run rewrote the count: $(grep '^total' "$WORK/dry")"
metrics_to "$WORK/m"
base=$(sim_success "$WORK/m")
timeout -s KILL 60 "$LOADGEN" --base-url "$SIM_URL" "${flags[@]}" --num-workers 2 --quiet --no-progress \
  --save-result --result-dir "$WORK" --result-filename kept.json 2>"$WORK/kept.err" &
lg=$!
CHILDREN+=("$lg")
for _ in $(seq 1 200); do
  metrics_to "$WORK/m"
  [ "$(sim_success "$WORK/m")" -gt "$base" ] && break
  sleep 0.05
done
[ "$(sim_success "$WORK/m")" -gt "$base" ] || fail "the first request was not answered in 10 s"
kill -INT "$lg"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 130 ] || { cat "$WORK/kept.err" >&2; fail "stopped run: exit $rc, expected 130"; }
r="$WORK/kept.json"
[ "$(jnum "$r" .dispatched)" -eq 1 ] || fail "dispatched $(jnum "$r" .dispatched), expected 1"
[ "$(jnum "$r" .not_dispatched)" -eq 2 ] || fail "not_dispatched $(jnum "$r" .not_dispatched) of the 2 left: the plan was rewritten"
pass "a valid plan kept whole: 3 planned, 1 dispatched, 2 counted as not dispatched"

# A count past any walk: 120,000,000 planned over 2 workers, stopped once the
# first request is answered. What was not sent is counted by arithmetic, so
# dispatched + not_dispatched is the plan's count exactly (a walk bounded at
# 10^8 arrivals would lose the rest), and the count is no lower bound.
big_n=120000000
timeout -s KILL 280 "$LOADGEN" --base-url "$SIM_URL" --request-rate 100 --num-prompts $big_n \
  --random-input-len 8 --random-output-len 4 --num-workers 2 --quiet --no-progress \
  --save-result --result-dir "$WORK" --result-filename huge.json 2>"$WORK/huge.err" &
lg=$!
CHILDREN+=("$lg")
metrics_to "$WORK/m"
base=$(sim_success "$WORK/m")
# Bounded: the coordinator's start-up walk of the schedule (seconds for 10^8
# arrivals, longer under a sanitizer) comes before the first request.
for _ in $(seq 1 2400); do
  metrics_to "$WORK/m"
  [ "$(sim_success "$WORK/m")" -gt "$base" ] && break
  kill -0 "$lg" 2>/dev/null || break
  sleep 0.1
done
[ "$(sim_success "$WORK/m")" -gt "$base" ] || { cat "$WORK/huge.err" >&2; fail "huge plan: no request answered in 240 s"; }
kill -INT "$lg"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 130 ] || { cat "$WORK/huge.err" >&2; fail "huge plan: exit $rc, expected 130"; }
r="$WORK/huge.json"
d=$(jnum "$r" .dispatched) nd=$(jnum "$r" .not_dispatched)
[ "$d" -ge 1 ] || fail "huge plan: nothing dispatched"
[ $((d + nd)) -eq $big_n ] || fail "huge plan: dispatched $d + not_dispatched $nd = $((d + nd)), planned $big_n"
[ "$(jq -r .not_dispatched_is_lower_bound "$r")" = false ] || fail "huge plan: a count-bounded plan's not_dispatched called a lower bound"
s=$(jq '[.stages[].not_dispatched] | add' "$r")
[ "$s" -eq "$nd" ] || fail "huge plan: the stages' not_dispatched sum to $s, the total says $nd"
pass "a plan of $big_n stopped early: $d dispatched + $nd not dispatched = the plan, exactly"
