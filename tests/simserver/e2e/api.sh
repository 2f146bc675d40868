#!/usr/bin/env bash
# simserver end to end: the stream format and usage numbers of completions
# and chat, streamed and not; stamps only on request and otherwise the
# standard bytes; /health, /v1/models, /metrics moving; echo mode; prefix
# cache; keep-alive; --workers 2 with aggregated metrics.
. "$(dirname "$0")/lib.sh"

start_sim a --mode random
P='"prompt":"one two  three\nfour","max_tokens":5'

# --- streamed completion with usage
curl -sS -N "$URL/v1/completions" -d "{$P,\"stream\":true,\"stream_options\":{\"include_usage\":true}}" >"$TMP/c.sse"
sse_data "$TMP/c.sse" >"$TMP/c.json"
check "completion stream: 5 token chunks + usage chunk" [ "$(wc -l <"$TMP/c.json")" -eq 6 ]
check "completion stream ends with [DONE]" [ "$(tail -n 2 "$TMP/c.sse" | head -n 1)" = "data: [DONE]" ]
check "every chunk is a text_completion" [ "$(jq -r .object "$TMP/c.json" | sort -u)" = "text_completion" ]
check "finish_reason only on the last token: length" \
  [ "$(jq -r '.choices[0].finish_reason // empty' "$TMP/c.json" | tr '\n' ,)" = "length," ]
check "each token is one word with a leading space" \
  [ "$(jq -r '.choices[0].text // empty' "$TMP/c.json" | grep -c '^ [^ ]*$')" -eq 5 ]
check "usage: prompt 4 (words), completion 5, total 9, cached 0" \
  [ "$(tail -n 1 "$TMP/c.json" | jq -c '[.choices, .usage.prompt_tokens, .usage.completion_tokens, .usage.total_tokens, .usage.prompt_tokens_details.cached_tokens]')" = '[[],4,5,9,0]' ]
check "events are separated by blank lines" [ "$(grep -c '^$' "$TMP/c.sse")" -eq 7 ]

# --- streamed chat
curl -sS -N "$URL/v1/chat/completions" -d '{"model":"sim-model","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"say three words"}],"max_completion_tokens":3,"stream":true,"stream_options":{"include_usage":true}}' >"$TMP/ch.sse"
sse_data "$TMP/ch.sse" >"$TMP/ch.json"
check "chat stream starts with the role chunk" [ "$(head -n 1 "$TMP/ch.json" | jq -c .choices[0].delta)" = '{"role":"assistant"}' ]
check "chat stream: role + 3 content chunks + usage" [ "$(wc -l <"$TMP/ch.json")" -eq 5 ]
check "chat chunks are chat.completion.chunk" [ "$(jq -r .object "$TMP/ch.json" | sort -u)" = "chat.completion.chunk" ]
check "chat usage: 5 prompt words, 3 completion" [ "$(tail -n 1 "$TMP/ch.json" | jq -c '[.usage.prompt_tokens,.usage.completion_tokens]')" = '[5,3]' ]

# --- not streamed
curl -sS "$URL/v1/completions" -d "{$P}" >"$TMP/n.json"
check "plain completion: 5 words, length, usage" \
  [ "$(jq -c '[(.choices[0].text | split(" ") | length), .choices[0].finish_reason, .usage.completion_tokens, .usage.prompt_tokens]' "$TMP/n.json")" = '[6,"length",5,4]' ]
curl -sS "$URL/v1/chat/completions" -d '{"messages":[{"role":"user","content":"hi"}]}' >"$TMP/nc.json"
check "plain chat: default max_tokens 16, assistant message" \
  [ "$(jq -c '[.object, .choices[0].message.role, .usage.completion_tokens]' "$TMP/nc.json")" = '["chat.completion","assistant",16]' ]
check "token ids count their elements" \
  [ "$(curl -sS "$URL/v1/completions" -d '{"prompt":[5,6,7],"max_tokens":1}' | jq .usage.prompt_tokens)" = 3 ]

# --- stamps only on request, standard bytes otherwise
curl -sS -N "$URL/v1/chat/completions" -d '{"messages":[{"role":"user","content":"a b c"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}' >"$TMP/plain.sse"
curl -sS -N -H 'X-Sim-Stamp: 1' "$URL/v1/chat/completions" -d '{"messages":[{"role":"user","content":"a b c"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}' >"$TMP/stamped.sse"
check "no comment line without the header" [ "$(grep -c '^:' "$TMP/plain.sse" || true)" -eq 0 ]
check "a stamp line before every data event (incl. [DONE])" \
  [ "$(grep -c '^: t=[0-9]*$' "$TMP/stamped.sse")" -eq "$(grep -c '^data: ' "$TMP/stamped.sse")" ]
check "each data line follows a stamp line" \
  [ "$(awk '/^data: / { if (prev !~ /^: t=/) bad++ } { prev = $0 } END { print bad + 0 }' "$TMP/stamped.sse")" -eq 0 ]
check "the last comment holds the true times" [ "$(sed -n 's/^: \({.*}\)$/\1/p' "$TMP/stamped.sse" | \
  jq -c '[has("queue_ns"), has("prefill_ns"), has("decode_ns"), .cached_tokens, (.max_late_ns | type)]')" = '[true,true,true,0,"number"]' ]
check "the stamps are monotonic CLOCK_MONOTONIC ns" \
  [ "$(sed -n 's/^: t=//p' "$TMP/stamped.sse" | sort -c -n && echo sorted)" = sorted ]
norm() { sed -e 's/"id":"[^"]*"/"id":"X"/' -e 's/"created":[0-9]*/"created":0/'; }
check "stamped stream minus comments == standard stream, byte for byte (ids/created normalized)" \
  cmp -s <(norm <"$TMP/plain.sse") <(strip_stamps <"$TMP/stamped.sse" | norm)
curl -sS -D "$TMP/h.txt" -o /dev/null -H 'X-Sim-Stamp: 1' "$URL/v1/completions" -d "{$P}"
check "plain response with the header carries X-Sim-* headers" \
  [ "$(grep -ci '^x-sim-\(queue-ns\|prefill-ns\|decode-ns\|cached-tokens\|max-late-ns\): [0-9]' "$TMP/h.txt")" -eq 5 ]
curl -sS -D "$TMP/h2.txt" -o /dev/null "$URL/v1/completions" -d "{$P}"
check "and none without it" [ "$(grep -ci '^x-sim-' "$TMP/h2.txt" || true)" -eq 0 ]

# --- ids are deterministic per worker request counter
check "ids count the worker's requests (this is the 10th)" [ "$(curl -sS "$URL/v1/completions" -d "{$P}" | jq -r .id)" = "cmpl-0-10" ]

# --- other endpoints
check "/health is 200" [ "$(curl -sS -o /dev/null -w '%{http_code}' "$URL/health")" = 200 ]
check "/v1/models lists sim-model" [ "$(curl -sS "$URL/v1/models" | jq -r '.data[0].id')" = sim-model ]
check "an unknown model is 404 model_not_found" \
  [ "$(curl -sS -w ' %{http_code}' "$URL/v1/completions" -d '{"model":"gpt-x","prompt":"a"}' | sed 's/^\(.*\) \([0-9]*\)$/\2 \1/' | { read -r code body; echo "$code $(echo "$body" | jq -r .error.code)"; })" = "404 model_not_found" ]
req0=$(metric 'vllm:request_success_total{finished_reason="length",model_name="sim-model"}')
gen0=$(metric 'vllm:generation_tokens_total{model_name="sim-model"}')
curl -sS -o /dev/null "$URL/v1/completions" -d '{"prompt":"x y","max_tokens":7}'
check "/metrics: success counter moved by 1" \
  [ "$(metric 'vllm:request_success_total{finished_reason="length",model_name="sim-model"}')" -eq $((req0 + 1)) ]
check "/metrics: generation tokens moved by 7" [ "$(metric 'vllm:generation_tokens_total{model_name="sim-model"}')" -eq $((gen0 + 7)) ]
check "/metrics: the TTFT histogram counts every request" \
  [ "$(metric 'vllm:time_to_first_token_seconds_count{model_name="sim-model"}')" -eq $((req0 + 1)) ]
check "keep-alive: two requests, one connection" \
  [ "$(curl -sS -o /dev/null -o /dev/null -w '%{num_connects}\n' "$URL/health" "$URL/health" | tr -d '\n')" = "10" ]
# --- pipelined requests are answered in order on one connection
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
B='{"prompt":"a","max_tokens":2}'
printf 'POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n%sGET /v1/models HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n' "${#B}" "$B" >&3
timeout 5 cat <&3 >"$TMP/pipe.txt" || true
exec 3<&- 3>&-
check "pipelining: three answers in order (200, 200, 404), then close" \
  [ "$(grep -ao 'HTTP/1.1 [0-9]*' "$TMP/pipe.txt" | cut -d' ' -f2 | tr '\n' ' ')" = "200 200 404 " ]
# --- Expect: 100-continue is answered with an interim 100 (curl would
# otherwise wait 1 s and send the body unasked); the check is the 100 on the
# wire, not the host's speed
curl -sS -v -o /dev/null -H 'Expect: 100-continue' "$URL/v1/completions" -d "{$P}" 2>"$TMP/expect.txt" || true
check "Expect: 100-continue gets 'HTTP/1.1 100 Continue' before the 200" \
  [ "$(tr -d '\r' <"$TMP/expect.txt" | sed -n 's/^< \(HTTP\/1.1 [0-9]*\).*/\1/p' | tr '\n' ' ')" = "HTTP/1.1 100 HTTP/1.1 200 " ]
stop_sim a
check "SIGTERM: exit 0" [ "$STOP_RC" -eq 0 ]

# --- echo mode, served names, prefix cache
start_sim e --mode echo --served-model-name m1,m2 --block-size 4
check "echo: the prompt's words, then stop" \
  [ "$(curl -sS "$URL/v1/completions" -d '{"model":"m2","prompt":"alpha beta gamma","max_tokens":5}' | jq -c '[.choices[0].text,.choices[0].finish_reason]')" = '[" alpha beta gamma","stop"]' ]
check "echo with ignore_eos cycles" \
  [ "$(curl -sS "$URL/v1/completions" -d '{"prompt":"alpha beta gamma","max_tokens":5,"ignore_eos":true}' | jq -c '[.choices[0].text,.choices[0].finish_reason]')" = '[" alpha beta gamma alpha beta","length"]' ]
check "echo streamed, stop" \
  [ "$(curl -sS -N "$URL/v1/chat/completions" -d '{"messages":[{"role":"user","content":"x y"}],"max_tokens":9,"stream":true}' | sse_data /dev/stdin | jq -r '.choices[0].finish_reason // empty')" = stop ]
check "a model not served is 404" [ "$(curl -sS -o /dev/null -w '%{http_code}' "$URL/v1/completions" -d '{"model":"sim-model","prompt":"a"}')" = 404 ]
PR='"prompt":"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10","max_tokens":1'
check "prefix cache: cold" [ "$(curl -sS "$URL/v1/completions" -d "{$PR}" | jq .usage.prompt_tokens_details.cached_tokens)" = 0 ]
check "prefix cache: warm, two full blocks of 4" [ "$(curl -sS "$URL/v1/completions" -d "{$PR}" | jq .usage.prompt_tokens_details.cached_tokens)" = 8 ]
stop_sim e
start_sim n --no-enable-prefix-caching --block-size 4
curl -sS -o /dev/null "$URL/v1/completions" -d "{$PR}"
check "prefix cache off: never cached" [ "$(curl -sS "$URL/v1/completions" -d "{$PR}" | jq .usage.prompt_tokens_details.cached_tokens)" = 0 ]
stop_sim n

# --- two workers share the port; /metrics shows the totals
start_sim w --workers 2
check "--workers 2: two worker processes" [ "$(pgrep -c -P "$SIM_PID_w")" -eq 2 ]
for i in 1 2 3 4 5 6 7 8; do curl -sS -o /dev/null "$URL/v1/completions" -d '{"prompt":"a","max_tokens":2}'; done
check "--workers 2: every request served" [ "$(metric 'vllm:request_success_total{finished_reason="length",model_name="sim-model"}')" -eq 8 ]
check "--workers 2: the same totals from any worker" \
  [ "$(for i in 1 2 3 4; do metric 'vllm:generation_tokens_total{model_name="sim-model"}'; done | sort -u)" = 16 ]
stop_sim w
check "--workers 2: SIGTERM, exit 0" [ "$STOP_RC" -eq 0 ]
finish
