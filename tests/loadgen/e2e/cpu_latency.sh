#!/usr/bin/env bash
# --cpu-latency-us: each worker holds a CPU latency QoS request
# (/dev/cpu_dma_latency) for its run, and the report says what came of it.
#  - bad input exits 2 naming the flag;
#  - asked 77 us with two workers, where the device is writable (root): both
#    hold it, host.cpu_latency_qos says 2 of 2 with the host's limit at most
#    77 us, each worker's note says "held: 77 us", the summary says so, and
#    host.cpuidle names the idle driver as the kernel does;
#  - the same as an unprivileged user (or where the device cannot be
#    opened): the run still completes, 0 of 2 held, the refusal names the
#    device and the cause, and stderr names the flag;
#  - off: asked_us null, "not asked";
#  - a certificate measured with idle CPUs held to 0 us warns a run that
#    holds none, and not a run that holds 0 us.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 5ms --inter-token-latency 2ms
dev=/dev/cpu_dma_latency
args=(--base-url "$SIM_URL" --num-workers 2 --request-rate 40 --num-prompts 40 --seed 3
      --random-input-len 8 --random-output-len 8 --no-progress --save-result --result-dir "$WORK")

for bad in -1 2.5 10us 1000001; do
  rc=0
  "$LOADGEN" --base-url "$SIM_URL" --num-prompts 1 --cpu-latency-us "$bad" --quiet \
    2>"$WORK/bad.err" || rc=$?
  [ "$rc" -eq 2 ] || fail "--cpu-latency-us $bad exited $rc, not 2"
  grep -q -- "--cpu-latency-us" "$WORK/bad.err" || fail "--cpu-latency-us $bad: $(cat "$WORK/bad.err")"
done

# refused: check_refused REPORT STDERR
check_refused() {
  jq -e '.completed == 40 and .host.cpu_latency_qos.asked_us == 77
         and .host.cpu_latency_qos.held_workers == 0 and .host.cpu_latency_qos.workers == 2
         and .host.cpu_latency_qos.limit_us == null' "$1" >/dev/null \
    || fail "a refused request: $(jq -c '[.completed, .host.cpu_latency_qos]' "$1")"
  jq -e --arg dev "$dev" '.host.cpu_latency_qos.refused | startswith("not held: open " + $dev + ": ")' \
    "$1" >/dev/null || fail "the refusal does not name the device: $(jq -c .host.cpu_latency_qos "$1")"
  grep -q -- "--cpu-latency-us 77: open $dev" "$2" || fail "stderr does not name the flag: $(cat "$2")"
}

"$LOADGEN" "${args[@]}" --cpu-latency-us 77 --result-filename held.json >"$WORK/held.out" \
  2>"$WORK/held.err" || fail "a run with --cpu-latency-us 77 failed: $(cat "$WORK/held.err")"
if [ "$(id -u)" -eq 0 ] && [ -c "$dev" ]; then
  jq -e '.completed == 40 and .host.cpu_latency_qos.asked_us == 77
         and .host.cpu_latency_qos.held_workers == 2 and .host.cpu_latency_qos.workers == 2
         and .host.cpu_latency_qos.limit_us <= 77 and .host.cpu_latency_qos.refused == null
         and ([.client_bias.workers[].cpu_latency | startswith("held: 77 us (the host'"'"'s limit ")]
              | all)' "$WORK/held.json" >/dev/null \
    || fail "held: $(jq -c '[.completed, .host.cpu_latency_qos, [.client_bias.workers[].cpu_latency]]' "$WORK/held.json")"
  grep -Eq "CPU latency QoS of the workers: +held by all 2 \(host's limit [0-9]+ us\)" "$WORK/held.out" \
    || fail "the summary does not say it was held: $(grep -i 'latency qos' "$WORK/held.out")"
  # the same, unprivileged: a copy of loadgen that user can reach
  mkdir -m 755 "$WORK/nobody" && chmod 755 "$WORK"
  cp "$LOADGEN" "$WORK/nobody/loadgen" && chmod 755 "$WORK/nobody/loadgen" && chmod 777 "$WORK/nobody"
  setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    "$WORK/nobody/loadgen" "${args[@]}" --result-dir "$WORK/nobody" --cpu-latency-us 77 \
    --result-filename refused.json >/dev/null 2>"$WORK/refused.err" \
    || fail "an unprivileged run failed: $(cat "$WORK/refused.err")"
  check_refused "$WORK/nobody/refused.json" "$WORK/refused.err"
  jq -e '.host.cpu_latency_qos.refused | endswith("Permission denied")' "$WORK/nobody/refused.json" \
    >/dev/null || fail "the refusal's cause: $(jq -c .host.cpu_latency_qos "$WORK/nobody/refused.json")"
else
  # no device, or not root: the same run is the refused one
  check_refused "$WORK/held.json" "$WORK/held.err"
fi
drv=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)
jq -e --arg d "$drv" '.host.cpuidle | (if $d == "none" then . == "none" else startswith($d + "/") end)' \
  "$WORK/held.json" >/dev/null || fail "host.cpuidle: $(jq -c .host.cpuidle "$WORK/held.json"), driver $drv"

"$LOADGEN" "${args[@]}" --cpu-latency-us off --result-filename off.json >/dev/null 2>"$WORK/off.err" \
  || fail "a run with --cpu-latency-us off failed: $(cat "$WORK/off.err")"
jq -e '.host.cpu_latency_qos.asked_us == null and .host.cpu_latency_qos.held_workers == 0
       and ([.client_bias.workers[].cpu_latency == "not asked"] | all)' "$WORK/off.json" >/dev/null \
  || fail "off: $(jq -c '[.host.cpu_latency_qos, [.client_bias.workers[].cpu_latency]]' "$WORK/off.json")"

# the certificate's condition: measured with idle CPUs held to 0 us
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
cores=$(getconf _NPROCESSORS_ONLN)
jq -n --arg cpu "$cpu" --argjson cores "$cores" '{rhobench_certificate: 2,
  host: {cpu_model: $cpu, cores_online: $cores, cpu_latency_us: 0}, budget_us: 100,
  cost_model: {per_delivery_us: 10, per_event_us: 2},
  reference_workload: {random_output_len: 16, events_per_request: 18},
  per_k: [{workers: 2, safe_rho: 0.5, safe_rate_per_worker: null, safe_total_rate: null}]}' \
  >"$WORK/cert.json"
"$LOADGEN" "${args[@]}" --certificate "$WORK/cert.json" --dry-run --cpu-latency-us off \
  >"$WORK/dry_off.out" 2>&1 || fail "dry run, off: $(cat "$WORK/dry_off.out")"
grep -q "warning: .*held to wake within 0 us; this run holds none (--cpu-latency-us off)" \
  "$WORK/dry_off.out" || fail "no warning for a run that holds none: $(cat "$WORK/dry_off.out")"
"$LOADGEN" "${args[@]}" --certificate "$WORK/cert.json" --dry-run >"$WORK/dry_on.out" 2>&1 \
  || fail "dry run: $(cat "$WORK/dry_on.out")"
grep -q "held to wake" "$WORK/dry_on.out" && fail "a warning for a run that holds 0 us: $(cat "$WORK/dry_on.out")"
pass "--cpu-latency-us: held, refused, off, and the certificate's condition"
