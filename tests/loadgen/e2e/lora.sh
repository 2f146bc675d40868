#!/usr/bin/env bash
# --lora-modules against simserver: 400 requests over a 3-model split. The
# server accepts exactly the three names (a request with another model is a
# 404), so no failure says it saw only them; the report's per-model counts
# equal the JSONL's and lie within 4 sigma of the split. Then the server
# drops one name: its requests, and only they, fail with 404, so the server
# read each request's model. Bad lists are refused, exit 2, naming the flag;
# Inference Perf's load.lora_traffic_split from a YAML config the same, its
# refusals naming the key.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 1ms --inter-token-latency 1ms --served-model-name ad-a,ad-b,ad-c
run() { # NAME [flags...]
  local name=$1
  shift
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 400 --num-prompts 400 --seed 5 \
    --random-input-len 8 --random-output-len 2 --quiet --no-progress --save-detailed \
    --result-dir "$WORK" --result-filename "$name.json" "$@" || fail "loadgen ($name) exited $?"
}
run split --lora-modules ad-a=0.5,ad-b=0.3,ad-c=0.2
out="$WORK/split.json" jl="$WORK/split.jsonl"
[ "$(jnum "$out" .failed)" -eq 0 ] || fail "$(jnum "$out" .failed) requests failed against a server serving the three names"
[ "$(jq -c .lora.split "$out")" = '{"ad-a":0.5,"ad-b":0.3,"ad-c":0.2}' ] || fail "split: $(jq -c .lora.split "$out")"
[ "$(wc -l <"$jl")" -eq 400 ] || fail "JSONL has $(wc -l <"$jl") records"
for m in ad-a:0.5 ad-b:0.3 ad-c:0.2; do
  name=${m%%:*} p=${m#*:}
  rep=$(jnum "$out" ".lora.requests[\"$name\"]")
  jsn=$(jq -s --arg m "$name" 'map(select(.model == $m)) | length' "$jl")
  [ "$rep" -eq "$jsn" ] || fail "$name: report $rep, JSONL $jsn"
  awk -v n="$rep" -v p="$p" 'BEGIN { m = 400 * p; s = sqrt(400 * p * (1 - p)); d = n - m; if (d < 0) d = -d; exit !(d <= 4 * s) }' ||
    fail "$name: $rep of 400 for a share of $p"
done
[ "$(jq -s 'map(select(.model == null)) | length' "$jl")" -eq 0 ] || fail "a record without its model"
# The same seed, one worker: the same model for every index.
run one --num-workers 1 --lora-modules ad-a=0.5,ad-b=0.3,ad-c=0.2
cmp <(jq -s -c 'sort_by(.index) | map([.index, .model])' "$jl") \
  <(jq -s -c 'sort_by(.index) | map([.index, .model])' "$WORK/one.jsonl") || fail "1 and 2 workers chose differently"
# A server without ad-c: exactly ad-c's requests fail, with 404.
kill "$SIM_PID"
start_sim sim2 --time-to-first-token 1ms --inter-token-latency 1ms --served-model-name ad-a,ad-b
run drop --lora-modules ad-a=0.5,ad-b=0.3,ad-c=0.2
c=$(jnum "$WORK/drop.json" '.lora.requests["ad-c"]')
[ "$c" -gt 0 ] || fail "no request for ad-c"
[ "$(jnum "$WORK/drop.json" .failed)" -eq "$c" ] || fail "$(jnum "$WORK/drop.json" .failed) failed, ad-c had $c"
[ "$(jq -s 'map(select(.model == "ad-c" and .class == "http_404")) | length' "$WORK/drop.jsonl")" -eq "$c" ] ||
  fail "ad-c's requests are not the 404s"
# Refusals: exit 2 and the flag named.
for bad in 'a=0.5,b=0.4' 'a=-0.5,b=1.5' 'a,,b' '=1' 'a=1,b' 'a,a'; do
  rc=0
  "$LOADGEN" --base-url "$SIM_URL" --num-prompts 1 --lora-modules "$bad" --quiet 2>"$WORK/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "--lora-modules $bad: exit $rc"
  grep -q -- '--lora-modules' "$WORK/err" || fail "--lora-modules $bad: $(cat "$WORK/err")"
done
# Inference Perf's load.lora_traffic_split, from a YAML config: the same
# choice as the flag; its refusals exit 2 naming the key.
cat >"$WORK/ip.yaml" <<YAML
load:
  lora_traffic_split:
    - name: ad-a
      split: 0.5
    - name: ad-b
      split: 0.3
    - name: ad-c
      split: 0.2
YAML
"$LOADGEN" --config "$WORK/ip.yaml" --base-url "$SIM_URL" --num-prompts 40 --seed 5 --dry-run >"$WORK/ipdry" 2>&1 ||
  fail "config dry run exited $?: $(cat "$WORK/ipdry")"
grep -q 'ad-a 0.5, ad-b 0.3, ad-c 0.2' "$WORK/ipdry" || fail "config split: $(cat "$WORK/ipdry")"
split_yaml() { # NAME=SPLIT ...: a config of these
  echo "load:"
  echo "  lora_traffic_split:"
  for p in "$@"; do printf '    - name: "%s"\n      split: %s\n' "${p%%=*}" "${p#*=}"; done
}
bad_config() { # KEY-IN-MESSAGE NAME=SPLIT ...
  local key=$1 rc=0
  shift
  split_yaml "$@" >"$WORK/b.yaml"
  "$LOADGEN" --config "$WORK/b.yaml" --base-url "$SIM_URL" --num-prompts 1 --quiet 2>"$WORK/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "config ($*): exit $rc"
  grep -qF "config: $key" "$WORK/err" || fail "config ($*): $(cat "$WORK/err")"
}
bad_config 'load.lora_traffic_split: the splits sum to 0.9' ad-a=0.5 ad-b=0.3 ad-c=0.1
bad_config 'load.lora_traffic_split[2].split: must be a number >= 0' ad-a=0.5 ad-b=0.7 ad-c=-0.2
bad_config 'load.lora_traffic_split[1].name: must be a non-empty string' ad-a=0.5 =0.5
# Without a list: no model in the records, no lora in the report.
run plain
[ "$(jq -s 'map(select(has("model"))) | length' "$WORK/plain.jsonl")" -eq 0 ] || fail "a record with a model without --lora-modules"
jq -e 'has("lora") | not' "$WORK/plain.json" >/dev/null || fail "a lora key without --lora-modules"
# The dry run shows the split.
"$LOADGEN" --base-url "$SIM_URL" --num-prompts 4 --dry-run --lora-modules x,y >"$WORK/dry" 2>&1 || fail "dry run exited $?"
grep -q 'models (--lora-modules.*x 0.5, y 0.5' "$WORK/dry" || fail "dry run: $(cat "$WORK/dry")"
pass "lora: 400 requests over 3 models, report = JSONL, within the split's noise"
