#!/usr/bin/env bash
# Hostile paths for scripts/plot_run.sh: every path it writes into its
# gnuplot script must stay a path. For each output folder (and a result file
# inside it) named with a quote, a gnuplot system() call, a backquote
# command, a shell substitution, a macro, a datablock '$', a backslash, a
# double quote or a leading '-': exit 0, the three plots drawn in that
# folder, and no command run (the payloads would create PWNED* files).
# A path with a line break is refused (exit 2, with a message).
source "$(dirname "$0")/lib.sh"
PLOT="$(cd "$(dirname "$0")/../.." && pwd)/scripts/plot_run.sh"
[ -r "$PLOT" ] || fail "no $PLOT"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed (the payloads can only run inside gnuplot)"
cd "$WORK" || exit 1
cat >r.json <<'EOF'
{"stages":[
 {"stage":1,"request_rate":10,"achieved_rate":9.9,"p50_ttft_ms":5,"p99_ttft_ms":9,"p50_ntpot_ms":1,
  "p99_ntpot_ms":2,"output_throughput":100,"median_schedule_lag_ms":0.1,"p99_schedule_lag_ms":0.3,
  "completed":100,"failed":0},
 {"stage":2,"request_rate":20,"achieved_rate":19.9,"p50_ttft_ms":6,"p99_ttft_ms":12,"p50_ntpot_ms":1.2,
  "p99_ntpot_ms":2.5,"output_throughput":200,"median_schedule_lag_ms":0.2,"p99_schedule_lag_ms":0.5,
  "completed":200,"failed":0}]}
EOF
names=(
  "o'brien"
  "o'; system('touch PWNED1'); print '"
  "o\"; system(\"touch PWNED2\"); print \""
  'a`touch PWNED3`b'
  '$(touch PWNED4)'
  '@GPVAL_PWD'
  '$x'
  'back\slash'
  '-dash'
  "o'\\'; system('touch PWNED5'); print '"
)
n=0
for d in "${names[@]}"; do
  n=$((n + 1))
  mkdir -p -- "./$d"
  cp r.json "./$d/r.json"
  rc=0
  bash "$PLOT" "./$d/r.json" "./$d" >"out$n" 2>&1 || rc=$?
  pwned=$(find "$WORK" -type f -name 'PWNED*' | head -n 3)
  [ -z "$pwned" ] || fail "the folder name '$d' ran a command (it created $pwned)"
  [ "$rc" -eq 0 ] || fail "plot_run with folder '$d': exit $rc: $(cat "out$n")"
  for png in latency_profile throughput schedule_lag; do
    [ -s "./$d/$png.png" ] || fail "plot_run with folder '$d': no $png.png there: $(cat "out$n")"
  done
  # The same folder given as a bare relative path (no ./).
  rc=0
  bash "$PLOT" "$d/r.json" "$d" >"out$n" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || fail "plot_run with folder '$d' (bare): exit $rc: $(cat "out$n")"
done
pwned=$(find "$WORK" -type f -name 'PWNED*' | head -n 3)
[ -z "$pwned" ] || fail "a path ran a command: $pwned"
rc=0
bash "$PLOT" r.json "$(printf 'line\nbreak')" >"outnl" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q 'line break' outnl || fail "a folder with a line break: exit $rc, $(cat outnl)"
[ ! -e "$(printf 'line\nbreak')" ] || fail "a folder with a line break was created before the refusal"
pass "plot_run: ${#names[@]} hostile folder names plotted as paths, none ran a command; a line break refused"
