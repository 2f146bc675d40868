#!/usr/bin/env bash
# report.html in a real headless browser (Debian's chromium): the rendered
# DOM shows the client's verdict and the knee the result JSON holds, one
# table row per stage with the JSON's completed and failed counts, the four
# plots as inline SVG and the server's waiting requests and KV-cache usage
# plotted as the JSON has them (report_lib.sh's server_plot_problems, on
# the rendered DOM), with nothing that runs or fetches; hostile
# strings render as text. A screenshot is a real page: the right size, many
# colours, not blank (a blank page's screenshot fails the same check).
# chromium runs with networking off (every host name unresolvable, no
# proxy, no background services), each run bounded by a timeout.
# Skipped (77) without chromium or gnuplot, except under CI (CI=true), where that fails.
source "$(dirname "$0")/report_lib.sh"
DOM="python3 $(dirname "$0")/report_dom.py"
command -v chromium >/dev/null 2>&1 || skip "chromium is not installed (scripts/setup.sh installs it)"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed: no plots to render"

# browse OUT ARGS... URL: one headless chromium run, fetching nothing.
browse() {
  local out=$1; shift
  local profile rc=0
  profile=$(mktemp -d "$WORK/chromium.XXXXXX")
  timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --disable-default-apps --disable-domain-reliability --disable-client-side-phishing-detection \
    --no-first-run --no-default-browser-check --no-pings --metrics-recording-only \
    --no-proxy-server --host-resolver-rules='MAP * ~NOTFOUND' \
    --user-data-dir="$profile" --hide-scrollbars "$@" >"$out" 2>"$WORK/chromium.err" || rc=$?
  [ "$rc" -eq 0 ] || fail "chromium exited $rc: $(tail -n 5 "$WORK/chromium.err")"
}

make_runs
s="$WORK/sweep/r.json"
bash "$PLOT" --certificate "$WORK/cert.json" "$s" "$WORK/sweep/plots" >"$WORK/plot.out" 2>&1 ||
  fail "plot_run exited $?: $(cat "$WORK/plot.out")"
html="$WORK/sweep/report.html"
[ -s "$html" ] || fail "no report.html: $(cat "$WORK/plot.out")"

browse "$WORK/dom.html" --dump-dom "file://$html"
$DOM dom "$WORK/dom.html" >"$WORK/dom.json" || fail "could not read the rendered DOM"
got=$(jq -c . "$WORK/dom.json")
want=$(jq -c '{verdict: .client_bias.verdict, knee: (.knee.rate * 10 | round / 10),
               rows: [.stages[] | {stage, completed, failed}]}' "$s")
jq -e --argjson w "$want" '.verdict == $w.verdict and .rows == $w.rows
     and (.knee | test("^[0-9.]+ req/s$")) and (.knee | split(" ")[0] | tonumber) == $w.knee
     and .svgs == 5 and .figures_with_svg == 5 and .active == {}' "$WORK/dom.json" >/dev/null ||
  fail "rendered DOM: $got; the JSON says $want, and 5 SVGs (4 plots and the server's) with nothing active"
probs=$(server_plot_problems "$WORK/dom.json" "$s")
[ -z "$probs" ] || fail "the rendered server plot against the JSON: $probs"
echo "rendered: $(jq -c '{verdict, knee, rows: (.rows | length), svgs, server_marks: (.server.points | length)}' "$WORK/dom.json")"

# Hostile strings render as text, not as elements.
mkdir -p "$WORK/hostile"
hostile "$s" "$WORK/hostile/r.json"
bash "$PLOT" "$WORK/hostile/r.json" "$WORK/hostile/plots" >"$WORK/hostile.out" 2>&1 || fail "plot_run hostile: $(cat "$WORK/hostile.out")"
browse "$WORK/hdom.html" --dump-dom "file://$WORK/hostile/report.html"
$DOM dom "$WORK/hdom.html" >"$WORK/hdom.json" || fail "could not read the hostile DOM"
jq -e '.active == {} and (.title | startswith("rhobench report: <script>alert(1)</script>"))
       and .verdict == "OK\"><script>x</script>" and (.rows | length) == 3' "$WORK/hdom.json" >/dev/null ||
  fail "hostile strings: $(jq -c '{active, title, verdict, rows: (.rows | length)}' "$WORK/hdom.json")"

# A screenshot: a real page, where a blank one fails the same check.
browse "$WORK/shot.out" --window-size=1280,1800 --screenshot="$WORK/shot.png" "file://$html"
fig=$($DOM png "$WORK/shot.png" 1280 1800) || fail "the screenshot is not a rendered page: $fig"
echo "screenshot: $fig"
printf '<!DOCTYPE html><html><body></body></html>\n' >"$WORK/blank.html"
browse "$WORK/blank.out" --window-size=1280,1800 --screenshot="$WORK/blank.png" "file://$WORK/blank.html"
! blank=$($DOM png "$WORK/blank.png" 1280 1800) || fail "a blank page passes the screenshot check: $blank"
pass "report.html in chromium: verdict $(jq -r .verdict "$WORK/dom.json"), knee $(jq -r .knee "$WORK/dom.json"), $(jq '.rows | length' "$WORK/dom.json") stage rows, 5 SVGs, $(jq '.server.points | length' "$WORK/dom.json") server marks as the JSON's; hostile strings as text; the screenshot a page"
