#!/usr/bin/env bash
# scripts/plot_run.sh and report_html.sh given a result JSON they cannot
# read (rel_plot_input): wrong types, a stage list far past loadgen's 64,
# text that is not JSON. Each is refused with exit 2 naming the key, before
# any file is written (no temporaries left), and a 20,000-stage result is
# refused at once instead of plotted for minutes.
source "$(dirname "$0")/lib.sh"
S="$(dirname "$0")/../../scripts"
start_sim plot
"$LOADGEN" --base-url "$SIM_URL" --num-workers 0 --request-rate 200 --num-prompts 20 --random-input-len 8 \
  --random-output-len 4 --quiet --no-progress --save-result --result-dir "$WORK" --result-filename ok.json \
  2>"$WORK/lg.err" || { cat "$WORK/lg.err" >&2; fail "the run for a result failed"; }
ok="$WORK/ok.json"
[ -z "$(jq -r -f "$S/lib/result_check.jq" "$ok")" ] || fail "a real result is refused: $(jq -r -f "$S/lib/result_check.jq" "$ok")"

# bad NAME KEY JQ: the result changed by JQ must be refused naming KEY.
bad() {
  local name=$1 key=$2 filter=$3 rc d="$WORK/$1"
  mkdir -p "$d/plots"
  if [ "$filter" = TEXT ]; then printf 'not json {' >"$d/r.json"; else jq "$filter" "$ok" >"$d/r.json"; fi
  for script in plot_run report_html; do
    rc=0
    timeout -s KILL 60 bash "$S/$script.sh" "$d/r.json" "$d/plots" >"$WORK/out" 2>"$WORK/err" || rc=$?
    [ "$rc" -eq 2 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "$name ($script): exit $rc, expected 2"; }
    grep -qF -- "$key" "$WORK/err" || fail "$name ($script): the message does not name $key: $(cat "$WORK/err")"
    ! grep -q 'jq: error\|gnuplot' "$WORK/err" || fail "$name ($script): a tool's error, not a check: $(cat "$WORK/err")"
  done
  left=$(find "$d" -mindepth 1 ! -name r.json ! -name plots | tr '\n' ' ')
  [ -z "$left" ] || fail "$name: files left behind: $left"
  pass "$name: refused by both scripts, naming $key"
}
bad "a string percentile" "stages[0].p50_ttft_ms" '.stages[0].p50_ttft_ms = "fast"'
bad "stages not a list" "stages" '.stages = {"a": 1}'
bad "a string knee rate" "knee.rate" '.knee = {"rate": "high", "stage": 0}'
bad "a breakdown of strings" "stages[0].ntpot_breakdown_ms.queue" '.stages[0].ntpot_breakdown_ms = {"queue": "x"}'
bad "num_workers an object" "num_workers" '.num_workers = {}'
bad "20,000 stages" "20000 stages" '.stages = [range(20000) | {stage: .}]'
bad "not JSON" "not JSON" TEXT
