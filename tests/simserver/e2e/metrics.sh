#!/usr/bin/env bash
# simserver's vLLM metrics as a dashboard reads them: the prefix cache's
# queries and hits in tokens, KV-cache usage while a request runs and after,
# the per-request prompt and generation length histograms agreeing with the
# token counters, the older time_per_output_token name beside
# inter_token_latency, no preemptions, and the parameters it does not
# honour counted per parameter (served as if absent). Then, when promtool is installed,
# `promtool check metrics` finds nothing but the colons of vLLM's own names.
source "$(dirname "$0")/lib.sh"
start_sim m --inter-token-latency 20ms --prefix-cache-blocks 1000
words=""
for i in $(seq 0 39); do words="$words w$i"; done
body() { echo "{\"prompt\":\"${words# }\",\"max_tokens\":$1,\"stream\":true}"; }
m() { metric "$1{model_name=\"sim-model\"}"; }

# --- two identical prompts of 40 tokens: 80 queried, the second finds 2 blocks of 16
curl -sS -o /dev/null "$URL/v1/completions" -d "$(body 3)"
curl -sS -o /dev/null "$URL/v1/completions" -d "$(body 3)"
check "prefix cache queries count the prompts' tokens (80)" [ "$(m vllm:prefix_cache_queries_total)" = 80 ]
check "prefix cache hits count the cached tokens (32)" [ "$(m vllm:prefix_cache_hits_total)" = 32 ]

# --- KV usage while a 100-token request runs: 3 to 9 blocks of 1000; none after
curl -sS -o "$TMP/long.txt" "$URL/v1/completions" -d "$(body 100)" &
long=$!
for _ in $(seq 1 100); do [ "$(m vllm:num_requests_running)" = 1 ] && break; sleep 0.02; done
usage=$(m vllm:kv_cache_usage_perc)
old=$(m vllm:gpu_cache_usage_perc)
checkx "KV usage while running is 3..9 blocks of 1000 (got $usage)" \
  'awk -v u="$usage" "BEGIN { exit !(u >= 0.003 && u <= 0.009) }"'
checkx "gpu_cache_usage_perc, V0's name, is near the same ($old)" \
  'awk -v u="$old" "BEGIN { exit !(u >= 0.003 && u <= 0.009) }"'
wait "$long"
check "KV usage is 0 when nothing runs" [ "$(m vllm:kv_cache_usage_perc)" = 0 ]

# --- the length histograms agree with the counters
check "request_prompt_tokens counts 3 requests" [ "$(m vllm:request_prompt_tokens_count)" = 3 ]
check "request_prompt_tokens_sum = prompt_tokens_total" \
  [ "$(m vllm:request_prompt_tokens_sum)" = "$(m vllm:prompt_tokens_total)" ]
check "request_generation_tokens_sum = generation_tokens_total (106)" \
  [ "$(m vllm:request_generation_tokens_sum)" = 106 ]
check "3 and 3 tokens are <= 5, 100 is not" \
  [ "$(metric 'vllm:request_generation_tokens_bucket{le="5",model_name="sim-model"}')" = 2 ]
check "time_per_output_token_seconds counts what inter_token_latency_seconds counts" \
  [ "$(m vllm:time_per_output_token_seconds_count)" = "$(m vllm:inter_token_latency_seconds_count)" ]
check "and they count 2 + 2 + 99 gaps" [ "$(m vllm:inter_token_latency_seconds_count)" = 103 ]
check "no preemptions" [ "$(m vllm:num_preemptions_total)" = 0 ]

# --- parameters the simulator does not honour: served, and counted; the
# ones it honours (n, stop, logprobs) are not counted (e2e/sampling.sh)
ign() { metric "sim_ignored_params_total{param=\"$1\"}"; }
check "no ignored parameter yet" [ "$(ign best_of)" = 0 ]
curl -sS -o "$TMP/n2.json" "$URL/v1/completions" \
  -d '{"prompt":"a b","max_tokens":2,"best_of":3,"min_tokens":1,"prompt_logprobs":null,"use_beam_search":false,"n":2,"stop":["x"],"logprobs":1}'
check "a request with best_of and min_tokens is served (n=2 honoured: two choices)" [ "$(jq '.choices | length' "$TMP/n2.json")" = 2 ]
checkx "best_of and min_tokens are counted once each" '[ "$(ign best_of)" = 1 ] && [ "$(ign min_tokens)" = 1 ]'
checkx "their no-op values are not (prompt_logprobs null, use_beam_search false)" '[ "$(ign prompt_logprobs)" = 0 ] && [ "$(ign use_beam_search)" = 0 ]'
checkx "honoured parameters have no sample" '! curl -sS "$URL/metrics" | grep -q "sim_ignored_params_total{param=\"\(n\|stop\|logprobs\|top_logprobs\)\"}"'

if command -v promtool >/dev/null; then
  curl -sS "$URL/metrics" >"$TMP/metrics.txt"
  rc=0
  promtool check metrics <"$TMP/metrics.txt" >"$TMP/promtool.txt" 2>&1 || rc=$?
  # one line per objection, its metric's name first
  others=$(grep -v "^vllm:[a-z0-9_:]* metric names should not contain ':'\$" "$TMP/promtool.txt" || true)
  check "promtool read the exposition (it objects to vLLM's colons)" \
    grep -q "^vllm:kv_cache_usage_perc metric names should not contain ':'" "$TMP/promtool.txt"
  checkx "promtool: only the colons of vLLM's names (exit $rc): ${others:-none}" '[ -z "$others" ]'
elif [ "${CI:-}" = true ]; then
  bad "promtool is not installed (Debian package prometheus): under CI=true that check cannot be skipped"
else
  echo "skip: promtool is not installed (Debian package prometheus)"
fi
finish
