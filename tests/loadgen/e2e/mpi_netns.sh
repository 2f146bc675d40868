#!/usr/bin/env bash
# loadgen --mpi with each rank in its own network namespace: a hub namespace
# holds a bridge, simserver and mpirun; each rank's namespace reaches it over
# its own veth pair (addresses only inside these namespaces). Rank 2's link
# is rate-limited with tbf (this kernel has no netem). The run completes,
# each rank's requests crossed its own link (its veth counters), and rank
# 2's figures show its slower path. Each rank timed its tokens on the wire
# from its own capture, on its own host's interface (its veth): the
# report's worker entry names it, at least 99% of the rank's tokens are
# wire-timed, and every one of its requests has a captured departure.
# Skipped (77) without root or ip(8).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpi_lib.sh"
[ "$(id -u)" -eq 0 ] && command -v ip >/dev/null && command -v tc >/dev/null ||
  skip "needs root, ip and tc"
case "$("$RB_MPIEXEC" --version 2>&1 || true)" in
  *"Open MPI"* | *OpenRTE*) ;;
  *) skip "the MCA flags below are Open MPI's" ;;
esac
tag=$$
HUB=rbh$tag
NS=(rbr0$tag rbr1$tag rbr2$tag)
NET=10.213.$((tag % 200 + 20))
netns_cleanup() {
  for n in "${NS[@]}" "$HUB"; do ip netns del "$n" 2>/dev/null || true; done
}
trap 'cleanup; netns_cleanup' EXIT INT TERM
ip netns add "$HUB" || skip "cannot create a network namespace"
H=(ip netns exec "$HUB")
"${H[@]}" ip link set lo up
"${H[@]}" ip link add br0 type bridge
"${H[@]}" ip addr add "$NET.1/24" dev br0
"${H[@]}" ip link set br0 up
for r in 0 1 2; do
  ip netns add "${NS[$r]}"
  ip netns exec "${NS[$r]}" ip link set lo up
  "${H[@]}" ip link add "vh$r" type veth peer name "vr$r"
  "${H[@]}" ip link set "vr$r" netns "${NS[$r]}"
  "${H[@]}" ip link set "vh$r" master br0 up
  ip netns exec "${NS[$r]}" ip addr add "$NET.$((r + 11))/24" dev "vr$r"
  ip netns exec "${NS[$r]}" ip link set "vr$r" up
done
# rank 2's requests leave through a 1 Mbit/s bucket: a ~10 KB body takes ~55 ms past its
# 4 KB burst (the bucket refills between requests: 5/s x 10 KB is below its rate)
ip netns exec "${NS[2]}" tc qdisc add dev vr2 root tbf rate 1mbit burst 4kb latency 2s
"${H[@]}" "$SIMSERVER" --host "$NET.1" --port 0 >"$WORK/sim.out" 2>"$WORK/sim.err" &
CHILDREN+=("$!")
for _ in $(seq 1 100); do
  URL=$(grep -o "http://$NET\.1:[0-9]*" "$WORK/sim.out" 2>/dev/null | head -n 1 || true)
  [ -n "$URL" ] && break
  sleep 0.05
done
[ -n "$URL" ] || fail "simserver did not start in $HUB"
N=90
args=(--mpi --base-url "$URL" --allow-remote --request-rate 15 --num-prompts $N --seed 3
  --random-input-len 2000 --random-range-ratio 0 --random-output-len 4 --quiet --no-progress
  --save-result --save-detailed --result-dir "$WORK" --result-filename m.json)
app=()
for r in 0 1 2; do
  [ $r -gt 0 ] && app+=(:)
  app+=(-np 1 ip netns exec "${NS[$r]}" "$LOADGEN" "${args[@]}")
done
# mpirun in the hub: its out-of-band channel on the bridge; ranks talk over
# shared memory (one host)
"${H[@]}" env OMPI_MCA_oob_tcp_if_include="$NET.0/24" OMPI_MCA_btl_tcp_if_include="$NET.0/24" \
  PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include="$NET.0/24" \
  "$RB_MPIEXEC" "${MPI_FLAGS[@]}" "${app[@]}" >"$WORK/mpi.out" 2>&1 ||
  { cat "$WORK/mpi.out" >&2; fail "mpirun exited $?"; }
R="$WORK/m.json"
sent_equals_done "$R"
[ "$(jnum "$R" .completed)" -eq $N ] || fail "completed $(jnum "$R" .completed) of $N"
[ "$(jnum "$R" '.mpi.lost_ranks | length')" -eq 0 ] || fail "lost ranks"
declare -a tx mean
for r in 0 1 2; do
  n=$(wc -l <"$WORK/m.rank$r.jsonl")
  [ "$n" -eq $((N / 3)) ] || fail "rank $r: $n records"
  tx[$r]=$(ip netns exec "${NS[$r]}" cat "/sys/class/net/vr$r/statistics/tx_bytes")
  # each request's body (about 10 KB of prompt) left through this rank's own link
  [ "${tx[$r]}" -ge $((n * 5000)) ] || fail "rank $r sent ${tx[$r]} bytes for $n requests"
  mean[$r]=$(jq -s 'map(.end_ns - .dispatch_ns) | add / length / 1e6' "$WORK/m.rank$r.jsonl")
done
# the rate-limited path is slower, by the bucket's transmission time
awk -v a="${mean[0]}" -v b="${mean[1]}" -v c="${mean[2]}" \
  'BEGIN { m = a > b ? a : b; exit !(c > m + 20) }' ||
  fail "rank 2's mean latency ${mean[2]} ms is not above ranks 0 and 1 (${mean[0]}, ${mean[1]} ms) by 20 ms"
# each rank captured on its own host: its own veth, its tokens, its departures
for r in 0 1 2; do
  jq -e --arg i "vr$r" --argjson r "$r" '.client_bias.workers[$r]
      | .receive_clock == "wire" and .capture_interface == $i and .receive_clock_wire_share >= 0.99
        and .receive_clock_fallback_reason == null' \
    "$R" >/dev/null ||
    fail "rank $r's capture: $(jq -c ".client_bias.workers[$r] | {receive_clock, capture_interface, receive_clock_wire_share}" "$R")"
  nodep=$(jq -s 'map(select(.class == "ok" and .sent_wire_ns == null)) | length' "$WORK/m.rank$r.jsonl")
  [ "$nodep" -eq 0 ] || fail "rank $r: $nodep completed requests without a captured departure"
done
pass "3 ranks in 3 namespaces, each capturing on its own veth: ${tx[*]} bytes sent; mean latency ${mean[*]} ms (rank 2 behind tbf)"
