#!/usr/bin/env bash
# loadgen --mpi --progress under mpirun -np 3: rank 0 shows a live progress
# line that combines every rank's counters (lg_mpi_progress: each rank
# sends its own once a second, without blocking), so its figures exceed
# what rank 0 alone could ever have sent; the figures never run backwards
# nor past the plan; the run's report is the same as without progress (all
# planned arrivals dispatched and ended), and no message is left unmatched
# (mpirun exits 0).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpi_lib.sh"
start_sim sim --inter-token-latency 2ms
mpirun_np 3 "$LOADGEN" --mpi --base-url "$SIM_URL" --request-rate 150 --duration 4 --seed 5 \
  --random-input-len 8 --random-output-len 8 --quiet --progress --save-result --save-detailed \
  --result-dir "$WORK" --result-filename p.json >"$WORK/p.out" 2>"$WORK/p.err" ||
  { cat "$WORK/p.err" >&2; fail "mpirun exited $?"; }
R="$WORK/p.json"
sent_equals_done "$R"
total=$(jnum "$R" .dispatched)
mine=$(wc -l <"$WORK/p.rank0.jsonl") # rank 0's own requests, all of the run
[ "$mine" -gt 0 ] && [ "$mine" -lt "$total" ] || fail "rank 0 sent $mine of $total"
# The progress lines: "\r[loadgen] ... sent N completed C failed F in flight I ..."
tr '\r' '\n' <"$WORK/p.err" | sed -n 's/^\[loadgen\] .* sent \([0-9]*\) completed \([0-9]*\) failed \([0-9]*\) in flight \([0-9]*\).*/\1 \2 \3 \4/p' >"$WORK/lines"
n=$(wc -l <"$WORK/lines")
[ "$n" -ge 4 ] || fail "$n progress lines over a 4 s run, want at least 4: $(tr '\r' '\n' <"$WORK/p.err" | tail -n 5)"
prev=0 top=0
while read -r s c f i; do
  [ "$s" -ge "$prev" ] || fail "progress ran backwards: sent $s after $prev"
  [ "$s" -le "$total" ] || fail "progress shows $s sent, the run sent $total"
  [ $((c + f)) -le "$s" ] || fail "progress shows $c completed + $f failed of $s sent"
  prev=$s
  top=$s
done <"$WORK/lines"
[ "$top" -gt "$mine" ] || fail "the last progress line shows $top sent, no more than rank 0's own $mine: the other ranks' counters never arrived"
pass "mpi progress: $n lines, up to $top sent (rank 0 alone: $mine, the run: $total)"
