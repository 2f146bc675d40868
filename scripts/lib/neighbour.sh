# The busy neighbour that records and pass rates are measured beside: a loop
# pinned to CPU 0, bounded in time whatever happens to the script that
# started it. Sourced by scripts/pass_rate.sh and results/calibrate/run.sh.
#   neighbour_start NICE DUTY SECONDS   starts it at nice NICE, busy DUTY
#                                       percent of every 100 ms (100: always),
#                                       for at most SECONDS; sets NEIGHBOUR_PID
#   neighbour_stop                      stops it, if it runs (for a trap)
#   neighbour_describe                  one line for a record: what ran beside
NEIGHBOUR_PID=""
NEIGHBOUR_DESC=""
neighbour_start() {
  local nice=$1 duty=$2 secs=$3
  case "$nice:$duty:$secs" in
    *[!0-9:-]* | :* | *::* | *:) echo "neighbour_start: bad NICE DUTY SECONDS '$nice $duty $secs'" >&2; return 2 ;;
  esac
  if [ "$duty" -lt 1 ] || [ "$duty" -gt 100 ] || [ "$secs" -lt 1 ]; then
    echo "neighbour_start: DUTY must be 1-100 and SECONDS >= 1" >&2
    return 2
  fi
  if [ "$duty" -eq 100 ]; then
    timeout "$secs" taskset -c 0 nice -n "$nice" sh -c 'while :; do :; done' &
    NEIGHBOUR_DESC="a busy loop on CPU 0 at nice $nice"
  else
    # bash's microsecond clock: busy DUTY ms, then asleep for the rest of
    # the 100 ms
    taskset -c 0 nice -n "$nice" bash -c 'end=$((SECONDS + $2)); busy=$(($1 * 1000))
      rest=$(printf "0.%03d" $((100 - $1)))
      while [ $SECONDS -lt $end ]; do
        t0=${EPOCHREALTIME/./}; while [ $((${EPOCHREALTIME/./} - t0)) -lt $busy ]; do :; done
        sleep "$rest"; done' neighbour "$duty" "$secs" &
    NEIGHBOUR_DESC="a busy loop pinned to CPU 0 at nice $nice, busy $duty ms of every 100 ms"
  fi
  NEIGHBOUR_PID=$!
}
neighbour_stop() {
  [ -n "$NEIGHBOUR_PID" ] || return 0
  kill "$NEIGHBOUR_PID" 2>/dev/null || true
  wait "$NEIGHBOUR_PID" 2>/dev/null || true
  NEIGHBOUR_PID=""
}
neighbour_describe() { echo "$NEIGHBOUR_DESC"; }
