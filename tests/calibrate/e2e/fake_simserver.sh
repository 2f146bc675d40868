#!/usr/bin/env bash
# A stand-in for simserver in calibrate's end-to-end tests: reports a port as
# simserver does (first stdout line), records its pid, and waits to be stopped.
[ -n "${FAKE_SIM_PIDFILE:-}" ] && echo $$ > "$FAKE_SIM_PIDFILE"
echo "listening http://127.0.0.1:9"
exec sleep 300
