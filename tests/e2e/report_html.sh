#!/usr/bin/env bash
# scripts/plot_run.sh and report_html.sh on real runs (see report_lib.sh):
# - a sweep past capacity checked against a certificate: four plots (PNG and
#   SVG) on the offered-rate axis, the knee and the certified range marked
#   where the JSON and the certificate put them, report.html with the
#   verdict, the knee, a table row per stage, the four SVGs inline and the
#   server's waiting requests and KV-cache usage plotted (a mark per stage
#   and series, each the JSON's value where the plot's axes put it; the knee;
#   a table of the same figures), and nothing that could fetch (no script,
#   no external reference);
# - the same without --certificate: the range from the report's note, to its
#   rounding;
# - the run's plots missing (gnuplot not installed): said so, and not blamed
#   on the data, the server's plot still drawn;
# - one stage, no stream, no knee, no certificate, no server metrics: drawn,
#   and said so (no server plot); closed loops: one stage's metrics drawn at
#   its achieved rate, two stages (no metrics of their own) said so;
# - no server timing stamps (a foreign server): the unsplit NTPOT drawn;
# - hostile strings in every field shown: escaped, no element injected;
# - bad input: exit 2 with a message; server metrics of the wrong type: exit
#   2 naming the key, no report and no temporary file left.
source "$(dirname "$0")/report_lib.sh"
DOM="python3 $(dirname "$0")/report_dom.py"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed"
make_runs
s="$WORK/sweep/r.json" p="$WORK/sweep/plots" html="$WORK/sweep/report.html"

bash "$PLOT" --certificate "$WORK/cert.json" "$s" "$p" >"$WORK/plot.out" 2>&1 ||
  fail "plot_run on the sweep exited $?: $(cat "$WORK/plot.out")"
for n in latency_profile throughput ntpot_breakdown schedule_lag; do
  for ext in png svg; do [ -s "$p/$n.$ext" ] || fail "no $n.$ext: $(cat "$WORK/plot.out")"; done
done
leftover=$(find "$WORK/sweep" -name '*.tmp' | head -n 3)
[ -z "$leftover" ] || fail "temp files left: $leftover"
facts="$p/plot_facts.json" gp="$p/run_plots.gp"
# The knee as a line at the JSON's knee rate, on every plot.
k=$(jnum "$s" .knee.rate)
[ "$(grep -c "^set arrow 1 from first $k, graph 0 to first $k, graph 1" "$gp")" -eq 8 ] ||
  fail "the knee at $k is not marked on the 4 plots x 2 formats: $(grep '^set arrow' "$gp" | sort -u)"
# The certified range from the certificate's figures, exactly.
jq -e --argjson want "$CERT_MAX_RATE" '.cert_range.exact == true and (.cert_range.max_rate - $want | fabs) < 0.01' \
  "$facts" >/dev/null || fail "certified range: $(jq -c .cert_range "$facts"), want $CERT_MAX_RATE req/s"
grep -q "^set object 1 rect from first 0, graph 0 to first $(jq .cert_range.drawn_to "$facts")," "$gp" ||
  fail "the certified range is not shaded: $(grep '^set object' "$gp" | sort -u)"
# The achieved rate of each plotted stage on the top axis, at its offered rate.
want_tics=$(jq -r '[.stages[] | "\(.request_rate)"] | join(" ")' "$s")
got_tics=$(jq -r '.x2tics | split(", ") | map(split(" ")[1]) | join(" ")' "$facts")
[ "$want_tics" = "$got_tics" ] || fail "top-axis tics at '$got_tics', stages offered at '$want_tics'"

[ -s "$html" ] || fail "no report.html beside the result: $(cat "$WORK/plot.out")"
verdict=$(jq -r .client_bias.verdict "$s")
grep -q "id=\"verdict-value\">$verdict<" "$html" || fail "report.html does not show the verdict $verdict"
grep -q "id=\"knee-value\">$k req/s<" "$html" || fail "report.html does not show the knee at $k req/s"
$DOM dom "$html" >"$WORK/sweep/dom.json" || fail "report_dom.py could not read report.html"
rows=$(jq '.rows | length' "$WORK/sweep/dom.json") # the rows of table#stages
[ "$rows" -eq "$(jq '.stages | length' "$s")" ] || fail "report.html has $rows stage rows, the JSON $(jq '.stages | length' "$s")"
for st in $(jq -r '.stages[] | "\(.stage):\(.completed)"' "$s"); do
  grep -qE "<tr data-stage=\"${st%%:*}\"[^>]*><td class=\"stage\">${st%%:*}</td>(<td>[^<]*</td>){3}<td class=\"completed\">${st#*:}</td>" "$html" ||
    fail "stage ${st%%:*}'s row does not show ${st#*:} completed"
done
[ "$(grep -o '<svg' "$html" | wc -l)" -eq 5 ] || fail "report.html has $(grep -o '<svg' "$html" | wc -l) SVGs, want 4 plots and the server's"
# The server's waiting requests and KV-cache usage, against the JSON.
probs=$(server_plot_problems "$WORK/sweep/dom.json" "$s")
[ -z "$probs" ] || fail "the server plot against the JSON: $probs"
marks=$(jq '.server.points | length' "$WORK/sweep/dom.json")
[ "$marks" -eq $((3 * $(jq '.stages | length' "$s"))) ] || fail "the server plot has $marks marks, want 3 per stage"
grep -q 'id="cert-range"><strong>Certified client range:</strong> up to 131.9 req/s' "$html" ||
  fail "report.html does not give the certified range"
# Self-contained: no script, no frame, no external reference. The only URLs
# are the SVG namespaces, which are names, never fetched.
ext=$(grep -oiE '<(script|iframe|link|object|embed)|(src|href)="[^#"][^"]*"|url\([^#)]|https?://[^" ]*' "$html" |
  grep -vE '^http://www\.w3\.org/(2000/svg|1999/xlink)$' | sort -u | head -n 5 || true)
[ -z "$ext" ] || fail "report.html refers outside itself: $ext"

# The run's plots not drawn (gnuplot missing: their data and script only),
# the server's plot still drawn: the page says which is missing and why.
cp -r "$p" "$WORK/sweep/nognuplot"
rm -f "$WORK/sweep/nognuplot"/*.svg "$WORK/sweep/nognuplot"/*.png
cp "$s" "$WORK/sweep/nognuplot/r.json"
bash "$REPORT_HTML" "$WORK/sweep/nognuplot/r.json" "$WORK/sweep/nognuplot" >"$WORK/nognuplot.out" 2>&1 ||
  fail "report_html without the run's SVGs: $(cat "$WORK/nognuplot.out")"
ng="$WORK/sweep/nognuplot/report.html"
grep -q 'No plots of the run: gnuplot is not installed' "$ng" || fail "no gnuplot: the page does not say so: $(grep -o '<p class="note">[^<]*' "$ng")"
! grep -q 'no data to plot' "$ng" || fail "no gnuplot: the page blames the run's data"
[ "$(grep -o '<svg' "$ng" | wc -l)" -eq 1 ] || fail "no gnuplot: $(grep -o '<svg' "$ng" | wc -l) SVGs, want the server's alone"

# Without --certificate: the range from the report's certificate_check
# (loadgen's own prediction, exact), and from a report without that key
# (an older loadgen's) from its note's rounded figures.
jq -e '.certificate_check.ok == true and .certificate_check.workers == .num_workers
       and (.certificate_check.predicted_rho < .certificate_check.safe_rho)' "$s" >/dev/null ||
  fail "the report's certificate_check: $(jq -c .certificate_check "$s")"
bash "$PLOT" "$s" "$WORK/sweep/plots2" >"$WORK/plot2.out" 2>&1 || fail "plot_run without --certificate: $(cat "$WORK/plot2.out")"
jq -e --argjson want "$CERT_MAX_RATE" '.cert_range.exact == true and .cert_range.source == "report"
     and (.cert_range.max_rate / $want - 1 | fabs) < 0.01' "$WORK/sweep/plots2/plot_facts.json" >/dev/null ||
  fail "range from the report's certificate_check: $(jq -c .cert_range "$WORK/sweep/plots2/plot_facts.json"), want $CERT_MAX_RATE"
jq 'del(.certificate_check)' "$s" >"$WORK/sweep/old.json"
bash "$PLOT" "$WORK/sweep/old.json" "$WORK/sweep/plots3" >"$WORK/plot3.out" 2>&1 || fail "plot_run on a report without certificate_check: $(cat "$WORK/plot3.out")"
jq -e --argjson want "$CERT_MAX_RATE" '.cert_range.exact == false and (.cert_range.max_rate / $want - 1 | fabs) < 0.05
     and (.cert_range.label | test("about"))' "$WORK/sweep/plots3/plot_facts.json" >/dev/null ||
  fail "range from the note: $(jq -c .cert_range "$WORK/sweep/plots3/plot_facts.json"), want about $CERT_MAX_RATE"

# One stage, no stream, no knee, no certificate.
o="$WORK/one/r.json"
jq -e '(.stages | length) == 1 and .knee == null and .certificate == null and .p50_tpot_ms == null' "$o" >/dev/null ||
  fail "the one-stage run is not what this case needs: $(jq -c '{n: (.stages | length), knee, certificate, p50_tpot_ms}' "$o")"
bash "$PLOT" "$o" "$WORK/one/plots" >"$WORK/one.out" 2>&1 || fail "plot_run on one stage: $(cat "$WORK/one.out")"
for n in latency_profile throughput ntpot_breakdown schedule_lag; do
  [ -s "$WORK/one/plots/$n.svg" ] || fail "one stage: no $n.svg: $(cat "$WORK/one.out")"
done
! grep -q '^set arrow\|^set object' "$WORK/one/plots/run_plots.gp" || fail "one stage: a knee or a range is marked without one"
grep -q 'id="knee-value">none<' "$WORK/one/report.html" || fail "one stage: report.html does not say there is no knee"
grep -q 'not checked against a certificate' "$WORK/one/report.html" || fail "one stage: report.html does not say there is no certificate"
jq -e '.server_metrics == null and all(.stages[]; .server_metrics == null)' "$o" >/dev/null ||
  fail "the one-stage run scraped the server: $(jq -c .server_metrics "$o")"
$DOM dom "$WORK/one/report.html" >"$WORK/one/dom.json" || fail "report_dom.py could not read the one-stage report.html"
jq -e '.server.figure == false and .server.svgs == 0 and .svgs == 4 and .server.points == []
       and (.server.note | test("^The server.s metrics were not scraped"))' "$WORK/one/dom.json" >/dev/null ||
  fail "one stage, no server metrics: $(jq -c '{server: (.server | {figure, svgs, note}), svgs}' "$WORK/one/dom.json")"

# Closed loops, scraped: one stage has the run's metrics as its own, drawn
# at its achieved rate (it has no offered rate); two stages have no start
# times, so no metrics of their own: said so, no server plot.
for n in 1 2; do
  c="$WORK/closed$n" stages=(--closed-stage 2:6)
  [ "$n" -eq 1 ] || stages+=(--closed-stage 4:8)
  mkdir -p "$c"
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 1 "${stages[@]}" --random-input-len 32 --random-output-len 16 \
    --server-metrics target --server-metrics-interval 100ms --quiet --no-progress --save-result \
    --result-dir "$c" --result-filename r.json 2>"$c.err" || fail "the closed run $n exited $?: $(cat "$c.err")"
  jq -e --argjson n "$n" '.load_mode == "closed" and (.stages | length) == $n and (.server_metrics.scrapes > 0)
     and all(.stages[]; (.server_metrics != null) == ($n == 1))' "$c/r.json" >/dev/null ||
    fail "the closed run $n is not what this case needs: $(jq -c '{load_mode, scrapes: .server_metrics.scrapes,
    stages: [.stages[].server_metrics != null]}' "$c/r.json")"
  bash "$PLOT" "$c/r.json" "$c/plots" >"$c.out" 2>&1 || fail "plot_run closed $n: $(cat "$c.out")"
  $DOM dom "$c/report.html" >"$c/dom.json" || fail "report_dom.py could not read the closed report.html"
done
probs=$(server_plot_problems "$WORK/closed1/dom.json" "$WORK/closed1/r.json")
[ -z "$probs" ] || fail "closed loop, one stage: the server plot against the JSON: $probs"
jq -e '.server.figure == false and .server.svgs == 0
       and (.server.note | test("scraped for the run as a whole .* not per stage .*closed loop"))' "$WORK/closed2/dom.json" >/dev/null ||
  fail "closed loop, two stages: $(jq -c '.server | {figure, svgs, note}' "$WORK/closed2/dom.json")"

# A server without timing stamps: no split, the measured mean drawn instead.
mkdir -p "$WORK/foreign"
jq 'del(.ntpot_breakdown_ms, .stages[].ntpot_breakdown_ms, .ttft_truth_ms, .stages[].ttft_truth_ms)' "$s" >"$WORK/foreign/r.json"
bash "$PLOT" "$WORK/foreign/r.json" "$WORK/foreign/plots" >"$WORK/foreign.out" 2>&1 || fail "plot_run foreign: $(cat "$WORK/foreign.out")"
[ -s "$WORK/foreign/plots/ntpot_breakdown.svg" ] || fail "foreign: no ntpot_breakdown plot"
grep -q "not split: the server sent no timing stamps" "$WORK/foreign/plots/run_plots.gp" || fail "foreign: the plot does not say it is not split"
grep -q "No NTPOT split: the server sent no timing stamps" "$WORK/foreign/report.html" || fail "foreign: report.html does not say so"

# Hostile strings: shown as text, never as markup.
mkdir -p "$WORK/hostile"
hostile "$s" "$WORK/hostile/r.json"
bash "$PLOT" --certificate "$WORK/cert.json" "$WORK/hostile/r.json" "$WORK/hostile/plots" >"$WORK/hostile.out" 2>&1 ||
  fail "plot_run on hostile strings: $(cat "$WORK/hostile.out")"
h="$WORK/hostile/report.html"
inj=$(grep -oiE '<script|<img|onerror=alert\(2\)>' "$h" | grep -v '^onerror' | head -n 3 || true)
[ -z "$inj" ] || fail "hostile strings injected markup: $inj"
esc='&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;&amp;amp;'
n=$(grep -o "$esc" "$h" | wc -l)
[ "$n" -ge 9 ] || fail "hostile strings: $n escaped copies shown, want one per field (>= 9)"
grep -q "<figcaption>The server[^ ]*s waiting requests[^<]*Knee evidence: $esc\.</figcaption>" "$h" ||
  fail "hostile strings: the server plot's caption does not show the knee's evidence escaped"
# ... and the note of a run whose stages have none of the plotted gauges
# shows the last scrape error escaped.
mkdir -p "$WORK/nogauge"
jq --arg re 'waiting|cache_usage|queue_reqs|token_usage' \
  '.stages[].server_metrics.metrics |= with_entries(select(.key | test($re) | not))' "$WORK/hostile/r.json" >"$WORK/nogauge/r.json"
bash "$REPORT_HTML" "$WORK/nogauge/r.json" "$WORK/hostile/plots" >"$WORK/nogauge.out" 2>&1 ||
  fail "report_html on a run without the gauges: $(cat "$WORK/nogauge.out")"
h="$WORK/nogauge/report.html"
grep -q "<p class=\"note\" id=\"server-metrics-note\">The server's metrics were scraped ([0-9]* scrapes, [0-9]* failed; last error: $esc), but no plotted stage" "$h" ||
  fail "no gauges: the note does not say so with the last error escaped: $(grep -o '<p class="note" id="server-metrics-note">[^/]*' "$h")"
! grep -q '<svg[^>]*class="server-metrics"' "$h" || fail "no gauges: a server plot is drawn"
inj=$(grep -oiE '<script|<img' "$h" | head -n 3 || true)
[ -z "$inj" ] || fail "hostile strings injected markup in the note: $inj"
! grep -q "alert" "$WORK/hostile/plots/run_plots.gp" || fail "a hostile string reached the gnuplot script"

# Bad input.
rc=0; bash "$REPORT_HTML" "$WORK/cert.json" "$p" >"$WORK/bad.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q 'not a loadgen result' "$WORK/bad.out" || fail "report_html on a non-result: exit $rc, $(cat "$WORK/bad.out")"
rc=0; bash "$PLOT" --certificate "$s" "$s" "$WORK/bad" >"$WORK/bad.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q 'not a certificate' "$WORK/bad.out" || fail "plot_run --certificate RESULT: exit $rc, $(cat "$WORK/bad.out")"
# Server metrics of the wrong type: refused naming the key, nothing written.
while IFS='|' read -r edit key; do
  d=$(mktemp -d "$WORK/badtype.XXXXXX")
  jq "$edit" "$s" >"$d/r.json"
  rc=0; bash "$REPORT_HTML" "$d/r.json" "$p" >"$d/out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] && grep -qF "not a loadgen result the report can read: $key" "$d/out" ||
    fail "report_html with $edit: exit $rc, $(cat "$d/out"); want 2 naming $key"
  left=$(find "$d" -mindepth 1 ! -name r.json ! -name out)
  [ -z "$left" ] || fail "report_html with $edit left: $left"
done <<'EOF'
.stages[1].server_metrics.metrics["vllm:num_requests_waiting"].max = "41"|stages[1].server_metrics.metrics["vllm:num_requests_waiting"].max: expected a number, got string
.stages[2].server_metrics.metrics["vllm:kv_cache_usage_perc"] = [0.5]|stages[2].server_metrics.metrics["vllm:kv_cache_usage_perc"]: expected an object, got array
.stages[0].server_metrics.metrics = "none"|stages[0].server_metrics.metrics: expected an object, got string
.stages[0].server_metrics = 7|stages[0].server_metrics: expected an object, got number
.server_metrics.last_error = {}|server_metrics.last_error: expected a string, got object
EOF
pass "report: plots on the offered-rate axis with the knee ($k req/s) and the certified range; the server's waiting requests and KV-cache usage, $marks marks as the JSON's; report.html self-contained, escaped; one stage, closed loop, foreign, hostile, bad input and types"
