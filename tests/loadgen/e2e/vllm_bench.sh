#!/usr/bin/env bash
# A `vllm bench serve` command line runs under loadgen with only the program
# name changed: --backend, --host/--port (0.0.0.0 meaning this host),
# --tokenizer, --disable-tqdm, --metadata, --logprobs are read; the result
# JSON carries vLLM's keys, date, num_prompts, tokenizer_id and the
# metadata's among them, and with --save-detailed vLLM's per-request arrays
# (input_lens, output_lens, ttfts in s, itls, errors), one entry a request.
# A backend that speaks no OpenAI API is refused (exit 2).
source "$(dirname "$0")/lib.sh"
MODEL=meta-llama/Llama-3.1-8B-Instruct
# Known latencies, so the figures can be checked, not only their keys: the
# server is never faster than told (firm lower bounds), a slow host only
# adds (generous upper bounds).
start_sim sim --model "$MODEL" --time-to-first-token 10ms --inter-token-latency 2ms
# --tokenizer MODEL is read from the local Hugging Face cache (nothing is
# downloaded): a cache holding a small stand-in tokenizer for it.
snap="$WORK/hf/hub/models--${MODEL//\//--}/snapshots/0"
mkdir -p "$snap"
cp "$(dirname "$0")/../fixtures/tokenizer-tiny/tokenizer.json" "$snap/"
export HF_HOME="$WORK/hf" HF_HUB_CACHE=""
port=${SIM_URL##*:}
before=$(date +%Y%m%d-%H%M%S)
"$LOADGEN" --backend openai-chat --host 0.0.0.0 --port "$port" --model "$MODEL" \
  --tokenizer "$MODEL" --dataset-name random --random-input-len 16 --random-output-len 8 \
  --random-prefix-len 0 --num-prompts 30 --request-rate 100 --seed 1 --disable-tqdm --logprobs 1 \
  --metadata tp=1 version=test --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,99 \
  --save-result --save-detailed --result-dir "$WORK" --result-filename v.json >"$WORK/v.out" 2>"$WORK/v.err" ||
  fail "the vLLM command line: $(cat "$WORK/v.err")"
after=$(date +%Y%m%d-%H%M%S)
grep -q "0.0.0.0 means this host" "$WORK/v.err" || fail "no note on 0.0.0.0"
grep -q -- "--logprobs 1: not requested" "$WORK/v.err" || fail "no note on --logprobs"
r="$WORK/v.json"
# vLLM's key names, as its plotting scripts read them
jq -e --arg m "$MODEL" '.completed == 30 and .num_prompts == 30 and .tokenizer_id == $m
  and .model_id == $m and .tp == "1" and .version == "test" and .endpoint == "/v1/chat/completions" and .total_output_tokens == 240
  and (.request_throughput > 0) and (.output_throughput > 0)
  and (.mean_ttft_ms >= 10) and (.median_ttft_ms >= 10) and (.median_ttft_ms < 100)
  and (.p99_ttft_ms >= .median_ttft_ms) and (.p50_itl_ms >= 2) and (.p50_itl_ms < 20)
  and (.mean_e2el_ms >= 10 + 7 * 2) and (.std_e2el_ms >= 0)
  and (.date | test("^[0-9]{8}-[0-9]{6}$"))
  and .output_lens == [range(30) | 8] and (.input_lens | length) == 30 and all(.input_lens[]; . > 0)
  and (.ttfts | length) == 30 and all(.ttfts[]; . >= 0.010) and (.errors | unique) == [""]
  and (.itls | length) == 30' "$r" >/dev/null ||
  fail "report: $(jq -c '{completed, num_prompts, tokenizer_id, endpoint, date, total_output_tokens, mean_ttft_ms, median_ttft_ms, p50_itl_ms, mean_e2el_ms}' "$r")"
d=$(jq -r .date "$r")
[[ ! "$d" < "$before" && ! "$d" > "$after" ]] || fail "date $d not within [$before, $after]"
grep -q "Successful requests:" "$WORK/v.out" || fail "no summary table"
rc=0
"$LOADGEN" --backend tgi --port "$port" --num-prompts 1 2>"$WORK/tgi.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--backend: loadgen speaks the OpenAI API" "$WORK/tgi.err" ||
  fail "--backend tgi: exit $rc: $(cat "$WORK/tgi.err")"
pass "vllm bench command line"
