#!/usr/bin/env bash
# simserver end to end: the sampling parameters it honours as vLLM does.
# n choices, streamed (one chunk per choice and token, each with its index,
# the choices of a step written together) and not (n entries), usage over
# all choices; stop strings (the text ends before the string, finish_reason
# stop, stop_reason naming it, no part of it ever sent); logprobs in vLLM's
# completion and chat shapes, deterministic from the seed; continuous usage
# stats; bad values refused with 400 naming the parameter; none of them
# counted as ignored.
. "$(dirname "$0")/lib.sh"

start_sim r --mode random
C="$URL/v1/completions"
H="$URL/v1/chat/completions"
P='"prompt":"one two three","max_tokens":5'

# --- n, not streamed
curl -sS "$C" -d "{$P}" >"$TMP/one.json"
curl -sS "$C" -d "{$P,\"n\":2}" >"$TMP/n2.json"
check "n=2: two choices, indices 0 and 1" [ "$(jq -c '[.choices[].index]' "$TMP/n2.json")" = '[0,1]' ]
check "n=2: each choice has 5 words and finish_reason length" \
  [ "$(jq -c '[.choices[] | [(.text | split(" ") | length), .finish_reason]]' "$TMP/n2.json")" = '[[6,"length"],[6,"length"]]' ]
check "n=2: choice 0 is the n=1 text" [ "$(jq -r '.choices[0].text' "$TMP/n2.json")" = "$(jq -r '.choices[0].text' "$TMP/one.json")" ]
check "n=2: choice 1 is another text" [ "$(jq -r '.choices[1].text' "$TMP/n2.json")" != "$(jq -r '.choices[0].text' "$TMP/n2.json")" ]
check "n=2: usage counts both choices (10 completion tokens)" \
  [ "$(jq -c '[.usage.prompt_tokens, .usage.completion_tokens, .usage.total_tokens]' "$TMP/n2.json")" = '[3,10,13]' ]

# --- n, streamed
curl -sS -N "$C" -d "{$P,\"n\":2,\"stream\":true,\"stream_options\":{\"include_usage\":true}}" >"$TMP/n2.sse"
sse_data "$TMP/n2.sse" >"$TMP/n2s.json"
check "n=2 streamed: 5 chunks per choice + usage" \
  [ "$(jq -c '[.choices[0].index]' "$TMP/n2s.json" | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" = "5[0] 5[1] 1[null] " ]
check "n=2 streamed: one choice per chunk" [ "$(jq '.choices | length' "$TMP/n2s.json" | sort -u | tr '\n' ' ')" = "0 1 " ]
check "n=2 streamed: choices alternate 0,1 (lockstep)" \
  [ "$(jq -r '.choices[0].index // empty' "$TMP/n2s.json" | tr -d '\n')" = "0101010101" ]
for i in 0 1; do
  check "n=2 streamed: choice $i's chunks join to its non-streamed text" \
    [ "$(jq -j --argjson i "$i" 'select(.choices[0].index == $i) | .choices[0].text' "$TMP/n2s.json")" = "$(jq -r --argjson i "$i" '.choices[$i].text' "$TMP/n2.json")" ]
  check "n=2 streamed: choice $i finishes once, on its last chunk" \
    [ "$(jq -r --argjson i "$i" 'select(.choices[0].index == $i) | .choices[0].finish_reason // "-"' "$TMP/n2s.json" | tr '\n' ' ')" = "- - - - length " ]
done
check "n=2 streamed: usage counts both choices" [ "$(tail -n 1 "$TMP/n2s.json" | jq -c '[.choices, .usage.completion_tokens]')" = '[[],10]' ]
check "n=2 streamed: completion chunks name stop_reason (null)" \
  [ "$(jq -c 'select(.choices | length == 1) | .choices[0] | has("stop_reason")' "$TMP/n2s.json" | sort -u)" = true ]

# --- chat, n=3 streamed: a role chunk per choice first
curl -sS -N "$H" -d '{"messages":[{"role":"user","content":"hi there"}],"max_tokens":2,"n":3,"stream":true}' >"$TMP/c3.sse"
sse_data "$TMP/c3.sse" >"$TMP/c3.json"
check "chat n=3: three role chunks first, indices 0,1,2" \
  [ "$(head -n 3 "$TMP/c3.json" | jq -c '[.choices[0].index, .choices[0].delta.role]' | tr -d '\n')" = '[0,"assistant"][1,"assistant"][2,"assistant"]' ]
check "chat n=3: then 2 content chunks per choice" [ "$(tail -n +4 "$TMP/c3.json" | jq -c '.choices[0].delta | has("content")' | grep -c true)" -eq 6 ]
check "chat n=3: stop_reason only on each choice's finishing chunk" \
  [ "$(jq -c '.choices[0] | [(.finish_reason != null), has("stop_reason")]' "$TMP/c3.json" | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" = '6[false,false] 3[true,true] ' ]

# --- continuous usage: every chunk carries the usage so far, per choice
curl -sS -N "$C" -d "{$P,\"n\":2,\"stream\":true,\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}}" >"$TMP/cu.sse"
sse_data "$TMP/cu.sse" >"$TMP/cu.json"
check "continuous usage: choice 0's chunks count 1..5 completion tokens" \
  [ "$(jq -r 'select(.choices[0].index == 0) | .usage.completion_tokens' "$TMP/cu.json" | tr '\n' ' ')" = "1 2 3 4 5 " ]
check "continuous usage: prompt 3, total = prompt + completion" \
  [ "$(jq -c 'select(.choices | length == 1) | .usage | (.prompt_tokens == 3 and .total_tokens == .prompt_tokens + .completion_tokens)' "$TMP/cu.json" | sort -u)" = true ]
check "continuous usage: not without include_usage" \
  [ "$(curl -sS -N "$C" -d "{$P,\"stream\":true,\"stream_options\":{\"continuous_usage_stats\":true}}" | sse_data /dev/stdin | jq -c 'has("usage")' | sort -u)" = false ]

# --- stop, random mode: the text of the request without stop, cut before the
# first occurrence of its 4th token
full=$(jq -r '.choices[0].text' "$TMP/one.json")
word=$(echo "$full" | awk '{print $4}')
want=$(awk -v t="$full" -v s=" $word" 'BEGIN { print substr(t, 1, index(t, s) - 1) }')
curl -sS "$C" -d "{$P,\"stop\":[\"zzz\",\" $word\"]}" >"$TMP/st.json"
check "stop: the text ends before the stop string ('$want')" [ "$(jq -r '.choices[0].text' "$TMP/st.json")" = "$want" ]
check "stop: finish_reason stop, stop_reason names the string" \
  [ "$(jq -c '[.choices[0].finish_reason, .choices[0].stop_reason]' "$TMP/st.json")" = "[\"stop\",\" $word\"]" ]
check "stop: fewer completion tokens than max_tokens" [ "$(jq .usage.completion_tokens "$TMP/st.json")" -lt 5 ]
curl -sS "$C" -d "{$P,\"stop\":\" $word\",\"include_stop_str_in_output\":true}" >"$TMP/sti.json"
check "stop with include_stop_str_in_output: the string kept" [ "$(jq -r '.choices[0].text' "$TMP/sti.json")" = "$want $word" ]
stop_sim r

# --- stop, echo mode (the text is the prompt): streamed, across tokens, chat
start_sim e --mode echo --inter-token-latency 2ms
C="$URL/v1/completions"
H="$URL/v1/chat/completions"
E='"prompt":"alpha beta STOP gamma delta","max_tokens":5'
curl -sS -N -H 'X-Sim-Stamp: 1' "$C" -d "{$E,\"stop\":\"STOP\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}" >"$TMP/es.sse"
strip_stamps <"$TMP/es.sse" | sse_data /dev/stdin >"$TMP/es.json"
check "stop streamed: the chunks join to ' alpha beta '" [ "$(jq -j 'select(.choices | length == 1) | .choices[0].text' "$TMP/es.json")" = " alpha beta " ]
check "stop streamed: no chunk holds a part of STOP (held back)" \
  [ "$(jq -r 'select(.choices | length == 1) | .choices[0].text' "$TMP/es.json" | grep -c '[STOP]' || true)" -eq 0 ]
check "stop streamed: 3 token chunks, the last with stop and STOP" \
  [ "$(jq -c 'select(.choices | length == 1) | [.choices[0].finish_reason, .choices[0].stop_reason]' "$TMP/es.json" | tr -d '\n')" = '[null,null][null,null]["stop","STOP"]' ]
check "stop streamed: usage counts the 3 tokens generated" [ "$(tail -n 1 "$TMP/es.json" | jq .usage.completion_tokens)" = 3 ]
check "stop streamed: the stream still ends with [DONE]" [ "$(grep -c '^data: \[DONE\]$' "$TMP/es.sse")" -eq 1 ]
check "stop: a string across tokens, the first of the list found wins" \
  [ "$(curl -sS "$C" -d "{$E,\"stop\":[\"delta\",\"a S\"]}" | jq -c '[.choices[0].text, .choices[0].stop_reason]')" = '[" alpha bet","a S"]' ]
check "stop: chat, not streamed" \
  [ "$(curl -sS "$H" -d '{"messages":[{"role":"user","content":"alpha beta STOP gamma"}],"stop":["STOP"]}' | jq -c '.choices[0] | [.message.content, .finish_reason, .stop_reason]')" = '[" alpha beta ","stop","STOP"]' ]
check "stop: not found, the whole text and echo's own stop (stop_reason null)" \
  [ "$(curl -sS "$C" -d '{"prompt":"alpha beta STOP gamma delta","max_tokens":9,"stop":["zeta"]}' | jq -c '.choices[0] | [.text, .finish_reason, .stop_reason]')" = '[" alpha beta STOP gamma delta","stop",null]' ]
# n=2 with pacing: the choices of a step are written together (one stamp),
# each step at least 2 ms after the previous one (never early)
curl -sS -N -H 'X-Sim-Stamp: 1' "$C" -d "{$E,\"n\":2,\"stream\":true}" >"$TMP/ep.sse"
awk '/^: t=/ { t = substr($0, 5) } /^data: \{/ { if (match($0, /"index":[0-9]+/)) print t, substr($0, RSTART + 8, RLENGTH - 8) }' "$TMP/ep.sse" >"$TMP/ep.txt"
check "n=2 paced: 10 token chunks" [ "$(wc -l <"$TMP/ep.txt")" -eq 10 ]
check "n=2 paced: both choices of a step share its stamp" \
  [ "$(awk 'NR % 2 == 1 { t = $1 } NR % 2 == 0 && $1 != t { bad++ } END { print bad + 0 }' "$TMP/ep.txt")" -eq 0 ]
check "n=2 paced: steps at least 2 ms apart" \
  [ "$(awk 'NR % 2 == 1 { if (p && $1 - p < 2000000) bad++; p = $1 } END { print bad + 0 }' "$TMP/ep.txt")" -eq 0 ]
stop_sim e

# --- logprobs
start_sim l --mode random
C="$URL/v1/completions"
H="$URL/v1/chat/completions"
curl -sS "$C" -d "{$P,\"logprobs\":2,\"seed\":11}" >"$TMP/lp.json"
L='.choices[0].logprobs'
check "logprobs: tokens, token_logprobs, top_logprobs, text_offset, 5 each" \
  [ "$(jq -c "$L | [(.tokens|length), (.token_logprobs|length), (.top_logprobs|length), (.text_offset|length)]" "$TMP/lp.json")" = '[5,5,5,5]' ]
check "logprobs: the tokens join to the text" [ "$(jq -j "$L.tokens[]" "$TMP/lp.json")" = "$(jq -r '.choices[0].text' "$TMP/lp.json")" ]
check "logprobs: text_offset starts at 0 and adds each token's length" \
  [ "$(jq -c "$L | [.text_offset == ([foreach .tokens[] as \$t (0; . + (\$t|length); .)] | [0] + .[:-1])]" "$TMP/lp.json")" = '[true]' ]
check "logprobs: every value <= 0" [ "$(jq -c "[$L | .token_logprobs[], (.top_logprobs[] | .[])] | all(. <= 0)" "$TMP/lp.json")" = true ]
check "logprobs 2: two entries per token, the chosen token first and highest" \
  [ "$(jq -c "$L as \$l | [range(0; 5) as \$i | (\$l.top_logprobs[\$i] | to_entries) as \$e | (\$e | length) == 2 and \$e[0].key == \$l.tokens[\$i] and \$e[0].value == \$l.token_logprobs[\$i] and \$e[0].value >= \$e[1].value] | all" "$TMP/lp.json")" = true ]
check "logprobs: the same seed, the same values" [ "$(curl -sS "$C" -d "{$P,\"logprobs\":2,\"seed\":11}" | jq -c "$L")" = "$(jq -c "$L" "$TMP/lp.json")" ]
check "logprobs: another seed, other values (the same text)" \
  [ "$(curl -sS "$C" -d "{$P,\"logprobs\":2,\"seed\":12}" | jq -c "[.choices[0].text == $(jq '.choices[0].text' "$TMP/lp.json"), $L.token_logprobs != $(jq -c "$L.token_logprobs" "$TMP/lp.json")]")" = '[true,true]' ]
check "logprobs 0: the chosen token alone in top_logprobs" \
  [ "$(curl -sS "$C" -d "{$P,\"logprobs\":0}" | jq -c "[$L.top_logprobs[] | length] | unique")" = '[1]' ]
curl -sS -N "$C" -d "{$P,\"logprobs\":1,\"stream\":true}" | sse_data /dev/stdin >"$TMP/lps.json"
check "logprobs streamed: one token per chunk, its text the chunk's" \
  [ "$(jq -c '.choices[0] | .logprobs.tokens == [.text]' "$TMP/lps.json" | sort -u)" = true ]
check "logprobs streamed: text_offset counts the text sent before" \
  [ "$(jq -s -c '[foreach .[] as $c (0; . + ($c.choices[0].text | length); . - ($c.choices[0].text | length))] == [.[].choices[0].logprobs.text_offset[0]]' "$TMP/lps.json")" = true ]
curl -sS -N "$H" -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"logprobs":true,"top_logprobs":3,"stream":true}' | sse_data /dev/stdin >"$TMP/clp.json"
CL='select(.choices[0].delta.content != null) | .choices[0].logprobs.content'
check "chat logprobs: one entry per token chunk, its token the delta" \
  [ "$(jq -c 'select(.choices[0].delta.content != null) | .choices[0] | [.delta.content] == [.logprobs.content[].token]' "$TMP/clp.json" | sort -u)" = true ]
check "chat logprobs: bytes are the token's UTF-8 bytes" \
  [ "$(jq -c "$CL | .[] | .bytes == (.token | explode)" "$TMP/clp.json" | sort -u)" = true ]
check "chat logprobs: top_logprobs 3 entries of {token, logprob, bytes}, the chosen first" \
  [ "$(jq -c "$CL | .[] | . as \$t | (.top_logprobs | length) == 3 and .top_logprobs[0].token == .token and all(.top_logprobs[]; has(\"bytes\") and .logprob <= \$t.logprob and .logprob <= 0)" "$TMP/clp.json" | sort -u)" = true ]
check "chat logprobs without top_logprobs: empty lists" \
  [ "$(curl -sS "$H" -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"logprobs":true}' | jq -c '[.choices[0].logprobs.content[] | .top_logprobs] | unique')" = '[[]]' ]
check "chat logprobs false: null" \
  [ "$(curl -sS "$H" -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"logprobs":false}' | jq -c '.choices[0].logprobs')" = null ]

# --- bad values: 400, naming the parameter
bad() { # ENDPOINT BODY PARAM
  local out
  out=$(curl -sS -w ' %{http_code}' "$1" -d "$2")
  check "400 for $2 names $3" [ "${out##* } $(echo "${out% *}" | jq -r .error.param)" = "400 $3" ]
}
bad "$C" '{"prompt":"a","n":0}' n
bad "$C" '{"prompt":"a","n":129}' n
bad "$C" '{"prompt":"a","n":2,"temperature":0}' n
bad "$C" '{"prompt":"a","stop":[1]}' stop
bad "$C" '{"prompt":"a","stop":["a","b","c","d","e"]}' stop
bad "$C" '{"prompt":"a","stop":""}' stop
bad "$C" '{"prompt":"a","logprobs":21}' logprobs
bad "$C" '{"prompt":"a","logprobs":-1}' logprobs
bad "$H" '{"messages":[{"role":"user","content":"a"}],"top_logprobs":2}' top_logprobs
bad "$H" '{"messages":[{"role":"user","content":"a"}],"logprobs":true,"top_logprobs":21}' top_logprobs
checkx "honoured parameters are not counted as ignored" \
  '! curl -sS "$URL/metrics" | grep -q "sim_ignored_params_total{param=\"\\(n\\|stop\\|logprobs\\|top_logprobs\\)\"}"'
check "and the others stay at 0" [ "$(curl -sS "$URL/metrics" | awk '/^sim_ignored_params_total/ { s += $2 } END { print s + 0 }')" -eq 0 ]
stop_sim l
finish
