#!/usr/bin/env bash
# Traffic never leaves for a proxy: with http_proxy, HTTP_PROXY, ALL_PROXY and
# all_proxy pointing at a listener of ours, every request still reaches the
# simulator directly, and the listener is never connected to.
source "$(dirname "$0")/lib.sh"
start_sim sim
# A listener that records every connection it accepts (bash's coproc-free
# way: a background nc would need netcat; use python3 when it is there).
command -v python3 >/dev/null || skip "python3 is not installed"
python3 - "$WORK/proxy.port" "$WORK/proxy.log" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(30)
try:
    while True:
        c, _ = s.accept()
        open(sys.argv[2], "a").write("connection\n")
        c.close()
except OSError:
    pass
PY
CHILDREN+=($!)
for _ in $(seq 1 100); do [ -s "$WORK/proxy.port" ] && break; sleep 0.05; done
[ -s "$WORK/proxy.port" ] || fail "the proxy listener did not start"
proxy="http://127.0.0.1:$(cat "$WORK/proxy.port")"
http_proxy=$proxy HTTP_PROXY=$proxy ALL_PROXY=$proxy all_proxy=$proxy https_proxy=$proxy \
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 100 --num-prompts 50 \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename p.json || fail "loadgen exited $?"
[ "$(jnum "$WORK/p.json" .completed)" -eq 50 ] || fail "completed $(jnum "$WORK/p.json" .completed) of 50"
[ ! -s "$WORK/proxy.log" ] || fail "the proxy got $(wc -l <"$WORK/proxy.log") connections"
echo "rel_proxy: 50 requests reached the simulator, none the proxy"
