#!/usr/bin/env bash
# A stand-in for loadgen in calibrate's end-to-end tests: it takes loadgen's
# flags and writes a result JSON whose figures follow a known M/G/1 client
# exactly (plus 1% deterministic noise), so calibrate's whole pipeline can be
# checked against known parameters. Per worker: 18 SSE events per request,
# the client's own cost 20 us per event (sd 20 us), plus the --client-cost
# when given, all times FAKE_LOADGEN_ES_FACTOR: E[S] = (20 + cost) f, E[S^2] =
# E[S]^2 + (20 f)^2 (+ (cost f)^2 for exp), transport 40 us.
# FAKE_LOADGEN_R_FACTOR: the delay it reports follows PK with E[S^2] times
# that factor, while the moments it reports stay the above: a client whose
# measured curve has an R that its own callbacks do not explain.
# FAKE_LOADGEN_R_FACTOR_SEED_BELOW: that factor only for arrival seeds below
# this one (calibrate's first sweep of a cost; its repeat's seeds are 5000 on).
# FAKE_LOADGEN_BASE_EXTRA_US: a run without --client-cost (the self-test's
# baseline) reports its client that many us busier per event, for arrival
# seeds below FAKE_LOADGEN_BASE_SEED_BELOW (the first baseline; the one
# measured again for the repeats has seeds from 20000 on).
# FAKE_LOADGEN_PLACED_R_FACTOR: a run given --worker-cpus (calibrate's
# placed sweep) reports a delay that follows PK with E[S^2] times that
# factor (for 1000, over budget at any rate calibrate tries, as a worker
# confined to a CPU that other work holds is).
# FAKE_LOADGEN_PLACED_LOW_EXTRA_US, FAKE_LOADGEN_PLACED_LOW_BELOW (and
# FAKE_LOADGEN_PLACED_LOW_FROM, default 0): a run given --worker-cpus at a
# rate from FROM to below BELOW reports its delay that many us higher (a
# worker placed alone on its CPU, every token woken across CPUs, costs more
# at low rates than at high ones). FAKE_LOADGEN_SHARED_R_FACTOR: as
# FAKE_LOADGEN_PLACED_R_FACTOR, for the runs without --worker-cpus.
# FAKE_LOADGEN_EMPTY_BELOW: below that rate, the run had no events (each
# worker's rho, mean_service_us, second_moment_us2 null; events 0; nothing
# completed nor failed), as a short batch at 5 requests/s can.
# FAKE_LOADGEN_PIDFILE: write the pid there; FAKE_LOADGEN_SLEEP: sleep first;
# FAKE_LOADGEN_CRASH_ABOVE: crash above that rate; FAKE_LOADGEN_KILL_SIM_ABOVE:
# kill the simulator above that rate. FAKE_LOADGEN_ARGS_LOG: append "k=K
# cpus=LIST" (--worker-cpus; "" without) for each run.
set -euo pipefail
rate=1 k=1 dir=. file=result.json cost="" seed=1 dur=1 cpus=""
while [ $# -gt 0 ]; do
  case "$1" in
    --request-rate) rate=$2; shift ;;
    --num-workers) k=$2; shift ;;
    --result-dir) dir=$2; shift ;;
    --result-filename) file=$2; shift ;;
    --client-cost) cost=$2; shift ;;
    --seed) seed=$2; shift ;;
    --worker-cpus) cpus=$2; shift ;;
    --duration) dur=${2%ms}; dur=$(awk -v d="$dur" 'BEGIN{print d/1000}'); shift ;;
    --base-url|--endpoint|--model|--random-input-len|--random-output-len|--burstiness|--realtime-priority) shift ;;
    --save-result|--quiet|--no-stream) ;;
    *) echo "fake_loadgen: unexpected argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "${FAKE_LOADGEN_PIDFILE:-}" ] && echo $$ > "$FAKE_LOADGEN_PIDFILE"
[ -n "${FAKE_LOADGEN_ARGS_LOG:-}" ] && echo "k=$k cpus=$cpus" >> "$FAKE_LOADGEN_ARGS_LOG"
[ -n "${FAKE_LOADGEN_SLEEP:-}" ] && sleep "$FAKE_LOADGEN_SLEEP"
# FAKE_LOADGEN_KILL_SIM_ABOVE: above this rate, kill the simulator (its pid in
# FAKE_SIM_PIDFILE) and report every request failed, as a dead server does.
if [ -n "${FAKE_LOADGEN_KILL_SIM_ABOVE:-}" ] &&
   awk -v r="$rate" -v c="$FAKE_LOADGEN_KILL_SIM_ABOVE" 'BEGIN { exit !(r > c) }'; then
  kill "$(cat "$FAKE_SIM_PIDFILE")" 2>/dev/null || true
fi
# FAKE_LOADGEN_CRASH_ABOVE: die of SIGSEGV when asked for more than this rate.
if [ -n "${FAKE_LOADGEN_CRASH_ABOVE:-}" ] &&
   awk -v r="$rate" -v c="$FAKE_LOADGEN_CRASH_ABOVE" 'BEGIN { exit !(r > c) }'; then
  kill -SEGV $$
fi
rf=${FAKE_LOADGEN_R_FACTOR:-1}
[ -n "$cpus" ] && rf=$(awk -v a="$rf" -v b="${FAKE_LOADGEN_PLACED_R_FACTOR:-1}" 'BEGIN { print a * b }')
[ -z "$cpus" ] && rf=$(awk -v a="$rf" -v b="${FAKE_LOADGEN_SHARED_R_FACTOR:-1}" 'BEGIN { print a * b }')
low=0
[ -n "$cpus" ] && awk -v r="$rate" -v c="${FAKE_LOADGEN_PLACED_LOW_BELOW:-0}" \
  -v f="${FAKE_LOADGEN_PLACED_LOW_FROM:-0}" 'BEGIN { exit !(r >= f && r < c) }' &&
  low=${FAKE_LOADGEN_PLACED_LOW_EXTRA_US:-0}
empty=0
awk -v r="$rate" -v c="${FAKE_LOADGEN_EMPTY_BELOW:-0}" 'BEGIN { exit !(r < c) }' && empty=1
if [ -n "${FAKE_LOADGEN_R_FACTOR_SEED_BELOW:-}" ] && [ "$seed" -ge "$FAKE_LOADGEN_R_FACTOR_SEED_BELOW" ]; then
  rf=1
fi
kind=none us=0 extra=0
if [ -n "$cost" ]; then kind=${cost%%:*}; us=${cost#*:}
elif [ "$seed" -lt "${FAKE_LOADGEN_BASE_SEED_BELOW:-0}" ]; then extra=${FAKE_LOADGEN_BASE_EXTRA_US:-0}; fi
awk -v rate="$rate" -v k="$k" -v us="$us" -v kind="$kind" -v seed="$seed" -v dur="$dur" \
    -v f="${FAKE_LOADGEN_ES_FACTOR:-1}" -v rf="$rf" -v extra="$extra" -v low="$low" \
    -v empty="$empty" 'BEGIN {
  E = 18; m1 = (20 + us + extra) * f; m2 = m1 * m1 + (20 * f) ^ 2 + (kind == "exp" ? (us * f) ^ 2 : 0); c = 40
  lam = rate * E / k          # events per second per worker
  rho = lam * m1 * 1e-6
  achieved = rate; lag = 0.05
  if (rho >= 0.97) { achieved = 0.7 * rate; lag = 50; d = 1e5; rho = 0.99 }
  else d = c + lam * 1e-6 * m2 * rf / (2 * (1 - rho))
  noise = ((seed * 7) % 5 - 2) / 200.0
  d = d * (1 + noise) + low
  n = int(achieved * dur + 0.5); if (n < 1) n = 1
  if (empty) { n = 0; achieved = 0 }
  ev = n * E / k
  printf "{\"request_rate\": %.6f, \"achieved_rate\": %.6f, \"send_window\": %.3f,", rate, achieved, dur
  printf " \"dispatched\": %d, \"completed\": %d, \"failed\": 0, \"duration\": %.3f,", n, n, dur
  printf " \"median_schedule_lag_ms\": %.3f, \"p99_schedule_lag_ms\": %.3f,", lag / 2, lag
  printf " \"client_bias\": {\"workers\": ["
  for (i = 0; i < k && empty; i++)
    printf "%s{\"rho\": null, \"callbacks\": 0, \"callback_rate_per_s\": 0, \"mean_service_us\": null, \"second_moment_us2\": null, \"events\": 0, \"event_rate_per_s\": 0}", (i ? ", " : "")
  for (i = 0; i < k && !empty; i++) {
    printf "%s{\"rho\": %.6f, \"callbacks\": %.1f, \"callback_rate_per_s\": %.3f,", (i ? ", " : ""), rho, ev, lam
    printf " \"mean_service_us\": %.4f, \"second_moment_us2\": %.4f, \"events\": %.1f,", m1, m2, ev
    printf " \"event_rate_per_s\": %.3f}", lam
  }
  if (empty) printf "], \"overhead_per_token_us\": {\"mean\": null, \"median\": null, \"p99\": null},"
  else printf "], \"overhead_per_token_us\": {\"mean\": %.4f, \"median\": %.4f, \"p99\": %.4f},", d, d, 3 * d
  printf " \"predicted_wq_us\": %.4f, \"arrival_test\": {\"p_value\": 0.5},", d - c
  printf " \"verdict\": \"OK\", \"reason\": \"fake\"}}\n"
}' > "$dir/$file.tmp"
mv "$dir/$file.tmp" "$dir/$file"
echo "fake_loadgen: wrote $dir/$file"
