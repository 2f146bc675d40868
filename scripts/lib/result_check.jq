# The first place where a loadgen result JSON holds what scripts/plot_run.sh
# and report_html.sh cannot read, as "KEY: expected WHAT, got TYPE" (nothing
# when all is well). Both scripts run it first, so that a bad result is
# refused naming its key, not met later by a jq or gnuplot error. The plots
# draw at most 64 stages (loadgen's own bound), which also bounds their time.
def numlike: type == "number" or type == "null" or (type == "string" and (. == "inf" or . == "-inf"));
def is($types): type as $t | $types | index($t) != null;
def want($key; $types; $what): if is($types) then empty else "\($key): expected \($what), got \(type)" end;
def num($key): if numlike then empty else "\($key): expected a number, got \(type)" end;
# first: the checks stop at the first problem (a long stage list is told
# by its length before any stage is read).
first((if type != "object" then "the result: expected an object, got \(type)" else empty end),
  (.stages | want("stages"; ["array"]; "an array")),
  (.stages | if type == "array" and length > 64 then "stages: \(length) stages, past the 64 a loadgen result holds" else empty end),
  (.stages | if type == "array" then to_entries[] | .key as $i | .value
     | if type != "object" then "stages[\($i)]: expected an object, got \(type)"
       else (("stage", "request_rate", "achieved_rate", "p50_ttft_ms", "p99_ttft_ms", "p50_ntpot_ms",
              "p99_ntpot_ms", "output_throughput", "median_schedule_lag_ms", "p99_schedule_lag_ms",
              "completed", "failed", "completed_rate", "request_throughput", "mean_ntpot_ms") as $k
             | .[$k] | num("stages[\($i)].\($k)")),
            (.saturated | want("stages[\($i)].saturated"; ["boolean", "null"]; "true or false")),
            (.ntpot_breakdown_ms | want("stages[\($i)].ntpot_breakdown_ms"; ["object", "null"]; "an object")),
            (.ntpot_breakdown_ms | if type == "object" then to_entries[] | .key as $b | .value
                 | num("stages[\($i)].ntpot_breakdown_ms.\($b)") else empty end)
       end
   else empty end),
  (("saturated_stage", "num_workers", "completed", "failed", "dispatched", "duration_s",
    "prompts_repeated", "prompt_pool_size") as $k | .[$k] | num($k)),
  (.knee | want("knee"; ["object", "null"]; "an object")),
  (.knee | if type == "object" then (.rate | num("knee.rate")), (.stage | num("knee.stage")),
             (.cause | want("knee.cause"; ["string", "null"]; "a string")) else empty end),
  (("certificate", "model_id", "date", "load_mode") as $k | .[$k] | want($k; ["string", "null"]; "a string")),
  (("client_bias", "host") as $k | .[$k] | want($k; ["object", "null"]; "an object")),
  (.interrupted | want("interrupted"; ["boolean", "null"]; "true or false"))
) // empty
