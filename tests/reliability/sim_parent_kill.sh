#!/usr/bin/env bash
# simserver's parent SIGKILLed with 2 workers: it cannot forward a stop, so
# the kernel must end them (rb_proc: PR_SET_PDEATHSIG). Checked by the
# workers' own pids: both are gone within a bounded wait, and the port is
# free again (a new simserver binds it). Before the shared process
# lifecycle, the workers kept serving the port with no parent to reap them.
source "$(dirname "$0")/lib.sh"

start_sim two --workers 2
# The workers: the parent's children (pgrep -P), both running.
pids=""
for _ in $(seq 1 100); do
  pids=$(pgrep -P "$SIM_PID" | tr '\n' ' ')
  [ "$(wc -w <<<"$pids")" -eq 2 ] && break
  sleep 0.05
done
[ "$(wc -w <<<"$pids")" -eq 2 ] || fail "simserver --workers 2 has children '$pids', want 2"
CHILDREN+=($pids)
curl -sSf --max-time 5 "$SIM_URL/health" >/dev/null || fail "GET /health before the kill"

kill -9 "$SIM_PID"
gone=0
for _ in $(seq 1 100); do # at most 5 s
  alive=0
  for p in $pids; do
    # a zombie is gone too: it serves nothing and holds no socket
    st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null || echo X)
    [ "$st" = X ] || [ "$st" = Z ] || alive=$((alive + 1))
  done
  if [ "$alive" -eq 0 ]; then gone=1; break; fi
  sleep 0.05
done
[ "$gone" -eq 1 ] || fail "simserver workers $pids still alive 5 s after their parent was SIGKILLed"
! curl -s --max-time 2 "$SIM_URL/health" >/dev/null || fail "the port still answers after the workers died"
# The port is free: a new simserver listens on it.
port=$SIM_PORT
"$SIMSERVER" --port "$port" >"$WORK/again.out" 2>"$WORK/again.err" &
again=$!
CHILDREN+=("$again")
for _ in $(seq 1 100); do grep -q '^listening ' "$WORK/again.out" 2>/dev/null && break; sleep 0.05; done
grep -q "^listening http://127.0.0.1:$port\$" "$WORK/again.out" || fail "the port $port is not free again: $(cat "$WORK/again.err")"
pass "simserver's parent SIGKILLed: both workers gone, the port $port free again"
