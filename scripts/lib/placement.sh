# Where a run on one host puts simserver and loadgen's workers so that the
# certificate it checks against holds (sourced, not run): as calibrate
# measured them (the certificate's calibration_load.placement). For a worker
# count with a CPU to spare, simserver alone on the simulator's CPU at nice
# 10 and the workers on the others, as a server on another host would leave
# them; otherwise nothing is placed (simserver and the workers share every
# CPU). A k whose certificate entry says it was measured shared
# (per_k[].placement "shared": calibrate measures a placed k again shared
# when placed it certified nothing) runs shared.
#   placement_for CERT K   sets PLACE_SIM_WRAP (a command prefix for
#                          simserver, for sim_start's SIM_WRAP; "" for none),
#                          PLACE_WORKER_FLAGS (loadgen flags, an array) and
#                          PLACE_WHY (one line for the run's output)
# shellcheck shell=bash
placement_for() {
  local cert=$1 k=$2 sc wl from pl
  sc=$(jq -r '.calibration_load.placement.simulator_cpu // empty' "$cert")
  wl=$(jq -r '.calibration_load.placement.worker_cpus // empty' "$cert")
  from=$(jq -r '.calibration_load.placement.shared_from_k // 0' "$cert")
  pl=$(jq -r --argjson k "$k" '[.per_k[]? | select(.workers == $k) | .placement // empty][0] // empty' "$cert")
  PLACE_SIM_WRAP="" PLACE_WORKER_FLAGS=()
  if [ -n "$sc" ] && [ -n "$wl" ] && [ "$pl" != shared ] && [ "$k" -lt "$from" ]; then
    PLACE_SIM_WRAP="taskset -c $sc nice -n 10"
    PLACE_WORKER_FLAGS=(--worker-cpus "$wl")
    PLACE_WHY="simserver alone on CPU $sc at nice 10, the workers on CPUs $wl, as the certificate measured k=$k"
  else
    PLACE_WHY="simserver and the workers share the CPUs, as the certificate measured k=$k"
  fi
}
