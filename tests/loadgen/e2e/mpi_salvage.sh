#!/usr/bin/env bash
# kill -9 of rank 0 mid-run (mpirun --enable-recovery): no rank can report,
# so each survivor leaves its final snapshot and says there is no report;
# loadgen --mpi-salvage 3 with the run's flags then merges them: a degraded
# report of ranks 1 and 2 exactly (their stripes), rank 0
# lost with its stripe listed, and the snapshots and rank 0's part removed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpi_lib.sh"
case "$("$RB_MPIEXEC" --version 2>&1 || true)" in
  *"Open MPI"* | *OpenRTE*) ;;
  *) skip "mpirun --enable-recovery is Open MPI's" ;;
esac
start_sim sim
N=300 # 3 s at 100 requests/s; the survivors give up on rank 0 10 s past the deadline
args=(--base-url "$SIM_URL" --request-rate 100 --num-prompts $N --seed 7 --random-input-len 8
  --random-output-len 4 --request-timeout 2 --drain-timeout 1 --quiet --no-progress
  --save-result --save-detailed --result-dir "$WORK" --result-filename m.json)
mpirun_np 3 --enable-recovery "$LOADGEN" --mpi "${args[@]}" >"$WORK/mpi.out" 2>&1 &
MPI_PID=$!
CHILDREN+=("$MPI_PID")
kill_rank_once_sending 0
wait "$MPI_PID" || true
[ ! -e "$WORK/m.json" ] || fail "a report without rank 0"
grep -q "rank 1: no word from rank 0" "$WORK/mpi.out" || { cat "$WORK/mpi.out" >&2; fail "rank 1"; }
for r in 1 2; do [ -s "$WORK/.m.json.rank$r.snap" ] || fail "no snapshot of rank $r"; done
rc=0
"$LOADGEN" --mpi-salvage 3 "${args[@]}" 2>"$WORK/salvage.err" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/salvage.err" >&2; fail "salvage exited $rc, not 1 (degraded)"; }
R="$WORK/m.json"
jq -e '.degraded == true and .mpi.salvaged == true and .mpi.lost_ranks == [0]' "$R" >/dev/null ||
  fail "salvaged report: $(jq -c '{degraded, mpi}' "$R")"
sent_equals_done "$R"
want=$(( N / 3 * 2 ))
[ "$(jnum "$R" .dispatched)" -eq $want ] || fail "dispatched $(jnum "$R" .dispatched), not $want"
[ "$(jnum "$R" .num_workers)" -eq 3 ] || fail "num_workers"
jq -e '.mpi.lost_arrivals[0] | .count == 100 and .first_index == 0 and .last_index == 297 and
  .never_offered == null' "$R" >/dev/null || fail "lost arrivals: $(jq -c .mpi.lost_arrivals "$R")"
# the survivors' records are theirs, and match the report
[ "$(cat "$WORK"/m.rank1.jsonl "$WORK"/m.rank2.jsonl | wc -l)" -eq $want ] || fail "records"
ls -a "$WORK" | grep -q '\.snap$\|\.part$' && fail "snapshots or parts left after the salvage"
pass "rank 0 killed: salvaged report of ranks 1 and 2 ($want requests), rank 0's 100 arrivals listed"
