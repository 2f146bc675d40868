#!/usr/bin/env bash
# The calibration benchmark: N_QUICK runs of `calibrate --quick` (the spread
# of safe_rho per k) and N_SELFTEST runs of `calibrate --quick --self-test`
# (the pass count), one after the other, each with its own arrival seed.
# Records, in results/calibrate/TAG/: each run's folder (certificate, plot
# data) and printed output, runs.tsv (one line per run: kind, seed, exit,
# verdict, elapsed, load average before and after, safe_rho per k), and
# summary.md (machine facts, commit, command, the figures). Timing on a
# shared host varies: this is a benchmark with a pass rate, not a test.
# Usage: results/calibrate/run.sh [--build DIR] [--quick N] [--selftest N]
#                                 [--tag NAME] [--default N] [--neighbour]
#        results/calibrate/run.sh --summarize DIR   (the figures of DIR/runs.tsv)
# (--neighbour: the runs share the host with a bounded busy loop pinned to
# CPU 0 at nice 19, busy 50 ms of every 100 ms (half of one core), for their
# whole time and at most an hour; the light neighbour a certificate must
# stand beside.)
# (batches_retried/disturbed: the certificate's count of batches measured again,
# and kept anyway, because other processes took the host's CPUs.)
# (--build: a folder with calibrate/, loadgen/, simserver/ binaries; a copy
# of the build lets the tree change while the benchmark runs.)
set -euo pipefail
figures() { # the figures of a runs.tsv
  awk -F'\t' 'function isort(a, c,   i, j, t) { for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t } }
  NR > 1 {
    n[$1]++; el[$1] = el[$1] " " $5
    if ($1 == "selftest" && $4 == "PASS") pass++
    # (column 10, measured_again: the costs swept again, "-" for none; older records lack it)
    if ($1 == "selftest" && $10 != "") { known++; if ($10 == "-" && $4 == "PASS") first++ }
    if ($1 == "quick" || $1 == "default") {
      m = split($8, kv, ",")
      for (j = 1; j <= m; j++) {
        split(kv[j], p, "=")
        if (p[2] ~ /^[0-9.eE+-]+$/) r[$1 " " p[1]] = r[$1 " " p[1]] " " p[2]
        else none[$1 " " p[1]]++ # nothing certified: not a figure of the spread
      }
    }
  }
  END {
    for (k in n) printf "- %s: %d runs, elapsed s:%s\n", k, n[k], el[k]
    if (n["selftest"]) printf "- self-test: %d of %d PASS\n", pass, n["selftest"]
    if (known) printf "- self-test without its repeats (every cost passed on its first sweep): %d of %d\n", first, known
    for (k in r) {
      c = split(r[k], v, " "); isort(v, c)
      med = (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
      dev = 0; for (j = 1; j <= c; j++) { d = (v[j] - med) / med; if (d < 0) d = -d; if (d > dev) dev = d }
      printf "- %s safe_rho:%s; median %.3f, largest deviation from it %.1f%%", k, r[k], med, 100 * dev
      if (none[k]) printf "; and %d run(s) certified nothing", none[k]
      printf "\n"
    }
  }' "$1"
}
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build
nq=5
ns=10
nd=0
tag=bench-$(date -u +%Y%m%dT%H%MZ)
summarize=
neighbour=0
cmdline="results/calibrate/run.sh $*"
while [ $# -gt 0 ]; do
  case $1 in
    --summarize) summarize=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --quick) nq=$2; shift 2 ;;
    --selftest) ns=$2; shift 2 ;;
    --default) nd=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --neighbour) neighbour=1; shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for v in "$nq" "$ns" "$nd"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "run.sh: counts must be whole numbers, got '$v'" >&2; exit 2; }
done
if [ -n "$summarize" ]; then # the figures of an existing record, again
  [ -f "$summarize/runs.tsv" ] || { echo "run.sh: --summarize: no $summarize/runs.tsv" >&2; exit 2; }
  figures "$summarize/runs.tsv"
  exit 0
fi
cal=$build/calibrate/calibrate
[ -x "$cal" ] || { echo "run.sh: no calibrate at $cal (build first)" >&2; exit 2; }
out=$here/$tag
rm -rf "$out"
mkdir -p "$out"
tsv=$out/runs.tsv
printf 'kind\tseed\texit\tverdict\telapsed_s\tload_before\tload_after\tsafe_rho_per_k\tbatches_retried/disturbed\tmeasured_again\n' > "$tsv"

one() { # kind seed args...
  local kind=$1 seed=$2
  shift 2
  local dir=$out/$kind-$seed load0 t0 t1 rc=0 verdict cert rho quiet again
  load0=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  "$cal" "$@" --seed "$seed" --no-plot --quiet --out-dir "$dir" > "$out/$kind-$seed.txt" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  verdict=$(grep -Eo '^self-test: (PASS|FAIL)' "$out/$kind-$seed.txt" | cut -d' ' -f2 || true)
  [ -n "$verdict" ] || verdict=$([ $rc = 0 ] && echo ok || echo error)
  cert=$(ls "$dir"/*certificate.json 2>/dev/null | head -1 || true)
  rho=$( [ -n "$cert" ] && jq -r '[.per_k[] | "k\(.workers)=\(.safe_rho)"] | join(",")' "$cert" || echo none)
  # batches measured again, and kept disturbed, because other processes took the CPUs
  quiet=$( [ -n "$cert" ] && jq -r '"\(.host.batches_retried // "-")/\(.host.batches_disturbed // "-")"' "$cert" || echo -)
  # a self-test's costs that failed a check on their first sweep and were swept again
  again=$( [ -n "$cert" ] && jq -r '.self_test_result.measured_again // empty | if length == 0 then "-" else join(",") end' "$cert" || true)
  printf '%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$seed" "$rc" "$verdict" \
    "$(echo "$t1 - $t0" | bc)" "$load0" "$(cut -d' ' -f1 /proc/loadavg)" "$rho" "$quiet" "${again:-}" >> "$tsv"
  tail -1 "$tsv"
}
start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
commit="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$here" diff --quiet HEAD -- ../../calibrate ../../loadgen 2>/dev/null || echo ' (with uncommitted changes)')"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
. "$here/../../scripts/lib/neighbour.sh"
trap neighbour_stop EXIT
[ "$neighbour" -eq 0 ] || neighbour_start 19 50 3600
for i in $(seq "$nq"); do one quick "$i" --quick; done
for i in $(seq "$ns"); do one selftest "$((40 + i))" --quick --self-test; done
for i in $(seq "$nd"); do one default "$i"; done
neighbour_stop

# the figures, from runs.tsv alone
summary=$(figures "$tsv")
{
  echo "# calibrate benchmark $tag"
  echo
  echo "- command: \`$cmdline\` (calibrate at $cal)"
  echo "- commit: $commit (at the start)"
  echo "- host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs online, $(uname -sr), $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "- from $start to $(date -u +%Y-%m-%dT%H:%M:%SZ); load average at start $load_start, at end $(cut -d' ' -f1-3 /proc/loadavg)"
  # what the figures depend on (scripts/records.sh: a later change to these makes the record stale)
  echo "- measures: calibrate loadgen simserver common models"
  [ "$neighbour" -eq 0 ] || echo "- neighbour: $(neighbour_describe) (half of one core), through every run"
  echo
  echo "$summary"
  echo
  echo "Per run (runs.tsv):"
  echo
  echo '```'
  column -t -s "$(printf '\t')" "$tsv"
  echo '```'
} > "$out/summary.md.tmp"
mv "$out/summary.md.tmp" "$out/summary.md"
cat "$out/summary.md"
