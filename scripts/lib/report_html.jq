# report.html from a loadgen result ($r[0]), what plot_run.sh drew
# ($f[0], plot_facts.json), the certificate if given ($c[0] or null) and
# the plots as SVG text ($svgs: name -> SVG without its XML prolog).
# Every string taken from the JSON goes through `e` (HTML-escaped); numbers
# through `fx`. Nothing is fetched: no scripts, no external styles or images.
def finite: type == "number" and (isinfinite | not) and (isnan | not);
def e: if . == null then "n/a" else tostring | @html end;
# fx(d): a number with at most d decimals, or n/a.
def fx(d): if finite then (. * pow(10; d) | round) / pow(10; d) | tostring else "n/a" end;
def pct: if finite then (. * 1000 | round) / 10 | tostring + "%" else "n/a" end;
def cls: tostring | gsub("[^A-Za-z0-9-]"; "");

$r[0] as $r | $f[0] as $f | (if $c then $c[0] else null end) as $c | $svgsf[0] as $svgs
| ($r.saturated_stage | if finite then . else 1e9 end) as $stop
| ($r.client_bias // {}) as $cb
| ($cb.verdict // null) as $verdict

| ("<div class=\"box verdict v-\($verdict // "none" | cls)\" id=\"verdict\">"
  + "<div class=\"label\">Client's own verdict</div>"
  + "<div class=\"big\" id=\"verdict-value\">\($verdict // "none" | e)</div>"
  + "<p>\($cb.reason // "This run has no client verdict." | e)</p></div>") as $vbox

| (if $r.knee != null then
     "<div class=\"box knee\" id=\"knee\"><div class=\"label\">Server's knee</div>"
     + "<div class=\"big\" id=\"knee-value\">\($r.knee.rate | fx(1)) req/s</div>"
     + "<p>Stage \($r.knee.stage | e) (counted from 0), saturated by the \($r.knee.cause | e): "
     + "\($r.knee.criterion | e)</p></div>"
   else
     "<div class=\"box\" id=\"knee\"><div class=\"label\">Server's knee</div>"
     + "<div class=\"big\" id=\"knee-value\">none</div>"
     + "<p>No stage saturated: the run stayed below the server's knee"
     + (if ($r.stages | length) > 1 then ", up to \([$r.stages[] | .request_rate | select(finite)] | max | fx(1)) req/s offered" else "" end)
     + ".</p></div>" end) as $kbox

| ("<div class=\"box run\"><div class=\"label\">Run</div>"
   + "<div class=\"big\">\($r.completed | e) completed</div>"
   + "<p>\($r.failed | e) failed, \($r.dispatched | e) dispatched in \($r.duration_s | fx(1)) s; "
   + "\($r.load_mode | e) loop, \($r.num_workers | e) workers, \($r.stages | length) stage(s)"
   + (if ($r.prompts_repeated | finite) and $r.prompts_repeated > 0
      then "; <strong>\($r.prompts_repeated | e) requests repeated a prompt</strong> (pool of \($r.prompt_pool_size | e)): a prefix cache may have answered them" else "" end)
   + (if $r.interrupted == true then "; <strong>interrupted</strong>" else "" end)
   + ".</p></div>") as $rbox

| ([$r.stages[] | .ntpot_breakdown_ms != null] | any) as $split
| ("<table id=\"stages\"><thead><tr>"
   + "<th>Stage</th><th>Offered<br>req/s</th><th>Achieved<br>req/s</th><th>Completed<br>req/s</th>"
   + "<th>Completed<br>count</th><th>Failed</th><th>TTFT p50<br>ms</th><th>TTFT p99<br>ms</th>"
   + "<th>NTPOT p50<br>ms</th><th>NTPOT p99<br>ms</th><th>Output<br>tok/s</th><th>Lag p99<br>ms</th>"
   + (if $split then "<th>NTPOT split, ms/token:<br>queue / prefill / decode / client</th>" else "" end)
   + "<th>Cached<br>prompt share</th><th>Saturated</th></tr></thead><tbody>"
   + ([$r.stages[] | . as $s
       | "<tr data-stage=\"\($s.stage | fx(0))\" class=\""
         + (if $r.knee != null and $s.stage == $r.knee.stage then "knee" elif $s.stage > $stop then "cut" else "" end) + "\">"
         + "<td class=\"stage\">\($s.stage | e)</td>"
         + "<td>\($s.request_rate | if type == "string" then e else fx(1) end)</td>"
         + "<td>\($s.achieved_rate | fx(1))</td><td>\($s.completed_rate // $s.request_throughput | fx(1))</td>"
         + "<td class=\"completed\">\($s.completed | e)</td><td class=\"failed\">\($s.failed | e)</td>"
         + "<td>\($s.p50_ttft_ms | fx(2))</td><td>\($s.p99_ttft_ms | fx(2))</td>"
         + "<td>\($s.p50_ntpot_ms | fx(2))</td><td>\($s.p99_ntpot_ms | fx(2))</td>"
         + "<td>\($s.output_throughput | fx(0))</td><td>\($s.p99_schedule_lag_ms | fx(3))</td>"
         + (if $split then
              "<td>" + (if $s.ntpot_breakdown_ms == null then "not split"
                        else [$s.ntpot_breakdown_ms | .queue, .prefill, .decode, .client | fx(3)] | join(" / ") end) + "</td>"
            else "" end)
         + "<td>\($s.cached_prompt_tokens_share | pct)</td>"
         + "<td>" + (if $s.saturated == true then "<span title=\"\($s.saturation_criterion | e)\">by the \($s.saturated_by | e)</span>"
                     elif $s.stage > $stop then "cut short: the sweep stopped" else "no" end) + "</td></tr>"]
      | join(""))
   + "</tbody></table>"
   + (if $split | not then "<p class=\"note\">No NTPOT split: the server sent no timing stamps (only the bundled simulator does).</p>" else "" end)
  ) as $table

| ($f.drawn // []) as $drawn
| (if $f.x_is_offered then "the offered rate (top axis: the achieved rate)" else "the achieved rate (a closed loop has no offered rate)" end) as $x
| {latency_profile: "Latency profile against \($x). Dashed red: the knee; green band: the client's certified range.",
   throughput: "Completed and achieved requests/s against \($x); output tokens/s on the right axis.",
   ntpot_breakdown: $f.breakdown_title,
   schedule_lag: "Schedule lag: how late each request was sent against its intended time."} as $captions
| (if ($drawn | length) == 0 then "<p class=\"note\">No plots of the run: it had no data to plot.</p>"
   elif ($svgs | length) == 0 then "<p class=\"note\">No plots of the run: gnuplot is not installed (apt-get install gnuplot-nox); scripts/plot_run.sh wrote their data and script only. The server's plot below needs no gnuplot.</p>"
   else "<div class=\"plots\">" + ([$drawn[] | select($svgs[.] != null and $svgs[.] != "") | "<figure id=\"plot-\(. | cls)\">\($svgs[.])<figcaption>\($captions[.] | e)</figcaption></figure>"] | join("")) + "</div>" end
   + (if ($f.stages_cut_short // 0) > 0 then "<p class=\"note\">\($f.stages_cut_short) stage(s) after the sweep's stop are left out of the plots.</p>" else "" end)
   + ([$f.has | to_entries[] | select(.value == false and .key != "breakdown_missing") | .key] as $no
      | if ($no | length) > 0 then "<p class=\"note\">No data for: \($no | join(", ") | e) (left out of the plots).</p>" else "" end)
  ) as $plots

| ($f.cert_range // null) as $range
| ((if $r.certificate != null then "<p id=\"cert-check\"><strong>Loadgen's check of this run's plan:</strong> \($r.certificate | e).</p>"
    else "<p id=\"cert-check\">This run was not checked against a certificate (loadgen <code>--certificate</code>).</p>" end)
   + (if $range != null then "<p id=\"cert-range\"><strong>Certified client range:</strong> up to \($range.max_rate | fx(1)) req/s offered"
        + (if $range.exact then "" else " (about: from the rounded figures in the note above)" end)
        + ", for \($range.basis | e), at safe rho \($range.safe_rho | fx(3)) per worker for \($range.certified_workers | e) workers.</p>"
      else "" end)
   + (if $c != null then
        "<p>Certificate made \($c.created | e) (\($c.mode | e) mode) on \($c.host.cpu_model | e), \($c.host.cores_online | e) cores, "
        + "\($c.host.kernel | e), load average \($c.host.loadavg_1min_start | fx(2)) to \($c.host.loadavg_1min_end | fx(2)); "
        + "budget \($c.budget_us | fx(1)) us of client delay; cost \($c.cost_model.per_delivery_us | fx(2)) us per delivery + "
        + "\($c.cost_model.per_event_us | fx(2)) us per event.</p>"
        + "<table id=\"cert\"><thead><tr><th>Workers</th><th>Safe rho</th><th>Safe total rate<br>(reference workload, req/s)</th><th>Limited by</th><th>Note</th></tr></thead><tbody>"
        + ([$c.per_k[] | "<tr><td>\(.workers | e)</td><td>\(.safe_rho | fx(3))</td><td>\(.safe_total_rate | fx(1))</td><td>\(.limited_by | e)</td><td>\(.certified_note | e)</td></tr>"] | join(""))
        + "</tbody></table>"
      else "" end)) as $certhtml

| ($r.host // {}) as $h | ($cb.host // {}) as $hb
| ("<table id=\"machine\" class=\"kv\"><tbody>"
   + ([["CPU", ($h.cpu_model | e)], ["Cores online", ($h.cores_online | e)], ["Kernel", ($h.kernel | e)],
       ["Host name", ($h.hostname | e)], ["CPU idle driver/governor", ($h.cpuidle // "unknown" | e)],
       ["CPU latency QoS of the workers", (($h.cpu_latency_qos // null) as $q
          | if $q == null or $q.asked_us == null then "not asked"
            else "asked \($q.asked_us | e) us, held by \($q.held_workers | e) of \($q.workers | e)"
                 + (if $q.limit_us != null then " (host's limit \($q.limit_us | e) us)" else "" end)
                 + (if $q.refused != null then "; \($q.refused | e)" else "" end) end)],
       ["loadgen", ($r.loadgen_version | e)],
       ["Workers, nice, real-time priority", "\($r.num_workers | e), \($r.nice | e), \($r.realtime_priority | e)"],
       ["Receive clock", "\($r.receive_clock | e) (kernel-stamped share \($r.receive_clock_kernel_share | pct))"],
       ["Run-queue wait of the client", ($hb.run_delay_share | pct)], ["CPU steal", ($hb.steal_share | pct)],
       ["Involuntary context switches", ($hb.involuntary_switches | e)],
       ["Max worker rho", ($cb.max_rho | fx(3))]]
      | map("<tr><th>\(.[0])</th><td>\(.[1])</td></tr>") | join(""))
   + "</tbody></table>") as $machine

| "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
  + "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
  + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
  + "<title>rhobench report: \($r.model_id | e), \($r.date | e)</title><style>"
  + "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}"
  + "h1{font-size:1.5em;margin:0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}"
  + ".sub{color:#555;margin:.3em 0 1em}.top{display:flex;gap:1em;flex-wrap:wrap}"
  + ".box{flex:1 1 300px;border:1px solid #ccc;border-radius:6px;padding:.6em 1em;background:#fafafa}"
  + ".box p{margin:.3em 0;font-size:.9em}.label{color:#555;font-size:.85em;text-transform:uppercase}"
  + ".big{font-size:1.8em;font-weight:bold}.v-OK{border-color:#2a7a2a;background:#eef7ee}"
  + ".v-AT-RISK{border-color:#b07a00;background:#fff6e0}.v-BIASED{border-color:#c00000;background:#fdeaea}"
  + ".knee{border-color:#c00000}table{border-collapse:collapse;font-size:.85em;margin:.5em 0}"
  + "th,td{border:1px solid #ddd;padding:.25em .5em;text-align:right;vertical-align:top}th{background:#f0f0f0}"
  + "td small{color:#555}tr.knee td{background:#fdeaea}tr.cut td{color:#999}"
  + "table.kv th{text-align:left}#cert td:last-child,#stages td:last-child{text-align:left;max-width:28em}"
  + ".plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:.5em 1em}figure{margin:0}figure svg{max-width:100%;height:auto;border:1px solid #eee}"
  + "figcaption{font-size:.85em;color:#555}.note{color:#555;font-size:.9em}code{background:#f0f0f0}"
  + "</style></head><body>"
  + "<h1>rhobench report</h1>"
  + "<p class=\"sub\">\($r.model_id | e) at \($r.endpoint | e) (\($r.backend | e)), \($r.date | e)</p>"
  + "<div class=\"top\">\($vbox)\($kbox)\($rbox)</div>"
  + "<h2>Per stage</h2>\($table)"
  + "<h2>Plots</h2>\($plots)"
  + "<h2>Certificate</h2>\($certhtml)"
  + "<h2>Machine</h2>\($machine)"
  + "</body></html>\n"
