#!/usr/bin/env bash
# Records whether Kingman's G/G/1 approximation with the measured ca2 of the
# loop's arrivals tracks the teaching demo's measured wait better than PK's
# M/G/1 above rho 0.7. Runs scripts/demo.sh N times with its default settings,
# one after the other, keeps each run's summary, table, text and plot in
# run-I/ beside this file (not its steps/: each step's loadgen result and
# send log), and writes kingman.md: the command, commit, host and load, the
# per-step medians over the runs, each run's figures above rho 0.7, and how
# often each model came closer to the measured wait (|log(measured/model)|).
#   results/demo/record.sh [--build DIR] [--runs N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/build" runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "record.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || { echo "record.sh: --runs must be a positive integer" >&2; exit 2; }
[ -x "$build/loadgen/loadgen" ] && [ -x "$build/simserver/simserver" ] || { echo "record.sh: no loadgen or simserver in $build (build first)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/demo-kingman.XXXXXX")
trap 'rm -rf "$work"' EXIT
commit=$(git -C "$root" rev-parse --short HEAD)
dirty=$(git -C "$root" status --porcelain | awk '{print $2}' | awk -F/ '{print (NF > 1 ? $1 "/" : $0)}' | sort | uniq -c | awk '{printf "%s%s (%d)", (NR > 1 ? ", " : ""), $2, $1}')
date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
loads=()
for i in $(seq 1 "$runs"); do
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "record.sh: run $i of $runs (load $before)" >&2
  bash "$root/scripts/demo.sh" --out "$work/run-$i" --build "$build" >"$work/run-$i.stdout" 2>"$work/run-$i.stderr" \
    || { echo "record.sh: run $i failed: $(tail -n 3 "$work/run-$i.stderr")" >&2; exit 1; }
  loads+=("run $i: $before before, $(cut -d' ' -f1-3 /proc/loadavg) after")
  rm -rf "$here/run-$i"
  mkdir -p "$here/run-$i"
  for f in summary.json summary.md demo.txt demo.dat demo.gp demo.png; do
    [ -f "$work/run-$i/$f" ] && cp "$work/run-$i/$f" "$here/run-$i/"
  done
done
date_end=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
ncpu=$(nproc)
kernel=$(uname -sr)

summaries=()
for i in $(seq 1 "$runs"); do summaries+=("$here/run-$i/summary.json"); done
jq -s -r --arg commit "$commit" --arg dirty "$dirty" --arg d0 "$date_start" --arg d1 "$date_end" \
    --arg cpu "$cpu" --arg ncpu "$ncpu" --arg kernel "$kernel" --arg loads "$(printf '%s; ' "${loads[@]}")" '
  def median: map(select(type == "number")) | sort
    | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def f: if . == null then "-" elif (if . < 0 then -. else . end) >= 100 then (round | tostring)
         else (. * 1000 | round / 1000 | tostring) end;
  def lerr: if type == "number" and . > 0 then (log / (10 | log)) | if . < 0 then -. else . end else null end;
  . as $runs | ($runs | length) as $n
  | [$runs[].steps[] | select(.rho >= 0.7)] as $hi
  | ($hi | map(select((.measured_over_pk | lerr) != null and (.measured_over_kingman | lerr) != null))) as $cmp
  | ($cmp | map(select((.measured_over_kingman | lerr) < (.measured_over_pk | lerr))) | length) as $kwins
  | "**Kingman'"'"'s G/G/1 with the measured ca2 against Pollaczek-Khinchine, in the teaching demo** (\($n) runs of `scripts/demo.sh`, default settings)",
    "",
    "- commit \($commit)",
    "- measures: scripts/demo.sh scripts/lib/sendlog.c",
    "- command: `results/demo/record.sh --build DIR --runs \($n)` (each run: `scripts/demo.sh --out DIR --build DIR`: --cost \($runs[0].cost), --step-seconds \($runs[0].step_seconds)); each run'"'"'s summary, table, text and plot in `results/demo/run-N/`",
    "- working tree at the run, uncommitted: \(if $dirty == "" then "none" else $dirty end)",
    "- date: \($d0) to \($d1)",
    "- host: \($cpu), \($ncpu) CPUs online, \($kernel); shared with other work",
    "- load average (1, 5, 15 min): \($loads | rtrimstr("; "))",
    "",
    "W_q in µs. measured: the client'"'"'s wait per token (stamp to delivery, less the no-cost floor); PK: loadgen'"'"'s M/G/1 figure from the loop'"'"'s callback moments; Kingman: rho_s/(1-rho_s) (ca2 + cs2)/2 E[S] with the same moments and the ca2 of the gaps between simserver'"'"'s writes to the client during the step. Per step, the median over the runs of each column (the ratios: the median of each run'"'"'s ratio).",
    "",
    "| step | rho | rho_s | measured W_q | PK W_q | Kingman W_q | ca2 | ca2 per event | cs2 | measured / PK | measured / Kingman |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ($runs[0].steps | map(.step)[] as $s
     | [$runs[].steps[] | select(.step == $s)] as $r
     | "| \($s) | " + ([ "rho", "rho_service", "measured_wq_us", "pk_wq_us", "kingman_wq_us", "ca2", "ca2_events", "cs2",
                         "measured_over_pk", "measured_over_kingman"]
                       | map(. as $k | [$r[][$k]] | median | f) | join(" | ")) + " |"),
    "",
    "Each run, its steps with rho >= 0.7 (medians over those steps; closer: |log(measured/model)| smaller):",
    "",
    "| run | steps | their rho | measured / PK | measured / Kingman | Kingman closer | PK closer |",
    "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    (range(0; $n) as $i | [$runs[$i].steps[] | select(.rho >= 0.7)] as $h
     | ($h | map(select((.measured_over_pk | lerr) != null and (.measured_over_kingman | lerr) != null))) as $c
     | "| \($i + 1) | \($h | length) | \($h | map(.rho * 100 | round / 100 | tostring) | join(", ")) | \([$h[].measured_over_pk] | median | f) | \([$h[].measured_over_kingman] | median | f) | \($c | map(select((.measured_over_kingman | lerr) < (.measured_over_pk | lerr))) | length) | \($c | map(select((.measured_over_kingman | lerr) > (.measured_over_pk | lerr))) | length) |"),
    "",
    "**Above rho 0.7, over the \($n) runs:** \($hi | length) steps; Kingman was closer to the measured wait in \($kwins) of the \($cmp | length) with both figures, PK in \(($cmp | length) - $kwins). Median measured / PK \([$hi[].measured_over_pk] | median | f), median measured / Kingman \([$hi[].measured_over_kingman] | median | f); median |log10(measured / model)| PK \([$cmp[].measured_over_pk | lerr] | median | f), Kingman \([$cmp[].measured_over_kingman | lerr] | median | f). Median ca2 of the loop'"'"'s arrivals over all steps and runs: \([$runs[].steps[].ca2] | median | f) (Poisson: 1).",
    "",
    ([$hi[] | select(.rho < 0.95)] as $b
     | ($b | map(select((.measured_over_pk | lerr) != null and (.measured_over_kingman | lerr) != null))) as $bc
     | "Without the steps at rho >= 0.95 (a 3 s step there has no steady state to reach): \($b | length) steps; Kingman closer in \($bc | map(select((.measured_over_kingman | lerr) < (.measured_over_pk | lerr))) | length) of \($bc | length); median measured / PK \([$b[].measured_over_pk] | median | f), measured / Kingman \([$b[].measured_over_kingman] | median | f).")
' "${summaries[@]}" >"$work/kingman.md"
mv "$work/kingman.md" "$here/kingman.md"
cat "$here/kingman.md"
