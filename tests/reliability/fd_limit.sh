#!/usr/bin/env bash
# loadgen's own descriptor limit (rel_fd_limit): 2 workers with up to 250
# streams in flight (1000 requests/s, 50 tokens at 5 ms each) under
# `ulimit -n 64`. The run is warned at its start, the requests that could
# not get a socket are classed client_fd_limit (not connect, which blames
# the server), and the verdict names the client. With only the soft limit
# at 64 and a hard limit above what the workers need, loadgen raises the
# soft limit and nothing fails.
source "$(dirname "$0")/lib.sh"
start_sim fd --inter-token-latency 5ms
flags=(--base-url "$SIM_URL" --num-workers 2 --request-rate 1000 --duration 1s --random-input-len 8
  --random-output-len 50 --quiet --no-progress --save-result --result-dir "$WORK")

# 1. Soft and hard limit at 64.
rc=0
(ulimit -n 64 && exec timeout -s KILL 60 "$LOADGEN" "${flags[@]}" --result-filename hard.json) 2>"$WORK/hard.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/hard.err" >&2; fail "ulimit -n 64: exit $rc"; }
grep -q "warning: --max-connections-per-worker 512 needs about .* the limit is 64" "$WORK/hard.err" ||
  fail "ulimit -n 64: no warning at the start: $(cat "$WORK/hard.err")"
r="$WORK/hard.json"
accounted "$r"
fd=$(jq '.failures_by_class.client_fd_limit // 0' "$r")
conn=$(jq '.failures_by_class.connect // 0' "$r")
[ "$fd" -gt 0 ] || fail "ulimit -n 64: no request classed client_fd_limit ($(jq -c .failures_by_class "$r"))"
[ "$conn" -eq 0 ] || fail "ulimit -n 64: $conn requests blamed on connect ($(jq -c .failures_by_class "$r"))"
[ "$(jq -r .client_bias.cause "$r")" = client_fd_limit ] ||
  fail "ulimit -n 64: the verdict's cause is $(jq -r .client_bias.cause "$r")"
jq -r .client_bias.reason "$r" | grep -q "descriptor limit" || fail "ulimit -n 64: the verdict does not name the limit: $(jq -r .client_bias.reason "$r")"
[ "$(jq -r .client_bias.verdict "$r")" = BIASED ] || fail "ulimit -n 64: verdict $(jq -r .client_bias.verdict "$r")"
pass "ulimit -n 64: warned, $fd requests classed client_fd_limit, 0 connect, verdict names the client"

# 2. Soft limit 64 under a hard limit of 4096: raised, nothing fails.
rc=0
(ulimit -Hn 4096 2>/dev/null || true
  hard=$(ulimit -Hn)
  [ "$hard" = unlimited ] || [ "$hard" -ge 1024 ] || { echo "hard limit $hard: cannot make the case" >&2; exit 3; }
  ulimit -Sn 64 && exec timeout -s KILL 60 "$LOADGEN" "${flags[@]}" --result-filename soft.json) 2>"$WORK/soft.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/soft.err" >&2; fail "ulimit -Sn 64: exit $rc"; }
r="$WORK/soft.json"
accounted "$r"
[ "$(jnum "$r" .failed)" -eq 0 ] || fail "ulimit -Sn 64: $(jnum "$r" .failed) failed ($(jq -c .failures_by_class "$r")): the soft limit was not raised"
! grep -q "warning: --max-connections" "$WORK/soft.err" || fail "ulimit -Sn 64: warned although the soft limit could be raised"
pass "ulimit -Sn 64 under a higher hard limit: raised, $(jnum "$r" .completed) completed, none failed"
