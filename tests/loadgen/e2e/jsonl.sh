#!/usr/bin/env bash
# The per-request JSONL and the report tell the same story: against a
# simulator that fails a fifth of its requests in four ways, the record
# count, the failures per class, and TTFT, E2EL and TPOT percentiles
# recomputed from the JSONL's raw nanoseconds match the report's histograms
# within their stated resolution (2^-12 relative, mdl_hist.h), by the same
# percentile rule (the smallest value with at least p% of the sample at or
# below it); the result's vLLM arrays (input_lens ... errors) hold the
# JSONL's values line by line, failures with ttft 0 and their class as the
# error; a run without --save-detailed has none of them.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 2ms --inter-token-latency 1ms --seed 4 \
  --failure-injection-rate 20 --failure-types server_error,rate_limit,midstream_drop,connection_reset
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 200 --num-prompts 600 --seed 9 \
  --random-input-len 16 --random-output-len 8 --quiet --no-progress --save-detailed \
  --result-dir "$WORK" --result-filename run.json || fail "loadgen exited $?"
out="$WORK/run.json" jl="$WORK/run.jsonl"
[ -s "$jl" ] || fail "no JSONL next to the report"
sent_equals_done "$out"
[ "$(wc -l <"$jl")" -eq "$(jnum "$out" .dispatched)" ] || fail "JSONL has $(wc -l <"$jl") records for $(jnum "$out" .dispatched) dispatched"
[ "$(jq -s 'map(.index) | unique | length' "$jl")" -eq 600 ] || fail "JSONL indices are not the 600 arrivals, once each"
# Failures: the same count, and per class outside HTTP the same split.
[ "$(jq -s 'map(select(.class != "ok")) | length' "$jl")" -eq "$(jnum "$out" .failed)" ] || fail "failed count differs"
[ "$(jnum "$out" .failed)" -gt 60 ] || fail "too few failures ($(jnum "$out" .failed)) for the test to mean anything"
jq -e -s --argjson rep "$(jq -c .failures_by_class "$out")" '
    map(select(.class != "ok" and (.class | startswith("http") | not))) | group_by(.class)
    | map({key: .[0].class, value: length}) | from_entries as $j
    | ($rep | with_entries(select(.key | startswith("http") | not))) == $j' "$jl" >/dev/null \
  || fail "classes differ: JSONL $(jq -s -c 'map(.class) | group_by(.) | map({(.[0]): length}) | add' "$jl") report $(jq -c .failures_by_class "$out")"
[ "$(jq -s 'map(select(.class != "ok" and (.class | startswith("http")))) | length' "$jl")" -eq \
  "$(jq '[.failures_by_class | to_entries[] | select(.key | startswith("http")) | .value] | add // 0' "$out")" ] \
  || fail "HTTP failures differ"
# Percentiles of the successful requests, from raw nanoseconds.
check() { # NAME JQ-EXPR-PER-RECORD
  local name=$1 expr=$2 p key raw rep
  for p in 50 99; do
    key=$([ $p = 50 ] && echo "median_${name}_ms" || echo "p${p}_${name}_ms")
    raw=$(jq -s --argjson p $p "map(select(.class == \"ok\") | $expr | select(. != null)) | sort
            | .[((\$p * length / 100) | ceil) - 1]" "$jl")
    rep=$(jnum "$out" ".$key")
    awk -v a="$raw" -v b="$rep" 'BEGIN { d = a / 1e6 - b; if (d < 0) d = -d; exit !(d <= a / 1e6 / 2048 + 1e-6) }' \
      || fail "$key: report $rep ms, JSONL ${raw} ns"
  done
}
check ttft '.first_token_ns - .intended_ns'
check e2el '.end_ns - .intended_ns'
check tpot 'if .output_tokens > 1 then ((.end_ns - .first_token_ns) / (.output_tokens - 1) | floor) else null end'
# vLLM's per-request arrays in the result itself (--save-detailed), entry i
# from line i of the JSONL, computed here from its raw fields: input_lens the
# input tokens, output_lens and ttfts (s from the intended send) 0 for a
# failure, itls empty lists (no --save-token-times), start_times the
# intended send (s from the run's start), errors "" for a success else the
# class. Two workers: the file is not in index order, so the order
# is checked too.
[ "$(jq -s '[.[].index] == ([.[].index] | sort)' "$jl")" = false ] ||
  fail "the JSONL is in index order: the arrays' order would go unchecked"
n=$(wc -l <"$jl")
[ "$(jnum "$out" .detailed_arrays)" -eq "$n" ] || fail "detailed_arrays $(jq .detailed_arrays "$out") for $n records"
for k in input_lens output_lens ttfts itls start_times errors; do
  [ "$(jq ".$k | length" "$out")" -eq "$n" ] || fail "$k: $(jq ".$k | length" "$out") entries for $n records"
done
bad=$(jq -s -c --slurpfile r "$out" '$r[0] as $r | [range(0; length) as $i | .[$i] as $x
        | ($x.class == "ok") as $ok
        | {i: $i, input: $x.input_tokens, output: (if $ok then $x.output_tokens else 0 end),
           ttft: (if $ok and $x.first_token_ns >= 0 then ($x.first_token_ns - $x.intended_ns) / 1e9 else 0 end),
           start: ($x.intended_ns / 1e9), error: (if $ok then "" else $x.class end)}
        | select(.input != $r.input_lens[$i] or .output != $r.output_lens[$i]
                 or ((.ttft - $r.ttfts[$i]) | fabs) > 1e-9 or $r.itls[$i] != []
                 or ((.start - $r.start_times[$i]) | fabs) > 1e-9 or .error != $r.errors[$i])
        | . + {result: {input: $r.input_lens[$i], output: $r.output_lens[$i], ttft: $r.ttfts[$i],
                        itls: $r.itls[$i], start: $r.start_times[$i], error: $r.errors[$i]}}] | .[0:3][]' "$jl")
[ -z "$bad" ] || fail "the result's arrays differ from the JSONL: $bad"
fails=$(jq '[range(0; .errors | length) as $i | select(.errors[$i] != "")
             | select(.ttfts[$i] == 0 and .output_lens[$i] == 0)] | length' "$out")
[ "$fails" -eq "$(jnum "$out" .failed)" ] || fail "$fails failures with an error, ttft 0 and no output of $(jnum "$out" .failed)"
# Without --save-detailed, none of them.
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 200 --num-prompts 20 --seed 9 \
  --random-input-len 16 --random-output-len 8 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename plain.json || fail "loadgen without --save-detailed exited $?"
jq -e 'has("dispatched") and ([has("input_lens", "output_lens", "ttfts", "itls", "start_times", "errors",
        "generated_texts", "detailed_arrays")] | any | not)' "$WORK/plain.json" >/dev/null ||
  fail "without --save-detailed: $(jq -c 'keys | map(select(test("lens|ttfts|itls|errors|texts|detailed")))' "$WORK/plain.json")"
echo "jsonl: $(wc -l <"$jl") records agree with the report ($(jnum "$out" .failed) failed) and with its arrays"
