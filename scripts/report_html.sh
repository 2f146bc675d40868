#!/usr/bin/env bash
# A one-page, self-contained report.html beside a loadgen result JSON: the
# client's verdict and the server's knee at the top, the per-stage table, the
# plots (inline SVG from scripts/plot_run.sh), the server's waiting requests
# and KV-cache usage per stage (drawn here, from stages[i].server_metrics),
# the certificate's summary and the machine facts. Nothing in it is fetched
# (no scripts, no external styles, fonts or images); every string from the
# JSON is HTML-escaped.
# Called by plot_run.sh after it drew PLOTDIR.
#   scripts/report_html.sh [--certificate CERT.json] RESULT.json PLOTDIR
# Prints the report's path.
set -euo pipefail
usage="usage: report_html.sh [--certificate CERT.json] RESULT.json PLOTDIR"
cert=""
if [ "${1:-}" = "--certificate" ]; then
  [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
  cert=$2; shift 2
fi
if [ $# -ne 2 ]; then echo "$usage" >&2; exit 2; fi
result=$1 plots=$2
here=$(cd "$(dirname "$0")" && pwd)

# The server's waiting requests and KV-cache usage per stage, from
# stages[i].server_metrics (loadgen --server-metrics; loadgen/README.md). The
# gauges read, first present first: waiting vllm:num_requests_waiting or
# sglang:num_queue_reqs (max and mean); KV cache vllm:kv_cache_usage_perc,
# vllm:gpu_cache_usage_perc or sglang:token_usage (max: a fraction, drawn in
# percent). srvm_check names the first of these keys of the wrong type, as
# lib/result_check.jq does the others'.
srvm_check=$(cat <<'JQ'
def numlike: type == "number" or type == "null" or (type == "string" and (. == "inf" or . == "-inf"));
def want($key; $types; $what): type as $t | if ($types | index($t)) != null then empty else "\($key): expected \($what), got \(type)" end;
def num($key): if numlike then empty else "\($key): expected a number, got \(type)" end;
first((.server_metrics | want("server_metrics"; ["object", "null"]; "an object")),
  (.server_metrics | if type == "object" then
     (("interval_s", "scrapes", "failed_scrapes") as $k | .[$k] | num("server_metrics.\($k)")),
     (.last_error | want("server_metrics.last_error"; ["string", "null"]; "a string")) else empty end),
  (.stages | to_entries[] | "stages[\(.key)].server_metrics" as $k | .value.server_metrics
   | want($k; ["object", "null"]; "an object"),
     (if type == "object" then .metrics
        | want("\($k).metrics"; ["object", "null"]; "an object"),
          (if type == "object" then
             ("vllm:num_requests_waiting", "sglang:num_queue_reqs", "vllm:kv_cache_usage_perc",
              "vllm:gpu_cache_usage_perc", "sglang:token_usage") as $n
             | "\($k).metrics[\($n | @json)]" as $mk | .[$n]
             | want($mk; ["object", "null"]; "an object"),
               (if type == "object" then ("max", "mean") as $g | .[$g] | num("\($mk).\($g)") else empty end)
           else empty end)
      else empty end))
) // empty
JQ
)
# srvm_html: the page ($page, from lib/report_html.jq) with a "Server
# metrics" section put before its certificate: the plot as inline SVG, drawn
# here (every mark's value in a <title> and in data- attributes), a table of
# the same figures, or one line saying why there is none. The x-axis is the
# other plots' (plot_facts.json): each stage's offered rate, or in a closed
# loop its achieved rate; the knee where they mark it.
srvm_html=$(cat <<'JQ'
def finite: type == "number" and (isinfinite | not) and (isnan | not);
def e: if . == null then "n/a" else tostring | @html end;
def fx(d): if finite then (. * pow(10; d) | round) / pow(10; d) | tostring else "n/a" end;
def c: (. * 100 | round) / 100 | tostring; # a coordinate, to 0.01 px
def tick: . * 1e9 | round / 1e9 | tostring; # a tick's value without float noise
# axis(most; n; empty_top; least_step): from 0 to a round top past most, in
# about n steps of 1, 2 or 5 x 10^k (at least least_step).
def axis($most; $n; $empty_top; $least):
  (if $most > 0 then $most * 1.05 else $empty_top end) as $hi
  | ($hi / $n) as $raw | pow(10; $raw | log10 | floor) as $m | ($raw / $m) as $q
  | ([(if $q <= 1 then 1 elif $q <= 2 then 2 elif $q <= 5 then 5 else 10 end) * $m, $least] | max) as $s
  | ($hi / $s - 1e-9 | ceil) as $k
  | {top: ($k * $s), ticks: [range(0; $k + 1) | . * $s]};
def pick($m; $names): first($names[] as $n | $m[$n] | select(type == "object") | . + {name: $n}) // null;

$r[0] as $r | $f[0] as $f
| ($r.saturated_stage | if finite then . else 1e9 end) as $stop
| ($f.x_is_offered == true) as $offered
| [$r.stages[] | select(.stage <= $stop) | . as $s | ($s.server_metrics.metrics // {}) as $m
   | pick($m; ["vllm:num_requests_waiting", "sglang:num_queue_reqs"]) as $w
   | pick($m; ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"]) as $kv
   | select($w != null or $kv != null)
   | {stage: $s.stage, x: (if $offered then $s.request_rate else $s.achieved_rate end),
      waiting_max: $w.max, waiting_mean: $w.mean, kv_max: $kv.max, wname: $w.name, kvname: $kv.name}
   | select(.x | finite)] as $rows
| ([$r.stages[] | select(.stage > $stop and .server_metrics != null)] | length) as $cut
| ($r.server_metrics // null) as $sm
| (if $offered then "req/s offered" else "req/s achieved" end) as $xunit
# The plot area (of a 900 x 560 view box, gnuplot's size for the others).
| {l: 80, r: 810, t: 50, b: 420} as $a
| [{key: "waiting_max", scale: "y", colour: "#1f77b4", dash: "", fill: "#1f77b4", shape: "circle",
    legend: "waiting requests, max", tip: "waiting requests, max:", unit: ""},
   {key: "waiting_mean", scale: "y", colour: "#1f77b4", dash: "6 4", fill: "#ffffff", shape: "circle",
    legend: "waiting requests, mean", tip: "waiting requests, mean:", unit: ""},
   {key: "kv_max", scale: "y2", colour: "#9467bd", dash: "", fill: "#9467bd", shape: "square",
    legend: "KV-cache usage, max (%, right axis)", tip: "KV-cache usage, max:", unit: "% of the cache"}]
  | map(.key as $k | . + {pts: [$rows[] | select(.[$k] | finite)
                               | {stage, x, v: .[$k], y: (if $k == "kv_max" then .[$k] * 100 else .[$k] end)}]
                                | sort_by(.x)})
  | map(select(.pts | length > 0)) as $series
| (if $f.knee != null and ($f.knee.rate | finite) then $f.knee else null end) as $knee
| axis([$rows[].x, ($knee.rate // empty)] | max; 8; 1; 0) as $xa
| axis([$series[] | select(.scale == "y") | .pts[].y] | max // 0; 5; 1; 1) as $ya
| axis([$series[] | select(.scale == "y2") | .pts[].y] | max // 0; 5; 1; 0) as $y2a
| def X: $a.l + . / $xa.top * ($a.r - $a.l);
  def Y($ax): $a.b - . / $ax.top * ($a.b - $a.t);
  ($rows | map(.wname // empty) | unique | join(", ")) as $wn
| ($rows | map(.kvname // empty) | unique | join(", ")) as $kn
| ([$series[] | select(.scale == "y2")] | length > 0) as $has_kv
| (if ($rows | length) == 0 then
     "<p class=\"note\" id=\"server-metrics-note\">"
     + (if $sm == null then
          "The server's metrics were not scraped (loadgen --server-metrics, off by default): no plot of its waiting requests and KV-cache usage."
        elif ([$r.stages[] | select(.server_metrics != null)] | length) == 0 then
          "The server's metrics were scraped for the run as a whole (\($sm.scrapes | e) scrapes), not per stage"
          + (if $r.load_mode == "closed" then " (a closed loop's stages have no start times)" else "" end)
          + ": no per-stage plot."
        else
          "The server's metrics were scraped (\($sm.scrapes | e) scrapes, \($sm.failed_scrapes | e) failed"
          + (if $sm.last_error != null then "; last error: \($sm.last_error | e)" else "" end)
          + "), but no plotted stage has its waiting requests or KV-cache usage: no plot."
        end)
     + "</p>"
   else
     "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"server-metrics\" viewBox=\"0 0 900 560\" width=\"900\" height=\"560\""
     + " font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"waiting requests and KV-cache usage per stage\">"
     + "<rect x=\"0\" y=\"0\" width=\"900\" height=\"560\" fill=\"#ffffff\"/>"
     + "<text x=\"450\" y=\"28\" text-anchor=\"middle\" font-size=\"14\">Server: waiting requests and KV-cache usage per stage</text>"
     # Grid and ticks: each tick label's x (bottom) or y (sides) is its value's place.
     + ([$xa.ticks[] | (X | c) as $px
         | "<line x1=\"\($px)\" y1=\"\($a.t)\" x2=\"\($px)\" y2=\"\($a.b)\" stroke=\"#e0e0e0\"/>"
           + "<text class=\"xtick\" x=\"\($px)\" y=\"\($a.b + 18)\" text-anchor=\"middle\">\(tick)</text>"] | join(""))
     + ([$ya.ticks[] | (Y($ya) | c) as $py
         | "<line x1=\"\($a.l)\" y1=\"\($py)\" x2=\"\($a.r)\" y2=\"\($py)\" stroke=\"#e0e0e0\"/>"
           + "<text class=\"ytick\" x=\"\($a.l - 8)\" y=\"\($py)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(tick)</text>"] | join(""))
     + (if $has_kv then
          [$y2a.ticks[] | (Y($y2a) | c) as $py
           | "<line x1=\"\($a.r)\" y1=\"\($py)\" x2=\"\($a.r + 5)\" y2=\"\($py)\" stroke=\"#000000\"/>"
             + "<text class=\"y2tick\" x=\"\($a.r + 8)\" y=\"\($py)\" text-anchor=\"start\" dominant-baseline=\"middle\">\(tick)</text>"] | join("")
        else "" end)
     + "<rect x=\"\($a.l)\" y=\"\($a.t)\" width=\"\($a.r - $a.l)\" height=\"\($a.b - $a.t)\" fill=\"none\" stroke=\"#000000\"/>"
     + "<text x=\"\(($a.l + $a.r) / 2)\" y=\"\($a.b + 44)\" text-anchor=\"middle\">\($f.xlabel // "rate (requests/s)" | e)</text>"
     + "<text x=\"24\" y=\"\(($a.t + $a.b) / 2)\" text-anchor=\"middle\" transform=\"rotate(-90 24 \(($a.t + $a.b) / 2))\">waiting requests (count)</text>"
     + (if $has_kv then "<text x=\"876\" y=\"\(($a.t + $a.b) / 2)\" text-anchor=\"middle\" transform=\"rotate(90 876 \(($a.t + $a.b) / 2))\">KV-cache usage, max (% of the cache)</text>" else "" end)
     + (if $knee != null then
          ($knee.rate | X | c) as $kx
          | "<line class=\"knee\" data-rate=\"\($knee.rate | e)\" x1=\"\($kx)\" y1=\"\($a.t)\" x2=\"\($kx)\" y2=\"\($a.b)\" stroke=\"#c00000\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>"
            + (if ($knee.rate | X) > ($a.l + $a.r) / 2
               then "<text x=\"\($knee.rate | X - 6 | c)\" y=\"\($a.t + 16)\" text-anchor=\"end\" fill=\"#c00000\">\($knee.label | e)</text>"
               else "<text x=\"\($knee.rate | X + 6 | c)\" y=\"\($a.t + 16)\" text-anchor=\"start\" fill=\"#c00000\">\($knee.label | e)</text>" end)
        else "" end)
     # The series: a line through the stages in rate order, and a mark per stage.
     + ([$series[] | . as $s | (if .scale == "y2" then $y2a else $ya end) as $ax
         | (if (.pts | length) > 1 then
              "<polyline points=\"\([.pts[] | "\(.x | X | c),\(.y | Y($ax) | c)"] | join(" "))\" fill=\"none\" stroke=\"\(.colour)\" stroke-width=\"2\""
              + (if .dash != "" then " stroke-dasharray=\"\(.dash)\"" else "" end) + "/>"
            else "" end)
           + ([.pts[] | (.x | X) as $px | (.y | Y($ax)) as $py
               | ("data-series=\"\($s.key)\" data-stage=\"\(.stage | e)\" data-x=\"\(.x | e)\" data-value=\"\(.v | e)\""
                  + " fill=\"\($s.fill)\" stroke=\"\($s.colour)\" stroke-width=\"1.5\"") as $attrs
               | ("<title>stage \(.stage | e) at \(.x | fx(1)) \($xunit): \($s.tip) "
                  + "\(if $s.key == "kv_max" then .y | fx(3) else .v | fx(2) end)\($s.unit)</title>") as $tip
               | if $s.shape == "square" then
                   "<rect class=\"pt\" \($attrs) x=\"\($px - 4 | c)\" y=\"\($py - 4 | c)\" width=\"8\" height=\"8\">\($tip)</rect>"
                 else "<circle class=\"pt\" \($attrs) cx=\"\($px | c)\" cy=\"\($py | c)\" r=\"4.5\">\($tip)</circle>" end]
              | join(""))] | join(""))
     # The legend, below the plot as the other plots' keys.
     + "<g class=\"legend\">"
     + ([$series | to_entries[] | (60 + .key * 270) as $lx | .value
         | "<line x1=\"\($lx)\" y1=\"500\" x2=\"\($lx + 30)\" y2=\"500\" stroke=\"\(.colour)\" stroke-width=\"2\""
           + (if .dash != "" then " stroke-dasharray=\"\(.dash)\"" else "" end) + "/>"
           + (if .shape == "square" then "<rect x=\"\($lx + 11)\" y=\"496\" width=\"8\" height=\"8\" fill=\"\(.fill)\" stroke=\"\(.colour)\"/>"
              else "<circle cx=\"\($lx + 15)\" cy=\"500\" r=\"4.5\" fill=\"\(.fill)\" stroke=\"\(.colour)\" stroke-width=\"1.5\"/>" end)
           + "<text x=\"\($lx + 38)\" y=\"500\" dominant-baseline=\"middle\">\(.legend)</text>"] | join(""))
     + "</g></svg>"
   end) as $drawing
| (if ($rows | length) == 0 then $drawing
   else
     "<figure id=\"plot-server_metrics\">\($drawing)<figcaption>"
     + ("The server's waiting requests (\($wn | if . == "" then "none served" else . end): the most and the mean over each stage's scrapes, left axis)"
        + (if $has_kv then " and KV-cache usage (\($kn): the most over each stage's scrapes, in percent of the cache, the server's fraction x 100, right axis)" else "" end)
        + " against "
        + (if $offered then "each stage's offered (intended) rate" else "each stage's achieved rate (a closed loop has no offered rate)" end)
        + (if $knee != null then ". Dashed red: the knee" else "" end)
        + (if ($sm.interval_s | finite) then ". Scraped every \($sm.interval_s | fx(3)) s" else "" end)
        + (if $r.knee.evidence != null then ". Knee evidence: \($r.knee.evidence)" else "" end) + "." | e)
     + "</figcaption></figure>"
     + "<table id=\"server-metrics-table\"><thead><tr><th>Stage</th><th>"
     + (if $offered then "Offered" else "Achieved" end) + "<br>req/s</th>"
     + "<th>Waiting requests<br>max</th><th>Waiting requests<br>mean</th><th>KV-cache usage<br>max, %</th></tr></thead><tbody>"
     + ([$rows[] | "<tr data-stage=\"\(.stage | e)\" class=\"\(if $r.knee != null and .stage == $r.knee.stage then "knee" else "" end)\">"
         + "<td class=\"stage\">\(.stage | e)</td><td class=\"x\">\(.x | fx(1))</td>"
         + "<td class=\"waiting-max\">\(.waiting_max | fx(2))</td><td class=\"waiting-mean\">\(.waiting_mean | fx(2))</td>"
         + "<td class=\"kv-max\">\(if .kv_max | finite then .kv_max * 100 | fx(3) else "n/a" end)</td></tr>"] | join(""))
     + "</tbody></table>"
     + (if $cut > 0 then "<p class=\"note\">\($cut) stage(s) after the sweep's stop are left out of this plot too.</p>" else "" end)
   end) as $section
# The certificate's heading is the page's own (every string from the JSON is
# escaped there), once: the section goes before it.
| ($page | split("<h2>Certificate</h2>")) as $parts
| if ($parts | length) != 2 then error("report_html: the page has \($parts | length - 1) certificate headings, want 1")
  else $parts[0] + "<h2>Server metrics</h2>" + $section + "<h2>Certificate</h2>" + $parts[1] end
JQ
)
case "$result" in /* | ./*) ;; *) result="./$result" ;; esac
case "$plots" in /* | ./*) ;; *) plots="./$plots" ;; esac
[ -z "$cert" ] || case "$cert" in /* | ./*) ;; *) cert="./$cert" ;; esac
jq -e . "$result" >/dev/null 2>&1 || { echo "report_html: $result: not JSON" >&2; exit 2; }
bad=$(jq -r -f "$here/lib/result_check.jq" "$result")
[ -z "$bad" ] || { echo "report_html: $result: not a loadgen result the report can read: $bad" >&2; exit 2; }
bad=$(jq -r "$srvm_check" "$result")
[ -z "$bad" ] || { echo "report_html: $result: not a loadgen result the report can read: $bad" >&2; exit 2; }
facts="$plots/plot_facts.json"
[ -r "$facts" ] || { echo "report_html: $facts: not readable (run scripts/plot_run.sh first)" >&2; exit 2; }
if [ -n "$cert" ]; then
  jq -e '.per_k | type == "array"' "$cert" >/dev/null 2>&1 ||
    { echo "report_html: --certificate $cert: not a certificate (no per_k array)" >&2; exit 2; }
fi
html="$(dirname -- "$result")/report.html"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/report_html.XXXXXX")
# The page is written under a name mktemp makes beside it, then renamed
# onto report.html (mv -T: onto a planted link, never through it).
htmltmp=$(mktemp -- "$(dirname -- "$result")/.report.html.XXXXXX")
trap 'rm -rf -- "$tmp" "$htmltmp"' EXIT

# Each drawn SVG, inlined: without its XML prolog, its ids prefixed with the
# plot's name so that the four plots' ids (gnuplot's own) stay distinct.
echo '{}' >"$tmp/svgs.json"
for n in $(jq -r '.drawn // [] | .[]' "$facts"); do
  case "$n" in *[!a-z_]*) continue ;; esac # plot names are plot_run.sh's own words
  svg="$plots/$n.svg"
  [ -r "$svg" ] || continue
  sed -e '/^<?xml/d' -e "s/id=\(['\"]\)/id=\1$n-/g" -e "s/href=\(['\"]\)#/href=\1#$n-/g" "$svg" >"$tmp/$n.svg"
  jq -Rs --arg n "$n" --slurpfile all "$tmp/svgs.json" '$all[0] + {($n): .}' "$tmp/$n.svg" >"$tmp/svgs.next"
  mv "$tmp/svgs.next" "$tmp/svgs.json"
done
certargs=(--argjson c null)
[ -z "$cert" ] || certargs=(--slurpfile c "$cert")
jq -n -r --slurpfile r "$result" --slurpfile f "$facts" --slurpfile svgsf "$tmp/svgs.json" "${certargs[@]}" \
  -f "$here/lib/report_html.jq" >"$tmp/page.html"
jq -n -j --rawfile page "$tmp/page.html" --slurpfile r "$result" --slurpfile f "$facts" "$srvm_html" >"$htmltmp"
chmod 0644 -- "$htmltmp"
mv -T -- "$htmltmp" "$html"
echo "report_html: wrote $html"
