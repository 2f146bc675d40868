#!/usr/bin/env bash
# Shared by the report tests (sourced): real loadgen runs against simserver
# to draw and render. Uses loadgen's end-to-end helpers (WORK, start_sim,
# fail, pass; every process killed on exit).
#   make_runs: $WORK/one/r.json    one stage, no stream, no certificate, no knee
#              $WORK/cert.json     a certificate with round figures
#              $WORK/sweep/r.json  3 stages past the server's capacity (8 slots x
#                                  64 tokens x 5 ms: about 25 requests/s), checked
#                                  against cert.json: a knee by the server; the
#                                  server's metrics scraped every 200 ms
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
      --server-metrics target --server-metrics-interval 200ms --quiet --no-progress --save-result --result-dir "$WORK/sweep" --result-filename r.json \
      2>"$WORK/sweep.err" || fail "the sweep exited $?: $(cat "$WORK/sweep.err")"
    jq -e '.knee.cause == "client" and (.knee.criterion | test("dispatches past the lag bound"))' \
      "$WORK/sweep/r.json" >/dev/null || break
    echo "attempt $attempt: the client was late ($(jq -r .knee.criterion "$WORK/sweep/r.json"); load average $(cut -d' ' -f1-3 /proc/loadavg)): again"
  done
  jq -e '.knee.cause == "server" and (.certificate | test("within the certified safe rho"))' \
    "$WORK/sweep/r.json" >/dev/null ||
    fail "the sweep past capacity has no server knee or no certificate note: $(jq -c '{knee, certificate}' "$WORK/sweep/r.json")"
  # What the server plot's checks need: every stage's waiting and KV-cache
  # gauges, a queue past capacity (its max above its mean, so that the two
  # are told apart) and a KV cache in use.
  jq -e '[.stages[] | .server_metrics.metrics // {}] as $m
         | ($m | all(.["vllm:num_requests_waiting"].max != null and .["vllm:kv_cache_usage_perc"].max != null))
           and ($m | any(.["vllm:num_requests_waiting"] | .max > .mean))
           and ($m | any(.["vllm:kv_cache_usage_perc"].max > 0))' "$WORK/sweep/r.json" >/dev/null ||
    fail "the sweep's server metrics are not what the server plot's checks need: $(jq -c '[.stages[] | .server_metrics.metrics // {}
         | {w: .["vllm:num_requests_waiting"], kv: .["vllm:kv_cache_usage_perc"]}]' "$WORK/sweep/r.json")"
}

# server_plot_problems DOM.json RESULT.json: what the report's server metrics
# plot (as report_dom.py read it) gets wrong against the result, one line
# each, nothing when it is right. The result is simserver's (vLLM's names),
# open loop: one mark per stage with metrics in each series, its value the
# JSON's, drawn where the plot's own tick labels put that value (within half
# a pixel; KV-cache usage in percent) and at the stage's offered rate (its
# achieved rate when a stage has none: a closed loop's); the
# knee's line at the knee's rate; the table and the marks' titles the same
# figures to their rounding.
server_plot_problems() {
  jq -r --slurpfile r "$2" '
    def near($a; $b; $tol): ($a - $b) as $d | (if $d < 0 then -$d else $d end) <= $tol;
    # pixel = a + b * value, from an axis'"'"'s first and last tick labels.
    def scale($t): if ($t | length) < 2 then null
                   else {a: $t[0][1], b: (($t[-1][1] - $t[0][1]) / ($t[-1][0] - $t[0][0]))} end;
    def px($sc; $v): $sc.a + $sc.b * $v;
    $r[0] as $r | .server as $s
    | ($r.saturated_stage // 1e9) as $stop
    | ([$r.stages[] | select(.stage <= $stop) | .request_rate | type == "number"] | all) as $offered
    | [$r.stages[] | select(.stage <= $stop) | .server_metrics.metrics as $m | select($m != null)
       | {stage, x: (if $offered then .request_rate else .achieved_rate end), waiting_max: $m["vllm:num_requests_waiting"].max,
          waiting_mean: $m["vllm:num_requests_waiting"].mean, kv_max: $m["vllm:kv_cache_usage_perc"].max}] as $want
    | ($want | map({key: (.stage | tostring), value: .}) | from_entries) as $by
    | scale($s.ticks.x) as $xs | scale($s.ticks.y) as $ys | scale($s.ticks.y2) as $y2s
    | if ($s.figure | not) or $s.svgs != 1 then "no server plot (figure \($s.figure), \($s.svgs) SVGs; note: \($s.note))"
      elif $xs == null or $ys == null or $y2s == null then "an axis without tick labels: \($s.ticks | tojson)"
      else
        (("waiting_max", "waiting_mean", "kv_max") as $k
         | ([$s.points[] | select(.series == $k) | {stage, value}] | sort_by(.stage)) as $got
         | ([$want[] | select(.[$k] != null) | {stage, value: .[$k]}]) as $w
         | if $got != $w then "\($k): marks \($got | tojson), the JSON \($w | tojson)" else empty end),
        ($s.points[] | . as $p | $by[.stage | tostring] as $j
         | (if $j == null then "a \(.series) mark for stage \(.stage), which has no metrics"
            else
              (if .x != $j.x or (near(.cx; px($xs; $j.x); 0.5) | not)
               then "\(.series) stage \(.stage): drawn at x \(.cx) (rate \(.x)), its rate \($j.x) is at \(px($xs; $j.x))" else empty end),
              ((if .series == "kv_max" then px($y2s; $j.kv_max * 100) else px($ys; $j[$p.series]) end) as $y
               | if near(.cy; $y; 0.5) | not then "\(.series) stage \(.stage): drawn at y \(.cy), its value \($j[$p.series]) is at \($y)" else empty end),
              ([.title | capture(": (?<v>[0-9.]+)(?<pct>% of the cache)?$")][0] as $t
               | if $t == null then "\(.series) stage \(.stage): a title without its value: \(.title | tojson)"
                 elif (.title | startswith("stage \($p.stage) at ")) | not then "\(.series) stage \(.stage): title \(.title | tojson)"
                 elif .series == "kv_max" and ($t.pct == null or (near($t.v | tonumber; $j.kv_max * 100; 0.0005) | not))
                 then "kv_max stage \(.stage): title \(.title | tojson), the JSON \($j.kv_max)"
                 elif .series != "kv_max" and (near($t.v | tonumber; $j[$p.series]; 0.005) | not)
                 then "\(.series) stage \(.stage): title \(.title | tojson), the JSON \($j[$p.series])" else empty end)
            end)),
        (if $r.knee != null then
           (if $s.knee_x == null or (near($s.knee_x; px($xs; $r.knee.rate); 0.5) | not)
            then "the knee drawn at x \($s.knee_x), its rate \($r.knee.rate) is at \(px($xs; $r.knee.rate))" else empty end)
         elif $s.knee_x != null then "a knee drawn at \($s.knee_x) in a run without one" else empty end),
        (if ($s.rows | map(.stage)) != ($want | map(.stage)) then "table rows \($s.rows | map(.stage)), stages with metrics \($want | map(.stage))"
         else $s.rows[] | . as $row | $by[.stage | tostring] as $j
           | ([["x", $j.x, 0.05], ["waiting-max", $j.waiting_max, 0.005], ["waiting-mean", $j.waiting_mean, 0.005],
               ["kv-max", $j.kv_max * 100, 0.0005]][] | . as [$c, $v, $tol]
              | if ($row.cells[$c] | tonumber? // null) as $n | $n == null or (near($n; $v; $tol) | not)
                then "table stage \($row.stage): \($c) \($row.cells[$c] | tojson), the JSON \($v)" else empty end),
             (if ($row.class == "knee") != ($r.knee != null and $r.knee.stage == $row.stage)
              then "table stage \($row.stage): class \($row.class | tojson), the knee is stage \($r.knee.stage)" else empty end)
         end)
      end' "$1"
}

# hostile IN OUT: IN with markup in every string a report shows.
hostile() {
  jq '"<script>alert(1)</script>\"><img src=x onerror=alert(2)>&amp;" as $h
      | .model_id = $h | .endpoint = $h | .date = $h | .host.hostname = $h | .host.cpu_model = $h
      | .host.cpuidle = $h | .host.cpu_latency_qos = {asked_us: 0, held_workers: 0, workers: 1, limit_us: null, refused: $h}
      | .client_bias.reason = $h | .client_bias.verdict = "OK\"><script>x</script>"
      | .knee.criterion = $h | .knee.cause = $h | .certificate = $h
      | .stages[].saturation_criterion = $h | .stages[].saturated_by = $h
      | .knee.evidence = $h | .server_metrics.last_error = $h | .server_metrics.url = $h
      | .stages[].server_metrics.metrics[$h] = {type: "gauge", min: 1, max: 1, mean: 1, samples: 1}' "$1" >"$2"
}
