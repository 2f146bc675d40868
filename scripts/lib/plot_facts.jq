# What scripts/plot_run.sh draws and marks, from a loadgen result JSON (the
# input) and, when $cert is true, the certificate in $certf[0]. Read by
# plot_run.sh (numbers for gnuplot) and report_html.sh (the same figures in
# words). Every string here that reaches gnuplot is built from numbers and
# fixed words only.
def finite: type == "number" and (isinfinite | not) and (isnan | not);
def num: if finite then . else null end;
def abs: if . < 0 then -. else . end;
def r1: . * 10 | round / 10;
def fmt: if . == null then "n/a" elif . >= 100 then round | tostring else r1 | tostring end;

. as $r
| (.saturated_stage | num // 1e9) as $stop
| [.stages[] | select(.stage <= $stop)] as $st
| ([$st[] | .request_rate | finite] | length > 0 and all) as $offered
| [$st[] | (if $offered then .request_rate else .achieved_rate end) | num | select(. != null)] as $xs
| (if .knee != null and (.knee.rate | finite) then
     (.knee.cause | if . == "server" or . == "client" then . else "unknown cause" end) as $cause
     | {rate: .knee.rate, stage: .knee.stage, cause: $cause,
        label: "knee \(.knee.rate | r1) req/s (by the \($cause))"}
   else null end) as $knee
| ($r.num_workers | num // 1) as $k
| ($r.certificate | if type == "string" then . else null end) as $note
| ([$note // "" | capture("\\((?<tok>[0-9.]+) tokens each\\)") | .tok | tonumber][0]) as $tok
| (if $cert == true then
     $certf[0] as $c
     | ($c.per_k | sort_by([(.workers - $k | abs), .workers]) | .[0]) as $e
     | ($c.reference_workload // {}) as $ref
     | ($c.cost_model.per_delivery_us | num) as $pd
     | ($c.cost_model.per_event_us | num) as $pe
     | (if ($ref.events_per_request | finite) and ($ref.random_output_len | finite)
        then [0, $ref.events_per_request - $ref.random_output_len] | max else 0 end) as $extra
     | if ($c.rhobench_certificate // 1) >= 2 and $pd != null and $pe != null and $tok != null
          and ($e.safe_rho | finite) then
         {max_rate: ($e.safe_rho * $k / (($tok + $extra) * ($pd + $pe) * 1e-6)), exact: true,
          basis: "this run's plan (\($tok | fmt) output tokens per request) at the certified safe rho"}
       elif ($e.safe_rate_per_worker | finite) then
         {max_rate: ($e.safe_rate_per_worker * $k), exact: true,
          basis: "the certificate's reference workload"}
       else null end
     | if . == null then null else . + {safe_rho: ($e.safe_rho | num), certified_workers: $e.workers,
                                        source: "certificate file"} end
   elif ($r.certificate_check.certified_max_rate | finite) then
     $r.certificate_check as $cc
     | {max_rate: $cc.certified_max_rate, exact: true, safe_rho: ($cc.safe_rho | num),
        certified_workers: $cc.certified_workers,
        basis: "this run's plan at the certified safe rho (the report's certificate_check)",
        source: "report"}
   elif $note != null then
     ([$note | capture("planned (?<rate>[0-9.]+) requests/s over (?<k>[0-9]+) workers \\([0-9.]+ tokens each\\) is predicted at rho (?<pred>[0-9.]+) per worker.*certified safe rho (?<safe>[0-9.]+) for (?<kc>[0-9]+) workers")][0]) as $m2
     | ([$note | capture("certified (?<per>[0-9.]+) requests/s per worker for (?<kc>[0-9]+) workers")][0]) as $m1
     | if $m2 != null and ($m2.pred | tonumber) > 0 then
         {max_rate: (($m2.rate | tonumber) * ($m2.safe | tonumber) / ($m2.pred | tonumber)), exact: false,
          safe_rho: ($m2.safe | tonumber), certified_workers: ($m2.kc | tonumber),
          basis: "this run's plan, from the rounded figures of the report's certificate note",
          source: "report note"}
       elif $m1 != null then
         {max_rate: (($m1.per | tonumber) * $k), exact: false, safe_rho: null,
          certified_workers: ($m1.kc | tonumber), basis: "the certificate's rate per worker",
          source: "report note"}
       else null end
   else null end) as $range
| ([$xs[], ($knee.rate // empty)] | if length == 0 then 1 else max end) as $top
| ($xs | unique) as $u
| (if ($u | length) > 1 then ([range(1; $u | length) | $u[.] - $u[. - 1]] | min) * 0.6
   elif ($u | length) == 1 and $u[0] > 0 then $u[0] * 0.15 else 0.5 end) as $bw
| (if $range != null and $range.max_rate <= 1.5 * $top then [$top, $range.max_rate] | max else $top end
   | if . > 0 then [. * 1.1, $top + $bw] | max else 1 end) as $xmax
| {
    x_is_offered: $offered,
    xlabel: (if $offered then "offered rate (requests/s)"
             else "achieved rate (requests/s; closed loop: no offered rate)" end),
    xmax: $xmax,
    x2tics: (if $offered and ($st | length) > 0 then
               [$st[] | select(.request_rate | finite) | "'\(.achieved_rate | num | fmt)' \(.request_rate)"]
               | join(", ") else null end),
    boxwidth: $bw,
    # The knee's label on the side of its line with room for it.
    knee: (if $knee == null then null else $knee + {label_side: (if $knee.rate > 0.55 * $xmax then "left" else "right" end)} end),
    cert_range: (if $range == null then null else $range + {
      drawn_to: ([$range.max_rate, $xmax] | min),
      label: ("client certified up to \($range.max_rate | fmt) req/s"
              + (if $range.exact then "" else " (about)" end)
              + (if $range.max_rate > $xmax then ", beyond this plot" else "" end))} end),
    has: {
      ttft_p50: ([$st[] | .p50_ttft_ms | num | select(. != null and . > 0)] | length > 0),
      ttft_p99: ([$st[] | .p99_ttft_ms | num | select(. != null and . > 0)] | length > 0),
      ntpot_p50: ([$st[] | .p50_ntpot_ms | num | select(. != null and . > 0)] | length > 0),
      ntpot_p99: ([$st[] | .p99_ntpot_ms | num | select(. != null and . > 0)] | length > 0),
      completed_rate: ([$st[] | (.completed_rate // .request_throughput) | num | select(. != null)] | length > 0),
      achieved_rate: ([$st[] | .achieved_rate | num | select(. != null)] | length > 0),
      output_tps: ([$st[] | .output_throughput | num | select(. != null)] | length > 0),
      breakdown: ([$st[] | .ntpot_breakdown_ms.queue | num | select(. != null)] | length > 0),
      breakdown_missing: ([$st[] | select((.ntpot_breakdown_ms.queue | num) == null)
                           | .mean_ntpot_ms | num | select(. != null)] | length > 0),
      lag_p50: ([$st[] | .median_schedule_lag_ms | num | select(. != null and . > 0)] | length > 0),
      lag_p99: ([$st[] | .p99_schedule_lag_ms | num | select(. != null and . > 0)] | length > 0)
    },
    stages_plotted: ($st | length),
    stages_cut_short: ([.stages[] | select(.stage > $stop)] | length)
  }
| .breakdown_title = (if .has.breakdown and (.has.breakdown_missing | not) then
                        "NTPOT breakdown per stage (the simulator's truth, mean per output token)"
                      elif .has.breakdown then
                        "NTPOT breakdown per stage (hatched: stages without the server's timing stamps, not split)"
                      else "Mean NTPOT per stage, not split: the server sent no timing stamps" end)
