#!/usr/bin/env bash
# Records lost when the disk fills are counted and reported, never committed
# as if complete. On a small tmpfs (mounted here: needs root, else SKIP 77):
#  1. full from the start: exit 1, every record counted lost, no JSONL under
#     the complete name, nothing left behind;
#  2. full until a worker reports its first lost flush, then freed: exit 1,
#     the report counts the lost records, written + lost = requests, and the
#     survivors are in <name>.partial.jsonl, not <name>.jsonl, and the
#     result leaves vLLM's per-request arrays out, saying why.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rel_lib.sh"
[ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
MNT="$WORK/mnt"
mkdir -p "$MNT"
mount -t tmpfs -o size=2m tmpfs "$MNT" 2>"$WORK/mount.err" ||
  skip "cannot mount a tmpfs: $(cat "$WORK/mount.err")"
trap 'umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null; cleanup' EXIT
fill() { dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null || true; }
start_sim sim --inter-token-latency 1ms

# --- 1. full from the start
fill
rc=0
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 200 --num-prompts 100 \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result --save-detailed \
  --result-dir "$MNT" --result-filename full.json 2>"$WORK/full.err" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/full.err" >&2; fail "full disk: exit $rc, expected 1"; }
grep -q "100 of 100 per-request records lost (No space left on device); no JSONL written" "$WORK/full.err" ||
  fail "full disk: stderr $(cat "$WORK/full.err")"
[ ! -e "$MNT/full.jsonl" ] || fail "full disk: a JSONL of $(wc -l <"$MNT/full.jsonl") records committed as complete"
[ "$(ls -A "$MNT")" = filler ] || fail "full disk: files left: $(ls -A "$MNT")"
pass "disk full from the start: exit 1, 100 of 100 records counted lost, no JSONL"

# --- 2. full, then freed once a worker has lost a flush
rm -f "$MNT/filler"
fill
lg_bg "$WORK/half.err" --base-url "$SIM_URL" --num-workers 2 --request-rate 200 --duration 4s \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result --save-detailed \
  --result-dir "$MNT" --result-filename half.json
lg=$LG_PID
for _ in $(seq 1 200); do
  grep -q "records are being lost" "$WORK/half.err" && break
  kill -0 "$lg" 2>/dev/null || break
  sleep 0.05
done
grep -q "records are being lost" "$WORK/half.err" || fail "no worker reported a lost flush within 10 s"
rm -f "$MNT/filler"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/half.err" >&2; fail "full then freed: exit $rc, expected 1"; }
out="$MNT/half.json"
[ -f "$out" ] || fail "full then freed: no report ($(cat "$WORK/half.err"))"
lost=$(jnum "$out" .detailed_records_lost)
written=$(jnum "$out" .detailed_records)
c=$(jnum "$out" .completed); f=$(jnum "$out" .failed)
[ "$lost" -gt 0 ] || fail "full then freed: detailed_records_lost = 0"
[ $((written + lost)) -eq $((c + f)) ] || fail "written $written + lost $lost != requests $((c + f))"
[ ! -e "$MNT/half.jsonl" ] || fail "full then freed: an incomplete JSONL under the complete name"
[ "$(jq -r .detailed_file "$out")" = half.partial.jsonl ] || fail "detailed_file: $(jq .detailed_file "$out")"
[ "$(wc -l <"$MNT/half.partial.jsonl")" -eq "$written" ] || fail "partial JSONL: $(wc -l <"$MNT/half.partial.jsonl") lines, report says $written"
jq -e -s 'all(.[]; has("index"))' "$MNT/half.partial.jsonl" >/dev/null || fail "partial JSONL: not whole records"
# vLLM's arrays would miss the lost records: left out, and the result says why.
jq -e '.detailed_arrays == null and (.detailed_arrays_omitted | test("records lost"))
       and ([has("input_lens", "output_lens", "ttfts", "itls", "errors")] | any | not)' "$out" >/dev/null ||
  fail "arrays with records lost: $(jq -c '{detailed_arrays, detailed_arrays_omitted, n: (.input_lens | length?)}' "$out")"
ls -A "$MNT" | grep -q '\.part$\|\.tmp\.' && fail "files left: $(ls -A "$MNT")"
pass "disk full then freed: exit 1, $lost of $((c + f)) records counted lost, $written in half.partial.jsonl"
