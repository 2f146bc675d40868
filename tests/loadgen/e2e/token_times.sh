#!/usr/bin/env bash
# --save-token-times: each record lists its content tokens' arrival times (us
# from its dispatch), the very times the ITL histogram was fed. Checked on
# the records alone, with no timing bound:
# - one time per token: the list's length plus token_times_dropped is the
#   record's output tokens, nothing dropped under the default cap;
# - the first is the record's first token (floor of first_token_ns -
#   dispatch_ns in us), and they never decrease;
# - the ITLs recomputed from them, over every record, give the result's
#   median and p99 ITL by the histogram's percentile rule (the smallest value
#   with at least p% at or below it), within its resolution (2^-12 relative,
#   models/mdl_hist.h) and the times' 1 us;
# - the vLLM export's itls: one list per request in index order, of
#   output_tokens - 1 gaps for each success, equal to the records' gaps in s
#   (the result's arrays not copied again under "rhobench");
#   the result's own itls the same gaps, line by line of the JSONL.
# Then a cap below the output length (the first N times listed, the rest
# counted, vLLM's itls cut there and said so), a run without the flag (no
# such keys), and the bad values of --token-times-cap (exit 2).
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 2ms --inter-token-latency 1ms --seed 4
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 200 --num-prompts 300 --seed 9 \
  --random-input-len 16 --random-output-len 24 --random-range-ratio 0.5 --quiet --no-progress \
  --save-token-times --save-detailed --report-format vllm --result-dir "$WORK" \
  --result-filename t.json >"$WORK/t.out" 2>"$WORK/t.err" || fail "loadgen: $(cat "$WORK/t.err")"
out="$WORK/t.json" jl="$WORK/t.jsonl" V="$WORK/t.vllm.json"
sent_equals_done "$out"
n=$(jnum "$out" .dispatched)
[ "$n" -eq 300 ] || fail "dispatched $n of 300"
[ "$(wc -l <"$jl")" -eq "$n" ] || fail "JSONL has $(wc -l <"$jl") records for $n dispatched"
[ "$(jnum "$out" .completed)" -eq 300 ] || fail "completed $(jnum "$out" .completed) of 300"
# One time per token, none dropped (24 * 1.5 tokens at most, cap 4096).
# (the first three bad ones, sliced in jq: a pipe into head would end jq by SIGPIPE)
bad=$(jq -s -c '[.[] | select((.token_times_us | type) != "array" or .token_times_dropped != 0
                    or (.token_times_us | length) != .output_tokens) | {index, output_tokens,
                    n: (.token_times_us | length?), token_times_dropped}] | .[0:3][]' "$jl")
[ -z "$bad" ] || fail "records whose token times do not count their tokens: $bad"
[ "$(jq -s 'map(.output_tokens) | unique | length' "$jl")" -gt 5 ] ||
  fail "output lengths do not vary: the count check would mean little"
# The first time is the first token's; none before the one before it.
bad=$(jq -s -c '[.[] | .token_times_us as $t | select(($t[0] != ((.first_token_ns - .dispatch_ns) / 1000 | floor))
               or ([range(1; $t | length) | select($t[.] < $t[. - 1])] | length) > 0)
             | {index, first_token_ns, dispatch_ns, t: $t[0:4]}] | .[0:3][]' "$jl")
[ -z "$bad" ] || fail "token times not from the first token on, or decreasing: $bad"
# The result's ITL percentiles from the records' gaps (us), every record.
itl_check() { # P KEY
  local raw rep
  raw=$(jq -s --argjson p "$1" '[.[] | .token_times_us as $t | range(1; $t | length) | $t[.] - $t[. - 1]]
          | sort | .[(($p * length / 100) | ceil) - 1]' "$jl")
  rep=$(jnum "$out" ".$2")
  awk -v a="$raw" -v b="$rep" 'BEGIN { d = a / 1e3 - b; if (d < 0) d = -d; exit !(d <= a / 1e3 / 2048 + 0.001 + 1e-6) }' ||
    fail "$2: the result says $rep ms, the records' token times ${raw} us"
  echo "$2: result $rep ms, token times $raw us"
}
itl_check 50 median_itl_ms
itl_check 99 p99_itl_ms
[ "$(jq -s '[.[] | (.token_times_us | length) - 1] | add' "$jl")" -eq \
  "$(jq -s '[.[] | .output_tokens - 1] | add' "$jl")" ] || fail "gap count"
# vLLM's itls: one list per request, in index order, the records' gaps in s.
jq -e -s --slurpfile v "$V" '
  sort_by(.index) as $r | $v[0] as $v |
  ($v.itls | length) == ($r | length)
  and ([range(0; $r | length) | . as $i | $r[$i] as $x | $v.itls[$i] as $l
        | select(($l | length) != $x.output_tokens - 1
                 or ([range(0; $l | length)
                      | select((($l[.] - ($x.token_times_us[. + 1] - $x.token_times_us[.]) / 1e6)
                                | fabs) > 1e-9)] | length) > 0)] | length) == 0
  and $v.rhobench.itls_truncated_requests == 0
  and ($v.ttfts | length) == ($r | length) and ($v.output_lens | length) == ($r | length)
  and ($v.input_lens | length) == ($r | length) and ($v.errors | length) == ($r | length)
  and ([$v.rhobench | has("input_lens", "ttfts", "itls", "errors")] | any | not)' \
  "$jl" >/dev/null || fail "vLLM itls: $(jq -c '{n: (.itls | length), first: .itls[0], per_request: .rhobench.per_request}' "$V")"
# The result's own itls (--save-detailed): line i of the JSONL's gaps, in s.
jq -e -s --slurpfile o "$out" '. as $r | $o[0].itls as $l | ($l | length) == ($r | length)
  and ([range(0; $r | length) as $i | $r[$i].token_times_us as $t
        | select(($l[$i] | length) != ($t | length) - 1
                 or ([range(1; $t | length) | select((($l[$i][. - 1] - ($t[.] - $t[. - 1]) / 1e6)
                                                      | fabs) > 1e-9)] | length) > 0)]
       | length) == 0' "$jl" >/dev/null ||
  fail "the result's itls are not the JSONL's gaps: $(jq -c '{n: (.itls | length), first: .itls[0]}' "$out")"
pass "token times: $n records, their ITLs the result's"

# A cap below the output length: the first 5 listed, the rest counted.
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 100 --num-prompts 20 --seed 3 \
  --random-input-len 8 --random-output-len 16 --quiet --no-progress --save-token-times \
  --token-times-cap 5 --report-format vllm --result-dir "$WORK" --result-filename c.json \
  2>"$WORK/c.err" || fail "loadgen with --token-times-cap 5: $(cat "$WORK/c.err")"
bad=$(jq -s -c '[.[] | select((.token_times_us | length) != 5 or .token_times_dropped != .output_tokens - 5
                    or .output_tokens != 16) | {index, output_tokens, token_times_dropped}] | .[0:3][]' \
  "$WORK/c.jsonl")
[ -z "$bad" ] || fail "cap 5: $bad"
jq -e '(.itls | length) == 20 and (.itls | map(length) | unique) == [4]
       and .rhobench.itls_truncated_requests == 20' "$WORK/c.vllm.json" >/dev/null ||
  fail "cap 5, vLLM: $(jq -c '{n: (.itls | length), lens: (.itls | map(length) | unique), t: .rhobench.itls_truncated_requests}' "$WORK/c.vllm.json")"
# Without the flag the records carry no token times.
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 100 --num-prompts 10 --seed 3 \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-detailed \
  --result-dir "$WORK" --result-filename off.json 2>"$WORK/off.err" || fail "loadgen: $(cat "$WORK/off.err")"
[ "$(jq -s 'map(select(has("token_times_us") or has("token_times_dropped"))) | length' "$WORK/off.jsonl")" -eq 0 ] ||
  fail "token times written without --save-token-times"
pass "token times: the cap, and off by default"

# Bad values: exit 2, the flag named, nothing run.
for v in 0 -3 many 1048577; do
  rc=0
  "$LOADGEN" --base-url "$SIM_URL" --save-token-times --token-times-cap "$v" --num-prompts 1 \
    >"$WORK/b.out" 2>"$WORK/b.err" || rc=$?
  [ "$rc" -eq 2 ] || fail "--token-times-cap $v: exit $rc"
  grep -qx "loadgen: --token-times-cap: must be a whole number in \[1, 1048576\], got '$v'" "$WORK/b.err" ||
    fail "--token-times-cap $v: $(cat "$WORK/b.err")"
done
rc=0
"$LOADGEN" --base-url "$SIM_URL" --token-times-cap 8 --num-prompts 1 2>"$WORK/b.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--token-times-cap: is the cap of --save-token-times" "$WORK/b.err" ||
  fail "--token-times-cap without --save-token-times: exit $rc: $(cat "$WORK/b.err")"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --save-token-times --no-stream --num-prompts 1 2>"$WORK/b.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--save-token-times: needs streamed responses" "$WORK/b.err" ||
  fail "--save-token-times --no-stream: exit $rc: $(cat "$WORK/b.err")"
pass "token times: bad values refused"
