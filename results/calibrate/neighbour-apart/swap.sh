#!/usr/bin/env bash
set -u
out=/tmp/swapexp; mkdir -p $out
. /work/main/scripts/lib/neighbour.sh
trap neighbour_stop EXIT
for i in 1 2 3; do
  for nb in neighbour quiet; do
    for mode in unbound swap sim; do
      d=$out/$mode-$nb-$i; rm -rf $d; mkdir -p $d
      la=$(cut -d' ' -f1 /proc/loadavg); t0=$(date -u +%H:%M:%S)
      [ $nb = neighbour ] && neighbour_start 19 50 90
      if [ $mode = unbound ]; then
        timeout 200 /tmp/proto/build/calibrate/calibrate --quick --workers 1 --seed $i --no-plot --quiet --out-dir $d > $d.txt 2>&1; rc=$?
      else
        RB_CAL_BIND=$mode timeout 200 /tmp/proto/build/calibrate/calibrate --quick --workers 1 --seed $i --no-plot --quiet --out-dir $d > $d.txt 2>&1; rc=$?
      fi
      neighbour_stop
      printf "%s %s %s %d %s %s %s\n" $mode $nb $i $rc $t0 $la "$(jq -c '[.per_k[] | [.workers, .safe_rho]]' $d/certificate.json 2>/dev/null)" | tee -a $out/res.txt
    done
  done
done
