#!/usr/bin/env bash
# k=1 certificates, placed (the default) against --shared-cpus, beside a
# one-job compile of a copy of the tree (/tmp/loadtree, nice 0) and quiet,
# alternated.
set -u
out=/tmp/k1build; reps=${1:-3}; B=/work/main/build/calibrate/calibrate
stopb() { pkill -9 -f 'LOADTREE_LOOP' 2>/dev/null; pkill -9 -f /tmp/loadtree 2>/dev/null; sleep 1
  while pgrep -f /tmp/loadtree >/dev/null; do pkill -9 -f /tmp/loadtree; sleep 0.5; done; }
trap stopb EXIT
for i in $(seq 1 $reps); do
  for ld in build quiet; do
    for v in placed shared; do
      d=$out/$v-$ld-$i; rm -rf $d; mkdir -p $d
      if [ $ld = build ]; then
        timeout 200 bash -c 'while :; do cmake --build /tmp/loadtree/build --target clean >/dev/null 2>&1; cmake --build /tmp/loadtree/build -j1 >/dev/null 2>&1; done # LOADTREE_LOOP' &
        sleep 3
      fi
      la=$(cut -d' ' -f1 /proc/loadavg); t0=$(date -u +%H:%M:%S)
      f=(); [ $v = shared ] && f=(--shared-cpus)
      timeout 300 $B --quick --workers 1 "${f[@]}" --seed $i --no-plot --quiet --out-dir $d > $d.txt 2>&1; rc=$?
      stopb
      printf "%s %s %s %d %s %s %s %s\n" $v $ld $i $rc $t0 $(date -u +%H:%M:%S) $la "$(jq -c '[.per_k[] | [.workers, .safe_rho]]' $d/certificate.json 2>/dev/null)" | tee -a $out/res.txt
    done
  done
done
