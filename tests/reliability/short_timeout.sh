#!/usr/bin/env bash
# A 1 ms request timeout against a server that accepts and never answers
# (rel_short_timeout): curl gives up while it is still connecting and closes
# the socket, and no worker may die of it (libuv aborts on an epoll_ctl of a
# closed descriptor when the poll handle outlives the socket). RUNS runs
# (default 20) with 2 workers; each must exit 0 with every request
# dispatched once and counted failed.
source "$(dirname "$0")/lib.sh"
HOSTILE="$RB_BUILD_DIR/tests/reliability/rel_hostile"
[ -x "$HOSTILE" ] || fail "no $HOSTILE (build the rel_hostile target)"
RUNS=${RUNS:-20}
N=50

"$HOSTILE" hang 300 >"$WORK/h.out" 2>"$WORK/h.err" &
H_PID=$!
CHILDREN+=("$H_PID")
URL=
for _ in $(seq 1 100); do
  URL=$(sed -n '1s|^listening \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' "$WORK/h.out" 2>/dev/null || true)
  [ -n "$URL" ] && break
  kill -0 "$H_PID" 2>/dev/null || fail "rel_hostile exited: $(cat "$WORK/h.err")"
  sleep 0.05
done
[ -n "$URL" ] || fail "rel_hostile did not print its address"

for i in $(seq 1 "$RUNS"); do
  out="$WORK/t$i.json"
  rc=0
  timeout -s KILL 30 "$LOADGEN" --base-url "$URL" --num-workers 2 --request-rate 100 \
    --num-prompts $N --random-input-len 8 --random-output-len 8 --request-timeout 1ms \
    --quiet --no-progress --save-result --result-dir "$WORK" --result-filename "t$i.json" \
    2>"$WORK/lg$i.err" || rc=$?
  [ "$rc" -ne 137 ] || fail "run $i: loadgen hung (killed after 30 s)"
  if grep -q 'killed by signal\|Sanitizer\|runtime error' "$WORK/lg$i.err"; then
    cat "$WORK/lg$i.err" >&2
    fail "run $i of $RUNS: a worker died"
  fi
  [ "$rc" -eq 0 ] || { cat "$WORK/lg$i.err" >&2; fail "run $i: loadgen exited $rc"; }
  accounted "$out"
  [ "$(jnum "$out" .dispatched)" -eq $N ] || fail "run $i: dispatched $(jnum "$out" .dispatched) of $N"
  [ "$(jnum "$out" .failed)" -eq $N ] || fail "run $i: $(jnum "$out" .failed) of $N failed"
done
fig "short_timeout runs=$RUNS workers=2 timeout_ms=1 aborts=0"
pass "1 ms timeout against a silent server: $RUNS runs of 2 workers, no abort, every request counted"
