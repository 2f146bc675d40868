#!/usr/bin/env bash
# From the prototype's output directories (/tmp/k2exp, /tmp/k2s, /tmp/k2rt, /tmp/k2ss):
# fits.tsv, each certificate's k=2 fit; steps.tsv, every step whose busiest
# worker ran at rho 0.27-0.37 (near the crossing), with the client's delay
# split into pickup and processing, the workers' callback moments, and the
# host's scheduling figures. Writes into this directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
{
  printf 'series\trun\tsafe_rho\tmean_service_us\tr_us\ttransport_us\n'
  for e in k2exp k2s k2rt k2ss; do
    for c in /tmp/$e/*-*/certificate.json; do
      jq -r --arg e $e --arg r "$(basename "$(dirname "$c")")" \
        'def n(f): if . == null then "" else f end;
         .per_k[0] | [$e, $r, (.safe_rho|n(.*1000|round/1000)), (.mean_service_us|n(.*10|round/10)),
                      (.r_us|n(round)), (.transport_us|n(round))] | @tsv' "$c"
    done
  done
} > "$here/fits.tsv"
{
  printf 'series\trun\tmax_rho\tdelay_mean_us\tpickup_mean_us\tprocessing_mean_us\tworker_es2_us2\tworker_es_us\tinvoluntary_switches\trun_delay_pct\n'
  for e in k2exp k2s k2rt k2ss; do
    for d in /tmp/$e/*-*/; do
      for f in "$d"steps/*.json; do
        jq -r --arg e $e --arg r "$(basename "$d")" '.client_bias | select(.max_rho > 0.27 and .max_rho < 0.37)
          | [$e, $r, (.max_rho*100|round/100), (.client_delay_us.mean|round), (.pickup_delay_us.mean|round),
             (.processing_us.mean|round), ([.workers[].second_moment_us2]|add/length|round),
             ([.workers[].mean_service_us]|add/length*10|round/10), .host.involuntary_switches,
             (.host.run_delay_share*1000|round/10)] | @tsv' "$f" 2>/dev/null || true
      done
    done
  done
} > "$here/steps.tsv"
