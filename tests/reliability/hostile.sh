#!/usr/bin/env bash
# loadgen against a hostile server (rel_hostile): for every way a server can
# misbehave, loadgen finishes in bounded time, counts every request as failed
# in the expected class, sends each request exactly once (no silent re-send),
# never follows a redirect off the host, and its memory stays bounded against
# an endless stream. Usage: hostile.sh MODE (see rel_hostile).
source "$(dirname "$0")/lib.sh"
HOSTILE="$RB_BUILD_DIR/tests/reliability/rel_hostile"
[ -x "$HOSTILE" ] || fail "no $HOSTILE (build the rel_hostile target)"

# start_hostile MODE TAG: sets H_URL and H_PID (output in h-TAG.out).
start_hostile() {
  "$HOSTILE" "$1" 60 >"$WORK/h-$2.out" 2>"$WORK/h-$2.err" &
  H_PID=$!
  CHILDREN+=("$H_PID")
  for _ in $(seq 1 100); do
    # (the file may not exist yet: the shell in the background has not run)
    H_URL=$(sed -n '1s|^listening \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' "$WORK/h-$2.out" 2>/dev/null || true)
    [ -n "$H_URL" ] && return 0
    kill -0 "$H_PID" 2>/dev/null || fail "rel_hostile $1 exited: $(cat "$WORK/h-$2.err")"
    sleep 0.05
  done
  fail "rel_hostile $1 did not print its address"
}

# The class loadgen must give each misbehaviour.
declare -A WANT=([close]=reset [rst]=reset [hang]=timeout [garbage]=other [badchunk]=midstream
  [endless]=timeout [hugeheader]=other [nonjson]=malformed [redirect]=http_302)
mode=${1:?usage: hostile.sh close|rst|hang|garbage|badchunk|endless|hugeheader|nonjson|redirect}
want=${WANT[$mode]:-}
[ -n "$want" ] || fail "unknown mode '$mode'"
N=50
for k in 2 0; do
  start_hostile "$mode" "$mode-$k"
  out="$WORK/$mode-$k.json"
  rc=0
  # 50 requests over 0.5 s, each bounded by 1 s (5 s for the 256 KiB header,
  # which curl refuses once it has read 100 KiB: under a sanitizer on a busy
  # host that reading took over 1 s for 14 of 50): 20 s is a hang.
  rt=1s
  [ "$mode" != hugeheader ] || rt=5s
  /usr/bin/time -f '%M' -o "$WORK/maxrss" timeout -s KILL 20 "$LOADGEN" --base-url "$H_URL" \
    --num-workers $k --request-rate 100 --num-prompts $N --random-input-len 8 --random-output-len 8 \
    --request-timeout "$rt" --quiet --no-progress --save-result --save-detailed --result-dir "$WORK" \
    --server-metrics off --result-filename "$mode-$k.json" 2>"$WORK/lg.err" || rc=$?
  [ "$rc" -ne 137 ] || fail "$mode (k=$k): loadgen hung (killed after 20 s)"
  [ "$rc" -eq 0 ] || { cat "$WORK/lg.err" >&2; fail "$mode (k=$k): loadgen exited $rc"; }
  ! grep -q 'Sanitizer\|runtime error' "$WORK/lg.err" || { cat "$WORK/lg.err" >&2; fail "$mode: sanitizer report"; }
  accounted "$out"
  [ "$(jnum "$out" .dispatched)" -eq $N ] || fail "$mode (k=$k): dispatched $(jnum "$out" .dispatched) of $N"
  got=$(jq -r --arg c "$want" '.failures_by_class[$c] // 0' "$out")
  [ "$got" -eq $N ] || fail "$mode (k=$k): expected $N x $want, got $(jq -c .failures_by_class "$out")"
  [ "$(wc -l <"${out%.json}.jsonl")" -eq $N ] || fail "$mode (k=$k): $(wc -l <"${out%.json}.jsonl") per-request records"
  kill -TERM "$H_PID"
  wait "$H_PID" || fail "rel_hostile $mode exited $?"
  served=$(sed -n 's/^served conns=[0-9]* requests=\([0-9]*\)$/\1/p' "$WORK/h-$mode-$k.out")
  # Exactly one request each: no retry, no re-send, no redirect followed
  # (the scrape of the server's /metrics is off: it would add its GETs).
  [ "$served" = $N ] || fail "$mode (k=$k): the server received ${served:-?} requests for $N dispatched"
  rss=$(cat "$WORK/maxrss")
  # The largest loadgen process (coordinator or a worker): an endless
  # stream must not grow it (each response is parsed as it arrives).
  [ "$rss" -lt 200000 ] || fail "$mode (k=$k): loadgen max RSS $rss kB"
  fig "hostile=$mode k=$k class=$want count=$got served=$served loadgen_max_rss_kb=$rss"
done
pass "hostile server, $mode: k=2 and k=0, all $N requests failed once as $want, no hang"
