#!/usr/bin/env bash
# Prototype (results/calibrate/neighbour-k2-proto, prototype.diff built in /tmp/proto3): k=2 (shared CPUs) beside the half-core nice-19 neighbour and quiet,
# alternated: cur (as calibrate runs it), s100 (each loadgen worker asks for a
# 100 us scheduler slice).
set -u
out=/tmp/k2s; reps=${1:-3}
. /work/main/scripts/lib/neighbour.sh
trap neighbour_stop EXIT
for i in $(seq 1 $reps); do
  for nb in neighbour quiet; do
    for v in cur s100; do
      d=$out/$v-$nb-$i; rm -rf $d; mkdir -p $d
      la=$(cut -d' ' -f1 /proc/loadavg); t0=$(date -u +%H:%M:%S)
      [ $nb = neighbour ] && neighbour_start 19 50 200
      unset RB_SHARED_BIND RB_SHARED_NICE RB_WORKER_SLICE_US
      case $v in s100) export RB_WORKER_SLICE_US=100 ;; esac
      timeout 300 /tmp/proto3/build/calibrate/calibrate --quick --workers 2 --seed $i --no-plot --quiet --out-dir $d > $d.txt 2>&1; rc=$?
      neighbour_stop
      printf "%s %s %s %d %s %s %s %s\n" $v $nb $i $rc $t0 $(date -u +%H:%M:%S) $la "$(jq -c '[.per_k[] | [.workers, .safe_rho]]' $d/certificate.json 2>/dev/null)" | tee -a $out/res.txt
    done
  done
done
