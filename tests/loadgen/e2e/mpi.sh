#!/usr/bin/env bash
# loadgen --mpi under mpirun -np 3 (oversubscribed on this host) against
# simserver: every planned arrival dispatched and ended; the ranks' records
# together are exactly the k=1 stream and exactly the fork back-end's k=3
# split (rank r = worker r: indices r, r+3, ...); the clock sync reported
# per rank, its offsets within their stated uncertainty (one host: one
# clock, so the true offset is 0); the result leaves vLLM's per-request
# arrays out (they would cover rank 0's records alone), saying why.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpi_lib.sh"
start_sim sim
N=300
common=(--base-url "$SIM_URL" --request-rate 300 --num-prompts $N --seed 11 --random-input-len 8
  --random-output-len 4 --quiet --no-progress --save-result --save-detailed --result-dir "$WORK")
"$LOADGEN" "${common[@]}" --num-workers 1 --result-filename k1.json || fail "k=1 exited $?"
"$LOADGEN" "${common[@]}" --num-workers 3 --result-filename k3.json || fail "k=3 exited $?"
mpirun_np 3 "$LOADGEN" --mpi "${common[@]}" --result-filename m3.json >"$WORK/mpi.out" 2>&1 ||
  { cat "$WORK/mpi.out" >&2; fail "mpirun exited $?"; }
R="$WORK/m3.json"
sent_equals_done "$R"
[ "$(jnum "$R" .dispatched)" -eq $N ] || fail "dispatched $(jnum "$R" .dispatched), planned $N"
[ "$(jnum "$R" .num_workers)" -eq 3 ] || fail "num_workers"
[ "$(jnum "$R" .mpi.ranks)" -eq 3 ] || fail "mpi.ranks"
[ "$(jnum "$R" .mpi.hosts)" -eq 1 ] || fail "mpi.hosts"
[ "$(jnum "$R" '.mpi.lost_ranks | length')" -eq 0 ] || fail "lost ranks"
jq -e '.degraded == null' "$R" >/dev/null || fail "degraded without a lost rank"
[ "$(jnum "$R" .detailed_records)" -eq $N ] || fail "detailed_records"
# vLLM's arrays would cover rank 0's records alone: left out, saying why.
jq -e '.detailed_arrays == null and (.detailed_arrays_omitted | test("--mpi"))
       and ([has("input_lens", "ttfts", "start_times", "errors")] | any | not)' "$R" >/dev/null ||
  fail "arrays under --mpi: $(jq -c '{detailed_arrays, detailed_arrays_omitted}' "$R")"
# rank r's records: its stripe only
for r in 0 1 2; do
  f="$WORK/m3.rank$r.jsonl"
  [ -s "$f" ] || fail "no records of rank $r"
  jq -e -s --argjson r $r 'all(.[]; .worker == $r and .index % 3 == $r)' "$f" >/dev/null ||
    fail "rank $r took arrivals outside its stripe"
done
# the union is the k=1 stream: the same indices and intended times
cat "$WORK"/m3.rank*.jsonl >"$WORK/m3.all"
key='[.index, .intended_ns] | @tsv'
jq -r "$key" "$WORK/k1.jsonl" | sort -n >"$WORK/s1"
jq -r "$key" "$WORK/m3.all" | sort -n >"$WORK/sm"
[ "$(wc -l <"$WORK/s1")" -eq $N ] || fail "k=1 records"
cmp -s "$WORK/s1" "$WORK/sm" || fail "the ranks' arrivals differ from the k=1 stream"
# and the fork back-end's k=3 split, worker for rank
key='[.index, .worker, .intended_ns] | @tsv'
jq -r "$key" "$WORK/k3.jsonl" | sort -n >"$WORK/s3"
jq -r "$key" "$WORK/m3.all" | sort -n >"$WORK/sm3"
cmp -s "$WORK/s3" "$WORK/sm3" || fail "the ranks' split differs from the fork back-end's k=3"
# the report's counts equal the fork back-end's with k=3 (the same requests)
for key in dispatched completed failed total_input_tokens total_output_tokens prompt_pool_size \
  num_workers not_dispatched; do
  [ "$(jq -c ".$key" "$R")" = "$(jq -c ".$key" "$WORK/k3.json")" ] ||
    fail "$key: $(jq -c ".$key" "$R") under mpi, $(jq -c ".$key" "$WORK/k3.json") forked"
done
# the clock sync: one entry per rank, |offset| within its uncertainty
[ "$(jnum "$R" '.mpi.clock_sync | length')" -eq 3 ] || fail "clock_sync entries"
jq -e '[.mpi.clock_sync[] | select(.rank > 0)] | all(.uncertainty_ns > 0 and
  (if .offset_ns < 0 then -.offset_ns else .offset_ns end) <= .uncertainty_ns)' "$R" >/dev/null ||
  fail "clock offsets: $(jq -c .mpi.clock_sync "$R")"
jq -e '.mpi.clock_sync | map(.rank) == [0, 1, 2]' "$R" >/dev/null || fail "clock_sync ranks"
# one host: one certificate entry for its 3 ranks (none given: null)
jq -e '.mpi.certificates | length == 1 and .[0].ranks == 3 and .[0].certificate == null' "$R" \
  >/dev/null || fail "certificates: $(jq -c .mpi.certificates "$R")"
# the exchange happened: no snapshot or part is left
ls -a "$WORK" | grep -q '\.snap$\|\.part$' && fail "snapshots or parts left after the run"
# everything else keeps the single-host schema (but vLLM's arrays, left out
# above, and the reason why)
arrays='input_lens\|output_lens\|ttfts\|itls\|start_times\|errors\|detailed_arrays_omitted'
diff <(jq -r 'keys[]' "$WORK/k3.json" | grep -vx "knee\\|$arrays") \
  <(jq -r 'keys[]' "$R" | grep -vx "mpi\\|knee\\|$arrays") >/dev/null || fail "the report's keys differ"
pass "mpirun -np 3: $N arrivals, the k=1 stream split as k=3, offsets $(jq -c '[.mpi.clock_sync[].offset_ns]' "$R") ns"
