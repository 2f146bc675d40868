#!/usr/bin/env bash
# kill -9 of one rank mid-run (mpirun --enable-recovery: Open MPI 4.1 has no
# ULFM, and without it mpirun ends every rank): the survivors finish and
# rank 0 writes the report, marked degraded, with the lost rank and its
# stripe of the stream (index r, r+N, ...). Its arrivals due after rank 0
# saw it gone are listed as never offered, and the server saw no more
# requests than the survivors' plus the rest of that stripe.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpi_lib.sh"
case "$("$RB_MPIEXEC" --version 2>&1 || true)" in
  *"Open MPI"* | *OpenRTE*) ;;
  *) skip "mpirun --enable-recovery is Open MPI's" ;;
esac
start_sim sim
N=450 # 4.5 s at 100 requests/s
mpirun_np 3 --enable-recovery "$LOADGEN" --mpi --base-url "$SIM_URL" --request-rate 100 \
  --num-prompts $N --seed 5 --random-input-len 8 --random-output-len 4 --quiet --no-progress \
  --save-result --save-detailed --result-dir "$WORK" --result-filename m.json \
  >"$WORK/mpi.out" 2>&1 &
MPI_PID=$!
CHILDREN+=("$MPI_PID")
kill_rank_once_sending 2
wait "$MPI_PID" || true
R="$WORK/m.json"
[ -s "$R" ] || { cat "$WORK/mpi.out" >&2; fail "no report after a lost rank"; }
jq -e '.degraded == true' "$R" >/dev/null || fail "not marked degraded"
jq -e '.mpi.lost_ranks == [2]' "$R" >/dev/null || fail "lost_ranks: $(jq -c .mpi.lost_ranks "$R")"
sent_equals_done "$R"
# the survivors' stripes, exactly: indices 0 and 1 mod 3 of 0..N-1
want=$(( (N + 2) / 3 + (N + 1) / 3 ))
[ "$(jnum "$R" .dispatched)" -eq $want ] || fail "dispatched $(jnum "$R" .dispatched), not $want"
L=".mpi.lost_arrivals[0]"
[ "$(jnum "$R" "$L.count")" -eq $(( N / 3 )) ] || fail "lost stripe count $(jnum "$R" "$L.count")"
[ "$(jnum "$R" "$L.first_index")" -eq 2 ] && [ "$(jnum "$R" "$L.stride")" -eq 3 ] ||
  fail "lost stripe: $(jq -c "$L" "$R")"
[ "$(jnum "$R" "$L.last_index")" -eq $(( N - 1 - (N - 1 - 2) % 3 )) ] || fail "last index"
nv_first=$(jnum "$R" "$L.never_offered.first_index")
nv_count=$(jnum "$R" "$L.never_offered.count")
[ $(( nv_first % 3 )) -eq 2 ] || fail "never_offered starts off the stripe: $nv_first"
[ "$nv_count" -gt 0 ] && [ "$nv_count" -lt $(( N / 3 )) ] || fail "never_offered count $nv_count"
[ "$(jnum "$R" "$L.never_offered.last_index")" -eq "$(jnum "$R" "$L.last_index")" ] ||
  fail "never_offered runs to the stripe's end"
# the survivors' records only; the dead rank's part counted as left out and removed
[ "$(cat "$WORK"/m.rank0.jsonl "$WORK"/m.rank1.jsonl | wc -l)" -eq $want ] || fail "records"
[ ! -e "$WORK/m.rank2.jsonl" ] || fail "a JSONL for the lost rank"
[ "$(jnum "$R" .detailed_records_left_out)" -gt 0 ] || fail "the lost rank's records not counted"
ls -a "$WORK" | grep -q '\.part$' && fail "a part file left behind"
# the server: the survivors' requests plus at most the lost stripe's offered part
served=$(curl -s "$SIM_URL/metrics" | awk '/^vllm:request_success_total/ { s += $2 } END { print s + 0 }')
[ "$served" -ge $want ] || fail "server served $served < survivors' $want"
[ "$served" -le $(( want + N / 3 - nv_count )) ] ||
  fail "server served $served: more than the arrivals not listed as never offered allow"
pass "rank 2 killed: degraded report, $nv_count of $(( N / 3 )) of its arrivals never offered (from index $nv_first), server served $served"
