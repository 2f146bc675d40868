#!/usr/bin/env bash
# The coordination cost of loadgen --mpi on this host: start skew, merge time
# and clock-sync uncertainty against the number of ranks N (oversubscribed on
# this host's cores), against one simserver. Writes the raw results (one JSON
# line per run: the report's mpi block with the run's N, repetition, load
# average) to raw.jsonl and their summary to summary.md, both beside this
# script, under temporary names then renamed.
#   results/scale-out/record.sh [--build DIR] [--ranks "1 2 4 8 16"] [--reps 3]
# DIR is a build with -DRHOBENCH_MPI=ON (default build-mpi). Under root it sets
# Open MPI's run-as-root variables. Each run is 400 requests at 200/s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build="$top/build-mpi" ranks="1 2 4 8 16" reps=3
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    *) echo "record.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
lg="$build/loadgen/loadgen" sim="$build/simserver/simserver"
[ -x "$lg" ] && [ -x "$sim" ] || { echo "record.sh: no loadgen/simserver in $build (cmake -S . -B build-mpi -DRHOBENCH_MPI=ON)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "record.sh: mpirun not found (openmpi-bin)" >&2; exit 2; }
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
sim_pid=""
trap '[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$top/scripts/lib/sim.sh"
sim_start "$work" sim "$sim" --workers 1
sim_pid=$SIM_PID
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
raw="$here/raw.jsonl" sum="$here/summary.md"
: >"$raw.tmp"
for n in $ranks; do
  for rep in $(seq 1 "$reps"); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    timeout -s KILL 120 mpirun --oversubscribe -np "$n" "$lg" --mpi --base-url "$SIM_URL" \
      --request-rate 200 --num-prompts 400 --seed "$rep" --random-input-len 8 --random-output-len 4 \
      --quiet --no-progress --save-result --result-dir "$work" --result-filename "n$n.$rep.json" \
      >"$work/run.out" 2>&1 || { cat "$work/run.out" >&2; echo "record.sh: the run N=$n rep=$rep failed" >&2; exit 1; }
    jq -c --argjson n "$n" --argjson rep "$rep" --arg load "$load" --arg commit "$commit" \
      '{n: $n, rep: $rep, load_1min: ($load | tonumber), commit: $commit, dispatched, completed,
        start_skew_ns: .mpi.start_skew_ns, merge_ns: .mpi.merge_ns,
        max_uncertainty_ns: ([.mpi.clock_sync[].uncertainty_ns] | max),
        max_abs_offset_ns: ([.mpi.clock_sync[].offset_ns | fabs] | max)}' \
      "$work/n$n.$rep.json" >>"$raw.tmp"
  done
done
mv "$raw.tmp" "$raw"
{
  echo "# loadgen --mpi coordination cost against N (raw: raw.jsonl)"
  echo
  echo "- date: $(date -u +%FT%TZ); commit $commit"
  echo "- host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores online, Linux $(uname -r), $(. /etc/os-release; echo "$PRETTY_NAME"), $(mpirun --version 2>&1 | head -n 1)"
  echo "- command: results/scale-out/record.sh --ranks \"$ranks\" --reps $reps (each run: mpirun --oversubscribe -np N loadgen --mpi --request-rate 200 --num-prompts 400, against one simserver --workers 1)"
  echo "- start skew: the spread of the instants the ranks' send windows opened; merge: rank 0's wall time of the whole exchange; uncertainty: the largest half round trip of the clock sync; offset: the largest measured offset (one host, one clock: the true offset is 0)"
  echo
  echo "| N | start skew (us), per run | merge (ms), per run | max uncertainty (us) | max abs offset (us) | dispatched = completed | load average (1 min) |"
  echo "|---|---|---|---|---|---|---|"
  jq -rs 'group_by(.n)[] | . as $g |
    "| \($g[0].n) | \([$g[].start_skew_ns / 1000 | . * 10 | round / 10] | map(tostring) | join(", ")) | \([$g[].merge_ns / 1e6 | round] | map(tostring) | join(", ")) | \([$g[].max_uncertainty_ns] | max / 1000 | . * 10 | round / 10) | \([$g[].max_abs_offset_ns] | max / 1000 | . * 10 | round / 10) | \(if all($g[]; .dispatched == .completed and .dispatched == 400) then "yes (400)" else "NO" end) | \([$g[].load_1min] | min) to \([$g[].load_1min] | max) |"' "$raw"
} >"$sum.tmp"
mv "$sum.tmp" "$sum"
cat "$sum"
