#!/usr/bin/env bash
# Shared by the report tests (sourced): real loadgen runs against simserver
# to draw and render. Uses loadgen's end-to-end helpers (WORK, start_sim,
# fail, pass; every process killed on exit).
#   make_runs: $WORK/one/r.json    one stage, no stream, no certificate, no knee
#              $WORK/cert.json     a certificate with round figures
#              $WORK/sweep/r.json  3 stages past the server's capacity (8 slots x
#                                  64 tokens x 5 ms: about 25 requests/s), checked
#                                  against cert.json: a knee by the server
source "${RB_SOURCE_DIR:?}/tests/loadgen/e2e/lib.sh"
PLOT="$RB_SOURCE_DIR/scripts/plot_run.sh"
REPORT_HTML="$RB_SOURCE_DIR/scripts/report_html.sh"

# The certificate's figures: 2 workers at safe rho 0.03, a delivery costing
# 5 us and an event 2 us, the reference workload 17 events for 16 tokens. A
# plan of 64 output tokens is 64 + 1 events per request at 7 us each: the
# certified range for 2 workers is 0.03 x 2 / (65 x 7 us) = 131.87 req/s.
CERT_MAX_RATE=131.87

make_runs() {
  start_sim sim --max-num-seqs 8 --inter-token-latency 5ms
  mkdir -p "$WORK/one" "$WORK/sweep"
  # (Its lag bound is raised: 10 dispatches, one of them held up by a busy
  # shared host, would make a client knee, and this case is one without.)
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 10 --duration 1 --no-stream \
    --random-input-len 32 --random-output-len 16 --saturation-lag-ms 1000 --quiet --no-progress --save-result \
    --result-dir "$WORK/one" --result-filename r.json 2>"$WORK/one.err" ||
    fail "the one-stage run exited $?: $(cat "$WORK/one.err")"
  jq '{rhobench_certificate: 2, created: "2026-01-01T00:00:00Z", mode: "fixture", host: .host,
       budget_us: 100, cost_model: {per_delivery_us: 5, per_event_us: 2},
       reference_workload: {name: "fixture", random_input_len: 16, random_output_len: 16,
                            events_per_request: 17, events_per_delivery: 1},
       per_k: [{workers: 1, safe_rho: 0.05, safe_rate_per_worker: 420, safe_total_rate: 420,
                limited_by: "model", certified_note: "fixture"},
               {workers: 2, safe_rho: 0.03, safe_rate_per_worker: 252, safe_total_rate: 504,
                limited_by: "model", certified_note: "fixture"}]}' "$WORK/one/r.json" >"$WORK/cert.json"
  # The sweep needs a client that is on time: under a sanitizer beside other
  # work one dispatch of 25 came 100 ms late, and loadgen judged, rightly,
  # a knee by the client. So the lag bound is 1 s (this case is about the
  # server), and a sweep whose knee is still the client's runs again, at
  # most 3 times in all, each such attempt printed (as lg_e2e_knee).
  local attempt
  for attempt in 1 2 3; do
    "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --certificate "$WORK/cert.json" \
      --random-input-len 32 --random-output-len 64 --ignore-eos \
      --sweep linear --sweep-stages 3 --sweep-max-rate 45 --stage-duration 2 --saturation-lag-ms 1000 \
      --quiet --no-progress --save-result --result-dir "$WORK/sweep" --result-filename r.json \
      2>"$WORK/sweep.err" || fail "the sweep exited $?: $(cat "$WORK/sweep.err")"
    jq -e '.knee.cause == "client" and (.knee.criterion | test("dispatches past the lag bound"))' \
      "$WORK/sweep/r.json" >/dev/null || break
    echo "attempt $attempt: the client was late ($(jq -r .knee.criterion "$WORK/sweep/r.json"); load average $(cut -d' ' -f1-3 /proc/loadavg)): again"
  done
  jq -e '.knee.cause == "server" and (.certificate | test("within the certified safe rho"))' \
    "$WORK/sweep/r.json" >/dev/null ||
    fail "the sweep past capacity has no server knee or no certificate note: $(jq -c '{knee, certificate}' "$WORK/sweep/r.json")"
}

# hostile IN OUT: IN with markup in every string a report shows.
hostile() {
  jq '"<script>alert(1)</script>\"><img src=x onerror=alert(2)>&amp;" as $h
      | .model_id = $h | .endpoint = $h | .date = $h | .host.hostname = $h | .host.cpu_model = $h
      | .client_bias.reason = $h | .client_bias.verdict = "OK\"><script>x</script>"
      | .knee.criterion = $h | .knee.cause = $h | .certificate = $h
      | .stages[].saturation_criterion = $h | .stages[].saturated_by = $h' "$1" >"$2"
}
