# simserver on a free loopback port, for the tests and the benchmarks: the
# one start helper (sourced, not run). Each suite's start_sim wraps it with
# its own bookkeeping (where its files go, its list of children to kill).
#   sim_start DIR NAME SIMSERVER [flags...]
#       runs SIMSERVER --port 0 flags, stdout in DIR/NAME.out and stderr in
#       DIR/NAME.err, prefixed by $SIM_WRAP when set (valgrind); sets SIM_PID
#       at once, and SIM_PORT and SIM_URL when the first line says
#       'listening http://127.0.0.1:PORT' (or [::1] with --host ::1). Waits SIM_START_TRIES x 50 ms
#       (default 100: 5 s). Returns 0, or 1 with the reason on stderr (the
#       server exited, showing its stderr, or said nothing in time).
# shellcheck shell=bash
sim_start() {
  local dir=$1 name=$2 bin=$3
  shift 3
  ${SIM_WRAP:-} "$bin" --port 0 "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
  SIM_PID=$!
  SIM_PORT="" SIM_URL=""
  local line
  for _ in $(seq 1 "${SIM_START_TRIES:-100}"); do
    line=$(head -n 1 "$dir/$name.out" 2>/dev/null || true)
    # a loopback address: 127.0.0.1, or [::1] (--host ::1)
    if [[ "$line" =~ ^listening\ http://(127\.0\.0\.1|\[::1\]):([0-9]+)$ ]]; then
      SIM_PORT=${BASH_REMATCH[2]}
      SIM_URL="http://${BASH_REMATCH[1]}:$SIM_PORT"
      return 0
    fi
    if ! kill -0 "$SIM_PID" 2>/dev/null; then
      cat "$dir/$name.err" >&2
      echo "simserver $name exited at start" >&2
      return 1
    fi
    sleep 0.05
  done
  echo "simserver $name did not print its listening line" >&2
  return 1
}
