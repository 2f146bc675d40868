#!/usr/bin/env bash
# bench_cpu.sh: loadgen's CPU per streamed request against wrk's, at equal
# concurrency, side by side against one simserver (zero latency, 16 output
# tokens, --workers 1); then, optionally, the highest open-loop rate one
# loadgen worker sustains (scripts/bench_loadgen.sh's criteria) and the RSS
# of all loadgen processes over an open-loop run with --save-detailed.
#
#   scripts/bench_cpu.sh [--build-dir DIR] [--out DIR] [--duration S] [--reps N]
#        [--connections N] [--rate-search | --no-rate-search]
#        [--rss-duration S] [--rss-rate R]   (--rss-duration 0: no RSS run)
#        [--compare BUILD_DIR]   (another build's loadgen, e.g. of the previous
#                                 commit, alternated in the same run)
#        [--loadgen-args "..."]  (extra flags for the rate search's steps,
#                                 e.g. "--realtime-priority 10" on a loaded host)
#        [--rate-workers "1 2"]  (the rate search's worker counts; default 1)
#        [--scrape-compare]      (also loadgen with --server-metrics off, alternated:
#                                 the scraper's cost, which the default run,
#                                 scraping the target's /metrics each second,
#                                 carries; the workers' own busy time per
#                                 request is given for both)
#        [--tick D]              (also loadgen with --batch-tick D, alternated in
#                                 the closed loop, and a second rate search
#                                 with it into DIR/cpu-rate-tick/)
#        [--prompt-pool N]       (--prompt-pool-size N for the closed-loop and RSS runs:
#                                 by default a duration-bound closed loop, and
#                                 an open loop of more than 16,384 requests,
#                                 make each prompt when it is sent (no pool);
#                                 a pool of N is built before the run and its
#                                 pages, shared by the worker and the
#                                 coordinator, count twice in the RSS sum)
#
# CPU: user + system time of the client's whole process tree (bash's `time`,
# which counts every waited-for child), divided by the requests it completed.
# loadgen: --num-workers 1 --max-concurrency C (closed loop); wrk: -t1 -cC.
# Both send X-Sim-Stamp: 1, so simserver answers both with the same stream
# shape (a ": t=" comment before each event). Server on CPU 0, clients on
# CPU 1 when the host has two. The clients alternate, --reps times; the
# record gives each run, the medians and the ratio of the medians.
# Writes DIR/cpu.md (and DIR/cpu-rate/ for the rate search); loopback only;
# every run is bounded by its duration.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="${RB_BUILD_DIR:-$here/build}"
out="$here/results/loadgen"
duration=5
reps=3
conns=64
rate_search=1
rss_duration=60
rss_rate=5000
compare=""
lg_args=""
rate_workers=1
pool=""
scrape_cmp=0
tick=""
cmdline="scripts/bench_cpu.sh"
[ $# -eq 0 ] || cmdline+=$(printf ' %q' "$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    --rate-search) rate_search=1; shift ;;
    --no-rate-search) rate_search=0; shift ;;
    --rss-duration) rss_duration=$2; shift 2 ;;
    --rss-rate) rss_rate=$2; shift 2 ;;
    --compare) compare=$2; shift 2 ;;
    --loadgen-args) lg_args=$2; shift 2 ;;
    --rate-workers) rate_workers=$2; shift 2 ;;
    --prompt-pool) pool=$2; shift 2 ;;
    --scrape-compare) scrape_cmp=1; shift ;;
    --tick) tick=$2; shift 2 ;;
    *) echo "bench_cpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for v in "$duration" "$reps" "$conns" "$rss_duration" "$rss_rate"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "bench_cpu.sh: '$v' is not a whole number" >&2; exit 2; }
done
[ -z "$tick" ] || [[ "$tick" =~ ^[0-9]+(us|ms)$ ]] || { echo "bench_cpu.sh: --tick: '$tick' is not a duration such as 250us or 1ms" >&2; exit 2; }
[ -z "$pool" ] || [[ "$pool" =~ ^[0-9]+$ && "$pool" -ge 1 ]] || { echo "bench_cpu.sh: --prompt-pool: '$pool' is not a whole number >= 1" >&2; exit 2; }
for v in $rate_workers; do
  [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -ge 1 ] && [ "$v" -le 64 ] || { echo "bench_cpu.sh: --rate-workers: '$v' is not a worker count (1..64)" >&2; exit 2; }
done
[ "$duration" -ge 1 ] && [ "$duration" -le 600 ] || { echo "bench_cpu.sh: --duration must be 1..600 s" >&2; exit 2; }
[ "$reps" -ge 1 ] && [ "$reps" -le 20 ] || { echo "bench_cpu.sh: --reps must be 1..20" >&2; exit 2; }
[ "$rss_duration" -le 3600 ] || { echo "bench_cpu.sh: --rss-duration must be at most 3600 s" >&2; exit 2; }
# wrk is for this benchmark only: set-up installs it on request.
if ! command -v wrk >/dev/null; then
  build=$("$here/scripts/setup.sh" --build-dir "$build" --extra wrk | tail -n 1)
fi
for tool in wrk jq; do
  command -v "$tool" >/dev/null || { echo "bench_cpu.sh: '$tool' is needed" >&2; exit 2; }
done
loadgen="$build/loadgen/loadgen"
simserver="$build/simserver/simserver"
[ -x "$loadgen" ] && [ -x "$simserver" ] || { echo "bench_cpu.sh: build first: $loadgen, $simserver" >&2; exit 2; }
cmp_loadgen=""
if [ -n "$compare" ]; then
  cmp_loadgen="$compare/loadgen/loadgen"
  [ -x "$cmp_loadgen" ] || { echo "bench_cpu.sh: --compare: no loadgen at $cmp_loadgen" >&2; exit 2; }
fi
pin_srv=() pin_cli=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_srv=(taskset -c 0)
  pin_cli=(taskset -c 1)
fi

mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/lg-cpu.XXXXXX")
sim_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

"${pin_srv[@]}" "$simserver" --port 0 --workers 1 >"$work/sim.out" 2>"$work/sim.err" &
sim_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n '1s/^listening //p' "$work/sim.out" 2>/dev/null || true)
  [ -n "$url" ] && break
  sleep 0.05
done
[ -n "$url" ] || { cat "$work/sim.err" >&2; echo "bench_cpu.sh: simserver did not start" >&2; exit 1; }

# wrk's request: what loadgen sends (32 prompt words, 16 tokens, streamed
# with usage), with the same stamp header.
prompt=$(printf 'tok %.0s' $(seq 1 32))
body="{\"model\":\"sim-model\",\"prompt\":\"${prompt% }\",\"max_tokens\":16,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"
cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Sim-Stamp"] = "1"
EOF

TIMEFORMAT='%3U %3S'
# run_wrk: prints "requests user_s sys_s bad"
run_wrk() {
  local t
  t=$( { time "${pin_cli[@]}" wrk -t1 -c "$conns" -d "${duration}s" -s "$work/post.lua" "$url/v1/completions" >"$work/wrk.txt" 2>&1; } 2>&1 )
  local n bad
  n=$(awk '/requests in/ { print $1 }' "$work/wrk.txt")
  bad=$(awk '/Non-2xx or 3xx responses:/ { b += $NF } /Socket errors:/ { gsub(",", ""); b += $4 + $6 + $8 + $10 } END { print b + 0 }' "$work/wrk.txt")
  echo "${n:-0} $t $bad"
}
# run_lg [BINARY [FLAG...]]: prints "requests user_s sys_s failed worker_us",
# worker_us: the worker loop's own busy time per completed request (its
# callbacks times their mean service time, from the report).
run_lg() {
  local t res="$work/lg.json" bin=${1:-$loadgen}
  shift || true
  rm -f "$res"
  t=$( { time "${pin_cli[@]}" "$bin" "$@" --base-url "$url" --num-workers 1 --max-concurrency "$conns" \
    --duration "${duration}s" --random-input-len 32 --random-output-len 16 --seed 1 \
    --quiet --no-progress --save-result --result-dir "$work" --result-filename lg.json \
    --request-timeout 10s --drain-timeout 2s ${pool:+--prompt-pool-size "$pool"} >>"$work/lg.log" 2>&1; } 2>&1 )
  if [ ! -s "$res" ]; then echo "0 $t 1 nan"; return; fi
  echo "$(jq -r '.completed' "$res") $t $(jq -r '.failed' "$res") $(jq -r '. as $r | ([$r.client_bias.workers[] | .callbacks * .mean_service_us] | add) as $b | if $r.completed > 0 then ($b / $r.completed * 100 | round / 100) else "nan" end' "$res")"
}
per_req() { awk -v n="$1" -v u="$2" -v s="$3" 'BEGIN { if (n > 0) printf "%.2f", (u + s) * 1e6 / n; else print "nan" }'; }
med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "nan" }'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rows=() wrk_us=() lg_us=() ratios=() wrk_rate=() lg_rate=() cmp_us=()
off_us=() off_w=() on_w=() off_ratios=()
tick_us=() tick_w=() tick_ratios=()
for i in $(seq 1 "$reps"); do
  # Alternate which client goes first, so a drift in the host's load does
  # not always fall on the same one.
  off=""
  [ "$scrape_cmp" = 1 ] && off=off
  tk=""
  [ -n "$tick" ] && tk=tick
  order="wrk lg${cmp_loadgen:+ cmp}${off:+ off}${tk:+ tick}"
  [ $((i % 2)) -eq 0 ] && order="${tk:+tick }${off:+off }${cmp_loadgen:+cmp }lg wrk"
  for c in $order; do
    if [ "$c" = wrk ]; then
      read -r n u s bad < <(run_wrk)
      x=$(per_req "$n" "$u" "$s"); w_x=$x
      wrk_us+=("$x"); wrk_rate+=("$((n / duration))")
      rows+=("| $i | wrk -t1 -c$conns | $n | $((n / duration)) | $u | $s | $x | $bad |")
    elif [ "$c" = off ]; then
      read -r n u s bad wb < <(run_lg "$loadgen" --server-metrics off)
      x=$(per_req "$n" "$u" "$s"); o_x=$x
      off_us+=("$x"); off_w+=("$wb")
      rows+=("| $i | loadgen -k1 -C$conns --server-metrics off | $n | $((n / duration)) | $u | $s | $x | $bad |")
    elif [ "$c" = tick ]; then
      read -r n u s bad wb < <(run_lg "$loadgen" --batch-tick "$tick")
      x=$(per_req "$n" "$u" "$s"); t_x=$x
      tick_us+=("$x"); tick_w+=("$wb")
      rows+=("| $i | loadgen -k1 -C$conns --batch-tick $tick | $n | $((n / duration)) | $u | $s | $x | $bad |")
    elif [ "$c" = cmp ]; then
      read -r n u s bad wb < <(run_lg "$cmp_loadgen")
      x=$(per_req "$n" "$u" "$s")
      cmp_us+=("$x")
      rows+=("| $i | loadgen of --compare -k1 -C$conns | $n | $((n / duration)) | $u | $s | $x | $bad |")
    else
      read -r n u s bad wb < <(run_lg)
      x=$(per_req "$n" "$u" "$s"); l_x=$x
      lg_us+=("$x"); lg_rate+=("$((n / duration))"); on_w+=("$wb")
      rows+=("| $i | loadgen -k1 -C$conns | $n | $((n / duration)) | $u | $s | $x | $bad |")
    fi
    echo "  rep $i $c: $n requests, $x us CPU each" >&2
  done
  ratios+=("$(awk -v a="$l_x" -v b="$w_x" 'BEGIN { printf "%.2f", a / b }')")
  [ -z "$tick" ] || tick_ratios+=("$(awk -v a="$t_x" -v b="$l_x" 'BEGIN { printf "%.3f", a / b }')")
  [ "$scrape_cmp" = 0 ] || off_ratios+=("$(awk -v a="$l_x" -v b="$o_x" 'BEGIN { printf "%.3f", a / b }')")
done
w_med=$(med "${wrk_us[@]}")
l_med=$(med "${lg_us[@]}")
ratio=$(awk -v a="$l_med" -v b="$w_med" 'BEGIN { printf "%.2f", a / b }')
wr_med=$(med "${wrk_rate[@]}")
lr_med=$(med "${lg_rate[@]}")

# The highest open-loop rate of one worker (and of --rate-workers' other k),
# by bench_loadgen.sh's search.
rate_lines=("not run (--no-rate-search)")
if [ "$rate_search" = 1 ]; then
  rate_lines=()
  RB_BUILD_DIR="$build" "$here/scripts/bench_loadgen.sh" --build-dir "$build" --out "$out/cpu-rate" \
    --workers "$rate_workers" --servers sim --loadgen-args "$lg_args" >"$work/rate.txt" 2>"$work/rate.err" || true
  for k in $rate_workers; do
    best=$(awk -F'|' -v k="$k" '$2 ~ /sim/ && $3 + 0 == k { sub(/^ +/, "", $4); sub(/ +$/, "", $4); print $4 }' "$out/cpu-rate/summary.md" 2>/dev/null | head -n 1)
    if [ "$best" = 0 ] || [[ "$best" == none* ]]; then
      rate_lines+=("k=$k: no rate sustained (${best}): every step missed a criterion (on a loaded host usually the 1 ms lag; see cpu-rate/bench-sim-k$k.jsonl and the load average)")
    elif [[ "$best" =~ ^[0-9]+$ ]]; then
      rate_lines+=("k=$k: $best req/s ($(awk -v a="$best" -v b="$wr_med" 'BEGIN { printf "%.0f", 100 * a / b }')% of wrk's median closed-loop rate above; the goal, for k=1: >= 40%); record: cpu-rate/summary.md")
    else
      rate_lines+=("k=$k: the search gave no result (see its stderr: $(tail -n 1 "$work/rate.err" 2>/dev/null))")
    fi
  done
fi

# The same search with --batch-tick: one worker that wakes on the tick only.
tick_lines=()
if [ "$rate_search" = 1 ] && [ -n "$tick" ]; then
  RB_BUILD_DIR="$build" "$here/scripts/bench_loadgen.sh" --build-dir "$build" --out "$out/cpu-rate-tick" \
    --workers "$rate_workers" --servers sim --loadgen-args "$lg_args --batch-tick $tick" \
    >"$work/rate-tick.txt" 2>"$work/rate-tick.err" || true
  for k in $rate_workers; do
    best=$(awk -F'|' -v k="$k" '$2 ~ /sim/ && $3 + 0 == k { sub(/^ +/, "", $4); sub(/ +$/, "", $4); print $4 }' "$out/cpu-rate-tick/summary.md" 2>/dev/null | head -n 1)
    if [[ "$best" =~ ^[0-9]+$ ]] && [ "$best" != 0 ]; then
      tick_lines+=("k=$k with --batch-tick $tick: $best req/s ($(awk -v a="$best" -v b="$wr_med" 'BEGIN { printf "%.0f", 100 * a / b }')% of wrk's median closed-loop rate); record: cpu-rate-tick/summary.md")
    else
      tick_lines+=("k=$k with --batch-tick $tick: no rate sustained (${best:-no result}; see cpu-rate-tick/)")
    fi
  done
fi

# RSS of every loadgen process (the parent and its workers) over an open-loop
# run with --save-detailed, sampled each second.
rss_rows=()
rss_line="not run (--rss-duration 0)"
if [ "$rss_duration" -gt 0 ]; then
  "${pin_cli[@]}" "$loadgen" --base-url "$url" --num-workers 1 --request-rate "$rss_rate" \
    --duration "${rss_duration}s" --random-input-len 32 --random-output-len 16 --seed 1 \
    --quiet --no-progress --save-result --save-detailed --result-dir "$work" \
    --result-filename rss.json --request-timeout 10s --drain-timeout 2s \
    ${pool:+--prompt-pool-size "$pool"} >>"$work/lg.log" 2>&1 &
  lg_pid=$!
  t=0 first="" last="" peak=0
  while kill -0 "$lg_pid" 2>/dev/null && [ "$t" -le $((rss_duration + 30)) ]; do
    kb=0
    for p in $lg_pid $(pgrep -P "$lg_pid" 2>/dev/null || true); do
      r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || true)
      kb=$((kb + ${r:-0}))
    done
    if [ "$kb" -gt 0 ]; then
      [ -z "$first" ] && [ "$t" -ge 2 ] && first=$kb
      last=$kb
      [ "$kb" -gt "$peak" ] && peak=$kb
      if [ $((t % 10)) -eq 0 ]; then rss_rows+=("| $t | $kb |"); fi
    fi
    sleep 1
    t=$((t + 1))
  done
  kill "$lg_pid" 2>/dev/null || true
  wait "$lg_pid" 2>/dev/null || true
  ach=$(jq -r '.achieved_rate // "nan"' "$work/rss.json" 2>/dev/null || echo nan)
  rss_line="peak ${peak} kB (all loadgen processes; goal < 65536 kB), from ${first:-?} kB at 2 s to ${last:-?} kB at the end; achieved ${ach} req/s"
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$here" diff --quiet HEAD -- loadgen 2>/dev/null || commit="$commit (with uncommitted changes in loadgen/)"
pool_note=""
[ -n "$pool" ] || pool_note=", with its default prompt pool: one prompt per planned request, up to 512 MiB, built before the run and counted in its CPU"
{
  echo "# loadgen CPU per streamed request against wrk"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $commit"
  echo "- host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores online, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr), $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "- load average before: $load_before; after: $load_after (a shared host: other work's CPU shows in every figure, the ratio of one run least)"
  echo "- command: $cmdline"
  echo "- measures: loadgen"
  echo "- server: simserver --port 0 --workers 1 (zero latency)${pin_srv:+, on CPU 0; clients on CPU 1}"
  echo "- loadgen: --num-workers 1 --max-concurrency $conns --duration ${duration}s --random-input-len 32 --random-output-len 16${pool:+ --prompt-pool-size $pool} (closed loop)$pool_note"
  echo "- wrk $(wrk -v 2>&1 | head -n 1 | awk '{ print $2 }'): -t1 -c$conns -d${duration}s, POST of a 32-word prompt, max_tokens 16, streamed with usage, X-Sim-Stamp: 1"
  echo "- CPU: user + sys of the client's process tree (bash time), over its completed requests; loadgen's includes its start-up and report"
  echo
  echo "| rep | client | requests | req/s | user (s) | sys (s) | CPU per request (us) | failed |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  echo
  echo "**CPU per request, median of $reps: loadgen $l_med us, wrk $w_med us: ratio $ratio** (goal <= 2.5; per repetition: ${ratios[*]})."
  echo "Closed-loop rate, median: loadgen $lr_med req/s, wrk $wr_med req/s."
  if [ "$scrape_cmp" = 1 ]; then
    o_med=$(med "${off_us[@]}")
    echo "The scraper (the default run above scrapes the target's /metrics each second, in the coordinator): with \`--server-metrics off\`, $o_med us per request against $l_med us with it (ratio on/off of the medians $(awk -v a="$l_med" -v b="$o_med" 'BEGIN { printf "%.3f", a / b }'); per repetition, measured side by side: ${off_ratios[*]}). The worker loop's own busy time per request (callbacks x mean service time, from the report): median $(med "${on_w[@]}") us scraping, $(med "${off_w[@]}") us not (per repetition: ${on_w[*]} against ${off_w[*]})."
  fi
  if [ -n "$tick" ]; then
    t_med=$(med "${tick_us[@]}")
    echo "With \`--batch-tick $tick\`: $t_med us per request against $l_med us without (ratio of the medians $(awk -v a="$t_med" -v b="$l_med" 'BEGIN { printf "%.3f", a / b }'); per repetition, side by side: ${tick_ratios[*]}); the worker loop's own busy time per request: median $(med "${tick_w[@]}") us ticked, $(med "${on_w[@]}") us not."
  fi
  if [ -n "$cmp_loadgen" ]; then
    c_med=$(med "${cmp_us[@]}")
    echo "The --compare build ($compare, $(git -C "$compare/.." rev-parse --short HEAD 2>/dev/null || echo "its commit unknown")): $c_med us per request, ratio $(awk -v a="$c_med" -v b="$w_med" 'BEGIN { printf "%.2f", a / b }') to wrk."
  fi
  echo
  echo "- highest sustained open-loop rate (bench_loadgen.sh's search, --loadgen-args: ${lg_args:-none}):"
  printf '  - %s\n' "${rate_lines[@]}"
  [ ${#tick_lines[@]} -eq 0 ] || printf '  - %s\n' "${tick_lines[@]}"
  echo "- RSS, open loop at $rss_rate req/s for ${rss_duration}s with --save-detailed${pool:+ --prompt-pool-size $pool}: $rss_line"
  if [ ${#rss_rows[@]} -gt 0 ]; then
    echo
    echo "| t (s) | RSS of all loadgen processes (kB) |"
    echo "| --- | --- |"
    printf '%s\n' "${rss_rows[@]}"
  fi
} >"$work/cpu.md"
mv "$work/cpu.md" "$out/cpu.md.tmp" && mv "$out/cpu.md.tmp" "$out/cpu.md"
cat "$out/cpu.md"
