#!/usr/bin/env bash
# loadgen's coordinator SIGKILLed mid-run with 2 forked workers: it cannot
# clean up, so the kernel must. The workers die with it (PR_SET_PDEATHSIG),
# checked by their own pids; nothing of the run keeps sending to the server;
# and the next run on the same result path is not blocked by what the dead
# run left behind (its lock file; its workers' part files, which it removes
# and names), and writes a whole report. (SIGINT/SIGTERM of the coordinator, the partial report
# marked interrupted, are lifecycle.sh's.)
source "$(dirname "$0")/lib.sh"

# start_time PID: field 22 of /proc/PID/stat (the process's start, in clock
# ticks since boot), empty when there is no such process: a pid with
# another start time is another process.
start_time() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $20 }'; }
# state PID: R, S, D, Z, ... (empty: no such process).
state() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $1 }'; }
# alive PID START: the same process is still there and not a zombie.
alive() {
  local s
  s=$(state "$1")
  [ -n "$s" ] && [ "$s" != Z ] && [ "$(start_time "$1")" = "$2" ]
}
# children PID: the pids whose parent is PID (from /proc/*/stat, field 4).
children() {
  awk -v p="$1" 'FNR == 1 { r = substr($0, index($0, ") ") + 2); split(r, a, " ")
    if (a[2] == p) { f = FILENAME; gsub("[^0-9]", "", f); print f } }' /proc/[0-9]*/stat 2>/dev/null
}
# running: vllm:num_requests_running of the server.
running() { metrics_to "$WORK/m" && awk '/^vllm:num_requests_running/ { printf "%d", $2 }' "$WORK/m"; }

start_sim sim --inter-token-latency 5ms
dir="$WORK/res"
mkdir -p "$dir"

# --- 1. The run to kill: 2 workers, 20 s at 100 req/s, 40-token streams
# (about 0.2 s each, so about 20 are in flight at any moment).
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 20s \
  --random-input-len 8 --random-output-len 40 --quiet --no-progress --save-result --save-detailed \
  --result-dir "$dir" --result-filename k.json 2>"$WORK/k.err" &
lg=$!
CHILDREN+=("$lg")

# Ready when the coordinator has its 2 workers, both have records on disk
# and streams are in flight (at most 10 s: a sanity bound).
workers=()
ready=0
for _ in $(seq 1 200); do
  kill -0 "$lg" 2>/dev/null || { cat "$WORK/k.err" >&2; fail "the run ended before it could be killed"; }
  read -r -a workers <<<"$(children "$lg" | tr '\n' ' ')"
  if [ "${#workers[@]}" -eq 2 ]; then
    n0=$(cat "$dir"/.k.json.w0.*.part 2>/dev/null | grep -c '}$' || true)
    n1=$(cat "$dir"/.k.json.w1.*.part 2>/dev/null | grep -c '}$' || true)
    if [ "$n0" -gt 0 ] && [ "$n1" -gt 0 ] && [ "$(running)" -ge 5 ]; then
      ready=1
      break
    fi
  fi
  sleep 0.05
done
[ "$ready" -eq 1 ] || fail "not ready in 10 s: workers '${workers[*]}', records ${n0:-0}+${n1:-0}, running $(running)"
starts=()
for w in "${workers[@]}"; do
  starts+=("$(start_time "$w")")
  CHILDREN+=("$w") # killed on exit if the test fails with them alive
  [ "$(readlink "/proc/$w/exe")" = "$(readlink -f "$LOADGEN")" ] || fail "child $w of the coordinator is not loadgen"
done
in_flight=$(running)
ls -A "$dir" >"$WORK/before.ls"

kill -KILL "$lg"
rc=0
wait "$lg" 2>/dev/null || rc=$?
[ "$rc" -eq 137 ] || fail "the coordinator exited $rc, not by the SIGKILL (137)"
t0=$(date +%s%N)

# --- 2. Both workers die, by their pids (at most 5 s: PDEATHSIG is sent
# at once, the bound is against a hang, not a latency target).
for i in 0 1; do
  for _ in $(seq 1 100); do alive "${workers[$i]}" "${starts[$i]}" || break; sleep 0.05; done
  alive "${workers[$i]}" "${starts[$i]}" &&
    fail "worker ${workers[$i]} still alive 5 s after its coordinator was SIGKILLed (state $(state "${workers[$i]}"))"
done
el_ms=$((($(date +%s%N) - t0) / 1000000))
# No other process of the run is left (a grandchild, a worker's fork): none
# has the result folder on its command line.
left=$(grep -l -a -F "$dir" /proc/[0-9]*/cmdline 2>/dev/null | grep -v "^/proc/$$/" || true)
for f in $left; do
  p=${f#/proc/}
  p=${p%/cmdline}
  [ "$(state "$p")" = Z ] || [ -z "$(state "$p")" ] || fail "process $p of the killed run is still there: $(tr '\0' ' ' <"$f")"
done
# The server sees every stream of the run end (the kernel closed the
# workers' sockets): nothing keeps loading it.
for _ in $(seq 1 100); do [ "$(running)" -eq 0 ] && break; sleep 0.05; done
[ "$(running)" -eq 0 ] || fail "$(running) requests still running on the server 5 s after the workers died"
pass "coordinator SIGKILLed with $in_flight streams in flight: both workers gone within $el_ms ms, no process left, the server idle"

# --- 3. What the dead run left: no report (it never got to write one), its
# lock file (the lock itself died with the processes) and its part files.
ls -A "$dir" >"$WORK/after.ls"
[ ! -e "$dir/k.json" ] || fail "a report k.json exists after the coordinator was killed"
left_files=$(sed "s/\.$lg\./.PID./" "$WORK/after.ls" | tr '\n' ' ')
fig "coordinator_sigkill in_flight=$in_flight workers_gone_ms=$el_ms left='$left_files'"

# --- 4. The next run on the same result path is not blocked: it exits 0
# and writes a whole report and JSONL, its records matching the report.
rc=0
timeout -s KILL 30 "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --num-prompts 50 \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result --save-detailed \
  --result-dir "$dir" --result-filename k.json 2>"$WORK/next.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/next.err" >&2; fail "the next run on the same path exited $rc"; }
out="$dir/k.json"
jq -e . "$out" >/dev/null || fail "the next run's report is not valid JSON"
accounted "$out"
[ "$(jq -r .interrupted "$out")" = false ] || fail "the next run's report says interrupted: $(jq -r .interrupted "$out")"
d=$(jnum "$out" .dispatched)
[ "$d" -eq 50 ] || fail "the next run dispatched $d, --num-prompts is 50"
[ "$(wc -l <"$dir/k.jsonl")" -eq "$d" ] || fail "the next run's JSONL has $(wc -l <"$dir/k.jsonl") records, dispatched $d"
[ "$(jq -r .index "$dir/k.jsonl" | sort -n | uniq | wc -l)" -eq "$d" ] || fail "the next run's JSONL repeats an index"
[ ! -e "$dir/k.partial.jsonl" ] || fail "the next run wrote a .partial.jsonl"
# It takes and releases the lock, and leaves nothing of its own behind.
[ ! -e "$dir/k.json.lock" ] || fail "the next run left k.json.lock"
mine=$(find "$dir" -name '.k.json.w*.part' -newer "$WORK/after.ls" | wc -l)
[ "$mine" -eq 0 ] || fail "the next run left $mine part files"
# The killed run's part files: removed by the next run, which says so.
before=$(grep -c '^\.k\.json\.w[0-9]*\.[0-9]*\.part$' "$WORK/after.ls" || true)
[ "$before" -eq 2 ] || fail "the killed run left $before part files, expected its 2 workers' ($left_files)"
stale=$(find "$dir" -name '.k.json.w*.part' | wc -l)
[ "$stale" -eq 0 ] || fail "$stale part files of the killed run are still in the folder after the next run"
grep -qF "loadgen: note: removed 2 per-request part files of 'k.json' left by a run that was killed before it merged them" "$WORK/next.err" ||
  { cat "$WORK/next.err" >&2; fail "the next run did not say it removed the killed run's part files"; }
fig "next_run dispatched=$d stale_parts_before=$before stale_parts_after=$stale"
pass "the next run on the same path: exit 0, $d requests, whole report and JSONL; it removed the killed run's $before part files and said so"
stop_sim sim
