#!/usr/bin/env bash
# simserver end to end: what each bad input and each injected fault looks
# like on the wire, the fault counters, the idle and slow-request cuts, a
# client that never reads, and the exit codes of bad flags.
. "$(dirname "$0")/lib.sh"

# --- bad command lines: exit 2 with a message naming the flag
for args in "--port -1" "--inter-token-latency 5xs" "--failure-types stall,bogus" "--mode loud" \
  "--failure-injection-rate 150" "--workers 0" "--nonsense"; do
  # shellcheck disable=SC2086
  rc=0; "$SIM" $args >/dev/null 2>"$TMP/flag.err" || rc=$?
  flag=${args%% *}
  checkx "bad flag '$args': exit 2, message names it" '[ "$rc" -eq 2 ] && grep -q -- "${flag#--}" "$TMP/flag.err"'
done
check "--help lists every latency flag" [ "$("$SIM" --help | grep -c -- '--time-to-first-token\|--prefill-overhead\|--prefill-time-per-token\|--inter-token-latency\|--max-num-seqs\|--time-factor-under-load')" -ge 6 ]

start_sim f --idle-timeout 500ms --max-write-queue 64k
code() { curl -sS -o "$TMP/body" -w '%{http_code}' "$@"; }
errfield() { jq -r ".error.$1" "$TMP/body"; }

# --- bad input
check "malformed JSON: 400" [ "$(code "$URL/v1/completions" -d '{"prompt":')" = 400 ]
check "  ... with an OpenAI error object" [ "$(jq -c '.error | keys' "$TMP/body")" = '["code","message","param","type"]' ]
check "missing prompt: 400" [ "$(code "$URL/v1/completions" -d '{"max_tokens":3}')" = 400 ]
check "  ... naming param=prompt" [ "$(errfield param)" = prompt ]
check "mistyped stream: 400" [ "$(code "$URL/v1/completions" -d '{"prompt":"a","stream":1}')" = 400 ]
check "max_tokens 0: 400" [ "$(code "$URL/v1/completions" -d '{"prompt":"a","max_tokens":0}')" = 400 ]
check "  ... naming param=max_tokens" [ "$(errfield param)" = max_tokens ]
check "max_tokens over --max-model-len: 400" [ "$(code "$URL/v1/completions" -d '{"prompt":"a","max_tokens":40000}')" = 400 ]
check "messages not an array: 400" [ "$(code "$URL/v1/chat/completions" -d '{"messages":{}}')" = 400 ]
head -c 1200000 /dev/zero | tr '\0' 'a' >"$TMP/big"
check "body over --max-body: 413" [ "$(code "$URL/v1/completions" --data-binary @"$TMP/big")" = 413 ]
# A client that sends its whole 16 MiB body without waiting (no Expect) still
# reads the 413: the server lingers, reading and dropping, instead of closing
# with unread input (an RST that would destroy the answer).
head -c 16777216 /dev/zero | tr '\0' 'a' >"$TMP/big16"
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
( trap '' PIPE; printf 'POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: 16777216\r\n\r\n'; cat "$TMP/big16" ) >&3 2>/dev/null &
sender=$!
sent_rc=0
wait "$sender" 2>/dev/null || sent_rc=$? # the whole body first, as a careless client
got=$(timeout 5 head -c 12 <&3 2>/dev/null || true)
exec 3<&- 3>&-
check "a 16 MiB body sent without Expect: the whole body is taken, no reset (rc $sent_rc)" [ "$sent_rc" -eq 0 ]
check "  ... and then the 413 is read (got '$got')" [ "$got" = "HTTP/1.1 413" ]
check "unknown path: 404" [ "$(code "$URL/v2/nothing")" = 404 ]
check "wrong method: 405" [ "$(code -X GET "$URL/v1/completions")" = 405 ]
check "header section over 64 KiB: 431" [ "$(code -H "X-Big: $(head -c 70000 /dev/zero | tr '\0' a)" "$URL/health")" = 431 ]
check "not HTTP: 400" [ "$(printf 'HELLO\r\n\r\n' | timeout 5 curl -sS telnet://127.0.0.1:$PORT 2>/dev/null | head -n 1 | tr -d '\r')" = "HTTP/1.1 400 Bad Request" ]
check "unknown X-Sim-Fail type: 400" [ "$(code -H 'X-Sim-Fail: meteor' "$URL/v1/completions" -d '{"prompt":"a"}')" = 400 ]
check "the server is still up" [ "$(code "$URL/health")" = 200 ]

# --- each fault on the wire
S='{"prompt":"a b c","max_tokens":6,"stream":true}'
for pair in rate_limit:429 server_error:500 unavailable:503 invalid_request:400 invalid_api_key:401; do
  t=${pair%%:*}; want=${pair##*:}
  checkx "fault $t: HTTP $want with an error object" '[ "$(code -H "X-Sim-Fail: $t" "$URL/v1/completions" -d "$S")" = "$want" ] && [ "$(errfield message)" != null ]'
done
rc=0; curl -sS -N -H 'X-Sim-Fail: connection_reset' "$URL/v1/completions" -d "$S" >"$TMP/r.sse" 2>/dev/null || rc=$?
checkx "fault connection_reset: curl exit 56 (RST), no bytes" '[ "$rc" -eq 56 ] && [ ! -s "$TMP/r.sse" ]'
rc=0; curl -sS -N -H 'X-Sim-Fail: midstream_drop' "$URL/v1/completions" -d "$S" >"$TMP/d.sse" 2>/dev/null || rc=$?
check "fault midstream_drop: curl exit 18 (rc $rc)" [ "$rc" -eq 18 ]
check "  ... after 3 of 6 tokens" [ "$(grep -c '^data: {' "$TMP/d.sse")" -eq 3 ]
check "  ... and no [DONE]" [ "$(grep -c DONE "$TMP/d.sse" || true)" -eq 0 ]
rc=0; curl -sS -N -H 'X-Sim-Fail: malformed_chunk' "$URL/v1/completions" -d "$S" >"$TMP/m.sse" || rc=$?
check "fault malformed_chunk: one data line is not JSON" [ "$(sse_data "$TMP/m.sse" | while read -r l; do echo "$l" | jq -e . >/dev/null 2>&1 || echo x; done | wc -l)" -eq 1 ]
check "  ... and the stream still ends with [DONE] (rc $rc)" [ "$rc" -eq 0 ] 
check "  ... [DONE] present" [ "$(grep -c '^data: \[DONE\]' "$TMP/m.sse")" -eq 1 ]
check "  ... with all 6 tokens" [ "$(sse_data "$TMP/m.sse" | grep -c 'finish_reason')" -eq 6 ]
rc=0; curl -sS -N --max-time 0.3 -H 'X-Sim-Fail: stall' "$URL/v1/completions" -d "$S" >"$TMP/s.sse" 2>/dev/null || rc=$?
check "fault stall: the client times out (exit 28, got $rc)" [ "$rc" -eq 28 ]
check "  ... after 3 of 6 tokens" [ "$(grep -c '^data: {' "$TMP/s.sse")" -eq 3 ]
t0=$(date +%s%N)
rc=0; curl -sS -N --max-time 5 -H 'X-Sim-Fail: stall' "$URL/v1/completions" -d "$S" >/dev/null 2>&1 || rc=$?
el_ms=$((($(date +%s%N) - t0) / 1000000))
# Cut by the server (exit 18), not by curl's own 5 s (exit 28), and never
# before the idle timeout.
checkx "fault stall: --idle-timeout 500ms cuts it (exit 18 after ${el_ms} ms)" '[ "$rc" -eq 18 ] && [ "$el_ms" -ge 500 ]'
check "plain request, midstream_drop: cut short (exit 18)" [ "$(curl -sS -o /dev/null -H 'X-Sim-Fail: midstream_drop' "$URL/v1/completions" -d '{"prompt":"a"}' 2>/dev/null; echo $?)" = 18 ]
for t in rate_limit server_error unavailable invalid_request invalid_api_key connection_reset malformed_chunk; do
  check "sim_injected_faults_total{type=$t} = 1" [ "$(metric "sim_injected_faults_total{type=\"$t\"}")" = 1 ]
done
for t in midstream_drop stall; do
  check "sim_injected_faults_total{type=$t} = 2" [ "$(metric "sim_injected_faults_total{type=\"$t\"}")" = 2 ]
done

# --- slow and idle clients
# The trickle would send a header byte every 100 ms for 4 s; it stops at
# the first write that fails, and says how many it sent. Cut while it still
# trickles (fewer than 40 bytes) is the slow-request cut, measured from the
# first byte; never before the idle timeout.
# t0 is read before the connection exists, so the server's accept (where its
# clock starts) comes after it and a slow host can only lengthen el_ms.
t0=$(date +%s%N)
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
( trap '' PIPE; n=0; for _ in $(seq 1 40); do printf 'X' >&3 2>/dev/null || break; n=$((n + 1)); sleep 0.1; done; echo "$n" >"$TMP/trickled" ) &
trickle=$!
printf 'GET /health HTTP/1.1\r\nHost: a\r\nX-Slow: ' >&3
rc=0; got=$(timeout 8 cat <&3) || rc=$?
el_ms=$((($(date +%s%N) - t0) / 1000000))
wait "$trickle" || true
exec 3<&- 3>&-
checkx "slowloris: headers trickled for 4 s are cut by the server (${el_ms} ms), unanswered" \
  '[ -z "$got" ] && [ "$rc" -eq 0 ] && [ "$el_ms" -ge 500 ]'
checkx "  ... while they still trickled ($(cat "$TMP/trickled") of 40 bytes sent)" '[ "$(cat "$TMP/trickled")" -lt 40 ]'
cuts0=$(metric sim_idle_cuts_total)
t0=$(date +%s%N)
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
rc=0; got=$(timeout 8 cat <&3) || rc=$?
el_ms=$((($(date +%s%N) - t0) / 1000000))
exec 3<&- 3>&-
checkx "an idle connection is closed by the server (not by the 8 s timeout), after the idle timeout (${el_ms} ms)" '[ -z "$got" ] && [ "$rc" -eq 0 ] && [ "$el_ms" -ge 500 ]'
# The server's own view: every cut so far (stall, slowloris, idle) came after
# at least the configured silence, by its clock from the stamp that armed it.
check "  ... counted by the server as an idle cut ($cuts0 -> $(metric sim_idle_cuts_total))" \
  [ "$(metric sim_idle_cuts_total)" -gt "$cuts0" ]
cut_min=$(metric sim_idle_cut_min_seconds)
checkx "  ... and no idle cut came before 500 ms by the server's clock (shortest ${cut_min} s)" \
  "awk -v m='$cut_min' 'BEGIN { exit !(m >= 0.5) }'"

# --- a client that never reads is dropped once 64k wait for it
nfds() { find "/proc/$SIM_PID_f/fd" -mindepth 1 -maxdepth 1 | wc -l; }
base=$(nfds)
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
REQ=$'POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: 46\r\n\r\n{"prompt":"a","max_tokens":30000,"stream":true}'
( trap '' PIPE; for _ in $(seq 1 400); do printf '%s' "$REQ" >&3 2>/dev/null || exit 0; done ) || true
# Readiness: the server has dropped the connection (its socket is gone).
dropped=no
for _ in $(seq 1 100); do [ "$(nfds)" -le "$base" ] && { dropped=yes; break; }; sleep 0.05; done
exec 3<&- 3>&-
# The peak resident set (VmHWM) over the server's whole life so far.
hwm_kb=$(awk '/VmHWM/ { print $2 }' "/proc/$SIM_PID_f/status")
check "a client that never reads is dropped by the server" [ "$dropped" = yes ]
check "  ... and server memory stayed bounded throughout (peak RSS ${hwm_kb} kB < 60 MB)" [ "$hwm_kb" -lt 60000 ]
check "the server still answers" [ "$(code "$URL/health")" = 200 ]

# --- a long stream to a peer that never reads does not keep its socket forever
base=$(nfds)
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
B='{"prompt":"a","max_tokens":30000,"stream":true}'
printf 'POST /v1/completions HTTP/1.1\r\nHost: a\r\nX-Sim-Fail: midstream_drop\r\nContent-Length: %d\r\n\r\n%s' "${#B}" "$B" >&3
gone=no
for _ in $(seq 1 60); do sleep 0.1; [ "$(nfds)" -le "$base" ] && { gone=yes; break; }; done
exec 3<&- 3>&-
check "a long stream to a peer that never reads is closed by the idle timeout" [ "$gone" = yes ]
stop_sim f
check "SIGTERM: exit 0" [ "$STOP_RC" -eq 0 ]

# --- random injection at a rate
start_sim r --failure-injection-rate 100 --failure-types rate_limit,unavailable
codes=$(for i in 1 2 3 4 5 6 7 8 9 10; do code "$URL/v1/completions" -d '{"prompt":"a"}'; echo; done | sort -u | tr '\n' ' ')
checkx "rate 100% over rate_limit,unavailable: only 429 and 503 ($codes)" '[ "$codes" = "429 503 " ] || [ "$codes" = "429 " ] || [ "$codes" = "503 " ]'
check "the counters add up to 10" [ $(($(metric 'sim_injected_faults_total{type="rate_limit"}') + $(metric 'sim_injected_faults_total{type="unavailable"}'))) -eq 10 ]
stop_sim r
finish
