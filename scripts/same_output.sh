#!/usr/bin/env bash
# Does a change alter loadgen's output? Runs the same seeded runs with two
# builds and compares their result JSON and JSONL, timing aside.
#   scripts/same_output.sh OLD_BUILD NEW_BUILD [--mpi]
# Each build dir holds loadgen/loadgen and simserver/simserver. Each run is
# made four times: twice with OLD (A, B) and twice with NEW (C, D), each
# against its own simserver started with the same flags. A field whose value
# differs between the two runs of one binary is timing (it moves from run
# to run); one on which A and B agree, and C and D agree, but the builds
# do not, or that one build's files have and the other's lack, is a change
# of output, and is listed (the wall-clock "date" aside). Under --mpi each
# rank's records are in their own JSONL: those are compared. --mpi adds a 2-rank run under mpirun (both builds made with
# -DRHOBENCH_MPI=ON). Exit 0 when no run's output changed, 1 when one did,
# 2 on bad usage. Writes under a temporary directory only.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
old=$1 new=$2 mpi=0
[ "${3:-}" = --mpi ] && mpi=1
for b in "$old" "$new"; do
  [ -x "$b/loadgen/loadgen" ] && [ -x "$b/simserver/simserver" ] ||
    { echo "same_output.sh: $b has no loadgen/loadgen and simserver/simserver" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "same_output.sh: needs jq" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/lib/sim.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/rhobench-same.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# The runs: NAME then loadgen's flags (the base URL and the output added).
runs=(
  "k1|--num-workers 1 --request-rate 100 --num-prompts 200 --random-input-len 32 --random-output-len 8 --seed 7"
  "k2|--num-workers 2 --request-rate 150 --num-prompts 300 --random-input-len 48 --random-output-len 6 --seed 11"
  "sweep|--num-workers 2 --sweep linear --sweep-stages 3 --sweep-max-rate 120 --stage-duration 1 --random-output-len 4 --seed 5"
  "closed|--num-workers 2 --max-concurrency 4 --num-prompts 120 --random-output-len 4 --seed 9"
)
[ "$mpi" -eq 0 ] || runs+=("mpi2|MPI --request-rate 100 --num-prompts 200 --random-output-len 6 --seed 13")

# flat FILE: "path<TAB>value" per scalar, sorted.
flat() { jq -r 'paths(scalars) as $p | "\($p | map(tostring) | join("."))\t\(getpath($p))"' "$1" | LC_ALL=C sort; }
# jsonl_flat FILE: the records by index, each flattened with its index first.
jsonl_flat() {
  jq -s -r 'sort_by(.index)[] | . as $r | paths(scalars) as $p
            | "\($r.index).\($p | map(tostring) | join("."))\t\($r | getpath($p))"' "$1" | LC_ALL=C sort
}
# differing X Y: the paths whose values differ, or that only one has.
differing() { join -t $'\t' -a 1 -a 2 -e '<none>' -o 0,1.2,2.2 "$1" "$2" | awk -F'\t' '$2 != $3 { print $1 }'; }

one_run() { # BUILD TAG NAME FLAGS...
  local b=$1 tag=$2 name=$3
  shift 3
  sim_start "$work" "sim-$name-$tag" "$b/simserver/simserver" --seed 3 --inter-token-latency 1ms --prefill-overhead 2ms ||
    { echo "same_output.sh: simserver did not start" >&2; exit 2; }
  pids+=("$SIM_PID")
  local -a cmd=("$b/loadgen/loadgen")
  if [ "$1" = MPI ]; then
    shift
    cmd=(mpirun --allow-run-as-root --oversubscribe -np 2 "$b/loadgen/loadgen" --mpi)
  fi
  "${cmd[@]}" --base-url "$SIM_URL" "$@" --quiet --no-progress --save-result --save-detailed \
    --result-dir "$work" --result-filename "$name-$tag.json" >"$work/$name-$tag.out" 2>&1 ||
    { echo "same_output.sh: $name ($tag) exited $?: $(tail -n 3 "$work/$name-$tag.out")" >&2; exit 2; }
  kill "$SIM_PID" 2>/dev/null || true
  flat "$work/$name-$tag.json" >"$work/$name-$tag.flat"
  local -a parts=("$work/$name-$tag".*jsonl)
  cat "${parts[@]}" >"$work/$name-$tag.all.jsonl"
  jsonl_flat "$work/$name-$tag.all.jsonl" >"$work/$name-$tag.jflat"
}

changed=0
for spec in "${runs[@]}"; do
  name=${spec%%|*}
  read -r -a flags <<<"${spec#*|}"
  one_run "$old" A "$name" "${flags[@]}"
  one_run "$old" B "$name" "${flags[@]}"
  one_run "$new" C "$name" "${flags[@]}"
  one_run "$new" D "$name" "${flags[@]}"
  for kind in flat jflat; do
    { differing "$work/$name-A.$kind" "$work/$name-B.$kind"
      differing "$work/$name-C.$kind" "$work/$name-D.$kind"
      echo date; } | LC_ALL=C sort -u >"$work/$name.noise.$kind"
    differing "$work/$name-A.$kind" "$work/$name-C.$kind" | LC_ALL=C sort -u >"$work/$name.diff.$kind"
  done
  # A record's timing fields are timing in every record: noise by name.
  sed -E 's/^[0-9]+\.//' "$work/$name.noise.jflat" | LC_ALL=C sort -u >"$work/$name.noise.jkeys"
  res=$(LC_ALL=C comm -23 "$work/$name.diff.flat" "$work/$name.noise.flat")
  rec=$(sed -E 's/^[0-9]+\.//' "$work/$name.diff.jflat" | LC_ALL=C sort -u |
        LC_ALL=C comm -23 - "$work/$name.noise.jkeys")
  n_res=$(wc -l <"$work/$name-A.flat") n_rec=$(wc -l <"$work/$name-A.jflat")
  timing=$(wc -l <"$work/$name.noise.flat")
  if [ -z "$res" ] && [ -z "$rec" ]; then
    echo "same: $name: $n_res result fields ($timing timing), $n_rec record fields"
  else
    changed=1
    echo "CHANGED: $name:"
    [ -z "$res" ] || { echo "  result fields:"; echo "$res" | sed 's/^/    /'; }
    [ -z "$rec" ] || { echo "  record fields:"; echo "$rec" | sed 's/^/    /'; }
  fi
done
exit "$changed"
