#!/usr/bin/env bash
# Long credentials reach the server whole: an OPENAI_API_KEY of 1,500 bytes
# and a --header of 3,000 bytes (JWT keys run to kilobytes), not cut at 1 KiB.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rel_lib.sh"
start_rel_server hdr
key=$(head -c 1500 /dev/zero | tr '\0' k)
val=$(head -c 3000 /dev/zero | tr '\0' v)
OPENAI_API_KEY=$key "$LOADGEN" --base-url "$REL_URL/ok" --num-workers 0 --request-rate 50 \
  --num-prompts 5 --random-input-len 8 --random-output-len 4 --quiet --no-progress \
  --header "X-Long:$val" 2>"$WORK/lg.err" || { cat "$WORK/lg.err" >&2; fail "loadgen exited $?"; }
[ "$(wc -l <"$REL_LOG")" -eq 5 ] || fail "the server saw $(wc -l <"$REL_LOG") requests, not 5"
# "Bearer " + the key; the header's value whole
jq -e -s 'all(.[]; .authorization == 1507 and .x_long == 3000)' "$REL_LOG" >/dev/null ||
  fail "headers cut: $(head -n 1 "$REL_LOG")"
pass "a 1,500-byte API key and a 3,000-byte header arrive whole"
