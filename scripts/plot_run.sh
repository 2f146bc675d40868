#!/usr/bin/env bash
# Plots of a loadgen sweep (a result JSON with several stages):
#   latency_profile  TTFT and NTPOT (p50, p99) against the achieved rate
#   throughput       output tokens/s against NTPOT p50/p99 (the latency-throughput curve)
#   schedule_lag     schedule lag (p50, p99) against the offered rate
# Always writes the data (run_profile.dat) and the gnuplot script (run_plots.gp);
# draws PNGs when gnuplot is present, and says so when it is not.
#   scripts/plot_run.sh RESULT.json OUTDIR
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: plot_run.sh RESULT.json OUTDIR" >&2; exit 2; fi
result=$1 out=$2
# A path that starts with '-' would be read as an option (by jq, mkdir or
# gnuplot), and one that starts with '$' as a gnuplot datablock: relative
# paths get a leading ./
case "$result" in /* | ./*) ;; *) result="./$result" ;; esac
case "$out" in /* | ./*) ;; *) out="./$out" ;; esac
[ -r "$result" ] || { echo "plot_run: $result: not readable" >&2; exit 2; }
jq -e '.stages | type == "array"' "$result" >/dev/null 2>&1 || { echo "plot_run: $result: no stages array" >&2; exit 2; }
# Paths go into the gnuplot script only as single-quoted strings, where
# gnuplot takes every byte literally ('' stands for one quote): no
# backslash escapes, no `command` substitution, no macros. A line break
# would end the command inside the string, so such a path is refused.
case "$result$out" in
*$'\n'* | *$'\r'*) echo "plot_run: a path with a line break cannot be written into a gnuplot script" >&2; exit 2 ;;
esac
# gp_str S: S as a gnuplot single-quoted string.
gp_str() { printf "'%s'" "${1//\'/\'\'}"; }
mkdir -p -- "$out"
dat="$out/run_profile.dat" gp="$out/run_plots.gp"
qdat=$(gp_str "$dat")
{
  echo "# from $result"
  echo "# stage target_rate achieved_rate p50_ttft_ms p99_ttft_ms p50_ntpot_ms p99_ntpot_ms output_tok_per_s p50_lag_ms p99_lag_ms completed failed"
  # A stage after the one a sweep stopped at was cut short (its few
  # requests say nothing about its rate): it is left out of the plots.
  jq -r '(.saturated_stage // 1e9) as $stop | .stages[] | select(.stage <= $stop)
         | [.stage, .request_rate, .achieved_rate, .p50_ttft_ms, .p99_ttft_ms,
         .p50_ntpot_ms, .p99_ntpot_ms, .output_throughput, .median_schedule_lag_ms,
         .p99_schedule_lag_ms, .completed, .failed] | map(if . == null then "NaN" else tostring end) | join(" ")' "$result"
} > "$dat.tmp" && mv "$dat.tmp" "$dat"
cat > "$gp.tmp" <<GP
# gnuplot script for run_profile.dat beside it (run: gnuplot run_plots.gp)
set terminal pngcairo size 900,600 noenhanced font ",11"
set grid
set key top left
set datafile missing "NaN"
set output $(gp_str "$out/latency_profile.png")
set title "Latency profile: TTFT and NTPOT against achieved rate"
set xlabel "achieved rate (requests/s)"
set ylabel "latency (ms)"
set logscale y
plot $qdat using 3:4 with linespoints lw 2 title "TTFT p50", \
     $qdat using 3:5 with linespoints lw 2 title "TTFT p99", \
     $qdat using 3:6 with linespoints lw 2 title "NTPOT p50", \
     $qdat using 3:7 with linespoints lw 2 title "NTPOT p99"
set output $(gp_str "$out/throughput.png")
set title "Throughput against latency"
set xlabel "NTPOT (ms per output token)"
set ylabel "output throughput (tokens/s)"
unset logscale y
set logscale x
plot $qdat using 6:8 with linespoints lw 2 title "at NTPOT p50", \
     $qdat using 7:8 with linespoints lw 2 title "at NTPOT p99"
set output $(gp_str "$out/schedule_lag.png")
set title "Schedule lag (dispatch - intended) against offered rate"
set xlabel "offered rate (requests/s)"
set ylabel "schedule lag (ms)"
unset logscale x
set logscale y
plot $qdat using 2:9 with linespoints lw 2 title "lag p50", \
     $qdat using 2:10 with linespoints lw 2 title "lag p99"
GP
mv "$gp.tmp" "$gp"
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot "$gp"
  echo "plot_run: wrote $out/latency_profile.png $out/throughput.png $out/schedule_lag.png"
else
  echo "plot_run: gnuplot is not installed: wrote $dat and $gp only (apt-get install gnuplot-nox)"
fi
