#!/usr/bin/env bash
# Request headers and body additions reach the server, seen by a capture
# server that logs every request it gets: --header KEY=VALUE (vLLM's form,
# one or more after the flag) and KEY:VALUE, a value holding the other
# separator, a config's server.api_key (Authorization: Bearer) and
# api.headers; --extra-body merged into every body with vLLM's sampling
# flags and --served-model-name. Bad input exits 2 naming the flag or key.
source "$(dirname "$0")/lib.sh"
log="$WORK/capture.jsonl"
python3 "$(dirname "$0")/capture_server.py" "$log" >"$WORK/cap.out" 2>"$WORK/cap.err" &
CHILDREN+=($!)
url=""
for _ in $(seq 1 200); do
  url=$(sed -n 's/^listening //p' "$WORK/cap.out" 2>/dev/null || true)
  [ -n "$url" ] && break
  sleep 0.05
done
[ -n "$url" ] || fail "the capture server did not start: $(cat "$WORK/cap.err")"
common=(--base-url "$url" --num-workers 1 --request-rate 50 --random-input-len 4 --random-output-len 2
        --quiet --no-progress --sim-stamps off)

"$LOADGEN" "${common[@]}" --num-prompts 3 --header X-A=1 X-Url=http://a:b --header "X-B: two words" \
  --header X-C:x=y 2>"$WORK/h.err" || fail "loadgen exited $?: $(cat "$WORK/h.err")"
n=$(wc -l <"$log")
[ "$n" -eq 3 ] || fail "the server saw $n requests, not 3"
jq -se 'all(.[]; .headers["X-A"] == "1" and .headers["X-Url"] == "http://a:b"
              and .headers["X-B"] == "two words" and .headers["X-C"] == "x=y")' "$log" >/dev/null ||
  fail "the headers the server saw: $(head -n 1 "$log")"

: >"$log"
cat >"$WORK/c.yml" <<EOC
server:
  type: vllm
  model_name: sim-model
  base_url: $url
  api_key: sk-test-123
api:
  type: completion
  headers:
    X-Tenant: blue
    X-Retries: 3
EOC
"$LOADGEN" --config "$WORK/c.yml" "${common[@]}" --num-prompts 2 2>"$WORK/c.err" ||
  fail "the config run exited $?: $(cat "$WORK/c.err")"
[ -s "$log" ] || fail "the config run sent nothing"
jq -se 'all(.[]; .headers["Authorization"] == "Bearer sk-test-123" and .headers["X-Tenant"] == "blue"
              and .headers["X-Retries"] == "3")' "$log" >/dev/null ||
  fail "the config's headers: $(head -n 1 "$log")"

for bad in "=v" "X A=1" "novalue"; do
  rc=0
  "$LOADGEN" --base-url "$url" --header "$bad" --num-prompts 1 2>"$WORK/bad.err" || rc=$?
  [ "$rc" -eq 2 ] && grep -q -- "--header" "$WORK/bad.err" && grep -qF -- "$bad" "$WORK/bad.err" ||
    fail "--header '$bad': exit $rc, $(cat "$WORK/bad.err")"
done
printf 'server:\n  base_url: %s\n  api_key: 5\n' "$url" >"$WORK/bad.yml"
rc=0
"$LOADGEN" --config "$WORK/bad.yml" --num-prompts 1 2>"$WORK/bad.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "server.api_key" "$WORK/bad.err" || fail "a numeric api_key: exit $rc, $(cat "$WORK/bad.err")"
# The body: --extra-body, the sampling flags, the served model name.
: >"$log"
"$LOADGEN" "${common[@]}" --num-prompts 2 --endpoint /v1/chat/completions \
  --extra-body '{"temperature":0.5,"chat_template_kwargs":{"enable_thinking":false},"seed":7}' \
  --top-p 0.9 --top-k 20 --min-p 0.05 --served-model-name served-one 2>"$WORK/b.err" ||
  fail "the body run exited $?: $(cat "$WORK/b.err")"
jq -se 'length == 2 and all(.[]; .body | fromjson | .temperature == 0.5
          and .chat_template_kwargs.enable_thinking == false and .seed == 7 and .top_p == 0.9
          and .top_k == 20 and .min_p == 0.05 and .model == "served-one" and .stream == true
          and (.messages | length) == 1 and .max_tokens == 2)' "$log" >/dev/null ||
  fail "the body the server saw: $(head -n 1 "$log")"
for bad in '[1,2]' '{"model":"x"}' '{"prompt":"x"}' '{"stream":false}' 'nonsense' '{"temperature":1}'; do
  rc=0
  "$LOADGEN" --base-url "$url" --extra-body "$bad" --temperature 0.2 --num-prompts 1 2>"$WORK/bad.err" || rc=$?
  [ "$rc" -eq 2 ] && grep -q -- "--extra-body" "$WORK/bad.err" && grep -qF -- "$bad" "$WORK/bad.err" ||
    fail "--extra-body '$bad': exit $rc, $(cat "$WORK/bad.err")"
done
pass "request headers and body: --header KEY=VALUE and KEY:VALUE, server.api_key, api.headers, --extra-body and the sampling flags reach the server"
