#!/usr/bin/env bash
# A stand-in for simserver in calibrate's end-to-end tests: reports a port as
# simserver does (first stdout line), records its pid, and waits to be stopped.
# FAKE_SIM_LOG: when stopped, it appends the CPUs it could run on and its
# nice value (what calibrate set for it once it had started) to that file.
[ -n "${FAKE_SIM_PIDFILE:-}" ] && echo $$ > "$FAKE_SIM_PIDFILE"
log_placement() {
  [ -n "${FAKE_SIM_LOG:-}" ] || return 0
  local cpus nice
  cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$$/status)
  nice=$(sed 's/^.*) //' /proc/$$/stat | cut -d' ' -f17)
  echo "cpus=$cpus nice=$nice" >> "$FAKE_SIM_LOG"
}
trap 'log_placement; kill "$s" 2>/dev/null; exit 0' TERM INT
echo "listening http://127.0.0.1:9"
sleep 300 &
s=$!
wait "$s"
