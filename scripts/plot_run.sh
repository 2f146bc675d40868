#!/usr/bin/env bash
# Plots of a loadgen run (a result JSON, one stage or a sweep), all on one
# x-axis: the offered rate (requests/s), with the achieved (dispatched) rate
# of each stage marked on the top axis. A closed-loop run has no offered
# rate: its x-axis is the achieved rate, and the axis label says so.
#   latency_profile  TTFT and NTPOT (p50, p99); the knee and the client's
#                    certified range marked
#   throughput       completed and achieved requests/s, output tokens/s
#   ntpot_breakdown  mean NTPOT per stage split into server queue, prefill,
#                    decode and client (the simulator's truth), stacked bars
#   schedule_lag     schedule lag (p50, p99): dispatch - intended
# Each plot as PNG and SVG. Always writes the data (run_profile.dat), the
# gnuplot script (run_plots.gp) and what the plots mark (plot_facts.json);
# draws when gnuplot is present, and says so when it is not. Then writes
# report.html beside the result JSON (scripts/report_html.sh).
#   scripts/plot_run.sh [--certificate CERT.json] RESULT.json OUTDIR
# --certificate: the certificate the run was checked against (loadgen
# --certificate), for the exact certified range and its summary; without it
# the range comes from the note the run's report carries, to its rounding.
set -euo pipefail
usage="usage: plot_run.sh [--certificate CERT.json] RESULT.json OUTDIR"
cert=""
if [ "${1:-}" = "--certificate" ]; then
  [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
  cert=$2; shift 2
fi
if [ $# -ne 2 ]; then echo "$usage" >&2; exit 2; fi
result=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
# A path that starts with '-' would be read as an option (by jq, mkdir or
# gnuplot), and one that starts with '$' as a gnuplot datablock: relative
# paths get a leading ./
case "$result" in /* | ./*) ;; *) result="./$result" ;; esac
case "$out" in /* | ./*) ;; *) out="./$out" ;; esac
[ -r "$result" ] || { echo "plot_run: $result: not readable" >&2; exit 2; }
jq -e . "$result" >/dev/null 2>&1 || { echo "plot_run: $result: not JSON" >&2; exit 2; }
bad=$(jq -r -f "$here/lib/result_check.jq" "$result")
[ -z "$bad" ] || { echo "plot_run: $result: not a loadgen result the plots can read: $bad" >&2; exit 2; }
if [ -n "$cert" ]; then
  case "$cert" in /* | ./*) ;; *) cert="./$cert" ;; esac
  jq -e '.per_k | type == "array"' "$cert" >/dev/null 2>&1 ||
    { echo "plot_run: --certificate $cert: not a certificate (no per_k array)" >&2; exit 2; }
fi
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
dat="$out/run_profile.dat" gp="$out/run_plots.gp" facts="$out/plot_facts.json"
qdat=$(gp_str "$dat")
# Every file is written in a private folder that mktemp made in OUTDIR, then
# renamed onto its name (mv -T: onto a planted link, never through it): a
# fixed temporary name in a shared folder could be a link to anything.
stage=$(mktemp -d -- "$out/.plot_run.XXXXXX")
trap 'rm -rf -- "$stage"' EXIT
# put NAME DEST: the staged file NAME onto DEST (made with the umask's
# mode: only the folder is mktemp's 0700).
put() { mv -T -- "$stage/$1" "$2"; }

# What the plots show and mark, from the result (and the certificate):
# one place, read by report_html.sh too. Numbers only reach gnuplot.
certargs=(--argjson cert null --argjson certf null)
[ -z "$cert" ] || certargs=(--slurpfile certf "$cert" --argjson cert true)
jq "${certargs[@]}" -f "$here/lib/plot_facts.jq" "$result" >"$stage/facts"
put facts "$facts"

{
  echo "# from $result"
  echo "# stage x_rate achieved_rate p50_ttft_ms p99_ttft_ms p50_ntpot_ms p99_ntpot_ms output_tok_per_s p50_lag_ms p99_lag_ms completed failed completed_rate queue_ms prefill_ms decode_ms client_ms mean_ntpot_ms saturated offered_rate"
  # A stage after the one a sweep stopped at was cut short (its few
  # requests say nothing about its rate): it is left out of the plots.
  jq -r --slurpfile f "$facts" '$f[0] as $f | (.saturated_stage // 1e9) as $stop
         | def n: if type == "number" and isinfinite == false and isnan == false then . else null end;
         .stages[] | select(.stage <= $stop)
         | (.ntpot_breakdown_ms // {}) as $b
         | [.stage, (if $f.x_is_offered then .request_rate else .achieved_rate end), .achieved_rate,
            .p50_ttft_ms, .p99_ttft_ms, .p50_ntpot_ms, .p99_ntpot_ms, .output_throughput,
            .median_schedule_lag_ms, .p99_schedule_lag_ms, .completed, .failed,
            (.completed_rate // .request_throughput), $b.queue, $b.prefill, $b.decode, $b.client,
            .mean_ntpot_ms, (if .saturated then 1 else 0 end), .request_rate]
         | map(n | if . == null then "NaN" else tostring end) | join(" ")' "$result"
} >"$stage/dat" && put dat "$dat"

# The facts as shell variables (F_has_ttft_p50=true, F_knee_rate=60, ...):
# one jq call. f NAME prints one; has NAME says whether a series has data.
eval "$(jq -r '[paths(scalars) as $p | {k: ($p | map(tostring) | join("_")), v: getpath($p)}]
  | .[] | select(.v != null and (.k | test("^[A-Za-z0-9_]+$"))) | "F_\(.k)=\(.v | tostring | @sh)"' "$facts")"
f() { local v="F_$1"; printf '%s' "${!v:-}"; }
has() { [ "$(f "has_$1")" = true ]; }
xmax=$(f xmax) xlabel=$(f xlabel)

# The marks shared by the plots: the achieved rate on the top axis, the knee
# as a dashed line, the certified client range as a shaded band.
marks() {
  echo "set xrange [0:$xmax]"
  echo "set xlabel $(gp_str "$xlabel")"
  if [ -n "$(f x2tics)" ]; then
    echo "set link x2"
    echo "set x2tics ($(f x2tics)) out nomirror font ',9' textcolor rgb '#505050'"
    echo "set x2label 'achieved rate at each stage (requests/s)' textcolor rgb '#505050'"
    echo "set xtics nomirror"
  fi
  if [ -n "$(f knee_rate)" ]; then
    local k lab
    k=$(f knee_rate) lab=$(f knee_label)
    echo "set arrow 1 from first $k, graph 0 to first $k, graph 1 nohead lc rgb '#c00000' lw 2 dt 2 front"
    if [ "$(f knee_label_side)" = left ]; then
      echo "set label 1 $(gp_str "$lab") at first $k, graph 0.97 offset -0.6,0 right textcolor rgb '#c00000' front"
    else
      echo "set label 1 $(gp_str "$lab") at first $k, graph 0.97 offset 0.6,0 left textcolor rgb '#c00000' front"
    fi
  fi
  if [ "${1:-}" = cert ] && [ -n "$(f cert_range_max_rate)" ]; then
    local c lab
    c=$(f cert_range_drawn_to) lab=$(f cert_range_label)
    echo "set object 1 rect from first 0, graph 0 to first $c, graph 1 behind fc rgb '#e3f1e3' fs solid 1.0 noborder"
    echo "set label 2 $(gp_str "$lab") at first $c, graph 0.03 offset -0.6,0 right textcolor rgb '#2a7a2a' front"
  fi
}
reset_marks() { echo "unset arrow; unset label; unset object; unset x2tics; unset x2label; unset logscale; unset y2tics; unset y2label; set xtics mirror; set ytics mirror"; }

# Each plot, once: its body, and the series it has data for. A series
# without data is left out (gnuplot stops at an all-undefined plot); a plot
# with none is not drawn, and plot_facts.json says so.
body() {
  local name=$1 plots=()
  case "$name" in
    latency_profile)
      has ttft_p50 && plots+=("$qdat using 2:4 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'TTFT p50'")
      has ttft_p99 && plots+=("$qdat using 2:5 with linespoints lw 2 pt 5 lc rgb '#1f77b4' dt 2 title 'TTFT p99'")
      has ntpot_p50 && plots+=("$qdat using 2:6 with linespoints lw 2 pt 7 lc rgb '#ff7f0e' title 'NTPOT p50'")
      has ntpot_p99 && plots+=("$qdat using 2:7 with linespoints lw 2 pt 5 lc rgb '#ff7f0e' dt 2 title 'NTPOT p99'")
      [ ${#plots[@]} -gt 0 ] || return 0
      marks cert
      echo "set title 'Latency profile: TTFT and NTPOT (from the intended start)'"
      echo "set ylabel 'latency (ms, log scale)'"
      echo "set logscale y"
      ;;
    throughput)
      has completed_rate && plots+=("$qdat using 2:13 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'completed (requests/s)'")
      has achieved_rate && plots+=("$qdat using 2:3 with linespoints lw 2 pt 6 lc rgb '#7f7f7f' title 'achieved, dispatched (requests/s)'")
      [ ${#plots[@]} -gt 0 ] || return 0
      [ "$(f x_is_offered)" = true ] && plots+=("x with lines lc rgb '#bbbbbb' dt 3 title 'offered'")
      has output_tps && plots+=("$qdat using 2:8 axes x1y2 with linespoints lw 1 pt 1 lc rgb '#9467bd' title 'output tokens/s (right axis)'")
      marks cert
      echo "set title 'Throughput: completed against offered'"
      echo "set ylabel 'requests/s'"
      echo "set yrange [0:*]"
      has output_tps && echo "set y2tics; set y2range [0:*]; set y2label 'output tokens/s'; set ytics nomirror"
      ;;
    ntpot_breakdown)
      if has breakdown; then
        plots+=("$qdat using 2:(\$14+\$15+\$16+\$17) with boxes fs solid 0.9 lc rgb '#9467bd' title 'client and network'"
                "$qdat using 2:(\$14+\$15+\$16) with boxes fs solid 0.9 lc rgb '#ff7f0e' title 'server decode'"
                "$qdat using 2:(\$14+\$15) with boxes fs solid 0.9 lc rgb '#2ca02c' title 'server prefill'"
                "$qdat using 2:14 with boxes fs solid 0.9 lc rgb '#1f77b4' title 'server queue'")
      fi
      has breakdown_missing && plots+=("$qdat using 2:(valid(14) ? NaN : \$18) with boxes fs pattern 4 lc rgb '#7f7f7f' title 'measured mean NTPOT, not split (no server timing stamps)'")
      [ ${#plots[@]} -gt 0 ] || return 0
      marks
      echo "set title $(gp_str "$(f breakdown_title)")"
      echo "set ylabel 'mean NTPOT (ms per output token)'"
      echo "set yrange [0:*]"
      echo "set boxwidth $(f boxwidth) absolute"
      ;;
    schedule_lag)
      has lag_p50 && plots+=("$qdat using 2:9 with linespoints lw 2 pt 7 lc rgb '#8c564b' title 'lag p50'")
      has lag_p99 && plots+=("$qdat using 2:10 with linespoints lw 2 pt 5 lc rgb '#8c564b' dt 2 title 'lag p99'")
      [ ${#plots[@]} -gt 0 ] || return 0
      marks
      echo "set title 'Schedule lag (dispatch - intended)'"
      echo "set ylabel 'schedule lag (ms, log scale)'"
      echo "set logscale y"
      ;;
  esac
  local IFS=,
  echo "plot ${plots[*]}"
}

names=(latency_profile throughput ntpot_breakdown schedule_lag)
declare -A bodies
drawn=()
for n in "${names[@]}"; do
  bodies[$n]=$(body "$n")
  [ -z "${bodies[$n]}" ] || drawn+=("$n")
done
# emit_gp DIR: the gnuplot script that draws the plots into DIR.
emit_gp() {
  echo "# gnuplot script for run_profile.dat beside it (run: gnuplot run_plots.gp)"
  echo "set grid"
  echo "set key below horizontal height 1"
  echo "set datafile missing 'NaN'"
  for term in "pngcairo size 900,560 noenhanced font ',11'" "svg size 900,560 noenhanced font 'sans,12' background '#ffffff'"; do
    ext=png
    [ "${term%% *}" = svg ] && ext=svg
    for n in "${drawn[@]}"; do
      echo "set terminal $term"
      echo "set output $(gp_str "$1/$n.$ext")"
      echo "${bodies[$n]}"
      echo "set output"
      reset_marks
      echo "set autoscale y; set autoscale y2"
    done
  done
}
emit_gp "$out" >"$stage/gp"
put gp "$gp"
jq --arg drawn "${drawn[*]:-}" '.drawn = ($drawn | split(" ") | map(select(. != "")))' "$facts" >"$stage/facts"
put facts "$facts"

if command -v gnuplot >/dev/null 2>&1; then
  emit_gp "$stage" >"$stage/draw.gp"
  gnuplot "$stage/draw.gp"
  wrote=()
  for n in "${drawn[@]}"; do
    for ext in png svg; do put "$n.$ext" "$out/$n.$ext"; done
    wrote+=("$n.png")
  done
  echo "plot_run: wrote ${wrote[*]/#/$out/} (and .svg of each)"
  skipped=$(jq -r '[.has | to_entries[] | select(.value == false and .key != "breakdown_missing") | .key] | join(", ")' "$facts")
  [ -z "$skipped" ] || echo "plot_run: no data for: $skipped (left out)"
else
  echo "plot_run: gnuplot is not installed: wrote $dat and $gp only (apt-get install gnuplot-nox)"
fi
certflag=()
[ -z "$cert" ] || certflag=(--certificate "$cert")
bash "$here/report_html.sh" "${certflag[@]}" "$result" "$out"
